"""Labels, causes and the attribution scheme.

A *scheme* says which label each kind of engine time goes to.  Keeping it as data
(one frozen dataclass per scheme) means the scalar partitioner, the whole-run path
and the oracle in the tests all read the same mapping, and a later scheme with
more labels is a new table entry, not edits scattered through the code.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

# Raw-log codes (DESIGN.md, "The raw log").  Position in the tuple = the code.
SEGMENT_KINDS: tuple[str, ...] = ("tok", "swap", "prefill", "decode")
# Finer kinds of the extra array seg_detail (schema 1 and later); position = code.
# "reprefill": a recompute victim's KV rebuilt by prefill (engine preempt_mode "recompute");
# what the other requests pay for it is prefill work, labelled prefill like first-time prefill.
DETAIL_KINDS: tuple[str, ...] = ("tok", "swap_in", "kv_reserve", "prefill", "decode", "reprefill")
GRAPH_NONE = -1   # the step decoded nothing
GRAPH_EAGER = 0   # decode ran per sequence (no captured size was large enough)


@dataclass(frozen=True)
class Scheme:
    """How engine time maps onto labels, and the primary-cause rule."""

    name: str
    causes: tuple[str, ...]
    forward: str                      # decode forward pass ("kernel" in the article)
    uncovered: str                    # time no instrument covered
    gc: str                           # a GC pause, whatever it interrupted
    evicted: str                      # time the request itself sat evicted
    excess: str                       # eager decode time above the captured baseline
    segment_label: Mapping[str, str]  # segment kind -> label
    split_kinds: frozenset = field(default_factory=frozenset)  # kinds split excess/forward
    # finer schemes read the raw log's extra arrays (schema 1 and later):
    detail_label: Mapping[str, str] | None = None  # seg_detail kind -> label, instead of segment_label
    bookkeeping: str | None = None    # segments that processed nothing, and untagged time in a step
    offcpu: str | None = None         # time inside a step with the engine thread off the CPU
    floor_ms: float = 1.0             # a primary cause must own at least this much ...
    min_fraction: float = 0.25        # ... and at least this fraction of the gap

    @property
    def labels(self) -> tuple[str, ...]:
        return self.causes + (self.forward, self.uncovered)

    def index(self, label: str) -> int:
        return self.labels.index(label)


ARTICLE = Scheme(
    name="article",
    causes=("prefill", "preempt", "graph", "gc", "tok"),
    forward="kernel",
    uncovered="residual",
    gc="gc",
    evicted="preempt",
    excess="graph",
    # swap is the KV copy-out/in done for someone's preemption, so it is preempt time
    segment_label=MappingProxyType(
        {"tok": "tok", "swap": "preempt", "prefill": "prefill", "decode": "kernel"}),
    split_kinds=frozenset({"decode"}),
)

# The refined scheme fixes two blind spots of the article's tags (book/checking):
# a segment that did nothing (a KV reservation that evicted nobody, a swap-in or
# prefill pass with nothing to do) is scheduler bookkeeping, not its cause; and time
# inside a step while the engine thread was off the CPU is the operating system's.
REFINED = Scheme(
    name="refined",
    causes=("prefill", "preempt", "graph", "gc", "tok", "os", "sched"),
    forward="kernel",
    uncovered="residual",
    gc="gc",
    evicted="preempt",
    excess="graph",
    segment_label=ARTICLE.segment_label,
    split_kinds=frozenset({"decode"}),
    detail_label=MappingProxyType({"tok": "tok", "swap_in": "preempt", "kv_reserve": "preempt",
                                   "prefill": "prefill", "decode": "kernel", "reprefill": "prefill"}),
    bookkeeping="sched",
    offcpu="os",
)

SCHEMES: dict[str, Scheme] = {ARTICLE.name: ARTICLE, REFINED.name: REFINED}

CAUSES: list[str] = list(ARTICLE.causes)
LABELS: list[str] = list(ARTICLE.labels)
CLEAN = "clean"


def get_scheme(scheme: str | Scheme = "article") -> Scheme:
    if isinstance(scheme, Scheme):
        return scheme
    try:
        return SCHEMES[scheme]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown attribution scheme {scheme!r}; valid schemes: {sorted(SCHEMES)}") from None


def primary_cause(gap_ms: float, parts: Mapping[str, float], scheme: str | Scheme = "article") -> str:
    """The gap's primary cause: its largest cause, if that owns at least
    ``floor_ms`` and ``min_fraction`` of the gap; otherwise ``"clean"``.

    Ties go to the cause listed first, so the rule is deterministic.
    """
    sch = get_scheme(scheme)
    best = sch.causes[0]
    for c in sch.causes[1:]:
        if parts[c] > parts[best]:
            best = c
    ms = parts[best]
    return best if ms >= sch.floor_ms and ms >= sch.min_fraction * gap_ms else CLEAN
