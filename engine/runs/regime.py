"""The regime a baseline run is in, read from its raw log: the numbers that say whether a
build serves the article's kind of traffic, each over a window of the run's arrivals.

A run starts with an empty engine, and near the operating point its running set takes
tens of seconds to build up, so every statistic can be read over a window [start, end) of
the arrival clock: gaps and TTFTs by the time their token came out or their request
arrived, steps and preemptions by when the step started. The whole run (the default)
includes the drain after the last arrival, as the article's per-run counts did; counts
are scaled per 60 s of arrivals.

- fullness: the median inter-token gap over a batch-32 decode forward pass (the article:
  13.7 ms over its microbenchmark's 12.8 ms). A typical step carrying about 32 sequences
  reads about 1; a light run reads far below it. The yardstick is the run's own forward
  pass (IN_RUN): a line through its pure-decode steps, read at 32 rows. The article's
  microbenchmark stood in for its runs' forward pass (its clean gaps were 98% forward pass,
  at 1.07 of 12.8 ms); here a microbenchmark at one fixed context read well under the runs'
  forward pass in the article's regime and drifted with the machine between calibration
  and runs, while a yardstick read in the run moves with the run (the README's section on
  the article's system gives the measurements).
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
_T0, _T1, _N_DECODE, _N_PREFILL, _GRAPH, _PREEMPTED = 0, 1, 2, 3, 4, 5
_EAGER = 0
_SEG_STEP, _SEG_KIND, _SEG_T0, _SEG_T1 = 0, 1, 2, 3
_DECODE = 3                  # segment kind (engine/serve/segments.py)
IN_RUN = "in-run"            # the yardstick argument: each run's own batch-32 decode forward pass
YARD_ROWS = 32
MIN_PURE_DECODE_STEPS = 20   # a yardstick needs this many pure-decode steps
STATS = ("fullness", "p50_ms", "decode_batch", "eager_steps_per_min", "preemptions_per_min", "ttft_p50_ms")


def read(path: Path) -> dict:
    """The arrays a signature needs, and the run's arrival duration."""
    with np.load(path) as z:
        out = {k: z[k] for k in ("steps", "segs", "emissions", "requests")}
        out["duration"] = float(json.loads(str(z["config"]))["duration"])
    return out


def gaps(emissions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(gap ms, time its later token came out) for every pair of consecutive tokens of a request."""
    order = np.lexsort((emissions[:, 1], emissions[:, 0]))
    rid, t = emissions[order, 0], emissions[order, 1]
    same = rid[1:] == rid[:-1]
    return (np.diff(t) * 1e3)[same], t[1:][same]


def forward_line(rows, ms, at: int = YARD_ROWS) -> dict:
    """A line fitted to decode forward passes (ms) against their decode rows, read at `at`
    rows: NaN with fewer than MIN_PURE_DECODE_STEPS passes or a single batch size."""
    rows, ms = np.asarray(rows, dtype=float), np.asarray(ms, dtype=float)
    if len(rows) < MIN_PURE_DECODE_STEPS or len(np.unique(rows)) < 2:
        return {"ms": math.nan, "steps": int(len(rows)), "rows_max": int(rows.max()) if len(rows) else 0}
    slope, intercept = np.polyfit(rows, ms, 1)
    return {"ms": float(intercept + slope * at), "slope_ms": float(slope), "intercept_ms": float(intercept),
            "steps": int(len(rows)), "rows_max": int(rows.max()), "extrapolated": bool(rows.max() < at)}


def forward_yardstick(run: dict, start: float = 0.0, end: float | None = None) -> dict:
    """The run's own batch-32 decode forward pass over [start, end): forward_line through its
    pure-decode steps (decode rows only, no prompt tokens, on the captured path), each step's
    decode segment time against its rows."""
    st, segs = run["steps"], run.get("segs")
    if segs is None or not len(st):
        return forward_line([], [])
    stop = math.inf if end is None else float(end)
    dec = segs[segs[:, _SEG_KIND] == _DECODE]
    ms = np.bincount(dec[:, _SEG_STEP].astype(np.intp), weights=(dec[:, _SEG_T1] - dec[:, _SEG_T0]) * 1e3,
                     minlength=len(st))
    pure = ((st[:, _N_PREFILL] == 0) & (st[:, _N_DECODE] > 0) & (st[:, _GRAPH] > 0) & (ms > 0)
            & (st[:, _T0] >= start) & (st[:, _T0] < stop))
    return forward_line(st[pure, _N_DECODE], ms[pure])


def window_signature(run: dict, forward_ms_b32: float | str | None, start: float = 0.0,
                     end: float | None = None) -> dict:
    """The signature over the arrival window [start, end). With no end, everything from
    `start` on counts, the drain after the last arrival included, as the article counted a
    run's preemptions; counts are scaled per 60 s of arrivals either way. A finite end
    reads a prefix as a shorter run of the same arrivals would, less that run's own drain.
    `forward_ms_b32`: the yardstick in ms, IN_RUN for the run's own over the same window
    (forward_yardstick), or None; fullness is NaN without one. The yardstick used is
    returned as forward_ms_b32."""
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
    yard = forward_yardstick(run, start, end)["ms"] if forward_ms_b32 == IN_RUN else forward_ms_b32
    return {
        "p50_ms": p50,
        "fullness": p50 / yard if yard and math.isfinite(yard) else math.nan,
        "forward_ms_b32": float(yard) if yard else math.nan,
        "decode_batch": float((st[:, _N_DECODE] * dt).sum() / dt.sum()) if dt.sum() > 0 else math.nan,
        "eager_steps_per_min": float(np.count_nonzero(st[:, _GRAPH] == _EAGER)) * per_min,
        "preemptions_per_min": float(st[:, _PREEMPTED].sum()) * per_min,
        "ttft_p50_ms": float(np.median(ttft)) if len(ttft) else math.nan,
        "gaps": int(len(gap_ms)),
    }


def signature(path: Path, forward_ms_b32: float | str | None = IN_RUN, start: float = 0.0,
              end: float | None = None) -> dict:
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
