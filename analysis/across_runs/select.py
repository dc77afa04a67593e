"""The runs of one rung, from a list of run summaries or a summaries frame."""
from __future__ import annotations


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
