"""The scalar partitioner: one gap at a time, written to be read.

Every millisecond of a gap [t0, t1] between two tokens of a request goes to
exactly one label (article scheme):

* while the request is evicted, the time is ``preempt``; what the engine ran
  meanwhile is returned separately as *context* and never added to the gap;
* otherwise a GC pause wins over whatever segment it interrupted (``gc``);
* the rest of each segment goes to its label: tok, swap -> preempt, prefill;
* decode time splits into ``graph`` (graph-miss excess) and ``kernel`` (the forward
  pass) by the step's excess share (baseline.py), applied to the part of the
  segment that lies inside the gap;
* whatever no segment or pause covers is ``residual``.

So the parts sum to the gap.  The whole-run path (gaps.py) computes the same
thing for all gaps at once and is tested against this class.
"""
from __future__ import annotations

import bisect
from typing import Iterable, Sequence

from .baseline import Baseline, as_baseline, fit_baseline
from .baseline import excess_share as graph_excess_share
from .intervals import DisjointIntervals, clipped_evictions, complement, _finite
from .schemes import SEGMENT_KINDS, Scheme, get_scheme

MS = 1e3  # seconds -> milliseconds


class Partitioner:
    """Partition single gaps.

    ``steps``: dicts with ``t0, t1`` (s), ``seg`` (tuple of (kind, start, end), kind in
    tok/swap/prefill/decode), ``graph`` (None, ``"eager"`` or the padded size) and
    ``n_decode``; in time order and disjoint.  ``gcs``: (start, end) pauses, disjoint.
    ``baseline``: ``(slope, intercept)`` in ms per padded size, or None to fit it on
    the captured-path steps.
    """

    def __init__(self, steps: Sequence[dict], gcs: Iterable = (), baseline=None,
                 scheme: str | Scheme = "article"):
        self.scheme = get_scheme(scheme)
        if self.scheme.detail_label is not None or self.scheme.bookkeeping or self.scheme.offcpu:
            raise ValueError(f"the scalar Partitioner reads the article's arrays only; scheme "
                             f"{self.scheme.name!r} needs the raw log's extras: use partition_run")
        self.pauses = DisjointIntervals(((g[0], g[1]) for g in gcs), "GC pauses")
        self.steps = [self._checked_step(i, s) for i, s in enumerate(steps)]
        for i in range(1, len(self.steps)):
            if self.steps[i]["t0"] < self.steps[i - 1]["t1"]:
                raise ValueError(f"step {i} starts before step {i - 1} ends: "
                                 f"steps must be sorted by time and must not overlap")
        self._starts = [s["t0"] for s in self.steps]
        self._share: dict[int, float] = {}
        self.baseline: Baseline | None = as_baseline(baseline)
        if baseline is None:
            captured = [(s["graph"], self.decode_ms(s)) for s in self.steps
                        if _is_padded_size(s["graph"])]
            self.baseline = fit_baseline([x for x, _ in captured], [y for _, y in captured])

    # ---------------------------------------------------------------- public
    def gap(self, t0: float, t1: float, evictions: Iterable = ()) -> tuple[dict, dict]:
        """Partition [t0, t1] (s).  Returns ``(parts, context)``, dicts of ms by label.

        ``evictions``: the request's (evicted, readmitted or None) pairs; those outside
        the gap are ignored.  ``sum(parts.values())`` equals the gap.
        """
        t0, t1 = _finite(t0, "gap start"), _finite(t1, "gap end")
        if t1 < t0:
            raise ValueError(f"gap ends before it starts ({t1} < {t0})")
        parts = dict.fromkeys(self.scheme.labels, 0.0)
        context = dict.fromkeys(self.scheme.labels, 0.0)
        away = clipped_evictions(t0, t1, evictions)
        for a, b in away:
            parts[self.scheme.evicted] += (b - a) * MS
            self._attribute(a, b, self._evicted_activity_target(parts, context))
        for a, b in complement(t0, t1, away):
            self._attribute(a, b, parts)
        return parts, context

    def decode_ms(self, step: dict) -> float:
        """The step's decode time with GC pauses taken out (ms)."""
        return sum((b - a) - self.pauses.overlap(a, b)
                   for kind, a, b in step["seg"] if kind in self.scheme.split_kinds) * MS

    def excess_share(self, i: int) -> float:
        """Share of step i's decode time that is graph-miss excess (0 unless eager)."""
        if i not in self._share:
            st = self.steps[i]
            share = 0.0
            if st["graph"] == "eager" and self.baseline is not None:
                share = graph_excess_share(self._step_total_ms(st), self.baseline.ms_at(st["n_decode"]))
            self._share[i] = share
        return self._share[i]

    # ------------------------------------------------------- the two v1 hooks
    def _evicted_activity_target(self, parts: dict, context: dict) -> dict:
        """Where the engine's activity during an eviction is recorded: context only."""
        return context

    def _step_total_ms(self, step: dict) -> float:
        """The decode total compared with the baseline: GC-free, like the baseline."""
        return self.decode_ms(step)

    # ---------------------------------------------------------------- inside
    def _attribute(self, a: float, b: float, into: dict) -> None:
        """Add the engine's activity over [a, b] to ``into`` (ms by label)."""
        sch = self.scheme
        gc = self.pauses.overlap(a, b)
        into[sch.gc] += gc * MS
        accounted = gc
        for i, kind, lo, hi in self._segments_within(a, b):
            free = (hi - lo) - self.pauses.overlap(lo, hi)  # the GC in it is charged above
            accounted += free
            if kind in sch.split_kinds:
                f = self.excess_share(i)
                into[sch.excess] += free * f * MS
                into[sch.forward] += free * (1.0 - f) * MS
            else:
                into[sch.segment_label[kind]] += free * MS
        into[sch.uncovered] += ((b - a) - accounted) * MS

    def _segments_within(self, a: float, b: float):
        """(step index, kind, start, end) of every segment clipped to [a, b]."""
        i = max(0, bisect.bisect_right(self._starts, a) - 1)  # the step in progress at a
        while i < len(self.steps) and self.steps[i]["t0"] < b:
            for kind, s, e in self.steps[i]["seg"]:
                lo, hi = max(s, a), min(e, b)
                if hi > lo:
                    yield i, kind, lo, hi
            i += 1

    @staticmethod
    def _checked_step(i: int, s: dict) -> dict:
        t0, t1 = _finite(s["t0"], f"step {i} t0"), _finite(s["t1"], f"step {i} t1")
        if t1 < t0:
            raise ValueError(f"step {i} ends before it starts ({t1} < {t0})")
        graph = s.get("graph")
        if not (graph is None or graph == "eager" or _is_padded_size(graph)):
            raise ValueError(f"step {i}: unknown graph value {graph!r} (None, 'eager' or a padded size)")
        segs = []
        for kind, a, b in s.get("seg", ()):
            if kind not in SEGMENT_KINDS:
                raise ValueError(f"step {i}: unknown segment kind {kind!r} (one of {SEGMENT_KINDS})")
            a, b = _finite(a, f"step {i} segment start"), _finite(b, f"step {i} segment end")
            if b < a:
                raise ValueError(f"step {i}: {kind} segment ends before it starts ({b} < {a})")
            if a < t0 or b > t1:
                raise ValueError(f"step {i}: {kind} segment [{a}, {b}] lies outside the step [{t0}, {t1}]")
            segs.append((kind, a, b))
        segs.sort(key=lambda x: (x[1], x[2]))
        for (k0, _, b0), (k1, a1, _) in zip(segs, segs[1:]):
            if a1 < b0:
                raise ValueError(f"step {i}: segments {k0} and {k1} overlap")
        return {**s, "t0": t0, "t1": t1, "seg": tuple(segs),
                "n_decode": int(s.get("n_decode", 0)), "graph": graph}


def _is_padded_size(graph) -> bool:
    return (not isinstance(graph, (str, bool)) and graph is not None
            and float(graph) == int(graph) and int(graph) > 0)
