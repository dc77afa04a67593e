"""The rules the chapters apply to their runs, each on data with a known answer (they
used to live in notebook cells, where no test reached them)."""
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from analysis.instrument import control_scores, overhead, sixth_pile
from analysis.render import chapter_runs
from analysis.across_runs import ladder_steps, paired, per_cause
from analysis.across_runs.tables import METRIC_NAMES
from analysis.across_runs.rungs import ADMIT_WATERMARK, BASELINE, FIRST, GC_FREEZE, LAST, RUNGS
from analysis.across_runs.select import rung_above
from tests.support.summaries import article_like, fake


def test_rung_names_come_from_the_engine_ladder_in_order():
    assert (FIRST, LAST) == (BASELINE, ADMIT_WATERMARK) == (RUNGS[0], RUNGS[-1])
    assert rung_above(RUNGS, GC_FREEZE) == BASELINE


def test_a_cause_is_gone_only_if_under_half_a_percent_in_every_run_after_its_fix():
    runs = article_like()                            # prefill keeps 20% of the tail after its fix
    assert per_cause.causes_gone(runs) == ["graph", "preempt", "gc", "tok"]
    runs[-1] = {**runs[-1], "tail_share": {**runs[-1]["tail_share"], "preempt": 0.006}}
    assert per_cause.causes_gone(runs) == ["graph", "gc", "tok"]      # one watermark run kept 0.6%


def test_step_phrases_cover_every_target_step_of_the_ladder():
    runs = [fake(r["rung"], r["seed"] + 10 * k, **{m: r[m] * (1 + 0.01 * k)
                                                    for m in paired.METRICS})
            for k in range(3) for r in article_like(seeds=(1,))]
    phrases = ladder_steps.step_phrases(paired.ladder_verdicts(runs, rungs=RUNGS))
    assert set(phrases) == set(ladder_steps.STEP_TARGETS)
    for key, (_, _, metric) in ladder_steps.STEP_TARGETS.items():
        assert METRIC_NAMES[metric] in phrases[key], (key, phrases[key])
    # 3 seeds cannot reach p <= 0.10: not "no detectable change", a comparison that could not detect one
    assert phrases["watermark_max"] == (
        "could not judge max (cannot be judged with 3 seeds: the smallest p-value 3 seeds can reach is 0.25)")


def test_verdict_row_names_what_is_missing():
    runs = article_like()
    verdicts = paired.ladder_verdicts(runs, rungs=RUNGS)
    row = paired.verdict_row(verdicts, paired.END_TO_END, "itl_p999")
    assert row["before"] == FIRST and row["after"] == LAST
    with pytest.raises(KeyError, match="no verdict"):
        paired.verdict_row(verdicts, paired.step_name(LAST, FIRST), "itl_p99")


def test_overload_runs_join_only_the_profiles_own_seeds():
    assert chapter_runs.overload_joins(None) and not chapter_runs.overload_joins([6, 7])
    assert chapter_runs.overload_specs("smoke", seeds=[6]) == []


def test_every_is_a_verdict_over_all_flags():
    assert chapter_runs.every([True, True]) == "every"
    assert chapter_runs.every(pd.Series([True, False])) == "not every"


def test_negative_controls_the_article_scheme_fails():
    neg = pd.DataFrame({"cause": ["preempt", "prefill"], "article": [0.03, 0.0], "refined": [0.0, 0.0]})
    assert control_scores.failing_causes(neg, "article") == ["preempt"]
    assert control_scores.failing_causes(neg, "refined") == []


def test_positive_controls_under_the_article_scheme_ignore_the_hog():
    pos = pd.DataFrame({"kind": ["gc", "hog"], "worst, article scheme": [0.99, np.nan], "bound": [0.95, 0.9]})
    assert control_scores.article_scheme_holds(pos)
    pos.loc[0, "worst, article scheme"] = 0.5
    assert not control_scores.article_scheme_holds(pos)


def test_off_cpu_excess_not_explained_by_the_run_queue():
    slow = pd.DataFrame({"excess_offcpu_ms": [10.0, 4.0], "runq_ms": [3.0, 9.0]})
    assert sixth_pile.excess_not_runq_ms(slow) == pytest.approx(7.0)   # 14 - (3 + 4)


def test_overhead_goal_and_pairs():
    assert overhead.goal_met(pd.DataFrame({"direct overhead": [0.004, 0.02, 0.006]}))
    assert not overhead.goal_met(pd.DataFrame({"direct overhead": [0.012, 0.011]}))
    article, full = overhead.overhead_configs()
    specs = [SimpleNamespace(rung=full.name, seed=2, path="f2"), SimpleNamespace(rung=article.name, seed=1, path="a1"),
             SimpleNamespace(rung=full.name, seed=1, path="f1"), SimpleNamespace(rung="other", seed=1, path="x"),
             SimpleNamespace(rung=article.name, seed=2, path="a2")]
    assert overhead.overhead_pairs(specs) == [(1, "a1", "f1"), (2, "a2", "f2")]


def test_per_run_results_are_computed_once_and_read_back_alike(tmp_path, monkeypatch):
    import numpy as np
    from analysis.across_runs import summaries
    monkeypatch.setenv("ITL_CACHE_DIR", str(tmp_path))
    calls = []

    def compute():
        calls.append(1)
        return {"n": np.int64(3), "x": np.float64(0.1), "missing": float("nan")}

    log = tmp_path / "some-run__abc.npz"
    log.write_bytes(b"one run")
    first = summaries.per_run_cached(log, "thing", compute)
    again = summaries.per_run_cached(log, "thing", compute)
    assert calls == [1] and first["n"] == again["n"] == 3 and isinstance(first["n"], int)
    assert first["x"] == 0.1 and np.isnan(again["missing"])
    summaries.per_run_cached(log, "other thing", compute)
    assert calls == [1, 1]                          # another kind, another entry
    log.write_bytes(b"the run made again")          # same name, another log
    summaries.per_run_cached(log, "thing", compute)
    assert calls == [1, 1, 1]


def test_a_positive_control_that_recovers_more_than_was_injected_fails_too():
    # 101.4% passed the old one-sided bound (>= 95%); 106% counts 6% of time twice
    assert control_scores.within(1.014, 0.95) and not control_scores.within(1.06, 0.95)
    assert not control_scores.within(0.94, 0.95) and not control_scores.within(float("nan"), 0.95)
    assert control_scores.worst([0.99, 1.07, 0.97]) == 1.07
    pos = pd.DataFrame({"kind": ["gc", "hog"], "worst, article scheme": [1.08, np.nan], "bound": [0.95, 0.9]})
    assert not control_scores.article_scheme_holds(pos)
    rows = pd.DataFrame({"kind": ["gc", "gc"], "label": ["gc", "gc"], "injected_ms": [100.0, 100.0],
                         "recovered_ms": [99.0, 107.0], "recovered": [0.99, 1.07],
                         "article_recovered": [0.99, 1.07], "bound": [0.95, 0.95]})
    summary = control_scores.positive_summary(rows)
    assert summary.loc[0, "worst recovered"] == 1.07 and summary.loc[0, "verdict"] == "FAIL"


def test_no_steal_time_does_not_clear_the_hypervisor():
    s = sixth_pile.steal_sentence({"steal_s": 0.0, "steal_share": 0.0})
    assert "was not the hypervisor" not in s and "not every hypervisor" in s
