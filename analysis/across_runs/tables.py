"""Across runs: each run is one unit of evidence.

Gaps inside a run are not independent (one GC pause stalls a whole batch at once),
so the tables here never pool gaps across runs: they report each run, or the
median with the min and max across the runs of a rung.  Functions return numeric
DataFrames (for glue and plots); ``median_range_cells`` and ``percent_cells``
format them for reading.
"""
from __future__ import annotations

from typing import Iterable, Sequence

import pandas as pd

from ..core.schemes import CAUSES, CLEAN, LABELS, get_scheme
from .select import rung_rows
from .wording import label_names

LADDER_METRICS = ("itl_p50", "itl_p99", "itl_p999", "itl_max")
METRIC_NAMES = {"itl_p50": "p50", "itl_p90": "p90", "itl_p99": "p99", "itl_p999": "p99.9",
                "itl_max": "max", "ttft_p50": "TTFT p50", "ttft_p99": "TTFT p99"}
METRIC_DECIMALS = {"itl_p50": 1, "itl_p90": 1, "itl_p99": 1, "itl_p999": 0, "itl_max": 0,
                   "ttft_p50": 0, "ttft_p99": 0}
LABEL_NAMES = label_names("column")  # the article's tables call the forward pass "fwd"
STATS = ("median", "min", "max")


def summaries_frame(summaries: Iterable[dict] | pd.DataFrame) -> pd.DataFrame:
    """One row per run.  Nested dicts become flat columns (``tail_share_prefill``,
    ``tail_count_clean``, ``gc_counts_2``, ...); lists (gen2 pauses, hist) stay as
    objects.  ``rung`` is an ordered categorical in order of first appearance."""
    if isinstance(summaries, pd.DataFrame):
        return summaries
    rows = []
    for s in summaries:
        row = {}
        for key, value in s.items():
            if isinstance(value, dict):
                row.update({f"{key}_{k}": v for k, v in value.items()})
            else:
                row[key] = value
        rows.append(row)
    frame = pd.DataFrame(rows)
    if len(frame):
        frame["rung"] = pd.Categorical(frame["rung"], categories=list(dict.fromkeys(frame["rung"])),
                                       ordered=True)
    return frame


def _ordered(frame: pd.DataFrame, order: Sequence[str] | None) -> pd.DataFrame:
    frame = summaries_frame(frame)
    if order is not None:
        frame = frame[frame["rung"].isin(order)].copy()
        frame["rung"] = pd.Categorical(frame["rung"].astype(str), categories=list(order), ordered=True)
    return frame


def ladder_table(summaries, metrics: Sequence[str] = LADDER_METRICS,
                 order: Sequence[str] | None = None) -> pd.DataFrame:
    """Median, min and max across runs of each metric, one row per rung.
    Columns: (metric, stat) MultiIndex, plus ``runs``."""
    frame = _ordered(summaries, order)
    grouped = frame.groupby("rung", observed=True)
    table = grouped[list(metrics)].agg(list(STATS))
    table[("runs", "")] = grouped.size()
    return table


def median_range_cells(table: pd.DataFrame, decimals: dict | None = None) -> pd.DataFrame:
    """``median [min-max]`` strings from a ladder_table, e.g. ``13.7 [10.5-16.0]``."""
    decimals = {**METRIC_DECIMALS, **(decimals or {})}
    out = pd.DataFrame(index=table.index)
    for metric in dict.fromkeys(m for m, _ in table.columns if m != "runs"):
        d = decimals.get(metric, 1)
        med, lo, hi = (table[(metric, s)] for s in STATS)
        out[METRIC_NAMES.get(metric, metric)] = [
            f"{m:.{d}f} [{a:.{d}f}-{b:.{d}f}]" for m, a, b in zip(med, lo, hi)]
    return out


def tail_share_table(summaries, order: Sequence[str] | None = None, stat: str = "median",
                     which: str = "tail_share", labels: Sequence[str] = LABELS) -> pd.DataFrame:
    """Share of tail time (``which="all_share"``: of all gap time) by label, one row per
    rung, aggregated across runs by ``stat``.  Medians of shares need not sum to 1.
    ``labels``: the scheme's labels (default: the article's)."""
    frame = _ordered(summaries, order)
    labels = list(labels)
    cols = [f"{which}_{lab}" for lab in labels]
    table = frame.groupby("rung", observed=True)[cols].agg(stat)
    table.columns = labels
    return table


def tail_share_by_run(summaries, rung: str) -> pd.DataFrame:
    """For one rung: each run's p99 (ms) and the share of its tail time by label."""
    frame = rung_rows(summaries_frame(summaries), rung)
    table = frame[["seed", "itl_p99"] + [f"tail_share_{lab}" for lab in LABELS]].copy()
    table.columns = ["run", "p99"] + LABELS
    return table.set_index("run")


def forward_share_table(summaries, rung: str | None = None) -> pd.DataFrame:
    """Median forward-pass share of a gap, clean gaps vs tail gaps, one row per run."""
    frame = summaries_frame(summaries)
    if rung is not None:
        frame = rung_rows(frame, rung)
    table = frame[["rung", "seed", "fwd_share_clean_median", "fwd_share_tail_median"]].copy()
    table.columns = ["rung", "run", "clean", "tail"]
    return table.sort_values(["rung", "run"]).set_index(["rung", "run"])


def tail_count_table(summaries, order: Sequence[str] | None = None, stat: str = "median") -> pd.DataFrame:
    """Tail gaps by primary cause (count, not time), aggregated across runs."""
    frame = _ordered(summaries, order)
    keys = CAUSES + [CLEAN]
    table = frame.groupby("rung", observed=True)[[f"tail_count_{k}" for k in keys]].agg(stat)
    table.columns = keys
    return table


def percent_cells(table: pd.DataFrame, decimals: int = 1) -> pd.DataFrame:
    """Fractions as ``12.4%`` strings; label columns renamed as in the article."""
    out = table.map(lambda v: f"{100 * v:.{decimals}f}%")
    return out.rename(columns=LABEL_NAMES)


def scheme_tail_table(by_scheme: dict, order: Sequence[str] | None = None, stat: str = "median") -> pd.DataFrame:
    """Tail-time share by label under several schemes: ``by_scheme`` maps a scheme name
    to its run summaries. Rows: every label of every scheme (in first-seen order);
    columns: (rung, scheme). A label a scheme does not have is left empty."""
    labels = list(dict.fromkeys(lab for name in by_scheme for lab in get_scheme(name).labels))
    parts = {}
    for name, summaries in by_scheme.items():
        t = tail_share_table(summaries, order=order, stat=stat, labels=get_scheme(name).labels)
        for rung in t.index:
            parts[(str(rung), name)] = t.loc[rung].reindex(labels)
    out = pd.DataFrame(parts)
    rungs = list(dict.fromkeys(r for r, _ in parts))
    return out[[(r, s) for r in rungs for s in by_scheme]].rename(index=LABEL_NAMES)
