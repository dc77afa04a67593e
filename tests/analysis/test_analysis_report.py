"""The reproduction report's criteria, on synthetic run summaries with known answers."""
import pytest

from analysis.across_runs import findings as report

from tests.support.summaries import article_like, fake

RUNGS = ["baseline", "+gc.freeze", "+compact history", "+graphs to 48", "+budget 256",
         "+tokenize off-loop", "+admit watermark"]


def test_every_finding_holds_on_an_article_like_ladder():
    table = report.findings(article_like())
    assert table["held"].map(lambda h: h is True).all(), table[table["held"] != True]  # noqa: E712


@pytest.mark.parametrize("key, change", [
    ("fwd_clean", {"fwd_share_clean_median": 0.6}),
    ("preempt_majority", {"tail_share": {"preempt": 0.1}}),
    ("reconcile", {"reconcile_max_err_ms": 1e-6}),
    ("skipped", {"skipped_steps_without_eviction": 4}),
])
def test_a_baseline_that_breaks_a_finding_is_reported(key, change):
    runs = [fake("baseline", s, **change) if r["rung"] == "baseline" else r
            for r in article_like() for s in [r["seed"]]]
    assert report.findings(runs).loc[key, "held"] is False


def test_ttft_must_rise_in_every_paired_run():
    runs = article_like()
    runs[-1] = {**runs[-1], "ttft_p50": 50.0}      # one watermark run got faster
    assert report.findings(runs).loc["watermark_ttft", "held"] is False


def test_claims_about_mechanisms_that_never_fired_are_not_testable():
    runs = [{**r, "eager_steps": 0, "preemptions": 0} for r in article_like()]
    table = report.findings(runs)
    assert table.loc["graphs48", "held"] is None and table.loc["watermark_preempt", "held"] is None
    assert report.verdict(table, "graphs48") == (
        "was not testable (a decode step off the captured path occurred in none of the 3 runs of +compact history)")
    assert report.verdict(table, "watermark_preempt") == (
        "was not testable (preemption occurred in none of the 3 runs of +tokenize off-loop)")
    assert report.verdict(table, "p999_end") == "held"
    assert "was " + report.verdicts(table)["graphs48"] == report.verdict(table, "graphs48")


def test_a_missing_rung_is_named_as_the_reason():
    runs = [r for r in article_like() if r["rung"] != "+graphs to 48"]
    table = report.findings(runs)
    assert table.loc["graphs48", "held"] is None and table.loc["budget", "held"] is None
    assert report.verdict(table, "graphs48") == "was not testable (the rung +graphs to 48 is not in this build)"
    assert table.loc["p999_end", "reason"] == ""


def test_verdict_word_reads_as_a_predicate():
    assert report.verdict_word(True) == "held" and report.verdict_word(False) == "did not hold"
    assert report.verdict_word(None) == "was not testable"
    assert report.verdict_word(float("nan"), "no runs") == "was not testable (no runs)"


def test_counts_and_failed_claims_by_name():
    runs = article_like()
    runs[-1] = {**runs[-1], "ttft_p50": 50.0}
    table = report.findings(runs)
    counts = report.verdict_counts(table)
    assert counts == {"n_findings": len(table), "n_held": len(table) - 1, "n_not": 1, "n_untestable": 0}
    s = report.failed_sentence(table)
    assert s == "The ones that did not: \"the watermark's cost is time to first token\"."
    assert "watermark_ttft" not in s
    assert report.failed_sentence(report.findings(article_like())).startswith("None did not hold")
    assert report.failed_sentence(report.findings(article_like())).endswith("held.")
    idle = report.findings([{**r, "eager_steps": 0, "preemptions": 0} for r in article_like()])
    # nothing ran eager and nothing was preempted: graphs48, both graph findings, and the three
    # about preemption (its share of the tail, the watermark ending it, the watermark's cost)
    assert report.verdict_counts(idle)["n_untestable"] == 6
    assert set(idle.index[idle["verdict"] == "not testable"]) == {
        "graphs48", "graph_tail", "graph_body", "preempt_majority", "watermark_preempt", "watermark_ttft"}


def test_what_the_article_measured_is_quoted_from_its_figures():
    """The report's 'article' column is formatted from analysis/across_runs/article.py, the one
    place the article's numbers live; these are the article's own words for them."""
    from analysis.across_runs.article import MEASURED
    table = report.findings(article_like())
    assert set(table.index) <= set(MEASURED)
    assert MEASURED["preempt_majority"] == "4 of 5 runs (57-93%)"
    assert MEASURED["max_end"] == "median 9,466 -> 108 ms"
    assert MEASURED["graph_tail"] == "0.1-0.7% of tail time"
    assert MEASURED["compact"] == "gen-0 ~380-400 -> 20-44; no gen-2"
    assert MEASURED["overload_watermark"] == "median p99.9 1,022 -> 56 ms"
    assert (table["article"] == [MEASURED[k] for k in table.index]).all()


def test_graph_findings_cannot_be_tested_when_nothing_fell_off_the_captured_path():
    runs = [fake("baseline", r["seed"], eager_steps=0) if r["rung"] == "baseline" else r for r in article_like()]
    table = report.findings(runs)
    for key in ("graph_tail", "graph_body"):
        assert table.loc[key, "held"] is None
        assert report.verdict(table, key) == (
            "was not testable (a decode step off the captured path occurred in none of the 3 baseline runs)")
    held = report.findings(article_like())
    assert held.loc["graph_tail", "held"] is True and held.loc["graph_body", "held"] is True


def test_a_mechanism_that_never_fired_is_not_a_failed_reproduction():
    # no preemption anywhere: "preemption holds most baseline tail time" and the watermark's
    # TTFT cost were scored "did not hold" although nothing was there to hold
    runs = [{**r, "preemptions": 0, "tail_share": {**r["tail_share"], "preempt": 0.0}} for r in article_like((1, 2))]
    runs = [{**r, "ttft_p50": 90.0} if r["rung"] == "+admit watermark" else r for r in runs]
    table = report.findings(runs)
    assert table.loc["preempt_majority", "verdict"] == "not testable"
    assert report.verdict(table, "preempt_majority") == (
        "was not testable (preemption occurred in none of the 2 baseline runs)")
    assert table.loc["watermark_ttft", "verdict"] == "not testable"
    assert "did not hold" not in report.verdict(table, "watermark_ttft")


def test_a_mechanism_that_fired_in_too_few_runs_says_how_many():
    runs = article_like()
    runs = [{**r, "preemptions": 0} if r["rung"] == "baseline" and r["seed"] != 1 else r for r in runs]
    assert report.verdict(report.findings(runs), "preempt_majority") == (
        "was not testable (preemption occurred in 1 of the 3 baseline runs; the criterion needs 2)")


def test_count_and_time_disagree_is_a_finding_both_ways():
    table = report.findings(article_like())
    assert table.loc["count_time", "verdict"] == "held"
    assert table.loc["count_time", "this build"] == "leaders differ in 3 of 3 runs (prefill by count, preempt by time)"
    agree = [{**r, "tail_share": {**r["tail_share"], "prefill": 0.8, "preempt": 0.1}} if r["rung"] == "baseline" else r
             for r in article_like()]
    assert report.findings(agree).loc["count_time", "verdict"] == "did not hold"
    from analysis.across_runs.article import MEASURED
    assert MEASURED["count_time"] == "leaders differ in 4 of 5 runs (prefill by count, preempt by time)"


def test_a_graph_share_of_nothing_does_not_print_as_zero_point_zero_percent():
    runs = [fake("baseline", r["seed"], all_share={"graph": 0.0}, tail_share={"graph": 0.0}, eager_steps=0)
            if r["rung"] == "baseline" else r for r in article_like()]
    assert "0.0% of all gap time vs 0.0% of tail time" not in report.findings(runs).loc["graph_body", "this build"]
    small = [fake("baseline", r["seed"], all_share={"graph": 0.00004}, tail_share={"graph": 0.0})
             if r["rung"] == "baseline" else r for r in article_like()]
    assert report.findings(small).loc["graph_body", "this build"] == "0.004% of all gap time vs 0.0% of tail time"
