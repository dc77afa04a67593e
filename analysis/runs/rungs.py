"""The fix ladder's rungs by name, and the runs of one rung.

The names come from the engine's ladder, once: a renamed or reordered rung fails
here, at import, instead of silently matching no run.
"""
from __future__ import annotations

from ..engine_link import RUNGS

(BASELINE, GC_FREEZE, COMPACT_HISTORY, GRAPHS_48, BUDGET_256, TOKENIZE_OFF_LOOP,
 ADMIT_WATERMARK) = RUNGS
FIRST, LAST = RUNGS[0], RUNGS[-1]


def runs_of(summaries, rung: str) -> list[dict]:
    """The summaries of one rung's runs, in the order given."""
    return [s for s in summaries if s["rung"] == rung]


def rung_rows(frame, rung: str):
    """The rows of one rung's runs in a summaries frame, by seed."""
    return frame[frame["rung"].astype(str) == rung].sort_values("seed")


def rung_above(order, rung: str) -> str:
    """The rung before ``rung`` in ``order`` (whose fix ``rung`` adds to)."""
    order = list(order)
    return order[order.index(rung) - 1]
