"""The real-engine probe (engine/real): a short run of transformers' continuous batching
writes a log in the book's contract whose every gap reconciles; evictions under both
preemption modes are recorded and closed; a changed engine internal is refused by name."""
import dataclasses
import inspect

import numpy as np
import pytest

from analysis import get_scheme, load, partition_run, summarize
from analysis.core.columns import EMIT, REQ, SEG, STEP
from engine.real import internals
from engine.real.config import RealConfig, rung_config
from engine.real.replay import execute
from engine.real.runs import RealSpec, ensure_real_runs
from engine.serve import segments as S

RATE, DURATION = 6.0, 3.0


@pytest.fixture(scope="module")
def real_log(run_cache):
    """A 3 s baseline run, made as the book makes them: a fresh process, from the cache."""
    spec = RealSpec(rung_config("baseline"), seed=1, duration=DURATION, rate=RATE)
    (path,) = ensure_real_runs([spec], progress=False)
    return path


def _reconciles(path):
    log = load(path)                               # the contract: refuses an impossible timeline
    gaps = partition_run(log)
    parts = gaps[list(get_scheme("article").labels)]
    s = summarize(log)
    return log, gaps, parts, s


def test_a_short_run_reconciles_in_the_books_contract(real_log):
    log, gaps, parts, s = _reconciles(real_log)
    assert s["reconcile_max_err_ms"] < 1e-6
    assert (parts.to_numpy() >= -1e-9).all(), "a label got negative time"
    assert np.allclose(parts.sum(axis=1), gaps["gap_ms"], atol=1e-6)
    # every request served, with exactly the tokens it asked for, each after it arrived
    counts = np.bincount(log.emissions[:, EMIT.request].astype(int))
    want = log.requests[np.argsort(log.requests[:, REQ.request]), REQ.max_new]
    assert len(log.requests) == len(log.trace) > 0 and np.array_equal(counts, want)
    assert (log.requests[:, REQ.first_token] >= log.requests[:, REQ.arrival]).all()
    # steps decoded, and the forward pass was split by the step's token mix inside its step
    assert (log.steps[:, STEP.n_decode] > 0).any() and (log.steps[:, STEP.n_prefill_tok] > 0).any()
    mix = log.extras["step_mix"]
    assert mix.shape == (len(log.steps), 3) and np.array_equal(mix[:, 2], log.steps[:, STEP.n_decode])
    assert set(np.unique(log.segs[:, SEG.kind]).astype(int)) >= {S.PREFILL, S.DECODE}
    # every prompt token was counted as prefill, once (the scheduler calls a request DECODING
    # before its last prefill chunk runs, so the probe must not go by that status), and no
    # re-prefill in a run whose pool never filled
    assert log.steps[:, STEP.preempted].sum() == 0 and mix[:, 0].sum() == 0
    assert mix[:, 1].sum() == log.requests[:, REQ.prompt_tokens].sum()


def test_a_mixed_steps_forward_is_split_in_proportion_to_its_tokens(real_log):
    log = load(real_log)
    mix, segs = log.extras["step_mix"], log.segs
    fwd = np.isin(segs[:, SEG.kind], (S.PREFILL, S.DECODE))
    mixed = [i for i in range(len(mix)) if (mix[i, :2].sum() > 0) and mix[i, 2] > 0]
    assert mixed, "a 3 s run at this rate mixes prefill with decode in some step"
    for i in mixed:
        parts = segs[fwd & (segs[:, SEG.step] == i)]
        parts = parts[np.argsort(parts[:, SEG.t0])]
        # contiguous, in the order re-prefill, prefill, decode, each its tokens' share of the pass
        assert np.allclose(parts[1:, SEG.t0], parts[:-1, SEG.t1])
        span = parts[-1, SEG.t1] - parts[0, SEG.t0]
        tokens = [n for n in mix[i] if n]
        assert np.allclose((parts[:, SEG.t1] - parts[:, SEG.t0]) / span, np.array(tokens) / sum(tokens))
    assert log.config["engine"] == "transformers" and log.provenance["transformers"] == "5.25.0"


def test_each_token_is_stamped_after_its_steps_forward_pass(real_log):
    log = load(real_log)
    step = log.emissions[:, EMIT.step].astype(int)
    t = log.emissions[:, EMIT.t]
    fwd_end = np.full(len(log.steps), -np.inf)
    for i, k, _, b in log.segs:
        if int(k) in (S.PREFILL, S.DECODE):
            fwd_end[int(i)] = max(fwd_end[int(i)], b)
    assert (t >= fwd_end[step] - 1e-9).all() and (t <= log.steps[step, STEP.t1] + 1e-9).all()


@pytest.mark.parametrize("preempt", ["recompute", "swap"])
def test_evictions_are_recorded_and_closed_under_both_modes(tmp_path, preempt):
    """A pool of 200 pages of 16 tokens holds any one request (a 2,048-token prompt and a
    1,000-token output, the workload's caps) but not the run's: the engine evicts. Swap on a CPU-only machine runs with the
    pool unpinned (replay.swap_pool_on_cpu), as the run records."""
    cfg = RealConfig(name=f"small pool {preempt}", num_blocks=200, preempt=preempt, swap_gib=0.05)
    path = execute(cfg, seed=2, duration=2.0, rate=8.0, out=tmp_path / "run.npz")
    log, gaps, parts, s = _reconciles(path)
    assert s["reconcile_max_err_ms"] < 1e-6 and (parts.to_numpy() >= -1e-9).all()
    ev = log.evictions
    assert len(ev) > 0 and log.steps[:, STEP.preempted].sum() == len(ev)
    assert not np.isnan(ev[:, 2]).any(), "every victim came back before the run drained"
    assert log.steps[:, STEP.swapped_in].sum() == len(ev)
    swap = log.segs[log.extras["seg_detail"] == S.D_SWAP_IN]
    reprefill = log.segs[log.extras["seg_detail"] == S.D_REPREFILL]
    if preempt == "swap":
        assert len(swap) > 0
        assert log.provenance["swap_pool_pinned"] is __import__("torch").cuda.is_available()
    else:
        assert len(swap) == 0 and len(reprefill) > 0


def test_a_dead_engine_loop_fails_the_run_at_once():
    """transformers logs a loop thread's fatal error and drops the requests; the run must not
    wait out its drain deadline for results that will never come."""
    import time

    from engine.real.replay import _result

    class Dead:
        def get_result(self, timeout):
            time.sleep(min(timeout, 0.01))

        def is_running(self):
            return False

    t = time.perf_counter()
    with pytest.raises(RuntimeError, match="loop thread died while serving"):
        _result(Dead(), time.perf_counter() + 600, "while serving")
    assert time.perf_counter() - t < 5


def test_a_changed_internal_is_refused_by_name(monkeypatch):
    from transformers.generation.continuous_batching import continuous_api

    assert internals.problems() == []
    monkeypatch.setattr(continuous_api.ContinuousBatchProcessor, "update_batch", lambda self, outputs: None)
    with pytest.raises(internals.ChangedInternals,
                       match=r"ContinuousBatchProcessor\.update_batch now takes \(self, outputs\)"):
        internals.check()
    monkeypatch.delattr(continuous_api.ContinuousBatchProcessor, "_generation_step")
    with pytest.raises(internals.ChangedInternals, match=r"_generation_step is gone"):
        internals.check()


def test_the_probe_refuses_before_it_wraps_anything(monkeypatch):
    from engine.real.probe import Probe
    from transformers.generation.continuous_batching import requests

    before = dict(vars(requests.RequestState))
    monkeypatch.delattr(requests.RequestState, "create_equivalent_initial_request")
    with pytest.raises(internals.ChangedInternals, match="create_equivalent_initial_request is gone"):
        with Probe().attached():
            pass
    assert vars(requests.RequestState)["update_and_check_completion"] is before["update_and_check_completion"]


def test_the_wrapped_signatures_are_the_pinned_ones():
    """The table the check reads is the one the probe's wrappers call with."""
    from engine.real import probe
    src = inspect.getsource(probe.Probe)
    for (_, _, meth), params in internals.WRAPPED.items():
        if meth != "create_equivalent_initial_request":
            assert f"def {meth}(self_{''.join(', ' + p for p in params[1:])})" in src


def test_bad_real_configs_are_refused_with_the_knob_named():
    with pytest.raises(ValueError, match="preempt must be one of recompute, swap"):
        RealConfig(preempt="drop")
    with pytest.raises(ValueError, match="num_blocks must be a whole number"):
        RealConfig(num_blocks=0)
    with pytest.raises(ValueError, match="unknown real-engine rung"):
        rung_config("+speculative")
    with pytest.raises(ValueError, match="not one of the named rungs"):
        ensure_real_runs([RealSpec(dataclasses.replace(rung_config("baseline"), num_blocks=7), 1, 1.0, 1.0)],
                         progress=False)


def test_the_command_line_refuses_a_bad_rate_in_one_line(tmp_path, capsys):
    from engine.real.__main__ import main

    assert main(["--seed", "1", "--duration", "1", "--rate", "-1", "--out", str(tmp_path / "r.npz")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: rate and duration must be positive numbers, got rate=-1.0")
    assert not (tmp_path / "r.npz").exists()
