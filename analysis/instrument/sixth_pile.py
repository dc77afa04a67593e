"""The article's sixth pile: decode steps that ran several times slower than their
batch size predicts, with no tag to explain them.

For every captured decode step, the GC-free decode time is set against the captured-
path fit (baseline.py). A step at least ``factor`` times the fit is *slow*; its excess
(actual minus predicted) is split by the thread clocks around its decode segment
(threadclocks.segment_clock_s) into time off the CPU (wall minus CPU time), of which the
run-queue wait is the part spent runnable but not running, and time on the CPU. A slow
step is *descheduled* when at least half its excess was off the CPU.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.columns import SEG, STEP
from ..core.coverage import gc_within_s
from ..core.gaps import as_log, partition_run
from ..core.runlog import RunLog
from ..core.schemes import ARTICLE, CLEAN, SEGMENT_KINDS, get_scheme
from ..core.threadclocks import segment_clock_s
from ..core.timeline import MS, EngineTimeline
from ..across_runs.summaries import per_run_cached

SLOW_FACTOR = 5.0
DECODE = SEGMENT_KINDS.index("decode")


def decode_steps(log_or_path) -> pd.DataFrame:
    """One row per captured decode step: step, t (s), padded size, decode_ms (GC-free),
    predicted_ms, ratio, offcpu_ms, runq_ms, and the step's gc_ms inside the segment."""
    log: RunLog = as_log(log_or_path)
    tl = EngineTimeline.from_log(log, ARTICLE)
    segs, steps, gcs = log.segs, log.steps, log.gcs
    dec = np.flatnonzero(segs[:, SEG.kind] == DECODE)
    step = segs[dec, SEG.step].astype(np.intp)
    size = steps[step, STEP.graph]
    keep = size > 0
    dec, step, size = dec[keep], step[keep], size[keep]
    a, b = segs[dec, SEG.t0], segs[dec, SEG.t1]
    gc_ms = gc_within_s(gcs, a, b) * MS
    decode_ms = tl.step_decode_ms[step]
    predicted = tl.baseline.ms_at(size) if tl.baseline is not None else np.full(len(step), np.nan)
    off_s, runq_s = segment_clock_s(log)
    off, runq = off_s[dec] * MS, runq_s[dec] * MS
    return pd.DataFrame({"step": step, "t": a, "size": size.astype(int), "decode_ms": decode_ms,
                         "predicted_ms": predicted, "ratio": decode_ms / predicted,
                         "offcpu_ms": off, "runq_ms": runq, "gc_ms": gc_ms})


def decode_steps_of(paths) -> pd.DataFrame:
    """decode_steps of several runs in one frame, with a ``run`` column (position in paths);
    each run's read from the run cache's side files after the first build."""
    # per_run_cached calls each lambda before the loop moves on: B023's late binding cannot bite
    return pd.concat([pd.DataFrame(per_run_cached(p, "decode-steps", lambda: decode_steps(p).to_dict("list")))  # noqa: B023
                      .assign(run=i) for i, p in enumerate(paths)], ignore_index=True)


def slow_steps(steps, factor: float = SLOW_FACTOR) -> pd.DataFrame:
    """The slow captured decode steps, with excess_ms, its off-CPU and on-CPU parts.
    ``steps``: a decode_steps frame, or a raw log / path to make one from."""
    d = steps if isinstance(steps, pd.DataFrame) else decode_steps(steps)
    slow = d[d["ratio"] >= factor].copy()
    slow["excess_ms"] = slow["decode_ms"] - slow["predicted_ms"]
    slow["excess_offcpu_ms"] = np.minimum(slow["offcpu_ms"], slow["excess_ms"])
    slow["excess_oncpu_ms"] = slow["excess_ms"] - slow["excess_offcpu_ms"]
    slow["descheduled"] = slow["excess_offcpu_ms"] >= 0.5 * slow["excess_ms"]
    return slow


def excess_not_runq_ms(slow: pd.DataFrame) -> float:
    """Off-CPU excess of the slow steps that the run queue does not account for (ms)."""
    off = slow["excess_offcpu_ms"]
    return float(off.sum() - np.minimum(slow["runq_ms"], off).sum())


def sixth_pile(steps: pd.DataFrame, factor: float = SLOW_FACTOR) -> dict:
    """From decode_steps_of(paths): how many captured steps, how many slow, and where
    their excess went."""
    d = steps
    slow = slow_steps(d, factor)
    excess = float(slow["excess_ms"].sum())
    off = float(slow["excess_offcpu_ms"].sum())
    runq = float(np.minimum(slow["runq_ms"], slow["excess_offcpu_ms"]).sum())
    normal = d[d["ratio"] < factor]
    return {
        "factor": factor, "runs": int(d["run"].nunique()), "captured_steps": int(len(d)),
        "slow_steps": int(len(slow)),
        "slow_per_10k": 1e4 * len(slow) / max(len(d), 1),
        "descheduled": int(slow["descheduled"].sum()),
        "excess_ms": excess,
        "offcpu_share": off / excess if excess > 0 else float("nan"),
        "runq_share_of_offcpu": runq / off if off > 0 else float("nan"),
        "oncpu_share": 1 - off / excess if excess > 0 else float("nan"),
        "slow_median_ms": float(slow["decode_ms"].median()) if len(slow) else float("nan"),
        "slow_median_ratio": float(slow["ratio"].median()) if len(slow) else float("nan"),
        "normal_offcpu_median_us": float(normal["offcpu_ms"].median() * 1e3) if len(normal) else float("nan"),
        "steps_with_offcpu_over_1ms": int((d["offcpu_ms"] > 1.0).sum()),
    }


def clean_tail(paths) -> tuple[pd.Series, pd.Series]:
    """The article scheme's unexplained tail gaps (p99 and up, primary cause 'clean')
    under the refined scheme: (how many get each refined primary cause, and the share
    of their summed gap time by refined label)."""
    labels = list(get_scheme("refined").labels)
    counts = pd.Series(dtype=float)
    sums, total = pd.Series(0.0, index=labels), 0.0
    for p in paths:
        part = per_run_cached(p, "clean-tail", lambda: _clean_tail_of(p, labels))  # noqa: B023  (called before the loop moves on)
        by_cause = pd.Series(part["counts"], dtype="int64", name="count").rename_axis("cause")
        counts = counts.add(by_cause, fill_value=0)
        sums += pd.Series(part["sums"], index=labels)
        total += part["total"]
    shares = sums / total if total else sums * np.nan
    return counts.sort_values(ascending=False).astype(int), shares


def _clean_tail_of(path, labels) -> dict:
    """One run's part of clean_tail: refined causes of its clean tail gaps, by count,
    their summed ms by refined label, and their summed gap ms."""
    log = as_log(path)
    art, ref = partition_run(log, "article"), partition_run(log, "refined")
    gap = art["gap_ms"].to_numpy()
    clean = (gap >= np.percentile(gap, 99)) & (art["cause"].astype(str) == CLEAN).to_numpy()
    return {"counts": ref.loc[clean, "cause"].astype(str).value_counts().to_dict(),
            "sums": ref.loc[clean, labels].sum().tolist(), "total": float(gap[clean].sum())}


def machine_steal(paths) -> dict:
    """The hypervisor's steal time while the runs ran (from each log's provenance),
    as seconds and as a share of all the machine's CPU time."""
    steal = total = 0.0
    for p in paths:
        during = as_log(p).provenance.get("machine_cpu_s_during_run") or {}
        steal += during.get("steal", 0.0)
        total += sum(during.values())
    return {"steal_s": steal, "cpu_s": total, "steal_share": steal / total if total else float("nan")}


MIN_SLOW_STEPS = 20      # fewer slow steps than this cannot split the pile into on- and off-CPU
MIN_EXCESS_MS = 50.0     # nor can a few ms of excess, a handful of scheduler ticks


def answer(pile: dict) -> dict:
    """Words for what the slow steps were, decided by the numbers (no threshold hidden
    in prose): where most of their excess went ("where"), and a sentence on how their
    off-CPU part was lost ("how"; empty when there was none)."""
    off = pile["offcpu_share"]
    if not pile["slow_steps"] or not np.isfinite(off):
        return {"where": "absent: no captured decode step was that slow", "how": ""}
    n, excess = pile["slow_steps"], pile.get("excess_ms", float("nan"))
    if n < MIN_SLOW_STEPS or not excess >= MIN_EXCESS_MS:
        # a handful of steps and a few ms of excess cannot say what the article's pile was
        return {"where": (f"too few to say what they were: {n} slow step(s) with {excess:.0f} ms of excess "
                          f"over the fit, where an answer needs at least {MIN_SLOW_STEPS} steps and "
                          f"{MIN_EXCESS_MS:g} ms"), "how": ""}
    where = (("mostly on the CPU: the thread kept running and the work itself took longer (what "
              "made it longer, the thread clocks cannot say)") if off < 0.5
             else "mostly off the CPU: the engine thread was not running")
    rq = pile["runq_share_of_offcpu"]
    if not off > 0:
        how = ""
    elif np.isfinite(rq) and rq >= 0.5:
        how = ("Most of the off-CPU time, then, was the engine thread waiting on this machine's "
               "run queue behind another runnable thread.")
    else:
        how = ("Most of the off-CPU time, then, was neither running nor waiting on this machine's "
               "run queue, which for a thread making no blocking call inside a decode is what the "
               "hypervisor taking the virtual CPU away (steal) looks like from inside the guest.")
    return {"where": where, "how": how}


def slow_steps_sentence(pile: dict) -> str:
    """What the slow captured decode steps came to, in words: their median ratio to the
    fit, their excess and how much of it was off the CPU, and of that how much was
    run-queue wait; with no slow step (or no excess, or nothing off the CPU), it says so
    instead of giving a number of nothing."""
    where = answer(pile)["where"]
    if not pile["slow_steps"]:
        return f"None did, so there is no excess over the fit to split: on this machine the slow steps were {where}."
    text = f"Their median was {pile['slow_median_ratio']:.1f} times the fit. "
    if not pile["excess_ms"] > 0:
        return text + "They ran no time over the fit in all, so there is no excess to split."
    text += (f"Together they ran {pile['excess_ms']:.0f} ms over the fit, and {100 * pile['offcpu_share']:.0f}% "
             f"of that excess was time the engine thread was off the CPU; {pile['descheduled']:,} of the slow "
             f"steps lost at least half their excess that way. On this machine, then, the slow untagged steps "
             f"were {where}.")
    if np.isfinite(pile["runq_share_of_offcpu"]):
        return text + (f" Of the off-CPU time, {100 * pile['runq_share_of_offcpu']:.0f}% was spent waiting on "
                       f"the run queue.")
    return text + " None of it was off the CPU, so none of it waited on the run queue."


def steal_sentence(steal: dict) -> str:
    """What the kernel's steal counter says about this machine, in words."""
    if not np.isfinite(steal["steal_share"]):
        return "The kernel's CPU accounting was not available for these runs."
    if steal["steal_s"] <= 0:
        return ("The kernel counted no steal time while these runs ran. That clears the hypervisor "
                "only where it reports steal to the guest, which not every hypervisor does, so a zero "
                "here does not show that the hypervisor took no CPU away.")
    return (f"The kernel counted {steal['steal_s']:.1f} s of steal time while these runs ran, "
            f"{100 * steal['steal_share']:.2f}% of all the machine's CPU time (/proc/stat, read by "
            f"the engine before and after each run): this machine is virtual, and the hypervisor "
            f"does take its CPUs away.")
