"""Fidelity in runs: our engine's raw log beside the article engine's for the same trace
(engine/fidelity_runs.py makes both), read mechanism by mechanism, with ratios.

Both engines write the article's arrays, columns and codes, so one reader serves both:

  decode      each decode segment, by the step's path: a captured size (the padded batch
              the forward ran) or eager (by the number of sequences)
  prefill     a prefill segment's duration over the prompt tokens it processed
  eviction    the KV-reservation segment (a step's second swap segment) of a step that
              copied requests out (their eviction stamps fall inside it), over their
              number and over the tokens of KV they held (prompt plus tokens emitted
              before the eviction); it also holds that step's KV growth for its decodes
  readmission the swap-in segment (a step's first swap segment) of a step whose
              readmission stamps fall inside it, likewise
  gc          generation-2 collection pauses
  tokenizer   each tokenize segment over its prompt's characters: on the loop, arrivals
              are tokenized in trace order, so the k-th tokenize segment is the k-th
              request of the trace

Each figure is a median over the run's events; the ratio is ours over the article's.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np
import pandas as pd

from ..core.columns import EMIT, EVICT, GC, REQ, SEG, STEP, TRACE

TOK, SWAP, PREFILL, DECODE = 0, 1, 2, 3          # the article's segment codes
EAGER = 0                                        # graph code of an eager step
THEIRS = "article's engine"
NEEDED = ("steps", "segs", "gcs", "emissions", "evictions", "requests", "trace")


@dataclass(frozen=True)
class Bands:
    """What counts as agreeing, and how many events a figure needs to be judged."""
    low: float = 0.9
    high: float = 1.1
    min_events: int = 20
    min_gc: int = 3               # gen-2 collections are rare: a 60 s run has a handful
    eager_bin: int = 4            # eager steps grouped by batch size in bins this wide (33-36, ...)
    match: float = 0.15           # matched size: events within this fraction of the pooled median size


def read_log(path) -> dict[str, np.ndarray]:
    """The arrays this comparison needs, from either engine's raw log; a clear error
    naming the file and what is missing."""
    with np.load(path, allow_pickle=False) as z:
        missing = [k for k in NEEDED if k not in z.files]
        if missing:
            raise ValueError(f"{path}: not a raw log of either engine (missing {missing}; need {list(NEEDED)})")
        out = {k: np.asarray(z[k], dtype=np.float64) for k in NEEDED}
    for k, ncol in (("steps", 7), ("segs", 4), ("gcs", 3), ("emissions", 3), ("evictions", 3),
                    ("requests", 5), ("trace", 4)):
        out[k] = out[k].reshape(-1, ncol)
    return out


def _seg_ms(segs: np.ndarray) -> np.ndarray:
    return (segs[:, SEG.t1] - segs[:, SEG.t0]) * 1e3


def swap_segments(log: dict) -> tuple[np.ndarray, np.ndarray]:
    """(swap-in rows, KV-reservation rows) of `segs`: a step's first and second swap
    segment (both engines close the two in that order every step they log)."""
    segs = log["segs"]
    rows = np.flatnonzero(segs[:, SEG.kind] == SWAP)
    steps = segs[rows, SEG.step]
    first = np.r_[True, steps[1:] != steps[:-1]]
    second = np.r_[False, steps[1:] == steps[:-1]]
    return rows[first & np.r_[second[1:], False]], rows[second]


def step_contexts(log: dict) -> np.ndarray:
    """Per step, the mean context of the rows it decoded (prompt tokens plus tokens the
    request had emitted before), from the emissions; NaN for a step that decoded none."""
    emis, req = log["emissions"], log["requests"]
    prompt = dict(zip(req[:, REQ.request].astype(int), req[:, REQ.prompt_tokens]))
    order = np.lexsort((emis[:, EMIT.t], emis[:, EMIT.request]))
    rid = emis[order, EMIT.request]
    first = np.r_[True, rid[1:] != rid[:-1]]
    start = np.maximum.accumulate(np.where(first, np.arange(len(rid)), 0))
    ctx = np.array([prompt[int(r)] for r in rid]) + (np.arange(len(rid)) - start)
    step = emis[order, EMIT.step].astype(int)
    n = len(log["steps"])
    total = np.bincount(step, weights=ctx, minlength=n)
    count = np.bincount(step, minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        return total / count


def decode_samples(log: dict, bands: Bands = Bands()) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """(ms of each decode forward, its rows' mean context), keyed 'captured N' (padded
    size N) or 'eager A-B' (batch sizes A to B)."""
    segs, steps = log["segs"], log["steps"]
    rows = np.flatnonzero(segs[:, SEG.kind] == DECODE)
    step = segs[rows, SEG.step].astype(int)
    ms, graph, batch = _seg_ms(segs[rows]), steps[step, STEP.graph], steps[step, STEP.n_decode]
    ctx = step_contexts(log)[step]
    out = {}
    for g in np.unique(graph[graph > 0]).astype(int):
        out[f"captured {g}"] = (ms[graph == g], ctx[graph == g])
    eager = graph == EAGER
    lo = (batch[eager] - 1) // bands.eager_bin * bands.eager_bin + 1
    for b in np.unique(lo).astype(int):
        out[f"eager {b}-{b + bands.eager_bin - 1}"] = (ms[eager][lo == b], ctx[eager][lo == b])
    return out


def prefill_per_token(log: dict) -> tuple[np.ndarray, np.ndarray]:
    """(ms per prompt token, tokens) of each prefill segment that processed tokens."""
    segs, steps = log["segs"], log["steps"]
    rows = np.flatnonzero(segs[:, SEG.kind] == PREFILL)
    tokens = steps[segs[rows, SEG.step].astype(int), STEP.n_prefill_tok]
    keep = tokens > 0
    return _seg_ms(segs[rows])[keep] / tokens[keep], tokens[keep]


def _kv_tokens(log: dict, rid: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Tokens of KV a request held at time t: its prompt plus the tokens it emitted before t."""
    req, emis = log["requests"], log["emissions"]
    prompt = dict(zip(req[:, REQ.request].astype(int), req[:, REQ.prompt_tokens]))
    order = np.lexsort((emis[:, EMIT.t], emis[:, EMIT.request]))
    er, et = emis[order, EMIT.request], emis[order, EMIT.t]
    out = np.empty(len(rid))
    for i, (r, when) in enumerate(zip(rid, t)):
        lo, hi = np.searchsorted(er, r, "left"), np.searchsorted(er, r, "right")
        out[i] = prompt[int(r)] + np.searchsorted(et[lo:hi], when, "left")
    return out


def _copies_in(log: dict, rows: np.ndarray, stamps: np.ndarray, rids: np.ndarray):
    """Per segment among `rows` that holds at least one stamp: (ms per copy, ms per 1,000
    tokens copied, tokens per copy)."""
    segs = log["segs"]
    t0, t1 = segs[rows, SEG.t0], segs[rows, SEG.t1]
    i = np.searchsorted(t0, stamps, "right") - 1
    inside = (i >= 0) & (stamps <= t1[np.maximum(i, 0)])
    i, stamps, rids = i[inside], stamps[inside], rids[inside]
    if not len(i):
        return np.array([]), np.array([]), np.array([])
    tokens = _kv_tokens(log, rids, stamps)
    held = np.unique(i)
    count = np.bincount(i, minlength=len(rows))[held]
    toks = np.bincount(i, weights=tokens, minlength=len(rows))[held]
    ms = _seg_ms(segs[rows[held]])
    return ms / count, ms / toks * 1e3, toks / count


def eviction_copies(log: dict):
    """Copy-outs: per KV-reservation segment holding eviction stamps (see _copies_in)."""
    ev = log["evictions"]
    return _copies_in(log, swap_segments(log)[1], ev[:, EVICT.evicted], ev[:, EVICT.request])


def readmission_copies(log: dict):
    """Copy-ins: per swap-in segment holding readmission stamps (see _copies_in)."""
    ev = log["evictions"]
    back = np.isfinite(ev[:, EVICT.readmitted])
    return _copies_in(log, swap_segments(log)[0], ev[back, EVICT.readmitted], ev[back, EVICT.request])


def gc2_pauses(log: dict) -> tuple[np.ndarray, np.ndarray]:
    """(ms of each generation-2 pause, tokens emitted before it). Both engines keep a
    record of every emitted token alive, so what a full collection walks grows with them."""
    g = log["gcs"]
    full = g[:, GC.generation] == 2
    emitted = np.searchsorted(np.sort(log["emissions"][:, EMIT.t]), g[full, GC.t0], "left")
    return ((g[:, GC.t1] - g[:, GC.t0]) * 1e3)[full], emitted.astype(float)


def tokenizer_per_char(log: dict) -> tuple[np.ndarray, np.ndarray]:
    """(µs per character of each on-loop tokenization, its prompt's characters)."""
    segs, trace = log["segs"], log["trace"]
    rows = np.flatnonzero(segs[:, SEG.kind] == TOK)
    chars = trace[np.argsort(trace[:, TRACE.arrival], kind="stable"), TRACE.chars][:len(rows)]
    return _seg_ms(segs[rows[:len(chars)]]) * 1e3 / chars, chars


def mechanisms(log: dict, bands: Bands = Bands()) -> dict[str, tuple]:
    """Row name -> (unit, the run's samples, what size each event had, their sizes), in
    table order: the sizes say what load the mechanism met (context per decode row,
    tokens per prefill segment or per copy, tokens emitted before a full collection,
    characters per prompt)."""
    out = {f"decode, {k}": ("ms per step", ms, "context per row", ctx)
           for k, (ms, ctx) in decode_samples(log, bands).items()}
    per_tok, tokens = prefill_per_token(log)
    gc_ms, gc_tokens = gc2_pauses(log)
    out["prefill"] = ("ms per 1,000 tokens", per_tok * 1e3, "tokens per step", tokens)
    for name, (per, per_k, toks) in (("eviction copy-out", eviction_copies(log)),
                                     ("readmission copy-in", readmission_copies(log))):
        out[name] = (f"ms per {name.split()[0]}", per, "tokens per copy", toks)
        out[name + ", per token"] = ("ms per 1,000 tokens", per_k, "tokens per copy", toks)
    out["gen-2 GC pause"] = ("ms per pause", gc_ms, "tokens emitted before", gc_tokens)
    us, chars = tokenizer_per_char(log)
    out["tokenizer"] = ("µs per character", us, "characters", chars)
    return out


def _matched_ratio(sa, za, sb, zb, frac: float) -> tuple[float, int, int]:
    """Ours over theirs among the events whose size lies within frac of the median size of
    both sides' events pooled (the same load on both sides), with how many each side had."""
    z = np.concatenate([za, zb])
    z = z[np.isfinite(z)]
    if not len(z):
        return np.nan, 0, 0
    c = np.median(z)
    ka, kb = np.abs(za - c) <= frac * c, np.abs(zb - c) <= frac * c
    if not ka.any() or not kb.any():
        return np.nan, int(ka.sum()), int(kb.sum())
    mb = np.median(sb[kb])
    return (float(np.median(sa[ka]) / mb) if mb > 0 else np.nan), int(ka.sum()), int(kb.sum())


def _fitted_ratio(sa, za, sb, zb) -> tuple[float, int, int]:
    """Ours over theirs of a robust straight line fitted to each side's events against
    their size, both read at the median size of the two sides pooled: for rare events that
    grow steadily with their size (a full collection walks every record kept so far),
    where too few fall near one size to compare medians."""
    if len(set(za.tolist())) < 2 or len(set(zb.tolist())) < 2:
        return np.nan, len(sa), len(sb)
    c = np.median(np.concatenate([za, zb]))
    at = [_theil_sen_at(z, y, c) for z, y in ((za, sa), (zb, sb))]
    return (float(at[0] / at[1]) if at[1] > 0 else np.nan), len(sa), len(sb)


def _theil_sen_at(z: np.ndarray, y: np.ndarray, c: float) -> float:
    """A Theil-Sen line (median of the pairwise slopes, then the median intercept) read
    at c: one pause stretched by something else (the process descheduled) cannot tilt it."""
    i, j = np.triu_indices(len(z), k=1)
    ok = z[j] != z[i]
    slope = float(np.median((y[j] - y[i])[ok] / (z[j] - z[i])[ok]))
    return float(np.median(y - slope * z) + slope * c)


def _finite_median(x: np.ndarray) -> float:
    x = x[np.isfinite(x)]
    return float(np.median(x)) if len(x) else np.nan


def _decode_order(name: str) -> tuple:
    kind, _, size = name.partition(", ")[2].partition(" ")
    return (kind != "captured", int(size.split("-")[0]))


def pooled_mechanisms(logs, bands: Bands = Bands()) -> dict[str, tuple]:
    """mechanisms() of one log, or of several runs' logs with each row's samples pooled."""
    out: dict = {}
    for log in ([logs] if isinstance(logs, dict) else logs):
        for name, (unit, samples, size_unit, sizes) in mechanisms(log, bands).items():
            _, s0, _, z0 = out.get(name, (unit, np.array([]), size_unit, np.array([])))
            out[name] = (unit, np.concatenate([s0, samples]), size_unit, np.concatenate([z0, sizes]))
    return out


def ratio_table(ours, theirs, bands: Bands = Bands()) -> pd.DataFrame:
    """One row per mechanism (and per decode path and size): median and event count on
    each side, and ours over theirs; then the same ratio among the events of matched size
    (within bands.match of the median size of both sides' events pooled: context per row,
    tokens, characters; for gen-2 pauses, too few to pick from, a line fitted to each
    side's pauses against the tokens emitted before them, read at the pooled median),
    since two runs do not meet exactly the same load. A side is one
    log or a list of logs (their events pooled). The matched ratio is judged ('agrees':
    within [low, high]) only where both sides have at least min_events matched events
    (min_gc for gen-2 pauses); otherwise that column is empty."""
    a, b = pooled_mechanisms(ours, bands), pooled_mechanisms(theirs, bands)
    names = list(a) + [n for n in b if n not in a]
    dec = sorted((n for n in names if n.startswith("decode")), key=_decode_order)
    names = dec + [n for n in names if not n.startswith("decode")]
    rows = []
    empty = (None, np.array([]), "", np.array([]))
    for n in names:
        unit, _, size_unit, _ = a.get(n) or b.get(n)
        _, sa, _, za = a.get(n, empty)
        _, sb, _, zb = b.get(n, empty)
        ma = float(np.median(sa)) if len(sa) else np.nan
        mb = float(np.median(sb)) if len(sb) else np.nan
        ratio = ma / mb if len(sa) and len(sb) and mb > 0 else np.nan
        need = bands.min_gc if n == "gen-2 GC pause" else bands.min_events
        match = _fitted_ratio if n == "gen-2 GC pause" else partial(_matched_ratio, frac=bands.match)
        matched, na, nb = match(sa, za, sb, zb)
        judged = min(na, nb) >= need and np.isfinite(matched)
        rows.append({"mechanism": n, "unit": unit, "ours": ma, "ours n": len(sa), THEIRS: mb,
                     "article n": len(sb), "ratio": ratio, "size": size_unit, "size, ours": _finite_median(za),
                     "size, article": _finite_median(zb), "matched ratio": matched, "matched n": min(na, nb),
                     "agrees": bool(bands.low <= matched <= bands.high) if judged else None})
    out = pd.DataFrame(rows).set_index("mechanism")
    out["agrees"] = pd.Series([r["agrees"] for r in rows], index=out.index, dtype=object)  # True, False or None
    return out
