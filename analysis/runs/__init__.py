"""Across runs, one run one unit of evidence: the summaries cache, tables, statistics, findings, the ladder, the causes, the article's figures."""
