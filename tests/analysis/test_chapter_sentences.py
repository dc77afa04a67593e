"""Sentences the decomposed, ladder, checking, partition and instrument chapters glue,
each computed from data and checked where its claim holds and where it does not."""
import math
from types import SimpleNamespace

import pandas as pd
import pytest

from analysis.core.schemes import REFINED
from analysis.instrument import control_scores, mechanism_fidelity
from analysis.across_runs import decomposition, ladder_steps, paired, scheme_compare, scope
from analysis.across_runs.rungs import ADMIT_WATERMARK, FIRST, GC_FREEZE, RUNGS, TOKENIZE_OFF_LOOP
from tests.support.summaries import article_like, fake


# ---------------------------------------------------------------- decomposed: any rung
def test_intro_names_the_rung():
    assert "untreated engine (the baseline rung)" in decomposition.intro_sentence(FIRST)
    other = decomposition.intro_sentence(GC_FREEZE)
    assert GC_FREEZE in other and "untreated" not in other


def test_forward_share_sentence_both_ways_and_for_another_rung():
    runs = article_like()
    held = decomposition.forward_share_sentence(decomposition.rung_findings(runs, FIRST), FIRST)
    assert "The article saw" in held and "the first finding held and the second held" in held
    bad = [fake(FIRST, s, fwd_share_clean_median=0.6) for s in (1, 2)]
    assert "the first finding did not hold" in decomposition.forward_share_sentence(
        decomposition.rung_findings(bad, FIRST), FIRST)
    other = decomposition.forward_share_sentence(decomposition.rung_findings(runs, GC_FREEZE), GC_FREEZE)
    assert "for its baseline only" in other and "every run of the rung's median forward share" in other


def test_preempt_sentence_both_ways_and_for_another_rung():
    runs = article_like()
    assert "that finding held" in decomposition.preempt_sentence(decomposition.rung_findings(runs, FIRST), FIRST)
    low = [fake(FIRST, s, tail_share={"preempt": 0.1}) for s in (1, 2, 3)]
    assert "did not hold" in decomposition.preempt_sentence(decomposition.rung_findings(low, FIRST), FIRST)
    other = decomposition.preempt_sentence(decomposition.rung_findings(runs, ADMIT_WATERMARK), ADMIT_WATERMARK)
    assert "at this rung was 0.2%" in other and "baseline only" in other


def _sweep(p50_fast, p99_fast, share_fast=0.97, forwards=("article", "fast")):
    rows = []
    for fwd in forwards:
        for seed in (1, 2):
            for load in (0.95, 1.05):
                a = fwd == "article"
                rows.append({"forward": fwd, "rung": FIRST, "load": load, "seed": seed,
                             "itl_p50": 12.0 if a else p50_fast, "itl_p99": 40.0 if a else p99_fast,
                             "fwd_share_clean": 0.97 if a else share_fast})
    return pd.DataFrame(rows)


def test_forward_gain_one_for_one_and_tail_less():
    g = decomposition.forward_gain(_sweep(p50_fast=6.0, p99_fast=34.0))
    assert g["pairs"] == 4 and g["loads"] == [0.95, 1.05]
    s = decomposition.forward_gain_sentence(g)
    assert "about one for one" in s and "the tail gained less" in s and "fell by 15%" in s
    assert "The p99 fell by 15%, the median fell by 50%: the tail gained less." in s


def test_forward_gain_not_one_for_one_and_tail_not_less():
    # the forward pass of a typical gap halves, but the gap shrinks by far less than that
    g = decomposition.forward_gain(_sweep(p50_fast=11.0, p99_fast=20.0, share_fast=0.5))
    s = decomposition.forward_gain_sentence(g)
    assert "not one for one" in s and "the tail gained as much or more" in s


def test_forward_gain_without_both_forwards_or_without_a_saving():
    assert decomposition.forward_gain(_sweep(6.0, 30.0, forwards=("article",))) is None
    assert "not measured here" in decomposition.forward_gain_sentence(None)
    slower = decomposition.forward_gain(_sweep(p50_fast=14.0, p99_fast=40.0))
    assert "did not shorten" in decomposition.forward_gain_sentence(slower)


def test_near_operating_point_picks_the_levels_around_one():
    specs = [SimpleNamespace(rung=r, rate_info={"load": x}) for r in (FIRST, ADMIT_WATERMARK)
             for x in (0.6, 0.95, 1.05, 1.4)]
    near = decomposition.near_operating_point(specs, FIRST)
    assert sorted(s.rate_info["load"] for s in near) == [0.95, 1.05] and {s.rung for s in near} == {FIRST}
    far = [SimpleNamespace(rung=FIRST, rate_info={"load": x}) for x in (0.5, 1.4)]
    assert [s.rate_info["load"] for s in decomposition.near_operating_point(far, FIRST)] == [1.4]
    assert {s.rung for s in decomposition.near_operating_point(specs, GC_FREEZE)} == {FIRST}   # not swept
    assert decomposition.near_operating_point(specs[4:], GC_FREEZE) == []


# ---------------------------------------------------------------- both schemes side by side
def _refined(run, preempt, kernel, os_, sched):
    share = {lab: run["tail_share"].get(lab, 0.0) for lab in REFINED.labels}
    share.update(preempt=preempt, kernel=kernel, os=os_, sched=sched)
    return {**run, "tail_share": share}


def test_scheme_caveat_with_large_blind_spots():
    art = [fake(FIRST, s, tail_share={"preempt": 0.7, "kernel": 0.1}) for s in (1, 2)]
    ref = [_refined(r, preempt=0.5, kernel=0.02, os_=0.1, sched=0.2) for r in art]
    side = scheme_compare.scheme_side_by_side(art, ref, order=[FIRST])
    assert list(side.index) == [(FIRST, "article"), (FIRST, "refined")]
    assert side.loc[(FIRST, "refined"), "os"] == pytest.approx(0.1) and math.isnan(side.loc[(FIRST, "article"), "os"])
    s = scheme_compare.scheme_caveat(side, FIRST)
    assert "70.0% under the article's scheme and 50.0% under the refined" in s and "20.0% of tail time" in s
    assert "most of that time had been counted as forward pass" in s and "(sched) takes 20.0%" in s


def test_scheme_caveat_with_negligible_blind_spots():
    art = [fake(FIRST, s, tail_share={"preempt": 0.7, "kernel": 0.1}) for s in (1, 2)]
    ref = [_refined(r, preempt=0.699, kernel=0.1, os_=0.001, sched=0.001) for r in art]
    s = scheme_compare.scheme_caveat(scheme_compare.scheme_side_by_side(art, ref, order=[FIRST]), FIRST)
    assert "barely changes" in s and "only 0.1% of tail time" in s and "most of that" not in s
    assert "not measured" in scheme_compare.scheme_caveat(
        scheme_compare.scheme_side_by_side(art, ref, order=[FIRST]), ADMIT_WATERMARK)


# ---------------------------------------------------------------- ladder
def _verdicts(ttft_after):
    runs = []
    for seed, after in zip((1, 2, 3, 4, 5), ttft_after):
        runs += [fake(TOKENIZE_OFF_LOOP, seed, ttft_p50=100.0), fake(ADMIT_WATERMARK, seed, ttft_p50=after)]
    return paired.ladder_verdicts(runs, rungs=[TOKENIZE_OFF_LOOP, ADMIT_WATERMARK])


def test_ttft_cost_sentence_every_way():
    rose = ladder_steps.ttft_cost_sentence(_verdicts([900, 800, 700, 600, 500]), TOKENIZE_OFF_LOOP, ADMIT_WATERMARK)
    assert "rose in 5 of 5" in rose and "(median 100 ms -> 700 ms)" in rose and "the cost landed on the time to first token" in rose
    assert "moved TTFT p50 up (suggestive)" in rose
    fell = ladder_steps.ttft_cost_sentence(_verdicts([90, 80, 70, 60, 50]), TOKENIZE_OFF_LOOP, ADMIT_WATERMARK)
    assert "rose in 0 of 5" in fell and "no cost in time to first token" in fell
    mixed = ladder_steps.ttft_cost_sentence(_verdicts([120, 80, 130, 60, 100.5]), TOKENIZE_OFF_LOOP, ADMIT_WATERMARK)
    assert "rose in 3 of 5" in mixed and "no consistent cost" in mixed
    assert "not measured" in ladder_steps.ttft_cost_sentence(_verdicts([1, 2, 3, 4, 5]), FIRST, GC_FREEZE)
    one = paired.ladder_verdicts([fake(TOKENIZE_OFF_LOOP, 1, ttft_p50=12.04), fake(ADMIT_WATERMARK, 1, ttft_p50=12.3)],
                                 rungs=[TOKENIZE_OFF_LOOP, ADMIT_WATERMARK])
    single = ladder_steps.ttft_cost_sentence(one, TOKENIZE_OFF_LOOP, ADMIT_WATERMARK)
    assert "rose in 1 of 1" in single and "(median 12.0 ms -> 12.3 ms)" in single and "one seed cannot show" in single


def test_ttft_cost_sentence_concludes_nothing_from_seeds_that_could_not_detect_a_cost():
    runs = []
    for seed, after in zip((1, 2), (90.0, 80.0)):
        runs += [fake(TOKENIZE_OFF_LOOP, seed, ttft_p50=100.0), fake(ADMIT_WATERMARK, seed, ttft_p50=after)]
    two = paired.ladder_verdicts(runs, rungs=[TOKENIZE_OFF_LOOP, ADMIT_WATERMARK])
    s = ladder_steps.ttft_cost_sentence(two, TOKENIZE_OFF_LOOP, ADMIT_WATERMARK)
    assert "no cost" not in s and "rose in 0 of 2" in s
    assert s.endswith("whether the cost landed on the time to first token cannot be judged with 2 seeds "
                      "(the smallest p-value 2 seeds can reach is 0.5).")


def test_tail_evidence_and_worker_sentences():
    runs = [fake(FIRST, 1, gaps=114000), fake(ADMIT_WATERMARK, 1, gaps=116000), fake(GC_FREEZE, 1, gaps=10)]
    s = ladder_steps.tail_evidence_sentence(runs, 60.0)
    assert "At 60 s" in s and "about 115 gap(s)" in s
    assert "not known" in ladder_steps.tail_evidence_sentence(runs[2:], 60.0)
    assert "competes with the engine" in ladder_steps.tok_worker_sentence(2)
    assert "can run beside the engine" in ladder_steps.tok_worker_sentence(8)
    assert "not recorded" in ladder_steps.tok_worker_sentence(None)


def test_chance_verdicts_follow_the_number_of_seeds():
    assert paired.chance_rate(5) == pytest.approx(1 / 16) and paired.chance_rate(4) == 0.0
    assert paired.chance_rate(6) == pytest.approx(6 / 64)
    five = paired.ladder_verdicts(article_like(seeds=(1, 2, 3, 4, 5)), rungs=RUNGS)
    s = paired.chance_sentence(five)
    assert "35 comparisons, about 2.2 chance verdicts" in s
    three = paired.ladder_verdicts(article_like(), rungs=RUNGS)
    assert "none of the 35 comparisons can detect a change" in paired.chance_sentence(three)


# ---------------------------------------------------------------- checking, partition, instrument
def test_hog_sentence_contention_or_not():
    seen = {"steps": 40, "offcpu_share": 0.5, "runq_share_of_offcpu": 0.95}
    assert "looks like contention" in control_scores.hog_contention_sentence(seen)
    other = control_scores.hog_contention_sentence({**seen, "runq_share_of_offcpu": 0.2})
    assert "does not see the hog's stall as contention" in other
    quiet = control_scores.hog_contention_sentence({**seen, "offcpu_share": 0.02})
    assert "hardly took the engine off the CPU" in quiet
    assert "No step" in control_scores.hog_contention_sentence({"steps": 0})


def test_reconcile_scope_says_why_overload_runs_are_missing():
    assert scope.reconcile_scope_sentence(None, 35, 35) == (
        "The check covers this build's 35 ladder runs and the 35 runs of the overload sidebar.")
    s = scope.reconcile_scope_sentence([6, 7], 14, 0)
    assert "seeds given (6, 7)" in s and "left out" in s


def test_forward_vs_article_splits_machine_and_engine():
    def result(theirs, ours, fast=6.0, engine=True):
        return {"article_engine": engine, "rows": [{"measurement": "decode captured, batch 32",
                                                     "theirs_ms": theirs, "article_ms": ours, "fast_ms": fast,
                                                     "article_ratio": ours / theirs}]}
    machine = mechanism_fidelity.forward_vs_article_sentence(25.6, 12.8, result(theirs=25.6, ours=25.0))
    assert "(2.00 times that)" in machine and "takes 0.98 times" in machine
    assert "remaining 2.05 is the machine" in machine and "mostly this machine." in machine
    engine = mechanism_fidelity.forward_vs_article_sentence(25.0, 12.8, result(theirs=13.0, ours=25.0))
    assert "mostly our engine." in engine and "0.24 of our article forward's time" in engine
    blind = mechanism_fidelity.forward_vs_article_sentence(25.0, 12.8, result(13.0, 25.0, engine=False))
    assert "cannot be told apart" in blind


def test_fidelity_sentence_gives_the_page_faults_behind_a_copy_ratio():
    def row(name, ratio, **faults):
        return {"measurement": name, "article_ms": ratio, "fast_ms": 1.0, "theirs_ms": 1.0,
                "article_ratio": ratio, "fast_ratio": 1.0, **faults}
    result = {"article_engine": True, "repeats": 3, "rows": [
        row("readmission copy-in, 2048 tokens", 0.28, article_faults=3.0, fast_faults=3.0, theirs_faults=1540.0),
        row("prefill chunk, 256 tokens", 0.5),
        row("decode captured, batch 1", 1.0)]}
    s = mechanism_fidelity.fidelity_sentence(result)
    assert s.startswith("2 of 3 article-forward ratios fall outside")
    assert "readmission copy-in, 2048 tokens (0.28, with 3 minor page faults per call here against 1,540" in s
    assert "prefill chunk, 256 tokens (0.50)" in s                  # no faults counted: no note
    frame = mechanism_fidelity.fidelity_frame(result)
    assert frame.loc["readmission copy-in, 2048 tokens", "page faults per call, the article's engine"] == 1540
    assert (frame["page faults per call, the article's engine"] == "").sum() == 2   # not counted: blank
    result["rows"][0].update(article_faults=0.0, theirs_faults=0.0)
    assert "(0.28, with no page fault on either side" in mechanism_fidelity.fidelity_sentence(result)


def test_fidelity_counts_the_page_faults_a_copy_touches():
    import mmap
    import numpy as np
    from engine.fidelity import _ms_each, format_table
    kept = []

    def touch_fresh_pages():           # an anonymous map, not malloc: its pages are surely new
        m = mmap.mmap(-1, 4 << 20)
        if hasattr(mmap, "MADV_NOHUGEPAGE"):
            m.madvise(mmap.MADV_NOHUGEPAGE)   # 4 KiB pages even where huge pages are always on
        np.frombuffer(m, np.uint8)[::4096] = 1
        kept.append(m)
    ms, faults = _ms_each([touch_fresh_pages] * 2)
    assert ms > 0 and faults >= (4 << 20) // mmap.PAGESIZE * 0.9
    _, none = _ms_each([lambda: None] * 4)
    assert none < 50
    table = format_table({"article_engine": False, "repeats": 1, "rows": [
        {"measurement": "readmission copy-in, 600 tokens", "article_ms": 1.0, "fast_ms": 1.0,
         "article_faults": 12.0, "fast_faults": 7.0}]})
    assert "minor page faults per call" in table and table.rstrip().endswith("12           7")


def test_seeds_needed_sentence_with_and_without_a_spread():
    from analysis.across_runs.ladder_steps import seeds_needed_sentence
    s = seeds_needed_sentence(6.4, 6)
    assert "would need about 6 paired seeds (never fewer than 6)." in s and "nan" not in s
    for none in (float("nan"), 0.0):
        s = seeds_needed_sentence(none, 6)
        assert "have no spread to project from" in s and "nan" not in s


# ---------------------------------------------------------------- empty selections say so in words
def _decode_steps(rows):
    cols = ["run", "decode_ms", "predicted_ms", "ratio", "offcpu_ms", "runq_ms"]
    return pd.DataFrame(rows, columns=cols)


@pytest.mark.parametrize("rows, says", [
    ([(0, 1.0, 1.0, 1.0, 0.0, 0.0), (0, 2.0, 1.9, 1.05, 0.1, 0.0)], "None did, so there is no excess"),
    ([], "None did, so there is no excess"),
    ([(0, 10.0, 1.0, 10.0, 0.0, 0.0)], "None of it was off the CPU"),
    ([(0, 10.0, 1.0, 10.0, 6.0, 3.0)], "Of the off-CPU time, 50% was spent waiting on the run queue"),
])
def test_the_slow_steps_sentence_never_prints_nan(rows, says):
    from analysis.instrument import sixth_pile
    text = sixth_pile.slow_steps_sentence(sixth_pile.sixth_pile(_decode_steps(rows)))
    assert says in text and "nan" not in text.lower()


def test_the_unexplained_tail_sentence_with_no_gap_left_says_so():
    from analysis.across_runs.per_cause import clean_tail_sentence
    none = clean_tail_sentence(pd.DataFrame({"gap_ms": [], "kernel": []}))
    assert none == "None is left unexplained, so there is no average to give."
    some = clean_tail_sentence(pd.DataFrame({"gap_ms": [30.0, 50.0], "kernel": [10.0, 20.0]}))
    assert some == "They average 40.0 ms, of which 15.0 ms is forward pass."
