"""Partition every gap of a run at once (the fast path).

Same rules as the scalar Partitioner, organised for numpy:

1. order emissions by request (first appearance, as the article's analysis does)
   and pair consecutive tokens of a request into gaps;
2. read the engine timeline's running integral once per emission: the difference
   between neighbours is what the engine did during each gap;
3. for every (gap, eviction of that request) that overlap, take the evicted window
   out of the gap: its length becomes preempt, its engine activity becomes context;
4. residual is what is left, so every row sums to its gap by construction.

Evictions are few (tens to hundreds per run), so step 3 finds each one's gaps with
a binary search in a short Python loop; nothing loops over gaps.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .schemes import CLEAN, Scheme, get_scheme
from .columns import EMIT, EVICT
from .runlog import RunLog, load
from .timeline import MS, EngineTimeline

CONTEXT_PREFIX = "ctx_"


def as_log(log_or_path) -> RunLog:
    return log_or_path if isinstance(log_or_path, RunLog) else load(Path(log_or_path))


def gap_pairs(emissions: np.ndarray):
    """Emission rows in analysis order, and the index of each gap's first token in it.

    Requests are ordered by first appearance in the emissions array and tokens keep
    their file order, which is the order the article's analysis visits gaps in.
    Returns (order, rank per ordered row, gap starts, sorted request ids, rank of each).
    """
    rid = emissions[:, EMIT.request]
    rids, first, inverse = np.unique(rid, return_index=True, return_inverse=True)
    rank_of = np.empty(len(first), dtype=np.intp)
    rank_of[np.argsort(first, kind="stable")] = np.arange(len(first))
    rank = rank_of[inverse]
    order = np.argsort(rank, kind="stable")
    rank = rank[order]
    starts = np.flatnonzero(rank[1:] == rank[:-1])
    return order, rank, starts, rids, rank_of


@dataclass(frozen=True, eq=False)
class Gaps:
    """Every inter-token gap of a run, as numpy arrays: what ``partition_run`` puts in a
    DataFrame, kept without pandas so that a summary does not pay for importing it.

    ``block`` holds every float column, one row each, in ``names`` order: t0, t1,
    gap_ms, one ms row per label, then ``ctx_<label>`` rows."""

    scheme: Scheme
    request: np.ndarray
    token: np.ndarray
    step0: np.ndarray
    step1: np.ndarray
    names: list
    block: np.ndarray
    n_evictions: np.ndarray
    cause: np.ndarray            # index into cause_names()
    attrs: dict

    def __len__(self) -> int:
        return self.block.shape[1]

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

    order, rank, first, rids, rank_of = gap_pairs(log.emissions)
    em = log.emissions[order]
    n = len(first)
    # every float column lives in one (columns, gaps) block a DataFrame can adopt as is
    names = ["t0", "t1", "gap_ms", *labels, *(CONTEXT_PREFIX + lab for lab in labels)]
    block = np.zeros((len(names), n))
    t0, t1, gap_ms = block[0], block[1], block[2]
    parts, context = block[3:3 + n_lab], block[3 + n_lab:]
    t0[:], t1[:] = em[first, EMIT.t], em[first + 1, EMIT.t]
    np.multiply(t1 - t0, MS, out=gap_ms)
    _engine_charge(tl, em[:, EMIT.t], em[:, EMIT.step].astype(np.intp), first, out=parts)

    n_ev = np.zeros(n, dtype=np.int64)
    g, lo, hi = _eviction_overlaps(log.evictions, rids, rank_of, rank[first], t0, t1)
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
    parts[i_unc] = gap_ms - parts.sum(axis=0)

    return Gaps(scheme=sch, request=em[first, EMIT.request].astype(np.int64),
                token=_token_index(rank, first),
                step0=em[first, EMIT.step].astype(np.int64), step1=em[first + 1, EMIT.step].astype(np.int64),
                names=names, block=block, n_evictions=n_ev, cause=cause_codes(gap_ms, parts, sch),
                attrs=dict(path=log.path, scheme=sch.name, rung=log.rung, seed=log.seed,
                           baseline=None if tl.baseline is None else
                           (tl.baseline.slope, tl.baseline.intercept)))


def _engine_charge(tl: EngineTimeline, t_em, step_em, first, out: np.ndarray) -> np.ndarray:
    """(labels, gaps), into ``out``: ms the engine timeline charges between each gap's
    two tokens (written in place: a first call pays for every fresh page it touches).

    All tokens of a step share one emission timestamp, so the running integral is
    read once per step (thousands) rather than once per token (a hundred thousand);
    if a log breaks that, it is read per token.
    """
    n_steps = int(step_em.max()) + 1 if len(step_em) else 0
    at_step = np.full(n_steps, np.nan)
    at_step[step_em] = t_em
    if np.array_equal(at_step[step_em], t_em):
        used = ~np.isnan(at_step)
        table = np.zeros((tl.rates.rate.shape[0], n_steps))
        table[:, used] = tl.rates.integral(at_step[used])
        row = step_em
    else:
        table, row = tl.rates.integral(t_em), np.arange(len(t_em))
    # np.take, not table[:, idx]: the same gather, several times faster in numpy 2.x.
    # Most gaps span neighbouring rows (one decode step to the next): for those the
    # difference of neighbours is taken once per row, the same subtraction, so the
    # gaps need one gather instead of two; the others are read out directly.
    a, b = row[first], row[first + 1]
    if table.shape[1] < 2:
        np.subtract(np.take(table, b, axis=1), np.take(table, a, axis=1), out=out)
        return out
    np.take(np.diff(table, axis=1), np.minimum(a, table.shape[1] - 2), axis=1, out=out)
    far = np.flatnonzero(b != a + 1)
    if len(far):
        out[:, far] = np.take(table, b[far], axis=1) - np.take(table, a[far], axis=1)
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


def _token_index(rank, first) -> np.ndarray:
    """Index, within its request, of the token that closes each gap (1 = second token)."""
    pos = np.arange(len(rank))
    is_start = np.concatenate([[True], rank[1:] != rank[:-1]])
    start_of_row = np.maximum.accumulate(np.where(is_start, pos, 0))
    return (pos - start_of_row)[first + 1].astype(np.int64)


def _eviction_overlaps(evictions, rids, rank_of, gap_rank, t0, t1):
    """(gap index, evicted, readmitted) for every gap/eviction pair of the same request
    with evicted < t1 and readmitted > t0; readmitted NaN (never readmitted) = +inf.

    Gaps are sorted by (request rank, time), so a complex key ``rank + i*time`` is
    sorted too (numpy orders complex numbers lexicographically): one searchsorted
    per bound finds each eviction's gaps without a loop over requests.
    """
    empty = np.zeros(0, np.intp), np.zeros(0), np.zeros(0)
    if not len(evictions) or not len(gap_rank):
        return empty
    rid, a, b = evictions[:, EVICT.request], evictions[:, EVICT.evicted], evictions[:, EVICT.readmitted]
    b = np.where(np.isnan(b), np.inf, b)
    k = np.minimum(np.searchsorted(rids, rid), len(rids) - 1)
    known = rids[k] == rid              # a request that never emitted has no gaps
    r = rank_of[k].astype(float)
    j0 = np.searchsorted(_lex(gap_rank, t1), _lex(r, a), side="right")  # first gap ending after a
    j1 = np.searchsorted(_lex(gap_rank, t0), _lex(r, b), side="left")   # first gap starting at/after b
    n = np.where(known, np.maximum(j1 - j0, 0), 0)
    if not n.sum():
        return empty
    which = np.repeat(np.arange(len(n)), n)
    g = j0[which] + (np.arange(n.sum()) - np.repeat(np.cumsum(n) - n, n))
    return g, a[which], b[which]


def _lex(major, minor) -> np.ndarray:
    z = np.empty(len(major), dtype=np.complex128)
    z.real, z.imag = major, minor     # not major + 1j*minor: 1j*inf would give nan
    return z
