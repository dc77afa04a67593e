"""The preemption chapter's page (book/preemption), computed: one call makes its runs,
tables, model, sentences and figures (the notebook only displays them).

`page(...)` takes the notebook's papermill parameters. With an engine that has no
recompute mode the chapter still computes everything that needs none (swap at the
operating point and across loads, the model of both modes beside swap) and says so.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from ..engine_link import (LADDER, RUNGS, Workload, get_profile, made_on_confirmed, preemption_specs,
                           preemption_sweep_specs, profile_specs, recompute_available)
from ..across_runs import kv_demand, kv_fluid
from ..across_runs import preemption_modes as P
from ..across_runs import preemption_text as T
from ..across_runs.rungs import ADMIT_WATERMARK, BASELINE
from ..across_runs.summaries import run_summaries
from ..render import figures_preemption as F

MODES = ("swap", "recompute")
AGREE_FACTOR = 2.0            # the model "holds" at a load within this factor of the runs
LENGTH_SAMPLES = 20_000       # requests drawn for the queueing estimate's expectations


@dataclass
class PreemptionPage:
    available: bool
    op: pd.DataFrame              # measured, operating point (mode_frame)
    sweep: pd.DataFrame           # measured, across loads
    model_op: pd.DataFrame        # the model on the operating point's specs, both modes
    model_sweep: pd.DataFrame     # the model on the sweep's specs, both modes
    sim: object                   # one simulated run (baseline, swap, first seed) for the demand figure
    pool: int
    op_rate: float
    text: dict = field(default_factory=dict)
    numbers: dict = field(default_factory=dict)

    def op_table(self) -> pd.DataFrame:
        """Medians over seeds at the operating point, rounded for display."""
        cols = list(P.METRICS) + ["victim_wait_per_min", "paid_copy_per_min", "paid_reprefill_per_min"]
        return P.op_table(self.op, cols).round(2) if len(self.op) else pd.DataFrame(columns=cols)

    def tail_table(self) -> pd.DataFrame:
        labels = [c for c in self.op.columns if c.startswith("tail_")]
        return (P.op_table(self.op, labels) * 100).round(1) if len(self.op) else pd.DataFrame()

    def compare_table(self) -> pd.DataFrame:
        return P.side_by_side(self.sweep, self.model_sweep).round(2) if len(self.sweep) else pd.DataFrame()

    def figure(self, name: str):
        makers = {"percentiles": lambda: F.percentiles_figure(self.op),
                  "tails": lambda: F.tail_figure(self.op),
                  "wait_paid": lambda: F.wait_paid_figure(self.op),
                  "loads": lambda: F.loads_figure(self.sweep, self.model_sweep),
                  "demand": lambda: F.kv_demand_figure(self.sim, self.pool, self.op_rate,
                                                       Workload().swell, Workload().period_s)}
        if name not in makers:
            raise ValueError(f"unknown figure {name!r}; valid figures: {', '.join(makers)}")
        return makers[name]()


def page(profile=None, seeds=None, duration=None, rate=None, sweep_seeds=None,
         sweep_duration=None) -> PreemptionPage:
    """Everything book/preemption shows; runs that are missing are made first."""
    prof = get_profile(profile)
    op_specs, sw_specs, wm_specs = made_on_confirmed(prof, lambda: (
        preemption_specs(prof, seeds=seeds, duration=duration, rate=rate),
        preemption_sweep_specs(prof, seeds=sweep_seeds, duration=sweep_duration, rate=rate),
        profile_specs(prof, rungs=RUNGS[-2:], seeds=seeds, duration=duration, rate=rate)), rate)
    op, sweep = P.mode_frame(op_specs), P.mode_frame(sw_specs)
    costs = P.rung_costs(op_specs)
    model_op = P.model_frame(op_specs, costs, MODES)
    model_sweep = P.model_frame(sw_specs, costs, MODES)
    base_cfg = LADDER[BASELINE]
    op_rate = float(op_specs[0].rate)
    first = min(s.seed for s in op_specs)
    c0 = costs[BASELINE]
    sim = kv_demand.simulate(kv_demand.workload_trace(Workload(), first, op_specs[0].duration, op_rate,
                                                      c0.tokens_per_char, base_cfg.max_model_len),
                             kv_demand.Scheduler.from_config(base_cfg), c0, duration=op_specs[0].duration)
    out = PreemptionPage(recompute_available(), op, sweep, model_op, model_sweep, sim,
                         base_cfg.kv_blocks, op_rate)
    out.numbers = _numbers(prof, op_specs, sw_specs, op_rate, base_cfg)
    out.text = _text(out, costs, op_specs, wm_specs, base_cfg)
    return out


def _numbers(prof, op_specs, sw_specs, op_rate, cfg) -> dict:
    return {"n_op_runs": len(op_specs), "n_sweep_runs": len(sw_specs),
            "op_seeds": len({s.seed for s in op_specs}), "op_duration": float(op_specs[0].duration),
            "sweep_seeds": len({s.seed for s in sw_specs}), "sweep_duration": float(sw_specs[0].duration),
            "op_rate": op_rate, "pool_blocks": cfg.kv_blocks, "block_size": cfg.block_size,
            "pool_tokens": cfg.kv_blocks * cfg.block_size, "watermark_fraction": LADDER[ADMIT_WATERMARK].admit_watermark,
            "onset_per_min": P.ONSET_PER_MIN, "agree_factor": AGREE_FACTOR, "profile": prof.name}


def _text(view: PreemptionPage, costs, op_specs, wm_specs, cfg) -> dict:
    n_rc = int((view.op["mode"] == "recompute").sum() + (view.sweep["mode"] == "recompute").sum())
    table = P.op_table(view.op, list(P.METRICS) + ["victim_wait_per_min", "paid_copy_per_min",
                                                   "paid_reprefill_per_min"])
    measured_modes = [m for m in MODES if (view.sweep["mode"] == m).any()]
    c0 = costs[BASELINE]
    prompt, out = kv_demand.sample_lengths(Workload(), LENGTH_SAMPLES, 0, c0.tokens_per_char, cfg.max_model_len)
    fluid_load = kv_fluid.fluid_onset(view.op_rate, prompt, out, kv_demand.Scheduler.from_config(cfg), c0,
                                      Workload().swell)
    text = {"availability": T.availability_sentence(view.available, n_rc),
            "op": T.op_sentence(P.mode_pairs(view.op), table) + " " + T.pairing_sentence(
                P.pair_timing(view.op), P.mode_pairs(view.op), P.same_system_rungs(view.op)),
            "wait_paid": T.wait_paid_sentence(table),
            "crossings": T.crossing_sentences({m: P.crossing(view.sweep, m) for m in measured_modes})}
    onset, half = [], []
    for m in MODES:
        meas = P.onset(view.sweep, m) if m in measured_modes else {"n_seeds": 0}
        onset.append(T.onset_sentence(meas, P.onset(view.model_sweep, m), fluid_load if m == "swap" else None,
                                      f"under {m}, preemption set in ({P.ONSET_PER_MIN:g} per 60 s, baseline)"))
        meas = P.crossing(view.sweep, m) if m in measured_modes else {"n_seeds": 0}
        half.append(T.onset_sentence(meas, P.crossing(view.model_sweep, m), None,
                                     f"under {m}, preemption first held half of the baseline's tail time"))
    text["onset"] = " ".join(onset)
    text["half"] = " ".join(half)
    cmp = P.side_by_side(view.sweep, view.model_sweep)
    text["model"] = " ".join(
        T.model_sentence(P.agreement(cmp.xs((BASELINE, m), level=["rung", "mode"]), factor=AGREE_FACTOR),
                         AGREE_FACTOR, m) for m in measured_modes if (BASELINE, m) in cmp.index.droplevel("load"))
    wm_runs = [s for s in op_specs if s.rung == ADMIT_WATERMARK and P.mode_of(s.config) == "swap"]
    ladder = {s.rung: {} for s in wm_specs}
    for s, summ in zip(wm_specs, run_summaries(wm_specs)):
        ladder[s.rung][s.seed] = summ["ttft_p50"]
    text["watermark"] = T.watermark_cost_sentence(P.watermark_ttft_model(wm_runs, costs),
                                                  P.watermark_ttft_measured(*(ladder[r] for r in RUNGS[-2:])))
    s = view.sim.summary()
    text["demand"] = T.kv_demand_sentence(s["peak_demand"], view.pool, s["mean_used"], s["preempt_per_min"])
    return text
