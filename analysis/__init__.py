"""Analysis of raw engine logs: load, partition every inter-token gap by cause,
summarize a run, and compare runs across the fix ladder.

Scalar, readable reference: ``Partitioner(...).gap(...)``.  Whole-run, vectorized:
``partition_run(log)``.  They agree on every gap (tests/analysis/test_analysis_*).

Four subpackages, imports going one way (README, "Layout"): ``core`` (the method,
numpy only) <- ``across_runs`` <- ``instrument`` (the instrument checked) <-
``render`` (figures, text and the chapters' rules). Only ``engine_link`` imports
``engine``.  The names below that need pandas are imported on first use, so that
``import analysis`` and a first ``summarize(path)`` stay cheap.
"""
from importlib import import_module

from .core.baseline import Baseline, fit_baseline
from .core.first_version import FirstVersionPartitioner
from .core.gaps import partition_gaps, partition_run
from .core.partitioner import Partitioner
from .core.runlog import RawLogError, RunLog, evictions_by_request, load, steps_from_log
from .core.schemes import ARTICLE, CAUSES, CLEAN, LABELS, SCHEMES, Scheme, get_scheme, primary_cause
from .core.run_summary import HIST_BINS, summarize

# name -> module that defines it, imported when the name is first used (PEP 562)
_LAZY = {
    **dict.fromkeys(("ladder_verdicts", "paired_change", "seed_subsample_intervals", "verdict_phrase"),
                    ".across_runs.paired"),
    **dict.fromkeys(("forward_share_table", "ladder_table", "median_range_cells", "percent_cells",
                     "summaries_frame", "tail_count_table", "tail_share_by_run", "tail_share_table"),
                    ".across_runs.tables"),
    "text_histogram": ".render.texthist",
}

__all__ = [  # noqa: PLE0604  (*_LAZY adds the lazy names, _LAZY's keys: strings)
    "ARTICLE", "Baseline", "CAUSES", "CLEAN", "FirstVersionPartitioner", "HIST_BINS", "LABELS",
    "Partitioner", "RawLogError", "RunLog", "SCHEMES", "Scheme", "evictions_by_request",
    "fit_baseline", "get_scheme", "load", "partition_gaps", "partition_run", "primary_cause",
    "steps_from_log", "summarize", *_LAZY,
]


def __getattr__(name):
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
