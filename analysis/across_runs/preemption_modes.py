"""Swap against recompute, measured, and the KV-demand model beside it (book/preemption).

One row per run: rung, preemption mode, load (a fraction of the operating point; 1 at
the operating point), seed, the run's percentiles, throughput, preemptions per 60 s,
tail-time shares, and what preemption cost on each side: the time the victims sat
evicted, and what the other requests paid in the steps (the copies out and back in,
and the re-prefill, which the raw log marks as its own segment detail). The model
(kv_demand.py, driven by costs from the swap runs themselves) is run on the same
seeds, rates and durations, and set beside the runs load by load.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..core.columns import EVICT, SEG, STEP
from ..core.runlog import RunLog, load
from ..core.schemes import LABELS, SEGMENT_KINDS
from ..engine_link import DETAIL_NAMES, MODES, RUNGS, Workload, mode_of
from . import kv_demand
from .kv_costs import measured_costs
from .paired import paired_change
from .rungs import BASELINE
from .summaries import per_run_cached, run_summaries
from .load_sweep import _first_crossing

ITL = ("itl_p50", "itl_p99", "itl_p999", "itl_max")
METRICS = ITL + ("ttft_p50", "ttft_p99", "tok_per_s", "preempt_per_min")
ONSET_PER_MIN = 10.0          # preemption "sets in" at this many preemptions per 60 s
HALF = 0.5                    # preemption holds half of the baseline's tail time
# the re-prefill's segment detail, by name (an engine without the recompute mode has none)
REPREFILL = next((c for c, n in DETAIL_NAMES.items() if n != "prefill" and "prefill" in n), None)
SWAP = SEGMENT_KINDS.index("swap")


def wait_and_paid(path) -> dict:
    """Seconds the victims sat evicted (closed evictions), and seconds the steps spent on
    copies (swap segments of steps that evicted or readmitted) and on re-prefill."""
    log = path if isinstance(path, RunLog) else load(path)
    ev = log.evictions
    closed = ~np.isnan(ev[:, EVICT.readmitted])
    seg, st = log.segs, log.steps
    dur = seg[:, SEG.t1] - seg[:, SEG.t0]
    step = seg[:, SEG.step].astype(np.intp)
    moved = (st[step, STEP.preempted] + st[step, STEP.swapped_in]) > 0
    reprefill = 0.0
    if REPREFILL is not None and "seg_detail" in log.extras:
        reprefill = float(dur[np.asarray(log.extras["seg_detail"]).astype(np.intp) == REPREFILL].sum())
    return {"victim_wait_s": float((ev[closed, EVICT.readmitted] - ev[closed, EVICT.evicted]).sum()),
            "paid_copy_s": float(dur[(seg[:, SEG.kind] == SWAP) & moved].sum()),
            "paid_reprefill_s": reprefill, "open_evictions": int((~closed).sum()),
            "started_unix": float(log.provenance.get("started_unix", math.nan))}


def mode_frame(specs, summaries=None, costs=None) -> pd.DataFrame:
    """One row per run (see the module docstring); summaries and wait_and_paid results
    are read from the per-run cache unless given."""
    summaries = run_summaries(specs) if summaries is None else summaries
    if costs is None:
        costs = [per_run_cached(s.path, "preemption-wait-paid", lambda p=s.path: wait_and_paid(p)) for s in specs]
    rows = []
    for spec, s, c in zip(specs, summaries, costs):
        per_min = 60.0 / float(s.get("duration") or spec.duration)
        row = {"rung": spec.rung, "mode": mode_of(spec.config), "load": float(spec.rate_info.get("load", 1.0)),
               "seed": int(spec.seed), "rate": float(spec.rate), "duration": float(spec.duration),
               **{m: float(s[m]) for m in METRICS if m != "preempt_per_min"},
               "preempt_per_min": s["preemptions"] * per_min,
               "victim_wait_per_min": c["victim_wait_s"] * per_min,
               "paid_copy_per_min": c["paid_copy_s"] * per_min,
               "paid_reprefill_per_min": c["paid_reprefill_s"] * per_min,
               "started_unix": float(c.get("started_unix", math.nan))}
        row["others_paid_per_min"] = row["paid_copy_per_min"] + row["paid_reprefill_per_min"]
        row.update({f"tail_{lab}": s["tail_share"].get(lab, 0.0) for lab in LABELS})
        rows.append(row)
    return _ordered(pd.DataFrame(rows))


def _ordered(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows in ladder order of rung, then swap before recompute, then load and seed."""
    if not len(frame):
        return frame
    key = {"rung": lambda c: c.map({r: i for i, r in enumerate(RUNGS)}),
           "mode": lambda c: c.map({m: i for i, m in enumerate(MODES)})}
    return frame.sort_values(["rung", "mode", "load", "seed"], key=lambda c: key.get(c.name, lambda x: x)(c),
                             kind="stable").reset_index(drop=True)


def op_table(frame: pd.DataFrame, columns=METRICS) -> pd.DataFrame:
    """Median over seeds of each column, one row per (rung, mode)."""
    return frame.groupby(["rung", "mode"], sort=False)[list(columns)].median()


def mode_pairs(frame: pd.DataFrame, metrics=ITL + ("ttft_p50", "ttft_p99", "tok_per_s")) -> pd.DataFrame:
    """Recompute against swap, paired by seed, per rung and metric (the ladder's rule, in the
    book's words: 2 seeds give "cannot be judged with 2 seeds", never "no change")."""
    rows = []
    for rung, g in frame.groupby("rung", sort=False):
        sw, rc = (g[g["mode"] == m].set_index("seed") for m in ("swap", "recompute"))
        if sw.empty or rc.empty:
            continue
        for m in metrics:
            ch = paired_change(sw[m], rc[m], m)
            rows.append({"rung": rung, "metric": m, "swap": ch["median_before"], "recompute": ch["median_after"],
                         "ratio": ch["ratio"], "n": ch["n"], "verdict": ch["judged"], "direction": ch["direction"]})
    return pd.DataFrame(rows, columns=["rung", "metric", "swap", "recompute", "ratio", "n", "verdict", "direction"])


def pair_timing(frame: pd.DataFrame) -> pd.DataFrame:
    """Minutes between the start of each recompute run and the start of its swap pair (the
    same rung, load and seed): paired runs made far apart let the machine's drift into
    every ratio between them. Empty when no pair, or no start time, is recorded."""
    cols = ["rung", "load", "seed", "minutes_apart"]
    if not len(frame) or "started_unix" not in frame:
        return pd.DataFrame(columns=cols)
    key = ["rung", "load", "seed"]
    sw, rc = (frame[frame["mode"] == m].set_index(key)["started_unix"] for m in ("swap", "recompute"))
    apart = ((rc - sw.reindex(rc.index)).abs() / 60.0).dropna()
    return apart.rename("minutes_apart").reset_index()[cols]


def same_system_rungs(frame: pd.DataFrame) -> list[str]:
    """Rungs at which neither mode preempted (median 0 per 60 s under both): there the two
    modes are the same system, and what differs between them is the machine, not the mode."""
    if not len(frame):
        return []
    med = frame.groupby(["rung", "mode"], sort=False)["preempt_per_min"].median()
    return [r for r in frame["rung"].unique()
            if all((r, m) in med.index and med[(r, m)] == 0 for m in ("swap", "recompute"))]


def crossing(frame: pd.DataFrame, mode: str, column: str = "tail_preempt", threshold: float = HALF,
             rung: str = BASELINE) -> dict:
    """Per seed, the first load at which `column` reaches `threshold` (interpolated);
    the median and range over the seeds that crossed."""
    sel = frame[(frame["mode"] == mode) & (frame["rung"] == rung)]
    per_seed = {int(seed): _first_crossing(g.sort_values("load")["load"].tolist(),
                                           g.sort_values("load")[column].tolist(), threshold)
                for seed, g in sel.groupby("seed")}
    crossed = [v for v in per_seed.values() if v == v]
    return {"per_seed": per_seed, "n_seeds": len(per_seed), "n_crossed": len(crossed),
            "median": float(np.median(crossed)) if crossed else math.nan,
            "lo": min(crossed) if crossed else math.nan, "hi": max(crossed) if crossed else math.nan,
            "levels": (float(sel["load"].min()), float(sel["load"].max())) if len(sel) else (math.nan, math.nan)}


def rung_costs(specs) -> dict:
    """The model's step costs per rung, read off that rung's swap runs among `specs`."""
    by_rung = {}
    for s in specs:
        if mode_of(s.config) == "swap":
            by_rung.setdefault(s.rung, []).append(s.path)
    return {rung: measured_costs(paths) for rung, paths in by_rung.items()}


def model_frame(specs, costs: dict, modes=None, wl: Workload = Workload()) -> pd.DataFrame:
    """The model run once per spec (same rung knobs, seed, rate and duration), in the
    columns of mode_frame: in each spec's own mode, or, given `modes`, once per mode for
    each distinct (rung, load, seed) (the model has a recompute mode whatever the engine has)."""
    jobs, seen = [], set()
    for s in specs:
        key = (s.rung, float(s.rate_info.get("load", 1.0)), int(s.seed))
        for mode in (modes or (mode_of(s.config),)):
            if (key, mode) not in seen:
                seen.add((key, mode))
                jobs.append((s, mode, key))
    rows = []
    for s, mode, (rung, load_, seed) in jobs:
        c = costs[rung]
        sched = kv_demand.Scheduler.from_config(s.config, preempt_mode=mode)
        trace = kv_demand.workload_trace(wl, seed, s.duration, s.rate, c.tokens_per_char, sched.max_model_len)
        res = kv_demand.simulate(trace, sched, c, duration=s.duration).summary()
        rows.append({"rung": rung, "mode": mode, "load": load_, "seed": seed, "rate": float(s.rate), **res})
    return _ordered(pd.DataFrame(rows))


def side_by_side(measured: pd.DataFrame, model: pd.DataFrame, columns=("preempt_per_min", "tail_preempt",
                                                                       "ttft_p50")) -> pd.DataFrame:
    """Per (rung, mode, load): the median over seeds, measured and predicted."""
    keys = ["rung", "mode", "load"]
    m = measured.groupby(keys)[list(columns)].median().add_suffix(" measured")
    p = model.groupby(keys)[list(columns)].median().add_suffix(" model")
    out = m.join(p, how="outer")
    return out[[f"{c} {w}" for c in columns for w in ("measured", "model")]]


def agreement(table: pd.DataFrame, column: str = "preempt_per_min", factor: float = 2.0,
              floor: float = ONSET_PER_MIN) -> pd.DataFrame:
    """Per row of side_by_side: whether the model's value is within `factor` of the
    measured one (both under `floor` counts as agreeing: too few to read a ratio)."""
    meas, pred = table[f"{column} measured"], table[f"{column} model"]
    both_low = (meas < floor) & (pred < floor)
    ratio = pred / meas.where(meas > 0)
    holds = both_low | ((ratio >= 1 / factor) & (ratio <= factor))
    return pd.DataFrame({"measured": meas, "model": pred, "ratio": ratio, "holds": holds})


def onset(frame: pd.DataFrame, mode: str, rung: str = BASELINE) -> dict:
    """The load at which preemption sets in: ONSET_PER_MIN preemptions per 60 s."""
    return crossing(frame, mode, "preempt_per_min", ONSET_PER_MIN, rung)


def watermark_ttft_model(specs, costs: dict, wl: Workload = Workload()) -> dict:
    """The model's TTFT p50 (ms, median over seeds) of each spec's config with its
    watermark and with none: what the watermark alone costs the first token."""
    out = {"with": [], "without": []}
    for s in specs:
        c = costs[s.rung]
        trace = kv_demand.workload_trace(wl, s.seed, s.duration, s.rate, c.tokens_per_char, s.config.max_model_len)
        for key, wm in (("with", s.config.admit_watermark), ("without", 0.0)):
            sched = kv_demand.Scheduler.from_config(s.config, admit_watermark=wm, preempt_mode=mode_of(s.config))
            out[key].append(kv_demand.simulate(trace, sched, c, duration=s.duration).summary()["ttft_p50"])
    return {k: float(np.median(v)) if v else math.nan for k, v in out.items()} | {"n": len(specs)}


def watermark_ttft_measured(before: dict, after: dict) -> dict:
    """TTFT p50 (ms, by seed) of the rung before the watermark and of the watermark rung,
    paired: the medians and the paired ratio."""
    if not before or not after:
        return {"with": math.nan, "without": math.nan, "n": 0, "ratio": math.nan}
    ch = paired_change(pd.Series(before), pd.Series(after), "ttft_p50")
    return {"with": ch["median_after"], "without": ch["median_before"], "n": ch["n"], "ratio": ch["ratio"]}
