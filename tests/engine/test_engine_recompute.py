"""Preemption by recompute: a victim's KV is dropped and rebuilt by prefill, its emitted
tokens are kept, no token is emitted twice, and the partition still reconciles every gap
and charges the victim's wait to preemption."""
import dataclasses

import numpy as np
import pytest

import analysis
from engine import decisions as D
from engine.controls import NO_EVICTION_BLOCKS
from engine.serve import rawlog, segments as S
from engine.serve.config import LADDER, Config
from engine.serve.loop import Engine
from engine.serve.model import make_model
from engine.serve.workload import Request, request_contents

RECOMPUTE = dataclasses.replace(LADDER["baseline"], preempt_mode="recompute")


def test_preempt_mode_is_validated_and_swap_is_every_rungs_default():
    assert all(cfg.preempt_mode == "swap" for cfg in LADDER.values())
    with pytest.raises(ValueError, match="preempt_mode must be one of swap, recompute"):
        Config(preempt_mode="drop")


@pytest.mark.parametrize("trace", ["poisson", "burst"])
def test_victims_keep_their_tokens_and_their_kv_is_rebuilt(trace):
    """The fake forward's tokens hash the whole KV a row attends over, so a victim whose
    rebuilt KV differed by one position would emit different tokens than it does with a
    pool that never fills."""
    eng = D.run(RECOMPUTE, trace)
    roomy = D.run(dataclasses.replace(RECOMPUTE, kv_blocks=NO_EVICTION_BLOCKS), trace)
    victims = [r for r in eng.done if r.evictions]
    assert victims and not any(r.evictions for r in roomy.done)
    assert not eng.swapped and not any(w for (_, _, d, _, _), w in zip(eng.segs, eng.seg_work)
                                       if d == S.D_SWAP_IN)
    clean = {r.rid: r.out for r in roomy.done}
    for r in eng.done:
        assert r.out == clean[r.rid] and len(r.out) == r.max_new == len(r.emit_t)
        assert all(b > a for a, b in zip(r.emit_step, r.emit_step[1:]))     # never twice in a step or back
        assert r.first_token_t == r.emit_t[0] and r.refill is None and r.kv is None
        for a, b in r.evictions:
            assert b is not None and b > a and not any(a <= t <= b for t in r.emit_t)
    per_step = np.bincount([k for r in eng.done for k in r.emit_step], minlength=len(eng.steps))
    assert (per_step == [s[2] for s in eng.steps]).all()
    assert eng.free_blocks == RECOMPUTE.kv_blocks


def test_re_prefill_is_its_own_segment_and_the_readmission_ends_it():
    eng = D.run(RECOMPUTE, "burst")
    again = [(i, a, b) for (i, c, d, a, b), w in zip(eng.segs, eng.seg_work) if d == S.D_REPREFILL]
    assert again and all(c == S.PREFILL for i, c, d, a, b in eng.segs if d == S.D_REPREFILL)
    ends = {(i, b) for i, a, b in again}
    readmitted = [e[1] for r in eng.done for e in r.evictions]
    # every readmission is stamped inside a re-prefill segment, right after the chunk that completed it
    for t in readmitted:
        assert any(a <= t <= b for i, a, b in again)
    # a step's readmissions column counts them
    assert sum(s[6] for s in eng.steps) == len(readmitted) and ends


def _burst(n, max_new):
    out = []
    for text, _, doc in request_contents(7, n * 3):
        if not doc:
            out.append(Request(rid=len(out), arrival=0.0, text=text, max_new=max_new))
        if len(out) == n:
            return out


@pytest.mark.parametrize("scheme", ["article", "refined"])
def test_the_partition_reconciles_and_charges_the_victims_wait_to_preemption(tmp_path, scheme):
    cfg = dataclasses.replace(RECOMPUTE, kv_blocks=120, compact_history=True)
    eng = Engine(cfg, make_model(cfg.forward), _burst(16, 40))
    eng.run()
    trace_rows = [(r.rid, 0.0, len(r.text), r.max_new) for r in eng.done]
    path = rawlog.write_atomic(tmp_path / "recompute.npz", rawlog.arrays_from_engine(eng, trace_rows), 1.0,
                               {"rung": cfg.name, **cfg.to_dict()}, {})
    log = analysis.load(path)
    assert len(log.evictions) > 0 and (log.extras["seg_detail"] == S.D_REPREFILL).any()
    gaps = analysis.partition_run(log, scheme)
    labels = list(analysis.get_scheme(scheme).labels)
    np.testing.assert_allclose(gaps[labels].to_numpy().sum(axis=1), gaps["gap_ms"], rtol=0, atol=1e-9)
    for rid, a, b in log.evictions:
        g = gaps[(gaps["request"] == rid) & (gaps["t0"] < b) & (gaps["t1"] > a)]
        assert len(g) == 1                           # the victim's wait lies inside one gap
        wait_ms = (min(b, g["t1"].iloc[0]) - max(a, g["t0"].iloc[0])) * 1e3
        assert g["preempt"].iloc[0] >= wait_ms - 1e-9


def test_the_run_command_reaches_the_preemption_mode():
    from engine.cli import build_parser, main, run_config
    args = ["run", "baseline", "--seed", "1", "--duration", "1"]
    assert run_config(build_parser().parse_args(args)).preempt_mode == "swap"
    assert run_config(build_parser().parse_args(args + ["--preempt-mode", "recompute"])).preempt_mode == "recompute"
    as_json = ["run", "--config-json", '{"name": "r", "preempt_mode": "recompute"}', "--seed", "1", "--duration", "1"]
    assert run_config(build_parser().parse_args(as_json)).preempt_mode == "recompute"
    assert main(args + ["--preempt-mode", "drop"]) == 2


def test_the_engine_and_the_analysis_agree_on_the_detail_codes():
    from analysis.core.schemes import DETAIL_KINDS, REFINED
    assert tuple(S.DETAIL_NAMES[i] for i in range(len(S.DETAIL_NAMES))) == DETAIL_KINDS
    assert REFINED.detail_label["reprefill"] == "prefill" and set(REFINED.detail_label) == set(DETAIL_KINDS)
