"""Across runs, one run one unit of evidence: the summaries cache, tables, the paired
statistics, the findings, the ladder, the causes, and the article's published figures."""
