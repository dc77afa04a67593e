"""The KV-demand model (analysis/across_runs/kv_demand.py, kv_fluid.py, kv_costs.py) on cases
whose answers are known: Little's law where arrivals and lengths are fixed, no
preemption where the pool is large, every token emitted once under either mode where
it is small, and step costs read back from a log built with known ones."""
import math

import numpy as np
import pytest

from analysis.core.synthetic import runlog_from_steps
from analysis.across_runs import kv_demand as K
from analysis.across_runs import kv_fluid as F
from analysis.across_runs.kv_costs import StepCosts, measured_costs
from engine import LADDER, RUNGS, Workload

SIZES = (1, 2, 4, 8, 16, 24, 32)


def flat_costs(step_ms: float, prefill_per_tok: float = 0.0, swap_ms: float = 0.0) -> StepCosts:
    """Every decode step costs step_ms whatever its batch; nothing else costs anything."""
    return StepCosts(decode_ms={s: step_ms for s in SIZES}, decode_line=(step_ms, 0.0), eager_line=(step_ms, 0.0),
                     prefill_line=(0.0, prefill_per_tok), swap_out_ms=swap_ms, swap_in_ms=swap_ms)


def fixed_trace(n, every_s, prompt, out):
    return K.Trace(np.arange(n) * every_s, np.full(n, prompt), np.full(n, out))


def test_constant_arrivals_and_lengths_give_littles_occupancy_exactly():
    # steps of 1/64 s and an arrival every 4 steps (exact binary fractions); each request is
    # resident for its prefill step and 11 decode steps, so L = λ W = (1/4 steps) x 12 steps = 3
    s, m, P, O = 1 / 64, 4, 40, 11
    res = K.simulate(fixed_trace(400, m * s, P, O), K.Scheduler(), flat_costs(s * 1e3))
    steady = slice(48, 48 + m * 300)                   # whole periods of the arrival cycle
    run = np.average(res.running[steady], weights=res.dt[steady])
    assert run == pytest.approx(F.mean_running_little(1 / (m * s), O, s), abs=1e-9)
    # each resident request holds the blocks of its prompt and the tokens it has decoded so far
    blocks = np.average(res.used[steady], weights=res.dt[steady])
    want = sum(-(-(P + k) // 16) for k in range(O + 1)) / m
    assert blocks == pytest.approx(want, abs=1e-9)
    assert res.preemptions == 0


def test_the_queueing_estimate_reduces_to_littles_law_without_a_per_row_cost():
    s, rate, P, O = 0.004, 20.0, 100, 50
    f = F.fluid(rate, [P], [O], K.Scheduler(), flat_costs(s * 1e3))
    assert f["rho"] == 0.0
    assert f["running"] == pytest.approx(F.mean_running_little(rate, O, s))
    assert f["kv_blocks"] == pytest.approx(f["running"] * ((P + (O + 1) / 2) / 16 + 0.5))


def test_a_processor_sharing_server_holds_rho_over_one_minus_rho():
    costs = StepCosts(decode_line=(0.0, 1.0))              # 1 ms per row, no fixed part
    f = F.fluid(0.5, [10], [999], K.Scheduler(), costs)     # ρ = 0.5 x 1000 x 1 ms = 0.5
    assert f["rho"] == pytest.approx(0.5) and f["running"] == pytest.approx(1.0)
    assert F.fluid(2.0, [10], [999], K.Scheduler(), costs)["saturated"]


def test_fluid_onset_is_where_the_peak_demand_fills_the_pool():
    costs = StepCosts(decode_line=(0.5, 0.3), prefill_line=(0.0, 0.05))
    wl = Workload()
    P, O = K.sample_lengths(wl, 20000, 0, 0.22, 2048)
    x = F.fluid_onset(5.0, P, O, K.Scheduler(), costs, wl.swell)
    assert 0.05 < x < 4.0
    at = F.fluid(5.0 * x, P, O, K.Scheduler(), costs, wl.swell)["kv_blocks"]
    assert at == pytest.approx(1000, rel=1e-3)
    # a pool no demand fills: the onset is where the decode server saturates at the peak
    huge = K.Scheduler(kv_blocks=10**9)
    y = F.fluid_onset(5.0, P, O, huge, costs, wl.swell)
    assert y > x
    assert not F.fluid(5.0 * y * (1 - 1e-6), P, O, huge, costs, wl.swell)["saturated"]
    assert F.fluid(5.0 * y * (1 + 1e-6), P, O, huge, costs, wl.swell)["saturated"]
    assert math.isnan(F.fluid_onset(5.0, P, O, huge, costs, wl.swell, hi=0.9 * y))


@pytest.fixture(scope="module")
def busy_trace():
    costs = flat_costs(8.0, prefill_per_tok=0.02, swap_ms=0.5)
    return K.workload_trace(Workload(), 1, 20.0, 12.0, 0.22, 2048), costs


@pytest.mark.parametrize("mode", ["swap", "recompute"])
def test_a_pool_large_enough_never_preempts(busy_trace, mode):
    trace, costs = busy_trace
    res = K.simulate(trace, K.Scheduler(kv_blocks=100_000, preempt_mode=mode), costs, duration=20.0)
    assert res.preemptions == 0 and res.victim_wait_s == 0 and res.others_paid_s == 0
    assert res.summary()["tail_preempt"] == 0.0
    assert len(res.gaps_ms) == int((trace.max_new - 1).sum())


@pytest.mark.parametrize("mode", ["swap", "recompute"])
def test_a_small_pool_preempts_and_still_emits_every_token_once(busy_trace, mode):
    trace, costs = busy_trace
    sched = K.Scheduler(kv_blocks=300, preempt_mode=mode)
    res = K.simulate(trace, sched, costs, duration=20.0)
    assert res.preemptions > 0 and res.victim_wait_s > 0
    assert len(res.gaps_ms) == int((trace.max_new - 1).sum())          # no token twice, none lost
    assert len(res.ttft_ms) == len(trace.arrival)
    assert res.used.max() <= sched.kv_blocks
    assert (res.gap_wait_ms <= res.gaps_ms + 1e-9).all() and res.gap_wait_ms.sum() > 0
    if mode == "recompute":                                    # the others pay the re-prefill
        assert res.others_paid_s > 0
    s = res.summary()
    assert s["preempt_per_min"] == pytest.approx(res.preemptions * 3.0)
    assert 0 < s["tail_preempt"] <= 1


def test_recompute_re_prefills_what_the_victim_had_emitted():
    # two requests, a pool that holds one grown request but not both: the newer is evicted,
    # and under recompute its re-prefill covers its prompt and every token it had emitted
    trace = K.Trace(np.array([0.0, 0.0]), np.array([32, 32]), np.array([40, 40]))
    per_tok = 1.0
    costs = flat_costs(1.0, prefill_per_tok=per_tok)
    sched = K.Scheduler(kv_blocks=8, swap_in_headroom=0, preempt_mode="recompute")
    res = K.simulate(trace, sched, costs)
    assert res.preemptions >= 1
    assert len(res.gaps_ms) == 2 * 39
    # what the others paid is re-prefill time: a whole number of re-prefilled tokens
    assert res.others_paid_s * 1e3 / per_tok == pytest.approx(round(res.others_paid_s * 1e3 / per_tok))
    assert res.others_paid_s * 1e3 > 32 * per_tok


def test_a_request_larger_than_the_pool_is_refused_by_name():
    with pytest.raises(ValueError, match=r"request\(s\) \[0\] need more than the pool's 4 blocks"):
        K.simulate(K.Trace(np.array([0.0]), np.array([100]), np.array([10])), K.Scheduler(kv_blocks=4),
                   flat_costs(1.0))


def test_scheduler_reads_an_engine_config_and_refuses_an_unknown_mode():
    sched = K.Scheduler.from_config(LADDER[RUNGS[-1]])
    assert sched.admit_watermark == LADDER[RUNGS[-1]].admit_watermark
    assert sched.capture_sizes == LADDER[RUNGS[-1]].capture_sizes
    assert K.Scheduler.from_config(LADDER[RUNGS[0]], preempt_mode="recompute").preempt_mode == "recompute"
    with pytest.raises(ValueError, match="preempt_mode must be 'swap' or 'recompute', got 'drop'"):
        K.Scheduler(preempt_mode="drop")


def test_lengths_follow_the_workload():
    wl = Workload()
    P, O = K.sample_lengths(wl, 50_000, 3, 0.25, 2048)
    assert O.min() >= wl.out_min and O.max() <= wl.out_cap
    assert O.mean() == pytest.approx(wl.mean_output_tokens(), rel=0.02)
    assert P.max() == 2048 and (P == 2048).mean() == pytest.approx(wl.doc_probability, abs=0.003)


def test_step_costs_read_back_from_a_log_with_known_costs():
    steps, t = [], 0.0
    decode = {1: 0.4, 2: 1.0, 4: 1.5, 8: 3.0}
    for i in range(40):
        g = (1, 2, 4, 8)[i % 4]
        pre = 100 * (i % 3)                                      # 0, 100, 200 prefill tokens
        d_pre, d_dec, gap = pre * 0.09e-3, decode[g] * 1e-3, 0.2e-3
        seg = []
        if pre:
            seg.append(("prefill", t, t + d_pre))
        seg.append(("decode", t + d_pre, t + d_pre + d_dec))
        steps.append(dict(t0=t, t1=t + d_pre + d_dec + gap, n_decode=g, n_prefill_tok=pre, graph=g, seg=seg))
        t += d_pre + d_dec + gap + 1e-4
    c = measured_costs([runlog_from_steps(steps)])
    assert c.decode_ms == pytest.approx(decode)
    assert c.prefill_line == pytest.approx((0.0, 0.09), abs=1e-9)
    assert c.overhead_ms == pytest.approx(0.2)
    assert c.decode(3, SIZES) == pytest.approx(1.5)           # padded to the captured size 4
    assert c.decode(64, SIZES) == pytest.approx(c.eager_line[0] + c.eager_line[1] * 64)


def test_measured_costs_needs_a_log():
    with pytest.raises(ValueError, match="at least one raw log"):
        measured_costs([])
