"""What the refined scheme's extra clock reads cost the engine, per step.

Two estimates, side by side. Direct: the reads a step makes (counted from the log)
times what one read costs (timed here). Observed: the median time of like steps (a
pure decode at one padded size, no other work) in runs with the thread clocks on,
against runs tagged like the article (wall clock only) of the same seeds. Both are
set against the median step and against the median step as a token sees it (each
step counted once per token it emitted): small batches make many short steps, so the
two medians can differ several-fold.
"""
from __future__ import annotations

import time

import numpy as np
import pandas as pd

from ..core.columns import SEG, STEP
from ..core.gaps import as_log
from ..core.runlog import RunLog
from ..core.schemes import SEGMENT_KINDS
from ..core.threadclocks import require
from ..engine_link import ThreadClock, overhead_configs

MS = 1e3
DECODE = SEGMENT_KINDS.index("decode")
OVERHEAD_GOAL = 0.01     # the extra clock reads may cost at most 1% of the median step


def overhead_pairs(specs) -> list[tuple]:
    """(seed, article-tagged run, fully tagged run) for every seed of the overhead
    controls among ``specs`` (run specs with rung, seed and path)."""
    article, full = overhead_configs()
    full_by_seed = {s.seed: s.path for s in specs if s.rung == full.name}
    return [(s.seed, s.path, full_by_seed[s.seed]) for s in specs if s.rung == article.name]


def goal_met(table: pd.DataFrame, goal: float = OVERHEAD_GOAL) -> bool:
    """The direct estimate's median over seeds is below the goal."""
    return bool(table["direct overhead"].median() < goal)


def read_cost_us(n: int = 100_000) -> dict:
    """Microseconds per read of the thread CPU clock and of the run-queue file."""
    clock = ThreadClock()
    clock.open()
    try:
        out = {}
        for name, read in (("cpu", time.thread_time), ("runq", clock.runq_s), ("wall", time.perf_counter)):
            t0 = time.perf_counter()
            for _ in range(n):
                read()
            out[name] = (time.perf_counter() - t0) / n * 1e6
        return out
    finally:
        clock.close()


def reads_per_step(log: RunLog) -> dict:
    """Mean thread-clock reads per step: the CPU clock at each step's start and end and
    after each segment the engine read it for; the run-queue reads the engine counted."""
    require(log, "seg_cpu_end", "step_cpu", "runq_reads")
    n_steps = max(len(log.steps), 1)
    cpu_reads = sum(int(np.isfinite(np.asarray(log.extras[k], dtype=float)).sum())
                    for k in ("seg_cpu_end", "step_cpu"))
    return {"cpu": cpu_reads / n_steps, "runq": int(log.extras["runq_reads"]) / n_steps}


def _like(log: RunLog) -> np.ndarray:
    """Steps that only decoded on the captured path: no prefill, swap, eviction or tokenizing."""
    st = log.steps
    busy = np.zeros(len(st), bool)
    seg_step = log.segs[:, SEG.step].astype(np.intp)
    work = np.asarray(log.extras.get("seg_work", np.ones(len(log.segs))))
    busy[seg_step[(log.segs[:, SEG.kind] != DECODE) & (work > 0)]] = True
    return ((st[:, STEP.graph] > 0) & (st[:, STEP.n_prefill_tok] == 0) & (st[:, STEP.preempted] == 0)
            & (st[:, STEP.swapped_in] == 0) & ~busy)


def like_size(log_or_path) -> int:
    """The padded size most like steps ran at (the fairest size to compare)."""
    log = as_log(log_or_path)
    sizes = log.steps[_like(log), STEP.graph].astype(int)
    return int(np.bincount(sizes).argmax()) if len(sizes) else 0


def like_steps_ms(log_or_path, size: int) -> np.ndarray:
    """Durations (ms) of steps that only decoded, at padded size ``size``."""
    log = as_log(log_or_path)
    st = log.steps
    like = _like(log) & (st[:, STEP.graph] == size)
    return (st[like, STEP.t1] - st[like, STEP.t0]) * MS


def token_weighted_median_ms(log: RunLog) -> float:
    """Median step time as a token sees it: each step counted once per token it emitted."""
    st = log.steps
    d = (st[:, STEP.t1] - st[:, STEP.t0]) * MS
    n = st[:, STEP.n_decode].astype(int)
    order = np.argsort(d)
    cum = np.cumsum(n[order])
    return float(d[order][np.searchsorted(cum, cum[-1] / 2)]) if len(cum) and cum[-1] else float("nan")


def overhead_table(pairs, costs: dict | None = None) -> pd.DataFrame:
    """One row per seed: like steps (pure decode at the most common padded size) and their
    median ms with article and full tagging, the observed difference, and the direct
    estimate as a share of the median step and of the median step a token sees."""
    costs = costs or read_cost_us()
    rows = []
    for seed, article_path, full_path in pairs:
        art, full = as_log(article_path), as_log(full_path)
        size = like_size(art)
        a_ms, f_ms = like_steps_ms(art, size), like_steps_ms(full, size)
        step_ms = float(np.median((full.steps[:, STEP.t1] - full.steps[:, STEP.t0]) * MS))
        token_ms = token_weighted_median_ms(full)
        reads = reads_per_step(full)
        direct_us = reads["cpu"] * costs["cpu"] + reads["runq"] * costs["runq"]
        observed = float(np.median(f_ms) / np.median(a_ms) - 1) if len(a_ms) and len(f_ms) else float("nan")
        rows.append({"seed": seed, "like size": size,
                     "like steps (article tags)": len(a_ms), "like steps (full)": len(f_ms),
                     "median like step, article tags ms": float(np.median(a_ms)) if len(a_ms) else float("nan"),
                     "median like step, full ms": float(np.median(f_ms)) if len(f_ms) else float("nan"),
                     "observed overhead": observed,
                     "median step ms": step_ms, "median step per token ms": token_ms,
                     "steps decoding 2 or fewer": float(np.mean(full.steps[:, STEP.n_decode] <= 2)),
                     "reads per step": reads["cpu"] + reads["runq"], "direct us per step": direct_us,
                     "direct overhead": direct_us / 1e3 / step_ms,
                     "direct overhead per token": direct_us / 1e3 / token_ms})
    return pd.DataFrame(rows).set_index("seed")


def observed_phrase(table: pd.DataFrame) -> str:
    """What the like-step comparison can say, given how far its seeds scatter against
    the direct estimate (both as shares of a step)."""
    obs = table["observed overhead"].dropna()
    direct = float(table["direct overhead"].median())
    if len(obs) < 2:
        return "With one seed there is no scatter to judge that comparison by."
    spread = float(obs.max() - obs.min())
    if spread > 10 * direct:
        return ("Like steps of two separate runs differ by far more than the reads cost, so that "
                "comparison cannot resolve them; it can only rule out a large overhead.")
    return ("The seeds scatter by less than ten times the direct estimate, so that comparison is "
            "a rough check on it.")
