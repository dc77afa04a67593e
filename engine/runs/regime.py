"""The regime a baseline run is in, read from its raw log: the numbers that say whether a
build serves the article's kind of traffic, each over a window of the run's arrivals.

A run starts with an empty engine, and near the operating point its running set takes
tens of seconds to build up, so every statistic can be read over a window [start, end) of
the arrival clock: gaps and TTFTs by the time their token came out or their request
arrived, steps and preemptions by when the step started. The whole run (the default)
includes the drain after the last arrival, as the article's per-run counts did; counts
are scaled per 60 s of arrivals.

- fullness: the median inter-token gap over this machine's batch-32 decode forward pass
  (the article: 13.7 ms over 12.8 ms). A typical step carrying about 32 sequences reads
  about 1; a light run reads far below it.
- decode_batch: the decode batch, weighted by step time (what a typical instant carries).
- eager_steps_per_min: steps whose batch crossed the largest captured size.
- preemptions_per_min: evictions, the KV pool's pressure.
- ttft_p50_ms: whether queues drain (the article's overloaded runs read 2-17 s).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

# raw-log columns (engine/serve/rawlog.py)
_T0, _T1, _N_DECODE, _GRAPH, _PREEMPTED = 0, 1, 2, 4, 5
_EAGER = 0
STATS = ("fullness", "p50_ms", "decode_batch", "eager_steps_per_min", "preemptions_per_min", "ttft_p50_ms")


def read(path: Path) -> dict:
    """The arrays a signature needs, and the run's arrival duration."""
    with np.load(path) as z:
        out = {k: z[k] for k in ("steps", "emissions", "requests")}
        out["duration"] = float(json.loads(str(z["config"]))["duration"])
    return out


def gaps(emissions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(gap ms, time its later token came out) for every pair of consecutive tokens of a request."""
    order = np.lexsort((emissions[:, 1], emissions[:, 0]))
    rid, t = emissions[order, 0], emissions[order, 1]
    same = rid[1:] == rid[:-1]
    return (np.diff(t) * 1e3)[same], t[1:][same]


def window_signature(run: dict, forward_ms_b32: float | None, start: float = 0.0,
                     end: float | None = None) -> dict:
    """The signature over the arrival window [start, end). With no end, everything from
    `start` on counts, the drain after the last arrival included, as the article counted a
    run's preemptions; counts are scaled per 60 s of arrivals either way. A finite end
    reads a prefix as a shorter run of the same arrivals would, less that run's own drain.
    fullness is NaN when no batch-32 forward time is given."""
    stop = math.inf if end is None else float(end)
    span = (run["duration"] if end is None else stop) - start
    if not (0 <= start and span > 0):
        raise ValueError(f"window must satisfy 0 <= start < end (or start < the run's arrivals with no end), "
                         f"got [{start}, {end})")
    per_min = 60.0 / span
    st = run["steps"]
    st = st[(st[:, _T0] >= start) & (st[:, _T0] < stop)]
    gap_ms, gap_t = gaps(run["emissions"])
    gap_ms = gap_ms[(gap_t >= start) & (gap_t < stop)]
    rq = run["requests"]
    rq = rq[(rq[:, 1] >= start) & (rq[:, 1] < stop)]
    ttft = (rq[:, 4] - rq[:, 1]) * 1e3
    dt = st[:, _T1] - st[:, _T0]
    p50 = float(np.median(gap_ms)) if len(gap_ms) else math.nan
    return {
        "p50_ms": p50,
        "fullness": p50 / forward_ms_b32 if forward_ms_b32 else math.nan,
        "decode_batch": float((st[:, _N_DECODE] * dt).sum() / dt.sum()) if dt.sum() > 0 else math.nan,
        "eager_steps_per_min": float(np.count_nonzero(st[:, _GRAPH] == _EAGER)) * per_min,
        "preemptions_per_min": float(st[:, _PREEMPTED].sum()) * per_min,
        "ttft_p50_ms": float(np.median(ttft)) if len(ttft) else math.nan,
        "gaps": int(len(gap_ms)),
    }


def signature(path: Path, forward_ms_b32: float | None, start: float = 0.0, end: float | None = None) -> dict:
    return window_signature(read(path), forward_ms_b32, start, end)


def settle_time(run: dict, forward_ms_b32: float | None = None, stat: str = "decode_batch",
                tol: float = 0.10, step_s: float = 5.0) -> float:
    """The shortest prefix [0, L) (in steps of `step_s`) from which every longer prefix reads
    `stat` within `tol` of the whole run's: how long a run from an empty engine must be to
    read what the whole run reads. The arrival swell (15 s) and the draw of requests move a
    short window's reading as much as the climb does, so a prefix, not a sliding window, is
    what a shorter run of the same seed would see."""
    whole = window_signature(run, forward_ms_b32)[stat]
    lengths = np.arange(step_s, run["duration"] + 1e-9, step_s)
    ok = [abs(window_signature(run, forward_ms_b32, 0.0, L)[stat] - whole) <= tol * abs(whole) for L in lengths]
    for i in range(len(ok)):
        if all(ok[i:]):
            return float(lengths[i])
    return float(run["duration"])
