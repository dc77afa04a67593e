"""The raw-log contract's checks (DESIGN.md, "What a log must satisfy"): what a raw log
must satisfy to be read.

Everything downstream assumes the timeline is physically possible: steps in order
and disjoint, segments inside their step, GC pauses disjoint, a request's evictions
disjoint.  A log that breaks that would not fail loudly later -- the parts of a gap
would just stop summing to the gap -- so it is refused here, naming the file and
the problem.

Segment codes (`segs` kind) are the article's four; the finer `seg_detail` codes of our
engine's logs are schemes.DETAIL_KINDS, where 5, "reprefill", marks a recompute victim's
KV rebuilt by prefill (a PREFILL segment apart from first-time prefill). Under recompute a
victim's eviction ends ("readmitted") when that re-prefill completes, so the partition
charges its whole wait to preemption, as it does a swapped victim's.
"""
from __future__ import annotations

import json
from typing import Any, NamedTuple

import numpy as np

from .columns import COLUMNS, EMIT, EVICT, GC, REQ, SEG, STEP
from .schemes import GRAPH_NONE, SEGMENT_KINDS

SUPPORTED_SCHEMA_VERSIONS = (0, 1, 2, 3)

SCALARS = ("wall", "config")
REQUIRED = tuple(COLUMNS) + SCALARS
OPTIONAL = ("schema_version", "provenance")


class ByRequest(NamedTuple):
    """Emission rows sorted by request id (stable: file order within a request) and
    each one's request id in that order: validation sorts them so anyway, and pairing
    tokens into gaps starts from the same order."""

    rows: np.ndarray
    request: np.ndarray


class RawLogError(ValueError):
    """A file is not a usable raw log.  ``str(err)`` names the file and the problem."""

    def __init__(self, path: Any, problem: str):
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


def checked(path: str, arrays: dict) -> dict:
    """The RunLog fields of ``arrays``, read from ``path``; RawLogError names what is wrong."""
    def bad(problem: str):
        raise RawLogError(path, problem)

    missing = [k for k in REQUIRED if k not in arrays]
    if missing:
        bad(f"missing array(s) {missing}; a raw log needs {list(REQUIRED)}")

    version = _schema_version(arrays.get("schema_version"), bad)
    config = _json_scalar(arrays["config"], "config", bad)
    provenance = _json_scalar(arrays["provenance"], "provenance", bad) if "provenance" in arrays else {}

    wall = np.asarray(arrays["wall"])
    if wall.shape != () or wall.dtype.kind not in "iuf" or not np.isfinite(wall) or wall <= 0:
        bad(f"'wall' must be a positive finite number of seconds, got {wall!r}")

    t = {name: _table(arrays[name], name, len(cols), bad) for name, cols in COLUMNS.items()}
    _check_finite(t, bad)
    _check_steps(t["steps"], bad)
    _check_segments(t["segs"], t["steps"], bad)
    _check_gcs(t["gcs"], bad)
    by_request = _check_emissions(t["emissions"], len(t["steps"]), bad)
    _check_evictions(t["evictions"], bad)
    rq = t["requests"]
    early = rq[:, REQ.first_token] < rq[:, REQ.arrival]
    if early.any():
        bad(f"requests: first token before arrival (reversed times) in row {_first(early)}")

    extras = {k: v for k, v in arrays.items() if k not in REQUIRED + OPTIONAL}
    return dict(path=path, wall=float(wall), config=config, provenance=provenance,
                schema_version=version, extras=extras, by_request=by_request, **t)


def _schema_version(raw, bad) -> int:
    if raw is None:
        return 0  # the article's engine wrote no version
    v = np.asarray(raw)
    if v.shape != () or v.dtype.kind not in "iu":
        bad(f"'schema_version' must be a 0-d integer, got {v!r}")
    if int(v) not in SUPPORTED_SCHEMA_VERSIONS:
        bad(f"unsupported schema_version {int(v)}; this analysis reads {list(SUPPORTED_SCHEMA_VERSIONS)}")
    return int(v)


def _json_scalar(raw, name, bad) -> dict:
    v = np.asarray(raw)
    if v.shape != () or v.dtype.kind not in "US":
        bad(f"'{name}' must be a 0-d JSON string")
    try:
        out = json.loads(str(v))
    except json.JSONDecodeError as e:
        bad(f"'{name}' is not valid JSON ({e})")
    if not isinstance(out, dict):
        bad(f"'{name}' must be a JSON object, got {type(out).__name__}")
    return out


def _table(raw, name, ncols, bad) -> np.ndarray:
    a = np.asarray(raw)
    if a.dtype.kind not in "iuf":
        bad(f"'{name}' must be numeric, got dtype {a.dtype}")
    if a.size == 0:
        return np.zeros((0, ncols))  # the article's engine writes empty tables as shape (0,)
    if a.ndim != 2 or a.shape[1] != ncols:
        bad(f"'{name}' must have {ncols} columns {list(COLUMNS[name])}, got shape {a.shape}")
    return np.ascontiguousarray(a, dtype=np.float64)


def _first(mask) -> int:
    return int(np.argmax(mask))


def _check_finite(t, bad):
    for name, a in t.items():
        ok = np.isfinite(a)
        if name == "evictions":
            # a NaN readmission: still evicted when the log ended
            ok[:, EVICT.readmitted] |= np.isnan(a[:, EVICT.readmitted])
        if not ok.all():
            r, c = np.argwhere(~ok)[0]
            bad(f"'{name}' has a NaN or infinite value (row {r}, column {COLUMNS[name][c]!r})")


def _check_integral(a, name, cols, bad):
    rounded = np.empty(len(a))   # one buffer for every column (a fresh one costs page faults)
    for c in cols:
        j = COLUMNS[name].index(c)
        np.round(a[:, j], out=rounded)
        if (a[:, j] != rounded).any():
            bad(f"'{name}' column {c!r} must hold integers (row {_first(a[:, j] != rounded)})")


def _check_steps(st, bad):
    _check_integral(st, "steps", COLUMNS["steps"][STEP.n_decode:], bad)
    if (st[:, STEP.t1] < st[:, STEP.t0]).any():
        bad(f"steps: t1 < t0 (reversed times) in step {_first(st[:, STEP.t1] < st[:, STEP.t0])}")
    if len(st) > 1 and (st[1:, STEP.t0] < st[:-1, STEP.t1]).any():
        i = _first(st[1:, STEP.t0] < st[:-1, STEP.t1]) + 1
        bad(f"steps: step {i} starts before step {i - 1} ends (unsorted or overlapping steps)")
    g = st[:, STEP.graph]
    if (g < GRAPH_NONE).any():
        bad(f"steps: unknown graph code {g[g < GRAPH_NONE][0]:g} in step {_first(g < GRAPH_NONE)} "
            f"(-1 no decode, 0 eager, >0 padded size)")
    if (st[:, [STEP.n_decode, STEP.n_prefill_tok, STEP.preempted, STEP.swapped_in]] < 0).any():
        bad("steps: negative count in n_decode/n_prefill_tok/preempted/swapped_in")


def _check_segments(sg, st, bad):
    if not len(sg):
        return
    _check_integral(sg, "segs", ("step", "kind"), bad)
    idx, kind = sg[:, SEG.step], sg[:, SEG.kind]
    if ((idx < 0) | (idx >= len(st))).any():
        i = _first((idx < 0) | (idx >= len(st)))
        bad(f"segs: row {i} refers to step {idx[i]:g}, but the log has {len(st)} steps")
    if ((kind < 0) | (kind >= len(SEGMENT_KINDS))).any():
        i = _first((kind < 0) | (kind >= len(SEGMENT_KINDS)))
        bad(f"segs: unknown segment code {kind[i]:g} in row {i} "
            f"(codes: {dict(enumerate(SEGMENT_KINDS))})")
    a, b = sg[:, SEG.t0], sg[:, SEG.t1]
    if (b < a).any():
        bad(f"segs: t1 < t0 (reversed times) in row {_first(b < a)}")
    owner = idx.astype(np.intp)
    outside = (a < st[:, STEP.t0].take(owner)) | (b > st[:, STEP.t1].take(owner))
    if outside.any():
        bad(f"segs: row {_first(outside)} lies outside its step's [t0, t1]")
    _check_disjoint(a, b, lambda i: bad(f"segs: row {i} overlaps another segment"))


def _check_disjoint(a, b, report):
    """Intervals [a, b) must not overlap: sorted by start, then end (empty ones first),
    each must start at or after the previous one's end. ``report(row)`` names a clash.
    The engines write them in order already, so the sort is skipped when it would
    change nothing."""
    ds = np.diff(a)
    in_order = bool(((ds > 0) | ((ds == 0) & (np.diff(b) >= 0))).all())
    if in_order:
        clash = a[1:] < b[:-1]
        if clash.any():
            report(_first(clash) + 1)
        return
    o = np.lexsort((b, a))
    clash = a[o[1:]] < b[o[:-1]]
    if clash.any():
        report(o[_first(clash) + 1])


def _check_gcs(gc, bad):
    if not len(gc):
        return
    a, b = gc[:, GC.t0], gc[:, GC.t1]
    if (b < a).any():
        bad(f"gcs: pause ends before it starts (reversed times) in row {_first(b < a)}")
    unknown = ~np.isin(gc[:, GC.generation], (0, 1, 2))
    if unknown.any():
        bad(f"gcs: unknown GC generation in row {_first(unknown)} (expected 0, 1 or 2)")
    _check_disjoint(a, b, lambda i: bad(f"gcs: GC pauses overlap (row {i})"))


def _check_emissions(em, n_steps, bad) -> ByRequest | None:
    """Checks, and returns the rows sorted by request (stable: file order within one)."""
    if not len(em):
        return None
    _check_integral(em, "emissions", ("request", "step"), bad)
    k = em[:, EMIT.step]
    if ((k < 0) | (k >= n_steps)).any():
        bad(f"emissions: row {_first((k < 0) | (k >= n_steps))} refers to a step the log does not have")
    rid, t = em[:, EMIT.request], em[:, EMIT.t]
    o = np.argsort(rid, kind="stable")  # stable: file order within a request
    rid_o, t_o = rid.take(o), t.take(o)
    back = (rid_o[1:] == rid_o[:-1]) & (t_o[1:] < t_o[:-1])
    if back.any():
        i = o[_first(back) + 1]
        bad(f"emissions: request {rid[i]:g} emits a token earlier than its previous one "
            f"(reversed times, row {i})")
    return ByRequest(o, rid_o)


def _check_evictions(ev, bad):
    if not len(ev):
        return
    _check_integral(ev, "evictions", ("request",), bad)
    rid, a, b = ev[:, EVICT.request], ev[:, EVICT.evicted], ev[:, EVICT.readmitted]
    if (b < a).any():  # NaN compares False: open evictions pass
        bad(f"evictions: readmitted before evicted (reversed times) in row {_first(b < a)}")
    o = np.lexsort((a, rid))
    same = rid[o[1:]] == rid[o[:-1]]
    prev_end = np.where(np.isnan(b[o[:-1]]), np.inf, b[o[:-1]])
    clash = same & (a[o[1:]] < prev_end)
    if clash.any():
        i = o[_first(clash) + 1]
        bad(f"evictions: request {rid[i]:g} has overlapping evictions (row {i})")
