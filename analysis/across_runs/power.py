"""What a build's protocol can show: its seeds and run length against the article's, how
many gaps a run's p99.9 and max rest on, and what its paired seeds can detect. The
summary and the report open with these sentences, so a reader knows the evidence's
size before its verdicts."""
from __future__ import annotations

import math

import pandas as pd

from . import article as A
from .rungs import FIRST, LAST
from .signflip import ALPHA, SUGGESTIVE, min_p, min_seeds
from .verdicts import seeds_text, unjudged


def protocol_sentence(n_seeds: int, duration: float, n_rungs: int) -> str:
    """This build's protocol beside the article's, e.g. '2 seeds x 20 s per rung (the
    article: 5 x 60 s), 7 rungs'."""
    art = f"{len(A.SEEDS)} x {A.DURATION_S:g} s"
    ratio = (n_seeds * duration) / (len(A.SEEDS) * A.DURATION_S)
    return (f"This build ran {seeds_text(n_seeds)} x {duration:g} s of arrivals on each of {n_rungs} "
            f"rungs, against the article's {art}: {ratio:.0%} of the article's serving time per rung.")


def tail_gaps(runs, rungs=(FIRST, LAST)) -> float:
    """Median over the end rungs' runs of the gaps above a run's p99.9 (0.1% of its gaps)."""
    gaps = [s["gaps"] for s in runs if s["rung"] in rungs and "gaps" in s]
    return float(pd.Series(gaps, dtype=float).median()) * 0.001 if gaps else math.nan


def tail_sentence(runs) -> str:
    """How many gaps a run's p99.9 and max rest on."""
    n = tail_gaps(runs)
    if n != n:
        return "How many gaps a run's p99.9 rests on is not known: the end rungs' runs are missing."
    few = " A percentile that rests on this few gaps moves with a single stall." if n < 10 else ""
    return (f"A run's p99.9 rests on its slowest {n:,.0f} gap(s) (0.1% of a median run's gaps) and its "
            f"max on one.{few}")


def detect_sentence(n: int) -> str:
    """What n paired seeds can detect when two rungs are compared."""
    if n < 2:
        return (f"With {seeds_text(n)} no two rungs can be compared run against run: every paired "
                f"verdict reads \"{unjudged(n)}\".")
    floor = min_p(n)
    if floor > SUGGESTIVE:
        return (f"With {seeds_text(n)} the smallest p-value a paired comparison can reach is "
                f"{floor:.2g}, so no comparison between rungs can detect a change: each reads "
                f"\"{unjudged(n)}\", whatever its ratio, and a finding's criterion on medians "
                f"over {n} runs can be flipped by one run. Detecting a change needs at least "
                f"{_first_suggestive()} seeds (every seed moving the same way), establishing one "
                f"at least {min_seeds(ALPHA)}.")
    if floor > ALPHA:
        return (f"With {seeds_text(n)} the smallest p-value a paired comparison can reach is "
                f"{floor:.2g}: a change is detected only when every seed moves the same way "
                f"(\"suggestive\"), and \"established\" needs at least {min_seeds(ALPHA)} seeds.")
    return (f"With {seeds_text(n)} the smallest p-value a paired comparison can reach is {floor:.2g}, "
            f"enough for \"established\" (p <= {ALPHA:g}).")


def _first_suggestive() -> int:
    n = 2
    while min_p(n) > SUGGESTIVE:
        n += 1
    return n


def power_paragraph(runs, n_seeds: int, duration: float, n_rungs: int) -> str:
    """The protocol and its power, in three sentences."""
    return " ".join([protocol_sentence(n_seeds, duration, n_rungs), tail_sentence(runs),
                     detect_sentence(n_seeds)])
