"""The engine's timeline as a piecewise-constant label rate, for whole-run queries.

Steps and their segments run one after another and GC pauses never overlap each
other, so the engine's time splits into elementary pieces, each with one rate
vector over the labels: a GC pause (rate 1 on ``gc``) beats the segment it lands
in, a segment puts rate 1 on its label (a decode segment puts ``f`` on graph and
``1 - f`` on the forward pass, ``f`` being its step's excess share), and time
outside both carries no rate (it becomes residual by subtraction).

The running integral of those rates at every piece boundary turns "what was the
engine doing during [a, b]" into two binary searches and a subtraction, for any
number of windows at once.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import threadclocks
from .baseline import Baseline, as_baseline, excess_share, fit_baseline
from .columns import GC, SEG, STEP
from .coverage import gc_within_s
from .schemes import DETAIL_KINDS, SEGMENT_KINDS, Scheme

MS = 1e3


@dataclass(frozen=True)
class RateTimeline:
    """Piecewise-constant rates: ``rate[:, k]`` holds on ``[edges[k], edges[k+1])``.

    Arrays are label-major (one contiguous row per label) because every operation
    below works on one label across many pieces or many query times.
    """

    edges: np.ndarray  # (m,) sorted, unique breakpoints, seconds
    rate: np.ndarray   # (L, m); the last column is zero (nothing runs after the last edge)
    cum: np.ndarray    # (L, m) ms charged from edges[0] to edges[k]

    @classmethod
    def from_intervals(cls, layers, n_labels: int) -> "RateTimeline":
        """``layers``: (starts, ends, rates (L, n)) triples, lowest priority first.
        Intervals within a layer must be disjoint; a later layer overrides earlier ones."""
        # each layer's boundaries interleaved (s0, e0, s1, e1, ...) are already sorted
        # for the engine's logs, which makes the stable sort below nearly free
        pts = [np.column_stack([s, e]).ravel() for s, e, _ in layers]
        edges = np.sort(np.concatenate(pts), kind="stable") if pts else np.zeros(0)
        if len(edges) > 1:
            edges = edges[np.concatenate([[True], edges[1:] != edges[:-1]])]
        m = len(edges)
        owner = np.full(m, -1, dtype=np.intp)   # (layer, interval) flattened id per piece
        offsets, all_rates = 0, []
        left = edges[:-1]
        for starts, ends, rates in layers:
            if len(starts):
                if not _sorted_by_start_then_end(starts, ends):
                    order = np.lexsort((ends, starts))  # empty intervals sort before a real one
                    starts, ends, rates = starts[order], ends[order], rates[:, order]
                j = np.searchsorted(starts, left, side="right") - 1
                inside = (j >= 0) & (ends[np.maximum(j, 0)] > left)
                owner[:-1][inside] = offsets + j[inside]
                offsets += len(starts)
            all_rates.append(rates)
        pool = np.concatenate(all_rates + [np.zeros((n_labels, 1))], axis=1)
        rate = np.take(pool, owner, axis=1)      # owner -1 picks the zero column
        cum = np.zeros((n_labels, m))
        if m > 1:
            np.cumsum(rate[:, :-1] * (np.diff(edges) * MS), axis=1, out=cum[:, 1:])
        return cls(edges, rate, cum)

    def integral(self, t) -> np.ndarray:
        """(L, len(t)): ms charged to each label from the beginning of time to t."""
        t = np.asarray(t, dtype=float)
        if len(self.edges) == 0:
            return np.zeros((self.rate.shape[0], t.size))
        k = np.searchsorted(self.edges, t, side="right") - 1
        kk = np.maximum(k, 0)
        out = np.take(self.cum, kk, axis=1) + np.take(self.rate, kk, axis=1) * ((t - self.edges[kk]) * MS)
        out[:, k < 0] = 0.0
        return out

    def charge(self, a, b) -> np.ndarray:
        """(L, n): ms charged to each label over the windows [a_i, b_i]."""
        return self.integral(b) - self.integral(a)


def _sorted_by_start_then_end(s, e) -> bool:
    ds = np.diff(s)
    return bool(((ds > 0) | ((ds == 0) & (np.diff(e) >= 0))).all())


@dataclass(frozen=True)
class EngineTimeline:
    """A run's engine activity by label, plus what the decode split needed."""

    rates: RateTimeline
    scheme: Scheme
    baseline: Baseline | None
    step_decode_ms: np.ndarray   # GC-free decode ms per step
    step_excess_share: np.ndarray  # graph-miss share of each step's decode time

    @classmethod
    def from_log(cls, log, scheme: Scheme, baseline=None) -> "EngineTimeline":
        steps, segs, gcs = log.steps, log.segs, log.gcs
        labels = scheme.labels
        step_of = segs[:, SEG.step].astype(np.intp)
        kind = segs[:, SEG.kind].astype(np.intp)
        a, b = segs[:, SEG.t0], segs[:, SEG.t1]
        gstart, gend = gcs[:, GC.t0], gcs[:, GC.t1]

        # GC-free decode time per step: the quantity both the fit and the split use
        split_codes = [SEGMENT_KINDS.index(k) for k in scheme.split_kinds]
        dec = np.isin(kind, split_codes)
        net_s = (b[dec] - a[dec]) - gc_within_s(gcs, a[dec], b[dec])
        decode_ms = np.bincount(step_of[dec], weights=net_s, minlength=len(steps)) * MS

        graph, n_decode = steps[:, STEP.graph], steps[:, STEP.n_decode]
        captured = graph > 0
        base = as_baseline(baseline)
        if baseline is None:
            base = fit_baseline(graph[captured], decode_ms[captured])
        share = np.zeros(len(steps))
        eager = graph == 0
        if base is not None and eager.any():
            share[eager] = excess_share(decode_ms[eager], base.ms_at(n_decode[eager]))

        seg_rate = np.zeros((len(labels), len(segs)))
        for code, name in enumerate(SEGMENT_KINDS):
            cols = kind == code
            if name in scheme.split_kinds:
                f = share[step_of[cols]]
                seg_rate[labels.index(scheme.excess), cols] = f
                seg_rate[labels.index(scheme.forward), cols] = 1.0 - f
            elif scheme.detail_label is None:
                seg_rate[labels.index(scheme.segment_label[name]), cols] = 1.0
        gc_rate = np.zeros((len(labels), len(gcs)))
        gc_rate[labels.index(scheme.gc)] = 1.0
        layers = [(a, b, seg_rate), (gstart, gend, gc_rate)]
        if scheme.detail_label is not None or scheme.bookkeeping or scheme.offcpu:
            layers = _refine(log, scheme, seg_rate, dec) + layers[1:]

        rates = RateTimeline.from_intervals(layers, len(labels))
        return cls(rates, scheme, base, decode_ms, share)


def _refine(log, scheme: Scheme, seg_rate: np.ndarray, split: np.ndarray) -> list:
    """The refined scheme's layers below GC: the steps' untagged time, then segments
    labelled by their finer kind, bookkeeping when they processed nothing, and with
    their clock interval's off-CPU share moved to the off-CPU label."""
    labels, segs, steps = scheme.labels, log.segs, log.steps
    if scheme.detail_label is not None:
        fine = threadclocks.segment_detail(log)
        for code, name in enumerate(DETAIL_KINDS):
            cols = (fine == code) & ~split
            seg_rate[labels.index(scheme.detail_label[name]), cols] = 1.0
    if scheme.bookkeeping:
        idle = (threadclocks.segment_work(log) == 0) & ~split
        seg_rate[:, idle] = 0.0
        seg_rate[labels.index(scheme.bookkeeping), idle] = 1.0
    # under the segments, each step's untagged time: whole steps, or with clocks the
    # clock intervals that tile them, so each moment gets its own interval's share
    under_a, under_b = steps[:, STEP.t0], steps[:, STEP.t1]
    if scheme.offcpu:
        iv = threadclocks.clock_intervals(log)
        share = iv.offcpu_share()
        seg_off = share[iv.of(segs[:, SEG.t1])]
        seg_rate *= 1.0 - seg_off
        seg_rate[labels.index(scheme.offcpu)] += seg_off
        under_a, under_b = iv.start, iv.end
    under_rate = np.zeros((len(labels), len(under_a)))
    if scheme.bookkeeping:
        under_rate[labels.index(scheme.bookkeeping)] = 1.0
    if scheme.offcpu:
        under_rate *= 1.0 - share
        under_rate[labels.index(scheme.offcpu)] += share
    layers = [(segs[:, SEG.t0], segs[:, SEG.t1], seg_rate)]
    if scheme.bookkeeping or scheme.offcpu:
        layers.insert(0, (under_a, under_b, under_rate))
    return layers
