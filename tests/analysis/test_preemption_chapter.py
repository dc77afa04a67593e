"""The preemption chapter's logic (analysis/across_runs/preemption_modes.py, preemption_text.py and
engine/runs/preemption_runs.py): its run specs, its frame, and every sentence both ways on
synthetic summaries; the victims' wait and the others' cost on real runs."""
import dataclasses
import json
import math

import pandas as pd
import pytest

import engine
from analysis.core.synthetic import runlog_from_steps
from analysis.across_runs import preemption_modes as P
from analysis.across_runs import preemption_text as T
from engine.runs import preemption_runs as EP
from tests.support.cli import PRESSURED, engine_cli

RECOMPUTE = EP.recompute_available()
NEEDS_RECOMPUTE = pytest.mark.skipif(
    not RECOMPUTE, reason="this engine version has no Config.preempt_mode (the recompute mode is on another branch)")
BASE, LAST = engine.RUNGS[0], engine.RUNGS[-1]


# ------------------------------------------------------------------ the specs
def test_swap_runs_are_the_ladders_and_the_sweeps_own():
    op = EP.preemption_specs("smoke", rate=7.0)
    swap = [s for s in op if EP.mode_of(s.config) == "swap"]
    ladder = {s.path for s in engine.profile_specs("smoke", rungs=[BASE, LAST], rate=7.0)}
    assert {s.path for s in swap} == ladder and {s.rung for s in swap} == {BASE, LAST}
    sweep = EP.preemption_sweep_specs("smoke", rate=7.0, modes=("swap",))
    ours = {s.path for s in engine.runs.sweep.sweep_specs("smoke", rate=7.0, forwards=("article",))}
    assert {s.path for s in sweep} == ours
    assert all("load" in s.rate_info for s in sweep)


def test_without_the_mode_only_swap_is_run_and_asking_for_recompute_names_why(monkeypatch):
    """An engine version without the knob (simulated by hiding it) runs swap only, and asking
    for recompute names why."""
    monkeypatch.setattr(EP, "recompute_available", lambda: False)
    assert EP.available_modes() == ("swap",)
    assert {EP.mode_of(s.config) for s in EP.preemption_specs("smoke", rate=7.0)} == {"swap"}
    with pytest.raises(ValueError, match="no 'preempt_mode' knob, so it cannot preempt by 'recompute'"):
        EP.with_mode(engine.LADDER[BASE], "recompute")


@NEEDS_RECOMPUTE
def test_recompute_runs_are_new_runs_of_the_same_rungs():
    op = EP.preemption_specs("smoke", rate=7.0)
    rc = [s for s in op if EP.mode_of(s.config) == "recompute"]
    assert {s.rung for s in rc} == {BASE, LAST} and len(rc) == len(op) // 2
    assert not {s.path for s in rc} & {s.path for s in op if EP.mode_of(s.config) == "swap"}


def test_an_unknown_mode_is_refused_by_name():
    with pytest.raises(ValueError, match="preemption mode must be one of swap, recompute, got 'drop'"):
        EP.with_mode(engine.LADDER[BASE], "drop")


# ------------------------------------------------------------------ the frame
@dataclasses.dataclass
class Spec:
    rung: str
    seed: int
    mode: str = "swap"
    load: float = 1.0
    duration: float = 30.0
    rate: float = 7.0

    @property
    def config(self):
        return type("Cfg", (), {"preempt_mode": self.mode})()

    @property
    def rate_info(self):
        return {"load": self.load}


def summary(itl_p999=100.0, preemptions=10, tail_preempt=0.6, ttft_p50=80.0, duration=30.0):
    return {"duration": duration, "preemptions": preemptions, "itl_p50": 10.0, "itl_p99": 40.0,
            "itl_p999": itl_p999, "itl_max": 2 * itl_p999, "ttft_p50": ttft_p50, "ttft_p99": 4 * ttft_p50,
            "tok_per_s": 900.0, "tail_share": {"preempt": tail_preempt, "kernel": 1 - tail_preempt}}


def cost(wait=2.0, copy=0.1, re=0.0):
    return {"victim_wait_s": wait, "paid_copy_s": copy, "paid_reprefill_s": re, "open_evictions": 0}


def op_frame():
    specs, sums, costs = [], [], []
    for rung in (LAST, BASE):                           # given out of ladder order on purpose
        for mode in ("recompute", "swap"):
            for seed in (1, 2, 3):
                specs.append(Spec(rung, seed, mode))
                rc = mode == "recompute"
                sums.append(summary(itl_p999=50.0 * seed if rc else 100.0 * seed, preemptions=20 if rc else 10))
                costs.append(cost(wait=1.0 if rc else 2.0, copy=0.0 if rc else 0.1, re=0.3 if rc else 0.0))
    return P.mode_frame(specs, sums, costs)


def test_mode_frame_orders_rungs_and_modes_and_counts_per_minute():
    f = op_frame()
    assert list(dict.fromkeys(f["rung"])) == [BASE, LAST]
    assert list(dict.fromkeys(f.loc[f["rung"] == BASE, "mode"])) == ["swap", "recompute"]
    row = f[(f["rung"] == BASE) & (f["mode"] == "swap")].iloc[0]
    assert row["preempt_per_min"] == 20.0 and row["victim_wait_per_min"] == 4.0
    assert row["others_paid_per_min"] == pytest.approx(0.2) and row["tail_preempt"] == 0.6


def test_op_sentence_pairs_recompute_with_swap_by_seed():
    f = op_frame()
    text = T.op_sentence(P.mode_pairs(f), P.op_table(f))
    assert f"With {BASE}, recompute against swap over 3 paired seed(s)" in text
    assert "p99.9 0.50x" in text and "throughput 1.00x" in text
    assert "preemptions per 60 s 20 under swap, 40 under recompute" in text
    assert "(cannot be judged with 3 seeds)" in text and "no change" not in text
    assert T.op_sentence(P.mode_pairs(f[f["mode"] == "swap"]), P.op_table(f)) == \
        "No recompute runs were paired with swap runs, so the operating point compares nothing."


def timed_frame(minutes_apart: float, watermark_preempts: int = 0):
    """Baseline and watermark runs, swap at t0 and recompute `minutes_apart` later, seed by
    seed; the watermark rung preempts `watermark_preempts` times under both modes."""
    specs, sums, costs = [], [], []
    for rung in (BASE, LAST):
        for mode in ("swap", "recompute"):
            for seed in (1, 2, 3):
                specs.append(Spec(rung, seed, mode))
                s = summary(preemptions=watermark_preempts if rung == LAST else 10)
                if mode == "recompute":
                    s = {**s, "itl_p50": 6.0, "ttft_p50": 40.0}
                sums.append(s)
                costs.append({**cost(), "started_unix": 1000.0 * seed + (60.0 * minutes_apart if mode == "recompute" else 0.0)})
    return P.mode_frame(specs, sums, costs)


def test_pair_timing_reads_each_recompute_runs_distance_from_its_swap_pair():
    timing = P.pair_timing(timed_frame(80.0))
    assert len(timing) == 6 and timing["minutes_apart"].tolist() == pytest.approx([80.0] * 6)
    no_times = P.mode_frame([Spec(BASE, 1), Spec(BASE, 1, "recompute")], [summary(), summary()], [cost(), cost()])
    assert P.pair_timing(no_times).empty                     # logs without a start time: nothing to say


def test_same_system_rungs_are_those_where_neither_mode_preempted():
    assert P.same_system_rungs(timed_frame(5.0)) == [LAST]
    assert P.same_system_rungs(timed_frame(5.0, watermark_preempts=3)) == []


def test_pairing_sentence_both_ways():
    far = timed_frame(80.0)
    text = T.pairing_sentence(P.pair_timing(far), P.mode_pairs(far), P.same_system_rungs(far))
    assert "a median of 80 min (at most 80 min) from its swap pair: the pairs were not made side by side" in text
    assert f"At {LAST}, where neither mode preempted" in text and "ITL p50 0.60x and TTFT p50 0.50x" in text
    near = timed_frame(4.0, watermark_preempts=3)
    text = T.pairing_sentence(P.pair_timing(near), P.mode_pairs(near), P.same_system_rungs(near))
    assert "every pair within 15 min, made side by side" in text and "neither mode preempted" not in text
    assert "unknown" in T.pairing_sentence(pd.DataFrame(columns=["minutes_apart"]), P.mode_pairs(near), [])


def test_wait_paid_sentence_both_ways():
    f = op_frame()
    text = T.wait_paid_sentence(P.op_table(f, list(P.METRICS) + ["victim_wait_per_min", "paid_copy_per_min",
                                                                 "paid_reprefill_per_min"]))
    assert f"Under swap, {BASE}'s victims sat evicted 4.0 s per 60 s, while the steps spent 0.20 s" in text
    assert "copying KV out and back (5.0% of the wait)" in text
    assert "re-prefilling the victims (30.0% of the wait)" in text
    f.loc[f["mode"] == "swap", "victim_wait_per_min"] = 0.0
    text = T.wait_paid_sentence(P.op_table(f, ["victim_wait_per_min", "paid_copy_per_min", "paid_reprefill_per_min"]))
    assert f"Under swap, {BASE} had no victims that came back." in text
    assert T.wait_paid_sentence(pd.DataFrame()).startswith("No runs were found")


def sweep_frame(shift=0.0):
    rows = []
    for mode, lag in (("swap", 0.0), ("recompute", shift)):
        for seed in (1, 2):
            for load in (0.6, 1.0, 1.4):
                share = max(0.0, min(1.0, (load - 0.6 - lag) * 1.25 + 0.05 * seed))
                rows.append({"rung": BASE, "mode": mode, "load": load, "seed": seed, "tail_preempt": share,
                             "preempt_per_min": 100 * share, "ttft_p50": 50.0})
    return pd.DataFrame(rows)


def test_crossings_are_interpolated_per_seed_and_named_per_mode():
    f = sweep_frame(shift=0.2)
    sw, rc = P.crossing(f, "swap"), P.crossing(f, "recompute")
    # seed 1: share 0.05 at 0.6, 0.55 at 1.0 -> 0.5 at 0.96; seed 2: 0.1 -> 0.6 -> 0.92
    assert sw["per_seed"] == pytest.approx({1: 0.96, 2: 0.92})
    assert rc["median"] > sw["median"]
    text = T.crossing_sentences({"swap": sw, "recompute": rc})
    assert "Under swap, preemption's share of baseline tail time first passed 50% at 0.94x" in text
    assert "(seeds: 0.92-0.96x)" in text and "Under recompute" in text
    never = P.crossing(f.assign(tail_preempt=0.1), "swap")
    assert "passed 50% in no seed within the sweep (0.60-1.40x" in T.crossing_sentences({"swap": never})


def test_onset_sentence_both_ways():
    f = sweep_frame()
    meas = P.onset(f, "swap")
    model = P.onset(f.assign(preempt_per_min=f["preempt_per_min"] * 0.5), "swap")
    text = T.onset_sentence(meas, model, 0.8, "preemption set in")
    assert text.startswith("Preemption set in: in the runs at 0.")
    assert "by the queueing estimate at 0.80x" in text and "the model is" in text and "above the runs" in text
    text = T.onset_sentence({"n_seeds": 0}, P.onset(f.assign(preempt_per_min=0.0), "swap"), None, "x")
    assert text == "X: in the runs was not measured, in the model did not within the sweep (0.60-1.40x)."
    assert "beyond the loads it was asked about" in T.onset_sentence(meas, model, math.nan, "x")


def agree(meas, model):
    table = pd.DataFrame({"preempt_per_min measured": meas, "preempt_per_min model": model},
                         index=pd.Index([0.6, 1.0, 1.4], name="load"))
    return P.agreement(table, factor=2.0)


def test_model_sentence_both_ways():
    held = T.model_sentence(agree([0, 100, 300], [5, 150, 200]), 2.0)
    assert "held at every load of the sweep" in held and "at 0.6x, 1x, 1.4x" in held
    failed = T.model_sentence(agree([0, 100, 300], [50, 10, 20]), 2.0)
    assert "held at some loads and not others" not in failed
    assert "failed at every load" in failed and "more at some loads, fewer at others" in failed
    mixed = T.model_sentence(agree([0, 100, 300], [5, 150, 1000]), 2.0)
    assert "at 0.6x, 1x and not at 1.4x" in mixed and "it predicted more preemptions" in mixed
    assert T.model_sentence(agree([1, 2, 3], [1, 2, 3]).iloc[0:0], 2.0).startswith("No measured loads")


def test_watermark_and_demand_sentences_both_ways():
    model = {"with": 120.0, "without": 80.0, "n": 3}
    meas = {"with": 300.0, "without": 200.0, "n": 3, "ratio": 1.5}
    text = T.watermark_cost_sentence(model, meas)
    assert "from 80 ms to 120 ms (1.50x)" in text and "from 200 ms to 300 ms (1.50x, 3 seed(s))" in text
    assert T.watermark_cost_sentence({"n": 0, "without": math.nan}, meas).startswith("The model was not run")
    assert "was not measured in this build" in T.watermark_cost_sentence(model, {"n": 0})
    assert P.watermark_ttft_measured({}, {1: 3.0})["n"] == 0
    assert P.watermark_ttft_measured({1: 100.0, 2: 200.0}, {1: 150.0, 2: 300.0})["ratio"] == pytest.approx(1.5)
    assert "peaked at 1500 blocks, 1.50x the pool of 1000" in T.kv_demand_sentence(1500.0, 1000, 700.0, 12.0)
    assert T.kv_demand_sentence(math.nan, 1000, 0, 0) == "The model was not run at the operating point."


def test_availability_sentence_both_ways():
    assert "has no recompute preemption mode" in T.availability_sentence(False, 0)
    assert "made 12 recompute run(s)" in T.availability_sentence(True, 12)
    assert "made no recompute runs" in T.availability_sentence(True, 0)


# ------------------------------------------------------------------ wait and paid, from logs
def test_wait_and_paid_on_a_synthetic_log():
    steps = [dict(t0=0.0, t1=0.010, n_decode=1, graph=1, preempted=1, seg=[("swap", 0.001, 0.003), ("decode", 0.004, 0.008)]),
             dict(t0=0.010, t1=0.020, n_decode=1, graph=1, seg=[("swap", 0.011, 0.012), ("decode", 0.013, 0.018)]),
             dict(t0=0.020, t1=0.030, n_decode=2, graph=2, swapped_in=1,
                  seg=[("swap", 0.021, 0.025), ("decode", 0.025, 0.029)])]
    log = runlog_from_steps(steps, emissions=[(0, 0.008), (1, 0.008), (0, 0.018), (0, 0.029), (1, 0.029)],
                            evictions=[(1, 0.002, 0.025)])
    got = P.wait_and_paid(log)
    assert got["victim_wait_s"] == pytest.approx(0.023)
    assert got["paid_copy_s"] == pytest.approx(0.006)       # the middle step moved nothing
    assert got["paid_reprefill_s"] == 0.0 and got["open_evictions"] == 0


def test_wait_and_paid_on_a_real_swap_run(pressured_log):
    got = P.wait_and_paid(pressured_log)
    assert got["victim_wait_s"] > 0 and got["paid_copy_s"] > 0
    assert got["paid_copy_s"] < got["victim_wait_s"]


@NEEDS_RECOMPUTE
def test_a_real_recompute_run_charges_re_prefill_to_the_others(run_cache):
    cfg = {**json.loads(PRESSURED), "name": "pressured-recompute", "preempt_mode": "recompute"}
    proc = engine_cli("run", "--config-json", json.dumps(cfg), "--seed", "1", "--duration", "4", "--rate", "16",
                      cache_dir=run_cache)
    from analysis import summarize
    path = proc.stdout.strip().splitlines()[-1]
    got = P.wait_and_paid(path)
    assert P.REPREFILL is not None, "the engine's segment details name no re-prefill"
    assert got["victim_wait_s"] > 0 and got["paid_reprefill_s"] > 0
    s = summarize(path)
    assert s["preemptions"] > 0 and s["reconcile_max_err_ms"] < 1e-6
    assert s["all_share"]["preempt"] > 0
