"""The article's findings that depend on the operating point, and the loads at which
each held in this build's load sweep (book/report; the sweep is book/regimes).

Each finding is judged at every load level on the medians over the sweep's seeds, with
the same threshold the report applies at the operating point (analysis/across_runs/findings.py),
separately for each forward. The sweep's runs are shorter and fewer than the ladder's,
so a level's verdict is a reading of its medians, not a test.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import pandas as pd

from ..engine_link import BAND
from .criteria import CLEAN_FORWARD_MIN, COLLAPSE, FALLS, MAJORITY, P50_FLAT, fraction_words
from .findings import FINDINGS
from .rungs import ADMIT_WATERMARK, BASELINE
from .wording import exact_pct

CLAIM = {f.key: f.claim for f in FINDINGS}     # the report's words for the same findings
HALF = fraction_words(COLLAPSE)[0]


@dataclass(frozen=True)
class LoadFinding:
    claim: str
    criterion: str
    holds: Callable      # (baseline medians, watermark medians) at one load -> bool | None


def _both(f):
    def holds(b, w):
        return None if b is None or w is None else f(b, w)
    return holds


LOAD_FINDINGS = [
    LoadFinding(CLAIM["fwd_clean"],
                f"baseline median forward share of clean gaps >= {exact_pct(CLEAN_FORWARD_MIN)}",
                lambda b, w: None if b is None else bool(b["fwd_share_clean"] >= CLEAN_FORWARD_MIN)),
    LoadFinding(CLAIM["preempt_majority"],
                f"baseline median preempt share of tail time > {exact_pct(MAJORITY)}",
                lambda b, w: None if b is None else bool(b["tail_preempt"] > MAJORITY)),
    LoadFinding("the baseline's queue drains",
                f"baseline median TTFT p50 <= {BAND.max_ttft_p50_s:g} s",
                lambda b, w: None if b is None else BAND.drains(b["ttft_p50"])),
    LoadFinding(CLAIM["p99_end"],
                "watermark rung's median p99 below the baseline's",
                _both(lambda b, w: bool(w["itl_p99"] < b["itl_p99"]))),
    LoadFinding(CLAIM["p999_end"],
                f"watermark rung's median p99.9 below {HALF} the baseline's",
                _both(lambda b, w: bool(w["itl_p999"] < COLLAPSE * b["itl_p999"]))),
    LoadFinding(CLAIM["max_end"],
                f"watermark rung's median max below {HALF} the baseline's",
                _both(lambda b, w: bool(w["itl_max"] < COLLAPSE * b["itl_max"]))),
    LoadFinding(CLAIM["p50_flat"],
                f"ratio of median p50s between {P50_FLAT[0]:g} and {P50_FLAT[1]:g}",
                _both(lambda b, w: bool(P50_FLAT[0] <= w["itl_p50"] / b["itl_p50"] <= P50_FLAT[1]))),
    # the sweep runs only the two ends of the ladder: what it sees is all six fixes at once,
    # so these two rows are named for that, not for the watermark alone
    LoadFinding("all six fixes together nearly end preemption (baseline vs last rung)",
                f"last rung's median preemptions at least {FALLS}x below a non-zero baseline level",
                _both(lambda b, w: None if not b["preempt_per_min"] > 0
                      else bool(w["preempt_per_min"] * FALLS <= b["preempt_per_min"]))),
    LoadFinding("all six fixes together raise time to first token (baseline vs last rung)",
                "last rung's median TTFT p50 above the baseline's (medians, not paired seeds)",
                _both(lambda b, w: bool(w["ttft_p50"] > b["ttft_p50"]))),
]


def _levels(loads) -> str:
    return ", ".join(f"{x:g}x" for x in loads) if loads else "none"


def load_findings(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (finding, forward): the loads (fractions of the operating point) at
    which it held, those at which it did not, and those where it could not be judged
    (the rung is missing at that load, or the mechanism never fired)."""
    cols = ["claim", "forward", "criterion", "held at", "did not hold at", "not testable at"]
    if frame is None or not len(frame):
        return pd.DataFrame(columns=cols)
    med = frame.groupby(["forward", "rung", "load"]).median(numeric_only=True)
    rows = []
    for fwd in sorted(set(frame["forward"])):
        loads = sorted(set(frame.loc[frame["forward"] == fwd, "load"]))
        for f in LOAD_FINDINGS:
            out = {True: [], False: [], None: []}
            for load in loads:
                b = med.loc[(fwd, BASELINE, load)] if (fwd, BASELINE, load) in med.index else None
                w = med.loc[(fwd, ADMIT_WATERMARK, load)] if (fwd, ADMIT_WATERMARK, load) in med.index else None
                out[f.holds(b, w)].append(load)
            rows.append({"claim": f.claim, "forward": fwd, "criterion": f.criterion,
                         "held at": _levels(out[True]), "did not hold at": _levels(out[False]),
                         "not testable at": _levels(out[None])})
    return pd.DataFrame(rows, columns=cols)


def load_findings_sentence(table: pd.DataFrame, n_seeds: int = 0, duration: float = float("nan")) -> str:
    """How to read load_findings(), or why it is empty."""
    if not len(table):
        return ("This build's profile ran no load sweep, so the loads at which the operating-point "
                "findings hold cannot be given.")
    seeds = f"{n_seeds} seed(s) of {duration:g} s per level" if n_seeds else "the sweep's seeds"
    return (f"Each row is one of the article's findings that depends on the operating point, for one "
            f"forward pass; the columns list the offered loads, as multiples of this build's operating "
            f"point, at which the medians over {seeds} met the criterion, did not, or could not be judged. "
            f"A finding that holds only near 1x belongs to the article's operating point; one that "
            f"holds at every level does not depend on it.")
