"""Partition every gap of a run at once (the fast path).

Same rules as the scalar Partitioner, organised for numpy:

1. order emissions by request (first appearance, as the article's analysis does)
   and pair consecutive tokens of a request into gaps;
2. read the engine timeline's running integral at every emission (once per step:
   a step's tokens share a timestamp): the difference between a gap's two reads is
   what the engine did during it;
3. for every (gap, eviction of that request) that overlap, take the evicted window
   out of the gap: its length becomes preempt, its engine activity becomes context;
4. residual is what is left, so every row sums to its gap by construction.

Evictions are few (at most about a thousand per run): two searches in its request's
run of gaps find each one's gaps, and nothing loops over gaps.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from .schemes import CLEAN, Scheme, get_scheme
from .columns import EMIT, EVICT
from .pairs import gap_pairs
from .ranges import concat_ranges
from .runlog import RunLog, load
from .timeline import MS, EngineTimeline

CONTEXT_PREFIX = "ctx_"


def as_log(log_or_path) -> RunLog:
    return log_or_path if isinstance(log_or_path, RunLog) else load(Path(log_or_path))


@dataclass(frozen=True, eq=False)
class Gaps:
    """Every inter-token gap of a run, as numpy arrays: what ``partition_run`` puts in a
    DataFrame, kept without pandas so that a summary does not pay for importing it.

    ``block`` holds every float column, one row each, in ``names`` order: t0, t1,
    gap_ms, one ms row per label, then ``ctx_<label>`` rows. ``request`` and
    ``token`` are made on first use (a summary reads neither)."""

    scheme: Scheme
    step0: np.ndarray
    step1: np.ndarray
    names: list
    block: np.ndarray
    n_evictions: np.ndarray
    cause: np.ndarray            # index into cause_names()
    attrs: dict
    # what request and token are made from: the rank (order of first appearance) of
    # each gap's request, each rank's request id and first row in analysis order, and
    # each gap's first row
    gap_rank: np.ndarray = field(repr=False)
    rid_of_rank: np.ndarray = field(repr=False)
    rank_start: np.ndarray = field(repr=False)
    first_row: np.ndarray = field(repr=False)

    def __len__(self) -> int:
        return self.block.shape[1]

    @cached_property
    def request(self) -> np.ndarray:
        """Each gap's request id."""
        return self.rid_of_rank.take(self.gap_rank)

    @cached_property
    def token(self) -> np.ndarray:
        """The token closing each gap, counted within its request (1 = the second token)."""
        token = self.rank_start.take(self.gap_rank)
        np.subtract(self.first_row, token, out=token)
        token += 1
        return token

    def row(self, name: str) -> np.ndarray:
        return self.block[self.names.index(name)]

    def parts(self) -> np.ndarray:
        """(gaps, labels), laid out as ``frame()[labels].to_numpy()`` is (column-major),
        so that reductions over it round exactly as they do over the frame."""
        i = self.names.index(self.scheme.labels[0])
        return self.block[i:i + len(self.scheme.labels)].T

    def cause_names(self) -> list[str]:
        return list(self.scheme.causes) + [CLEAN]

    def frame(self):
        """partition_run's DataFrame (pandas is imported here, on first use)."""
        import pandas as pd
        ints = pd.DataFrame({"request": self.request, "token": self.token,
                             "step0": self.step0, "step1": self.step1})
        floats = pd.DataFrame(self.block.T, columns=self.names, copy=False)
        df = pd.concat([ints, floats], axis=1)
        df["n_evictions"] = self.n_evictions
        df["cause"] = pd.Categorical.from_codes(self.cause, categories=self.cause_names())
        df.attrs.update(self.attrs)
        return df


def partition_run(log_or_path, scheme: str | Scheme = "article", baseline=None):
    """One row per inter-token gap (a pandas DataFrame): request, token, t0, t1 (s),
    step0, step1, gap_ms, one ms column per label, ``ctx_<label>`` (engine activity
    while the request was evicted: context, not part of the gap), n_evictions
    (evictions overlapping the gap) and the primary ``cause`` (categorical).

    ``baseline``: ``(slope, intercept)`` to override the fitted captured-path line.
    """
    return partition_gaps(log_or_path, scheme, baseline).frame()


def partition_gaps(log_or_path, scheme: str | Scheme = "article", baseline=None) -> Gaps:
    """partition_run's columns as numpy arrays (see Gaps)."""
    sch = get_scheme(scheme)
    log = as_log(log_or_path)
    tl = EngineTimeline.from_log(log, sch, baseline)
    labels = sch.labels
    n_lab = len(labels)
    i_evicted, i_unc = labels.index(sch.evicted), labels.index(sch.uncovered)

    order, rank, first, rids, rank_of, rank_start = gap_pairs(log.emissions, log.by_request)
    # A first call in a fresh process pays a page fault for every 4 KB of each new
    # array below 4 MB (numpy asks for huge pages only above that, and the allocator
    # hands freed memory back), so results are written where they stay (out=) and
    # the index arrays each gap needs are made once.
    t_em = log.emissions[:, EMIT.t].take(order)
    step_em = log.emissions[:, EMIT.step].take(order).astype(np.intp)
    n = len(first)
    # every float column lives in one (columns, gaps) block a DataFrame can adopt as is
    names = ["t0", "t1", "gap_ms", *labels, *(CONTEXT_PREFIX + lab for lab in labels)]
    block = np.zeros((len(names), n))
    t0, t1, gap_ms = block[0], block[1], block[2]
    parts, context = block[3:3 + n_lab], block[3 + n_lab:]
    # A gap's second token is the next row: the same index into the arrays shifted by
    # one. mode="clip" only because take buffers ``out`` otherwise (no index is out of range).
    t_em.take(first, out=t0, mode="clip")
    t_em[1:].take(first, out=t1, mode="clip")
    np.subtract(t1, t0, out=gap_ms)
    gap_ms *= MS
    step0, step1 = step_em.take(first), step_em[1:].take(first)
    reads = _timeline_reads(t_em, step_em, first, (step0, step1))
    gap_rank = rank.take(first)
    g, lo, hi = _eviction_overlaps(log.evictions, rids, rank_of, gap_rank, t0, t1)
    _engine_charge(tl, reads, out=parts)

    n_ev = np.zeros(n, dtype=np.int64)
    if len(g):
        n_ev = np.bincount(g, minlength=n)
        a, b = np.maximum(lo, t0[g]), np.minimum(hi, t1[g])
        live = b > a  # an eviction that only touches the gap takes nothing from it
        g, a, b = g[live], a[live], b[live]
        away = tl.rates.charge(a, b)
        # only the few gaps an eviction overlaps are touched: the context rows of all
        # the others stay the zeros they were allocated as
        hit, which = np.unique(g, return_inverse=True)
        ctx = np.stack([np.bincount(which, weights=away[j], minlength=len(hit)) for j in range(n_lab)])
        away_ms = np.bincount(which, weights=(b - a) * MS, minlength=len(hit))
        parts[:, hit] -= ctx
        parts[i_evicted, hit] += away_ms
        ctx[i_unc] = away_ms - (ctx.sum(axis=0) - ctx[i_unc])
        context[:, hit] = ctx

    parts[i_unc] = 0.0
    np.subtract(gap_ms, parts.sum(axis=0), out=parts[i_unc])

    rid_of_rank = np.empty(len(rids), dtype=np.int64)
    rid_of_rank[rank_of] = rids
    return Gaps(scheme=sch, step0=step0.astype(np.int64, copy=False), step1=step1.astype(np.int64, copy=False),
                names=names, block=block, n_evictions=n_ev, cause=cause_codes(gap_ms, parts, sch),
                attrs=dict(path=log.path, scheme=sch.name, rung=log.rung, seed=log.seed,
                           baseline=None if tl.baseline is None else
                           (tl.baseline.slope, tl.baseline.intercept)),
                gap_rank=gap_rank, rid_of_rank=rid_of_rank, rank_start=rank_start.astype(np.int64),
                first_row=first.astype(np.int64, copy=False))


def _timeline_reads(t_em, step_em, first, steps):
    """Where each gap's charge reads the engine timeline's running integral: (times to
    read it at, which columns of the table of reads they fill (None: all), and each
    gap's two columns). ``first``: each gap's first row in the ordered emissions (the
    second is the next); ``steps``: the steps the two were emitted in.

    All tokens of a step share one emission timestamp, so the integral is read once
    per step (thousands) rather than once per token (a hundred thousand); if a log
    breaks that, it is read per token. Kept because it is worth it: reading per token
    made a cold first summarize of the golden baseline log 14.5 ms slower (median of
    11 fresh processes, paired; bench_partition's numbers say where the time goes).
    """
    n_steps = int(step_em.max()) + 1 if len(step_em) else 0
    at_step = np.full(n_steps, np.nan)
    at_step[step_em] = t_em
    if np.array_equal(at_step[step_em], t_em):
        used = ~np.isnan(at_step)
        return at_step[used], used, *steps
    return t_em, None, first, first + 1


def _engine_charge(tl: EngineTimeline, reads, out: np.ndarray) -> np.ndarray:
    """(labels, gaps), into ``out``: ms the engine timeline charges between each gap's
    two tokens, read where ``_timeline_reads`` says."""
    times, used, a, b = reads
    if used is None:
        table = tl.rates.integral(times)
    else:
        table = np.zeros((tl.rates.n_labels, len(used)))
        table[:, used] = tl.rates.integral(times)
    # A label at a time, into ``out`` and one scratch row: two (labels, gaps) temporaries
    # would be fresh memory, and a first call pays a page fault for every 4 KB of it.
    # mode="clip" only because take buffers ``out`` otherwise (no index is out of range).
    scratch = np.empty(len(a))
    for row, read in zip(out, table):
        read.take(b, out=row, mode="clip")
        row -= read.take(a, out=scratch, mode="clip")
    return out


def cause_codes(gap_ms: np.ndarray, parts: np.ndarray, scheme: Scheme) -> np.ndarray:
    """Vectorized primary_cause: index into scheme.causes, len(causes) for clean.
    ``parts`` rows are scheme.labels, which start with the causes in order."""
    best = np.zeros(len(gap_ms), dtype=np.int8)
    top = parts[0].copy()
    for j in range(1, len(scheme.causes)):  # strict '>': ties keep the earlier cause
        wins = parts[j] > top
        best[wins] = j
        np.maximum(top, parts[j], out=top)
    ok = (top >= scheme.floor_ms) & (top >= scheme.min_fraction * gap_ms)
    return np.where(ok, best, np.int8(len(scheme.causes)))


def _eviction_overlaps(evictions, rids, rank_of, gap_rank, t0, t1):
    """(gap index, evicted, readmitted) for every gap/eviction pair of the same request
    with evicted < t1 and readmitted > t0; readmitted NaN (never readmitted) = +inf.

    Gaps are sorted by request rank, then time, so a request's gaps are one run and
    two searches in it find an eviction's gaps. A loop over evictions: a run has at
    most about a thousand (11 in the median run of the book's cache).
    """
    empty = np.zeros(0, np.intp), np.zeros(0), np.zeros(0)
    if not len(evictions) or not len(gap_rank):
        return empty
    rid, a, b = evictions[:, EVICT.request], evictions[:, EVICT.evicted], evictions[:, EVICT.readmitted]
    b = np.where(np.isnan(b), np.inf, b)
    k = np.minimum(np.searchsorted(rids, rid), len(rids) - 1)
    known = rids[k] == rid              # a request that never emitted has no gaps
    r = rank_of[k]
    first, last = np.searchsorted(gap_rank, r, side="left"), np.searchsorted(gap_rank, r, side="right")
    j0, j1 = np.zeros(len(rid), np.intp), np.zeros(len(rid), np.intp)
    for i in np.flatnonzero(known):
        lo, hi = first[i], last[i]
        j0[i] = lo + np.searchsorted(t1[lo:hi], a[i], side="right")   # first gap ending after a
        j1[i] = lo + np.searchsorted(t0[lo:hi], b[i], side="left")    # first gap starting at/after b
    n = np.maximum(j1 - j0, 0)
    if not n.sum():
        return empty
    # each eviction's run of gaps: j0 .. j1 - 1
    pos, which = concat_ranges(j0, j0 + n)
    return pos, a[which], b[which]
