"""The partition rules on small controlled timelines.

The first six cases are the article's examples (its unit tests), rebuilt here; the
next two are the reviewer's cases run through the first version, which must show
both published bugs.  Every case runs through the scalar Partitioner and through
the whole-run path, which must agree.  Times are in seconds, parts in ms.
"""
import math

import pytest

import analysis
from analysis.instrument import cases as examples
from analysis import FirstVersionPartitioner, LABELS, Partitioner, partition_run
from analysis.core.synthetic import runlog_from_steps


def step(t0, t1, segs, graph=16, n=1):
    return {"t0": t0, "t1": t1, "seg": tuple(segs), "graph": graph, "n_decode": n}


def both_paths(steps, gcs, t0, t1, evictions=(), baseline=None):
    """(parts, context) from the scalar path, checked against the whole-run path."""
    parts, ctx = Partitioner(steps, gcs, baseline=baseline).gap(t0, t1, evictions)
    log = runlog_from_steps(steps, gcs, emissions=[(7, t0), (7, t1)],
                            evictions=[(7, a, b) for a, b in evictions])
    row = partition_run(log, baseline=baseline).iloc[0]
    for lab in LABELS:
        assert row[lab] == pytest.approx(parts[lab], abs=1e-9), lab
        assert row["ctx_" + lab] == pytest.approx(ctx[lab], abs=1e-9), lab
    return parts, ctx


def expect(parts, **ms):
    """Named labels equal the given ms, every other label is zero."""
    for lab in LABELS:
        assert parts[lab] == pytest.approx(ms.get(lab, 0.0), abs=1e-9), lab


def total(parts):
    return math.fsum(parts.values())


# ------------------------------------------------------------- article cases
@pytest.mark.parametrize("case", examples.ARTICLE_CASES, ids=lambda c: c.name)
def test_article_case(case):
    parts, ctx = both_paths(case.steps, case.gcs, case.t0, case.t1, case.evictions, case.baseline)
    expect(parts, **case.parts)
    expect(ctx, **case.context)
    assert total(parts) == pytest.approx(case.gap_ms)


# ------------------------------------------------------- the first version
def test_first_version_charges_the_eviction_twice():
    case = examples.EVICTED
    parts, ctx = examples.run_case(case, FirstVersionPartitioner)
    expect(parts, **examples.FIRST_VERSION_CHARGES[case.name])
    causes = sum(parts[c] for c in analysis.CAUSES)
    assert causes == pytest.approx(60)          # 60 ms of causes in a 40 ms gap
    assert total(parts) == pytest.approx(70)    # the parts no longer reconcile
    expect(ctx)


def test_first_version_turns_gc_into_graph_time():
    case = examples.GC_IN_EAGER
    parts, _ = examples.run_case(case, FirstVersionPartitioner)
    expect(parts, **examples.FIRST_VERSION_CHARGES[case.name])
    assert parts["graph"] == pytest.approx(20 / 3)  # 6.67 ms invented; the truth is 0
    assert total(parts) == pytest.approx(30)


def test_comparison_table_shows_both_bugs():
    table = examples.comparison(examples.REVIEWER_CASES,
                                {"first version": FirstVersionPartitioner, "corrected": Partitioner})
    v1, fixed = table.xs("first version", level=1), table.xs("corrected", level=1)
    assert v1.loc[examples.EVICTED.name, "causes ms"] == pytest.approx(60)
    assert (fixed["sum of parts ms"] - fixed["gap ms"]).abs().max() < 1e-9
    assert v1.loc[examples.GC_IN_EAGER.name, "graph"] == pytest.approx(6.667, abs=1e-3)
    assert fixed.loc[examples.GC_IN_EAGER.name, "graph"] == 0


def test_first_version_agrees_when_neither_bug_is_triggered():
    steps = [step(0.0, 0.050, [("tok", 0.000, 0.005), ("swap", 0.005, 0.007),
                               ("prefill", 0.007, 0.040), ("decode", 0.040, 0.048)])]
    a, _ = Partitioner(steps, [], baseline=(0.0, 8.0)).gap(0.0, 0.050)
    b, _ = FirstVersionPartitioner(steps, [], baseline=(0.0, 8.0)).gap(0.0, 0.050)
    assert a == b


# ------------------------------------------------------------ other rules
def test_eviction_still_open_at_the_gap_end_is_preempt_to_the_end():
    steps = [step(0.000, 0.050, [("prefill", 0.010, 0.050)], graph=None, n=0)]
    parts, ctx = both_paths(steps, [], 0.0, 0.050, evictions=[(0.020, None)], baseline=(0, 1))
    expect(parts, residual=10, prefill=10, preempt=30)
    expect(ctx, prefill=30)


def test_evictions_outside_the_gap_are_ignored():
    steps = [step(0.000, 0.010, [("decode", 0.000, 0.010)])]
    parts, _ = both_paths(steps, [], 0.0, 0.010, evictions=[(0.020, 0.030)], baseline=(0, 10))
    expect(parts, kernel=10)


def test_fitted_baseline_uses_gc_free_captured_steps():
    # Captured steps of size 1 and 2 take 2 and 4 ms once GC is removed -> 2 ms per size.
    steps = [step(0.000, 0.012, [("decode", 0.000, 0.012)], graph=1, n=1),
             step(0.012, 0.016, [("decode", 0.012, 0.016)], graph=2, n=2)]
    p = Partitioner(steps, [(0.001, 0.011)])
    assert p.baseline.slope == pytest.approx(2.0)
    assert p.baseline.intercept == pytest.approx(0.0, abs=1e-9)


def test_primary_cause_rule():
    zero = dict.fromkeys(LABELS, 0.0)
    assert analysis.primary_cause(10.0, {**zero, "kernel": 10.0}) == "clean"
    assert analysis.primary_cause(10.0, {**zero, "prefill": 2.5, "kernel": 7.5}) == "prefill"
    assert analysis.primary_cause(10.0, {**zero, "prefill": 2.4, "kernel": 7.6}) == "clean"
    assert analysis.primary_cause(3.0, {**zero, "gc": 0.9, "kernel": 2.1}) == "clean"  # under 1 ms
    assert analysis.primary_cause(20.0, {**zero, "gc": 6.0, "tok": 6.0}) == "gc"      # tie: order


# ------------------------------------------------ input that breaks the model
GOOD = [step(0.000, 0.010, [("decode", 0.000, 0.010)]),
        step(0.010, 0.020, [("decode", 0.010, 0.020)])]


@pytest.mark.parametrize("make, message", [
    (lambda: Partitioner(GOOD, [(0.001, 0.005), (0.004, 0.006)]), "GC pauses overlap"),
    (lambda: Partitioner(GOOD, [(0.005, 0.001)]), "ends before it starts"),
    (lambda: Partitioner(GOOD, [(math.nan, 0.001)]), "finite"),
    (lambda: Partitioner(GOOD[::-1], []), "sorted"),
    (lambda: Partitioner([step(0, 0.010, []), step(0.005, 0.020, [])], []), "overlap"),
    (lambda: Partitioner([step(0.010, 0.0, [])], []), "ends before it starts"),
    (lambda: Partitioner([step(math.nan, 0.01, [])], []), "finite"),
    (lambda: Partitioner([step(0, 0.01, [("decode", 0.0, 0.02)])], []), "outside the step"),
    (lambda: Partitioner([step(0, 0.01, [("decode", 0.005, 0.001)])], []), "ends before it starts"),
    (lambda: Partitioner([step(0, 0.01, [("decode", 0, 0.006), ("prefill", 0.005, 0.01)])], []),
     "overlap"),
    (lambda: Partitioner([step(0, 0.01, [("think", 0, 0.01)])], []), "unknown segment kind"),
    (lambda: Partitioner([step(0, 0.01, [], graph="fast")], []), "unknown graph value"),
    (lambda: Partitioner(GOOD, []).gap(0.02, 0.01), "gap ends before it starts"),
    (lambda: Partitioner(GOOD, []).gap(0.0, math.nan), "finite"),
    (lambda: Partitioner(GOOD, []).gap(0.0, 0.02, [(0.001, 0.005), (0.004, 0.008)]),
     "evictions overlap"),
    (lambda: Partitioner(GOOD, []).gap(0.0, 0.02, [(0.001, None), (0.004, 0.008)]),
     "evictions overlap"),
    (lambda: Partitioner(GOOD, []).gap(0.0, 0.02, [(0.005, 0.001)]), "readmitted before evicted"),
    (lambda: partition_run(runlog_from_steps(GOOD, emissions=[(0, 0.0), (0, 0.02)]), scheme="v2"),
     "valid schemes"),
    (lambda: analysis.summarize(runlog_from_steps(GOOD, emissions=[(0, 0.0), (0, 0.02)]),
                                scheme="finer"), "valid schemes"),
    # the engine timeline is built on a helper thread: its errors still reach the caller
    (lambda: partition_run(runlog_from_steps(GOOD, emissions=[(0, 0.0), (0, 0.02)]),
                           baseline=(1.0,)), r"\(slope, intercept\) pair"),
    (lambda: partition_run(runlog_from_steps(GOOD, emissions=[(0, 0.0), (0, 0.02)]),
                           baseline="fast"), "got 'fast'"),
])
def test_input_that_breaks_the_model_is_refused(make, message):
    with pytest.raises(ValueError, match=message):
        make()


@pytest.mark.parametrize("kwargs, message", [
    (dict(gcs=[(0.001, 0.005), (0.004, 0.006)]), "GC pauses overlap"),
    (dict(evictions=[(0, 0.001, 0.005), (0, 0.004, 0.008)]), "overlapping evictions"),
    (dict(emissions=[(0, 0.02), (0, 0.01)]), "reversed times"),
])
def test_whole_run_path_refuses_the_same_input(kwargs, message):
    args = dict(gcs=(), emissions=[(0, 0.0), (0, 0.02)], evictions=())
    args.update(kwargs)
    with pytest.raises(analysis.RawLogError, match=message):
        runlog_from_steps(GOOD, **args)
