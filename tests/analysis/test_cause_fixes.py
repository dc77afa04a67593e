"""The takeaways page's frame, tables and sentences (analysis/across_runs/cause_fixes.py),
on synthetic ladders with known answers, each sentence in both directions (the claim holds /
does not; the cause fired / never did; the fix's rung ran / is missing; enough seeds to
judge / too few)."""
import pandas as pd
import pytest

from analysis.core.schemes import CAUSES, CLEAN
from analysis.core.run_summary import HIST_BINS
from analysis.instrument.knobs import ladder_knobs
from analysis.across_runs import article as A
from analysis.across_runs import paired, cause_fixes as T
from analysis.across_runs.rungs import (ADMIT_WATERMARK, BASELINE, COMPACT_HISTORY, LAST, RUNGS,
                                 TOKENIZE_OFF_LOOP)
from tests.support.summaries import article_like

SIX = (1, 2, 3, 4, 5, 6)          # six identical paired seeds reach p = 2/64: "established"


def hist(**where):
    """A run's cause histogram with ``n`` gaps of a cause in the bin starting at ``lo``."""
    out = []
    for lo, hi in zip(HIST_BINS[:-1], HIST_BINS[1:]):
        row = {"lo": lo, "hi": hi, **{c: 0 for c in CAUSES + [CLEAN]}}
        for cause, (at, n) in where.items():
            row[cause] += n if at == lo else 0
        row["n"] = sum(row[c] for c in CAUSES + [CLEAN])
        out.append(row)
    return out


def ladder(seeds=SIX, drop=(), **rung_over):
    """article_like's ladder with a histogram and throughput; ``rung_over`` maps a rung
    name's slug-free key (e.g. watermark) to fields replaced on that rung's runs."""
    rungs = {"watermark": ADMIT_WATERMARK, "tok_off": TOKENIZE_OFF_LOOP, "baseline": BASELINE}
    over = {rungs[k]: v for k, v in rung_over.items()}
    runs = []
    for r in article_like(seeds):
        if r["rung"] in drop:
            continue
        r = {**r, "hist": hist(prefill=(30, 800), preempt=(800, 200)), "tok_per_s": 100.0}
        for key, value in over.get(r["rung"], {}).items():
            r[key] = {**r[key], **value} if isinstance(value, dict) else value
        runs.append(r)
    return runs


def frame_of(runs):
    return T.cause_frame(runs, knobs=ladder_knobs()).set_index("cause", drop=False)


def pct(values):
    return T._shares(values)


# ---------------------------------------------------------------- the frame
def test_each_fix_spans_its_rungs_gc_two():
    assert T.fix_step("gc") == (BASELINE, COMPACT_HISTORY)
    assert T.fix_step("preempt") == (TOKENIZE_OFF_LOOP, ADMIT_WATERMARK)
    assert set(T.FIX_RUNGS) == set(CAUSES) == set(T.HEADLINE)


def test_cause_frame_reads_the_baseline_the_fix_and_the_knobs():
    f = frame_of(ladder())
    assert f.loc["preempt", "tail"] == "70.0%" and f.loc["preempt", "count"] == "20.0%"
    assert f.loc["prefill", "count"] == "80.0%"
    assert f.loc["preempt", "where"] == "above 800 ms" and f.loc["prefill", "where"] == "30-50 ms"
    assert f.loc["preempt", "knob"] == "admit_watermark 0.0 -> 0.1"
    assert "gc_freeze False -> True" in f.loc["gc", "knob"] and "compact_history" in f.loc["gc", "knob"]
    assert f["gone"].tolist() == [False, True, True, True, True]          # CAUSES order
    assert not f.loc["gc", "fired"] and f.loc["preempt", "fired"]
    assert f.loc["preempt", "art_tail"] == pct([r["preempt"] for r in A.BASELINE_RUNS])
    assert f.loc["preempt", "art_head_before"] == A.LADDER[TOKENIZE_OFF_LOOP]["itl_max"][0]


def test_knobs_are_whatever_is_passed():
    knobs = pd.DataFrame([{"rung": ADMIT_WATERMARK, "knob": "w", "from": "0", "to": "1"}])
    f = T.cause_frame(ladder(), knobs=knobs).set_index("cause")
    assert f.loc["preempt", "knob"] == "w 0 -> 1" and f.loc["prefill", "knob"] == "-"
    assert T.cause_frame(ladder(), knobs=None)["knob"].eq("-").all()


def test_fix_effects_are_the_ladder_chapters_verdicts():
    runs = ladder()
    e = T.fix_effects(runs).set_index(["cause", "key"])
    v = paired.ladder_verdicts(runs, rungs=RUNGS)
    step = paired.step_name(TOKENIZE_OFF_LOOP, ADMIT_WATERMARK)
    for key in ("itl_max", "ttft_p50"):
        assert e.loc[("preempt", key), "verdict"] == paired.verdict_row(v, step, key)["verdict"]
    assert e.loc[("preempt", "itl_max"), "phrase"] == "moved max down (established)"
    assert e.loc[("preempt", "ttft_p50"), "phrase"] == "moved TTFT p50 up (established)"
    assert e.loc[("preempt", "tok_per_s"), "phrase"] == (
        "showed no detectable change in throughput ([1.00-1.00], 97% interval)")
    missing = T.fix_effects(ladder(drop=(ADMIT_WATERMARK,))).set_index(["cause", "key"])
    assert missing.loc[("preempt", "itl_max"), "verdict"] == T.MISSING
    assert missing.loc[("prefill", "itl_p99"), "verdict"] == "established"   # 37 -> 30 ms


# ---------------------------------------------------------------- sentences, both ways
def test_takeaway_of_a_cause_its_fix_removed():
    s = T.cause_takeaway(frame_of(ladder()).loc["preempt"])
    assert s.startswith("In this build preemption held 70.0% of baseline tail time")
    assert f"(article: {pct([r['preempt'] for r in A.BASELINE_RUNS])})" in s
    assert "took it to 0.2% of tail time" in s and "moved max down (established)" in s
    graph = T.cause_takeaway(frame_of(ladder()).loc["graph"])    # 0.2% before: nothing to take away
    assert "held 0.2% of baseline tail time" in graph and "left it at 0.2% of tail time" in graph
    assert "moved TTFT p50 up (established)" in s and "showed no detectable change in throughput" in s


def test_takeaway_of_a_cause_its_fix_left_in_the_tail():
    s = T.cause_takeaway(frame_of(ladder()).loc["prefill"])
    assert "left 20.0% of tail time" in s and "took it to" not in s
    s = T.cause_takeaway(frame_of(ladder(watermark={"tail_share": {"preempt": 0.5}})).loc["preempt"])
    assert "left 50.0% of tail time" in s


def test_takeaway_of_a_cause_that_never_fired():
    s = T.cause_takeaway(frame_of(ladder()).loc["gc"])
    assert "never reached the baseline tail" in s and "had none of it to remove" in s
    assert "showed no detectable change in p99.9" in s                    # 900 ms before and after in article_like
    fired = frame_of(ladder(baseline={"tail_share": {"gc": 0.05}})).loc["gc"]
    assert "held 5.0% of baseline tail time" in T.cause_takeaway(fired)


def test_takeaway_when_the_fix_or_the_baseline_did_not_run():
    s = T.cause_takeaway(frame_of(ladder(drop=(ADMIT_WATERMARK,))).loc["preempt"])
    assert "is not in this build's ladder" in s and "held 70.0%" in s
    s = T.cause_takeaway(frame_of(ladder(drop=(BASELINE,))).loc["preempt"])
    assert s.startswith("This build has no baseline runs")
    assert "left it at 0.2% of tail time" in s and "none of it to remove" not in s   # no before to compare


def test_takeaway_with_one_seed_judges_nothing():
    s = T.cause_takeaway(frame_of(ladder(seeds=(1,))).loc["preempt"])
    assert "fewer than 2 seeds" in s and "can be judged" in s and "established" not in s
    assert "TTFT p50, median 100 ms -> 900 ms, can be judged" in s


def test_costs_sentence_both_ways():
    assert T.costs_sentence(T.fix_effects(ladder())) == (
        "Fixes that cost something here, by the paired runs: preemption's fix moved TTFT p50 up (established).")
    free = T.fix_effects(ladder(watermark={"ttft_p50": 100.0}))
    assert T.costs_sentence(free).startswith("No fix had a cost the paired runs detect")
    assert T.costs_sentence(T.fix_effects(ladder(seeds=(1,)))).startswith("No fix's cost can be judged here")


def test_no_cost_is_not_concluded_from_seeds_that_could_not_detect_one():
    # two seeds: the smallest paired p is 0.5, so "no fix had a cost the paired runs detect"
    # would rest on comparisons that could not have detected any cost
    two = T.costs_sentence(T.fix_effects(ladder(seeds=(1, 2), watermark={"ttft_p50": 100.0})))
    assert "No fix had a cost" not in two
    assert two.startswith("No fix's cost can be judged here: with 2 paired seed(s)")
    assert "the smallest p-value 2 seeds can reach is 0.5" in two


def test_removed_sentence_both_ways():
    s = T.removed_sentence(frame_of(ladder()))
    assert s.startswith("2 of the 3 causes that held at least 0.5% of tail time in a baseline run, and whose "
                        "fix ran, fell below it in every run of that rung (preemption, tokenization;")
    art = sum(A.TAIL_SHARE[T.fix_step(c)[1]][c] < 0.005 for c in CAUSES)
    assert f"the article's fixes did that for {art} of 5" in s
    kept = ladder(watermark={"tail_share": {"preempt": 0.5}}, tok_off={"tail_share": {"tok": 0.05}})
    kept = [{**r, "tail_share": {**r["tail_share"], "graph": 0.01}} for r in kept]
    assert T.removed_sentence(frame_of(kept)).startswith("None of the 4 causes")
    only_base = [r for r in ladder() if r["rung"] == BASELINE]
    assert T.removed_sentence(frame_of(only_base)).startswith("No cause both held 0.5%")


def test_ends_sentence_both_ways():
    s = T.ends_sentence(ladder())
    assert "fell 18.0-fold here, 900 ms -> 50.0 ms" in s and "moved p99.9 down (established)" in s
    a0, a1 = A.LADDER[BASELINE]["itl_p999"][0], A.LADDER[LAST]["itl_p999"][0]
    assert f"article: {a0:.0f} ms -> {a1:.1f} ms" in s
    assert "did not fall" in T.ends_sentence(ladder(watermark={"itl_p999": 900.0}))
    assert "lacks an end" in T.ends_sentence(ladder(drop=(LAST,)))
    assert T.ends_sentence(ladder(seeds=(1,))).endswith(
        "could not judge p99.9 (cannot be judged with 1 seed: a paired comparison needs at least 2 seeds).")


# ---------------------------------------------------------------- tables and the card
def test_tables_have_a_row_per_cause_and_the_verdict_cells():
    runs = ladder()
    f, e = T.cause_frame(runs, ladder_knobs()), T.fix_effects(runs)
    where, fix = T.where_table(f), T.fix_table(f, e)
    assert len(where) == len(fix) == len(CAUSES)
    fix = fix.set_index("cause")
    assert list(fix.columns[-5:]) == ["p99", "p99.9", "max", "TTFT p50", "throughput"]
    assert fix.loc["preemption", "max"] == "0.01x, established"
    assert fix.loc["preemption", "throughput"] == "1.00x, no change detected"
    gone = T.fix_table(T.cause_frame(ladder(drop=(LAST,))), T.fix_effects(ladder(drop=(LAST,))))
    assert gone.set_index("cause").loc["preemption", "max"] == "-"


def test_card_sets_the_articles_figures_beside_this_builds():
    card = T.card_measured(ladder()).set_index("quantity")
    med, lo, hi = A.LADDER[BASELINE]["itl_p999"]
    assert card.loc["p99.9, baseline (ms)", "article"] == f"{med:.0f} [{lo:.0f}-{hi:.0f}]"
    assert card.loc["p99.9, baseline (ms)", "this build"] == "900"
    assert card.loc["by count of tail gaps", "this build"] == "prefill in 6 of 6 run(s)"
    assert card.loc["by tail time", "this build"] == "preempt in 6 of 6 run(s)"
    assert card.loc["by tail time", "article"].startswith("preempt in 4 of 5 run(s)")
    assert card.loc["preemption", "this build"] == "70.0%"
    fixes = T.card_fixes(frame_of(ladder())).set_index("likely cause")
    assert fixes.loc["preemption", "symptom (this build)"].startswith("tail gaps above 800 ms, with explicit")
    assert "(established)" in fixes.loc["preemption", "this build"]
    assert A.MEASURED["watermark_ttft"] in fixes.loc["preemption", "article"]
    assert fixes.loc["garbage collection", "symptom (this build)"].startswith("never a gap's primary cause")
    assert T.card_fixes(frame_of(ladder(drop=(LAST,)))).set_index("likely cause").loc[
        "preemption", "this build"] == T.MISSING


@pytest.mark.parametrize("names, text", [
    (["a", "b", "a"], "a in 2 of 3 run(s), b in 1"), ([], "-"), ([None, float("nan")], "-")])
def test_leaders(names, text):
    assert T.leaders(names) == text
