"""Analysis of raw engine logs: load, partition every inter-token gap by cause,
summarize a run, and compare runs across the fix ladder.

Scalar, readable reference: ``Partitioner(...).gap(...)``.  Whole-run, vectorized:
``partition_run(log)``.  They agree on every gap (tests/test_analysis_*).
"""
from .baseline import Baseline, fit_baseline
from .first_version import FirstVersionPartitioner
from .labels import ARTICLE, CAUSES, CLEAN, LABELS, SCHEMES, Scheme, get_scheme, primary_cause
from .partition import Partitioner
from .rawlog import RawLogError, RunLog, evictions_by_request, load, steps_from_log
from .stats import ladder_verdicts, paired_change, seed_subsample_intervals, verdict_phrase
from .summary import HIST_BINS, summarize
from .tables import (forward_share_table, ladder_table, median_range_cells, percent_cells,
                     summaries_frame, tail_count_table, tail_share_by_run, tail_share_table)
from .texthist import text_histogram
from .wholerun import partition_run

__all__ = [
    "ARTICLE", "Baseline", "CAUSES", "CLEAN", "FirstVersionPartitioner", "HIST_BINS", "LABELS",
    "Partitioner", "RawLogError", "RunLog", "SCHEMES", "Scheme", "evictions_by_request",
    "fit_baseline", "get_scheme", "load", "partition_run", "primary_cause", "steps_from_log",
    "summarize", "summaries_frame", "ladder_table", "median_range_cells", "percent_cells",
    "tail_share_table", "tail_share_by_run", "tail_count_table", "forward_share_table",
    "text_histogram", "ladder_verdicts", "paired_change", "seed_subsample_intervals", "verdict_phrase",
]
