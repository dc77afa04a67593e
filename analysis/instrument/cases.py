"""Small controlled timelines with known answers: the article's six partition cases and
the reviewer's two, which exposed the first version's bugs.

They are data, so the same cases drive the tests and the book's partition chapter.
Times are seconds; expected parts are ms (labels not listed are zero).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from ..core.schemes import CAUSES, LABELS


def step(t0, t1, segs, graph=16, n=1) -> dict:
    return {"t0": t0, "t1": t1, "seg": tuple(segs), "graph": graph, "n_decode": n}


@dataclass(frozen=True)
class Case:
    name: str
    story: str
    steps: list
    t0: float
    t1: float
    gcs: list = field(default_factory=list)
    evictions: list = field(default_factory=list)
    baseline: tuple = (0.0, 10.0)
    parts: dict = field(default_factory=dict)       # the correct partition (ms)
    context: dict = field(default_factory=dict)     # engine work while evicted (ms)

    @property
    def gap_ms(self) -> float:
        return (self.t1 - self.t0) * 1e3


EVICTED = Case(
    "evicted, then decoded",
    "A 40 ms gap: the request sits evicted for 30 ms while another request is prefilled, "
    "then a 10 ms captured decode emits its token.",
    [step(0.000, 0.030, [("prefill", 0.000, 0.030)], graph=None, n=0),
     step(0.030, 0.040, [("decode", 0.030, 0.040)])],
    0.0, 0.040, evictions=[(0.0, 0.030)],
    parts={"preempt": 30, "kernel": 10}, context={"prefill": 30})

GC_IN_EAGER = Case(
    "GC inside an eager decode",
    "A 30 ms eager decode of one sequence, 20 ms of which is a GC pause; the captured "
    "baseline for one sequence is 10 ms, so the step did no extra work.",
    [step(0.000, 0.030, [("decode", 0.000, 0.030)], graph="eager", n=1)],
    0.0, 0.030, gcs=[(0.005, 0.025)],
    parts={"gc": 20, "kernel": 10})

ARTICLE_CASES = [
    EVICTED,
    GC_IN_EAGER,
    Case("real graph excess next to GC",
         "A 40 ms eager decode: 10 ms GC and 30 ms of work against a 10 ms baseline, "
         "so 20 ms is genuine graph-miss excess.",
         [step(0.000, 0.040, [("decode", 0.000, 0.040)], graph="eager", n=1)],
         0.0, 0.040, gcs=[(0.010, 0.020)],
         parts={"gc": 10, "graph": 20, "kernel": 10}),
    Case("gap covers half a decode",
         "The gap holds only the second half of a 40 ms eager decode whose excess share is "
         "75%: the half is split in the same proportion.",
         [step(0.000, 0.040, [("decode", 0.000, 0.040)], graph="eager", n=1)],
         0.020, 0.040, parts={"graph": 15, "kernel": 5}),
    Case("GC between steps, and residual",
         "A token at 10 ms, a 28 ms GC pause outside any segment, the next decode at 45-50 ms; "
         "the 7 ms no instrument covered is residual.",
         [step(0.000, 0.045, [("decode", 0.000, 0.010)]),
          step(0.045, 0.050, [("decode", 0.045, 0.050)])],
         0.010, 0.050, gcs=[(0.012, 0.040)], baseline=(0.0, 5.0),
         parts={"gc": 28, "kernel": 5, "residual": 7}),
    Case("every segment kind in one step",
         "One 50 ms step that tokenizes, swaps, prefills and decodes.",
         [step(0.0, 0.050, [("tok", 0.000, 0.005), ("swap", 0.005, 0.007),
                            ("prefill", 0.007, 0.040), ("decode", 0.040, 0.048)])],
         0.0, 0.050, baseline=(0.0, 8.0),
         parts={"tok": 5, "preempt": 2, "prefill": 33, "kernel": 8, "residual": 2}),
]

# The reviewer's two cases, with what the first version charged.
FIRST_VERSION_CHARGES = {
    EVICTED.name: {"preempt": 30, "prefill": 30, "kernel": 10},
    GC_IN_EAGER.name: {"gc": 20, "graph": 20 / 3, "kernel": 10 - 20 / 3},
}
REVIEWER_CASES = [EVICTED, GC_IN_EAGER]


def run_case(case: Case, partitioner_cls) -> tuple[dict, dict]:
    p = partitioner_cls(case.steps, case.gcs, baseline=case.baseline)
    return p.gap(case.t0, case.t1, case.evictions)


def comparison(cases, partitioners: dict) -> pd.DataFrame:
    """One row per (case, partitioner): the gap, each label's ms, the causes' total and
    the sum of all parts, which must equal the gap."""
    rows = []
    for case in cases:
        for who, cls in partitioners.items():
            parts, _ = run_case(case, cls)
            rows.append({"case": case.name, "partitioner": who, "gap ms": case.gap_ms,
                         **{k: parts[k] for k in LABELS},
                         "causes ms": sum(parts[c] for c in CAUSES),
                         "sum of parts ms": sum(parts.values())})
    return pd.DataFrame(rows).set_index(["case", "partitioner"])
