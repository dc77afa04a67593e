"""The instrument's controls, run through the real engine at smoke size.

Negative: a cause that cannot happen is charged at most 0.01% of all gap time by the
refined scheme. Positive: at least 95% of each injected stall (90% of the CPU hog's)
lands in its label. These check labels, not speed: the injected stalls are tens of
milliseconds, far above the noise of a 3 s run.
"""
import dataclasses

import numpy as np
import pytest

from analysis import load, partition_run, summarize
from analysis.instrument.control_scores import (NEGATIVE_BOUND, charged_share, injections, negative_row,
                               positive_table)
from engine.controls import INJECTIONS, NEGATIVE, POSITIVE

NEG = {c.cause: c for c in NEGATIVE}


@pytest.mark.parametrize("cause", list(NEG))
def test_negative_control_charges_nothing(control_logs, cause):
    log = load(control_logs[NEG[cause].config.name])
    row = negative_row(log, cause, "refined")
    assert row["charged_share"] <= NEGATIVE_BOUND, row
    assert row["ok"]


def test_negative_controls_really_remove_the_cause(control_logs):
    """The controls are what they claim: no eviction, no eager step, no collection, no
    tokenize segment, no prefill work once decoding has started."""
    pool = load(control_logs[NEG["preempt"].config.name])
    assert len(pool.evictions) == 0 and pool.steps[:, 5].sum() == 0
    assert (load(control_logs[NEG["graph"].config.name]).steps[:, 4] != 0).all()
    no_gc = load(control_logs[NEG["gc"].config.name])
    # collection comes back on only after serving (the engine re-enables it on the way out)
    assert (no_gc.gcs[:, 0] >= no_gc.steps[-1, 1]).all()
    assert not (load(control_logs[NEG["tok"].config.name]).segs[:, 1] == 0).any()
    held = load(control_logs[NEG["prefill"].config.name])
    first_decode = held.steps[held.steps[:, 2] > 0, 0].min()
    assert held.steps[held.steps[:, 0] >= first_decode, 3].sum() == 0


def test_article_scheme_charges_preemption_that_never_happened(control_logs):
    """The blind spot the refined scheme fixes: with a pool that never fills, the
    article's tags still charge the per-step KV reservation to preempt."""
    log = load(control_logs[NEG["preempt"].config.name])
    assert charged_share(log, "preempt", "article") > NEGATIVE_BOUND
    assert charged_share(log, "preempt", "refined") == 0.0
    # and the time moved to scheduler bookkeeping, not lost: both schemes reconcile
    for scheme in ("article", "refined"):
        assert summarize(log, scheme)["reconcile_max_err_ms"] < 1e-6


def test_injected_stalls_land_in_their_labels(control_logs):
    table = positive_table(control_logs[POSITIVE[0].config.name], "refined")
    assert sorted(table["kind"]) == sorted(i.kind for i in INJECTIONS)
    assert (table["injected_ms"] >= 20).all()          # large enough to dominate noise
    assert table["ok"].all(), table
    # nothing extra lands there either: the quiet config has no other source of these labels
    assert (table["recovered"] <= 1.05).all(), table


def test_cpu_hog_lands_in_os(control_logs):
    log = load(control_logs[POSITIVE[1].config.name])
    inj = injections(log)
    assert list(inj["kind"]) == ["hog"] and inj["injected_ms"].iloc[0] > 20
    table = positive_table(log, "refined")
    assert table["ok"].all() and table["recovered"].iloc[0] >= 0.90, table
    # the article's scheme has no label for it
    assert positive_table(log, "article")["label"].iloc[0] == "(none)"


def test_hog_time_was_run_queue_wait(control_logs):
    """The hog's stall is the engine waiting runnable: the run-queue clock sees it."""
    log = load(control_logs[POSITIVE[1].config.name])
    rq = log.extras["step_runq"]
    inj = injections(log).iloc[0]
    inside = (log.steps[:, 0] >= inj["t0"]) & (log.steps[:, 1] <= inj["t1"])
    waited_ms = np.nansum(rq[inside, 1] - rq[inside, 0]) * 1e3
    assert waited_ms >= 0.5 * inj["injected_ms"]


def test_refined_scheme_keeps_gc_and_reconciles(smoke_log):
    art, ref = partition_run(smoke_log, "article"), partition_run(smoke_log, "refined")
    assert np.allclose(art["gc"], ref["gc"])
    assert np.allclose(ref[_labels("refined")].sum(axis=1), ref["gap_ms"])
    assert (ref["preempt"] <= art["preempt"] + 1e-9).all()
    for lab in ("os", "sched"):
        assert (ref[lab] >= -1e-9).all()


def _labels(name):
    from analysis.core.schemes import get_scheme
    return list(get_scheme(name).labels)


def test_refined_scheme_needs_the_extra_arrays(smoke_log):
    """A log without the extra arrays (e.g. the article engine's) gets a clear error."""
    bare = dataclasses.replace(load(smoke_log), extras={})
    with pytest.raises(ValueError, match="seg_detail"):
        partition_run(bare, "refined")
    partition_run(bare, "article")            # the article scheme never needed them


def test_segment_work_from_steps_matches_the_log(smoke_log):
    """Logs that predate seg_work get it from the steps array; both agree."""
    from analysis.core.threadclocks import segment_work
    log = load(smoke_log)
    older = dataclasses.replace(log, extras={k: v for k, v in log.extras.items() if k != "seg_work"})
    assert np.array_equal(segment_work(older), segment_work(log))


def test_scalar_partitioner_refuses_the_refined_scheme():
    from analysis import Partitioner
    with pytest.raises(ValueError, match="partition_run"):
        Partitioner([], scheme="refined")


def test_slow_step_accounting_sees_the_hog(control_logs):
    """Decode steps inside the hog's window lose CPU time that steps outside it do not,
    and the per-step split never charges more off-CPU time than the decode's own wall
    time. (How much of the hog lands in decode segments rather than the rest of the
    step varies run to run; all of it landing in `os` is test_cpu_hog_lands_in_os.)"""
    from analysis.instrument.sixth_pile import decode_steps
    log = load(control_logs[POSITIVE[1].config.name])
    inj = injections(log).iloc[0]
    d = decode_steps(log)
    assert (d["offcpu_ms"] <= d["decode_ms"] + d["gc_ms"] + 1e-6).all()
    during = (d["t"] >= inj["t0"]) & (d["t"] <= inj["t1"])
    inside, outside = d.loc[during, "offcpu_ms"], d.loc[~during, "offcpu_ms"]
    assert inside.sum() > 0
    assert inside.mean() > 10 * outside.mean()


@pytest.mark.parametrize("off, runq, word", [
    (0.8, 0.9, "run queue behind another runnable thread"),
    (0.8, 0.1, "steal"),
    (0.2, 0.0, "on the CPU"),
    (0.2, 0.3, "steal"),            # the off-CPU part gets its sentence even when it is the minority
])
def test_sixth_pile_answer_follows_the_numbers(off, runq, word):
    from analysis.instrument.sixth_pile import answer
    words = answer({"slow_steps": 40, "excess_ms": 500.0, "offcpu_share": off, "runq_share_of_offcpu": runq})
    assert word in words["where"] + words["how"]
    assert words["how"].endswith(".")
    few = answer({"slow_steps": 5, "excess_ms": 6.0, "offcpu_share": off, "runq_share_of_offcpu": runq})
    assert few["where"].startswith("too few to say what they were: 5 slow step(s) with 6 ms") and few["how"] == ""
    assert "absent" in answer({"slow_steps": 0, "offcpu_share": float("nan"),
                               "runq_share_of_offcpu": float("nan")})["where"]
