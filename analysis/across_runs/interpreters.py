"""The GC rungs under two interpreters (book/causes): baseline, +gc.freeze and +compact
history, each interpreter at its own calibrated rate, from cached runs of both.

The collector is part of the system the book reproduces: CPython 3.11's thresholds are
(700, 10, 10), 3.13's (2000, 10, 10), and the article ran 3.13. This module only reads
runs that exist; it never makes them. Which interpreter a run used is its provenance's
"python" field, passed in here as the key of ``runs_by_python``.
"""
from __future__ import annotations

import pandas as pd

from .criteria import COLLAPSE
from .rungs import COMPACT_HISTORY, FIRST, GC_FREEZE
from .select import runs_of
from .wording import median_range

GC_RUNGS = (FIRST, GC_FREEZE, COMPACT_HISTORY)


def _largest_gen2(s) -> float:
    return max(s["gen2_serving_ms"], default=0.0)


def gc_rung_table(runs_by_python: dict) -> pd.DataFrame:
    """One row per (Python, GC rung): runs, rate, gen-0 and gen-2 collections, the largest
    serving gen-2 pause, its median over the baseline's, ITL p50, p99.9 and preemptions:
    median [min-max] over the rung's runs. Empty when no interpreter has runs."""
    rows = []
    for python, runs in runs_by_python.items():
        base = [_largest_gen2(s) for s in runs_of(runs, FIRST)]
        base_med = pd.Series(base, dtype=float).median() if base else float("nan")
        for rung in GC_RUNGS:
            rr = runs_of(runs, rung)
            if not rr:
                continue
            largest = [_largest_gen2(s) for s in rr]
            ratio = pd.Series(largest, dtype=float).median() / base_med if base_med > 0 else float("nan")
            rows.append({
                "Python": python, "rung": rung, "runs": len(rr),
                "rate, req/s": median_range([s["rate"] for s in rr], "{:.2f}"),
                "gen-0 / gen-2 collections": (f"{median_range([s['gc_counts']['0'] for s in rr])} / "
                                              f"{median_range([s['gc_counts']['2'] for s in rr])}"),
                "largest serving gen-2 pause, ms": median_range(largest),
                "largest vs baseline": "-" if rung == FIRST or ratio != ratio else f"{ratio:.2f}x",
                "p50, ms": median_range([s["itl_p50"] for s in rr], "{:.1f}"),
                "p99.9, ms": median_range([s["itl_p999"] for s in rr]),
                "preemptions": median_range([s["preemptions"] for s in rr]),
            })
    cols = ["Python", "rung", "runs", "rate, req/s", "gen-0 / gen-2 collections",
            "largest serving gen-2 pause, ms", "largest vs baseline", "p50, ms", "p99.9, ms", "preemptions"]
    return pd.DataFrame(rows, columns=cols)


def freeze_ratio(runs) -> float:
    """The median largest serving gen-2 pause at +gc.freeze over the baseline's (NaN if
    either is missing or the baseline had none)."""
    a = pd.Series([_largest_gen2(s) for s in runs_of(runs, FIRST)], dtype=float)
    b = pd.Series([_largest_gen2(s) for s in runs_of(runs, GC_FREEZE)], dtype=float)
    return float(b.median() / a.median()) if len(a) and len(b) and a.median() > 0 else float("nan")


def interpreter_sentence(runs_by_python: dict, collapse: float = COLLAPSE) -> str:
    """What changing the interpreter did to the finding "gc.freeze shortens full
    collections", from the runs of each (or why it cannot be said)."""
    have = {py: r for py, r in runs_by_python.items() if runs_of(r, FIRST) and runs_of(r, GC_FREEZE)}
    if len(have) < 2:
        return ("The GC rungs have not been run under two interpreters in this run cache, so how the "
                "interpreter moves the collector's findings is not measured here.")
    seeds = min(len({s["seed"] for s in runs_of(r, FIRST)}) for r in have.values())
    parts = []
    for py, r in have.items():
        ratio = freeze_ratio(r)
        verdict = ("not testable: no full collection while serving at baseline" if ratio != ratio
                   else "held" if ratio < collapse else "did not hold")
        parts.append(f"under Python {py} the largest serving gen-2 pause at +gc.freeze was "
                     f"{ratio:.2f}x the baseline's ({verdict})")
    text = "; ".join(parts)
    return (text[0].upper() + text[1:] + f", on {seeds} seed(s) per interpreter at its own calibrated "
            f"rate; with so few seeds this shows whether the interpreter matters, not by how much.")
