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
from .ranges import concat_ranges, run_starts
from .schemes import DETAIL_KINDS, SEGMENT_KINDS, Scheme

MS = 1e3


@dataclass(frozen=True)
class RateTimeline:
    """Piecewise-constant rates: piece ``k``, ``[start[k], end[k])``, runs at the rate
    column ``pool[:, owner[k]]``. The pieces are sorted and disjoint, and only those some
    interval owns are kept: time between them (about half the pieces of an engine
    timeline, the idle moments between segments) carries no rate.

    The running integral is kept per label, and only at the pieces where that label's
    rate is nonzero: a piece charges one or two labels of the scheme's seven, so a
    dense (labels, pieces) table would be mostly zeros that a first call still pays
    to write. Adding 0.0 changes no float, so each label's sum over its own pieces is
    exactly the dense running sum.
    """

    start: np.ndarray    # (m,) sorted piece starts, seconds
    end: np.ndarray      # (m,) piece ends: start[k] < end[k] <= start[k + 1]
    owner: np.ndarray    # (m,) column of ``pool`` for each piece
    pool: np.ndarray     # (L, n + 1) rate columns; the last is zero, so -1 reads it
    pieces: tuple        # per label: sorted indices of the pieces it has a rate on
    before: tuple        # per label: ms charged before each of those pieces, then in all

    @property
    def n_labels(self) -> int:
        return self.pool.shape[0]

    @classmethod
    def from_intervals(cls, layers, n_labels: int) -> "RateTimeline":
        """``layers``: (starts, ends, rates (L, n)) triples, lowest priority first.
        Intervals within a layer must be disjoint; a later layer overrides earlier ones."""
        pool = np.concatenate([rates for _, _, rates in layers] + [np.zeros((n_labels, 1))], axis=1)
        first = np.cumsum([0] + [len(starts) for starts, _, _ in layers[:-1]])
        return cls.from_pool([(s, e, int(c)) for (s, e, _), c in zip(layers, first)], pool)

    @classmethod
    def from_pool(cls, layers, pool: np.ndarray) -> "RateTimeline":
        """As from_intervals, with every layer's rates already in one array: ``layers``
        are (starts, ends, first column of ``pool``) triples, and ``pool``'s last column
        is zero (a caller that fills it in place spares a copy of every rate)."""
        start, end, owner = _owned_pieces(layers)
        span_ms = end - start
        span_ms *= MS
        nonzero = pool != 0
        pieces, before = [], []
        for lab in range(pool.shape[0]):
            k = np.flatnonzero(nonzero[lab].take(owner))
            charged = pool[lab].take(owner.take(k)) * span_ms.take(k)
            pieces.append(k)
            before.append(np.concatenate([[0.0], np.cumsum(charged)]))
        return cls(start, end, owner, pool, tuple(pieces), tuple(before))

    def integral(self, t) -> np.ndarray:
        """(L, len(t)): ms charged to each label from the beginning of time to t."""
        t = np.asarray(t, dtype=float)
        if len(self.start) == 0:
            return np.zeros((self.n_labels, t.size))
        k = np.searchsorted(self.start, t, side="right") - 1   # the last piece started by t
        kk = np.maximum(k, 0)
        inside = self.end.take(kk) > t
        inside &= k >= 0
        done = k + 1 - inside     # pieces wholly before t
        # the piece t is inside charges its rate up to t; the pool's last column is zero
        out = np.take(self.pool, np.where(inside, self.owner.take(kk), -1), axis=1)
        out *= (t - self.start.take(kk)) * MS
        for lab, (pieces, before) in enumerate(zip(self.pieces, self.before)):
            out[lab] = before[np.searchsorted(pieces, done)] + out[lab]
        return out

    def charge(self, a, b) -> np.ndarray:
        """(L, n): ms charged to each label over the windows [a_i, b_i]."""
        return self.integral(b) - self.integral(a)


def _owned_pieces(layers):
    """(start, end, owner) of every piece some interval owns, in time order. ``layers``:
    (starts, ends, first pool column) triples, lowest priority first.

    Most of an engine timeline is segments that no GC pause comes near, and such a
    segment is a piece by itself: only the largest layer's intervals near another
    layer's go through the general merge, with the other layers (on the article
    engine's light-load log, 1 segment of 201,166 is near one of its 1,567 GC pauses).
    The pieces are those the merge of every boundary cuts, so every float downstream
    is the same."""
    if not layers:
        return np.zeros(0), np.zeros(0), np.zeros(0, dtype=np.intp)
    big = max(range(len(layers)), key=lambda j: len(layers[j][0]))
    numbered = [(s, e, np.arange(len(s)) + c) for j, (s, e, c) in enumerate(layers) if j != big]
    s, e, c = layers[big]
    near = _near(s, e, numbered)
    if near is None:
        numbered.insert(big, (s, e, np.arange(len(s)) + c))
        return _merged_pieces(numbered)
    i = np.flatnonzero(near)
    numbered.insert(big, (s.take(i), e.take(i), i + c))
    start, end, owner = _merged_pieces(numbered)
    alone = np.flatnonzero(~near & (e > s))     # an empty interval owns nothing
    s, e = s.take(alone), e.take(alone)
    at = np.searchsorted(s, start)              # no two pieces start together
    return np.insert(s, at, start), np.insert(e, at, end), np.insert(alone + c, at, owner)


def _near(s, e, others):
    """A mask of the intervals [s, e) of one layer that an interval of ``others`` overlaps,
    lies inside or has a boundary inside: all the others are pieces by themselves. None
    when the layer's boundaries are not in order (s0 <= e0 <= s1 <= ...), or when the
    other layers reach most of its intervals (the refined scheme's segments, each inside
    its step), where the general merge is as quick; an interval two layers reach counts
    twice there, which can only send a timeline to the general merge."""
    if len(s) and not (np.all(e >= s) and np.all(s[1:] >= e[:-1])):
        return None
    # the intervals ending after another starts and starting before it ends: they
    # overlap it, or hold one of its boundaries (an empty one's too)
    ranges = [(np.searchsorted(e, os_, side="right"), np.searchsorted(s, oe, side="left"))
              for os_, oe, _ in others]
    if 2 * sum(int(np.maximum(hi - lo, 0).sum()) for lo, hi in ranges) > len(s):
        return None
    near = np.zeros(len(s), dtype=bool)
    for lo, hi in ranges:
        near[concat_ranges(lo, hi)[0]] = True
    return near


def _merged_pieces(layers):
    """_owned_pieces by merging every boundary of every layer: the edges are the distinct
    boundaries in order, the pieces lie between consecutive edges, and each is owned by
    the last layer's interval that covers it. ``layers``: (starts, ends, pool columns)."""
    # Every start and end is an edge; each layer's boundaries laid out s0, e0, s1, e1, ...
    pts = []
    for starts, ends, _ in layers:
        p = np.empty(2 * len(starts))
        p[0::2], p[1::2] = starts, ends
        pts.append(p)
    points = np.concatenate(pts) if pts else np.zeros(0)
    # The edges are the distinct boundaries in order. A layer's intervals are disjoint
    # and logged in time order, so its boundaries form one sorted run, and a stable sort
    # merges those few runs in linear time (np.unique's general sort is slower).
    order = np.argsort(points, kind="stable")
    ordered = points.take(order)
    new = run_starts(ordered)
    edges = ordered[new]
    edge_of = np.empty(len(points), dtype=np.intp)   # each boundary's edge
    edge_of[order] = np.cumsum(new) - 1
    owner = np.full(len(edges), -1, dtype=np.intp)   # pool column per piece, -1 = none
    first = 0
    for p, (_, _, columns) in zip(pts, layers):
        # an interval owns the pieces from its start's edge up to its end's (none if
        # empty); a later layer overwrites. A layer's intervals are disjoint, so are
        # their pieces, and the order they are written in does not matter: the many
        # that own one piece each in one go
        lo, hi = edge_of[first:first + len(p):2], edge_of[first + 1:first + len(p):2]
        first += len(p)
        one = hi - lo == 1
        owner[lo[one]] = columns[one]
        other = np.flatnonzero(~one)
        positions, which = concat_ranges(lo.take(other), hi.take(other))
        owner[positions] = columns.take(other.take(which))
    owned = np.flatnonzero(owner[:-1] >= 0)   # the last piece, after every edge, is never owned
    return edges.take(owned), edges.take(owned + 1), owner.take(owned)


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
        dec = np.zeros(len(kind), dtype=bool)
        for name in scheme.split_kinds:     # not np.isin: its general method took 2 ms here
            dec |= kind == SEGMENT_KINDS.index(name)
        a_dec, b_dec = a[dec], b[dec]
        net_s = (b_dec - a_dec) - gc_within_s(gcs, a_dec, b_dec)
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

        # segment rates, then GC rates, then the zero column every rate table ends
        # with: filled in place, one array for the timeline to index
        pool = np.zeros((len(labels), len(segs) + len(gcs) + 1))
        seg_rate, gc_rate = pool[:, :len(segs)], pool[:, len(segs):-1]
        for code, name in enumerate(SEGMENT_KINDS):
            cols = kind == code
            if name in scheme.split_kinds:
                f = share[step_of[cols]]
                seg_rate[labels.index(scheme.excess), cols] = f
                seg_rate[labels.index(scheme.forward), cols] = 1.0 - f
            elif scheme.detail_label is None:
                seg_rate[labels.index(scheme.segment_label[name]), cols] = 1.0
        gc_rate[labels.index(scheme.gc)] = 1.0
        if scheme.detail_label is not None or scheme.bookkeeping or scheme.offcpu:
            layers = _refine(log, scheme, seg_rate, dec) + [(gstart, gend, gc_rate)]
            rates = RateTimeline.from_intervals(layers, len(labels))
        else:
            rates = RateTimeline.from_pool([(a, b, 0), (gstart, gend, len(segs))], pool)
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
