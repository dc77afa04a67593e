"""The reproduction report's criteria, on synthetic run summaries with known answers."""
import pytest

from analysis.core.schemes import CAUSES, LABELS
from analysis.runs import findings as report

RUNGS = ["baseline", "+gc.freeze", "+compact history", "+graphs to 48", "+budget 256",
         "+tokenize off-loop", "+admit watermark"]


def fake(rung, seed, **over):
    s = {"rung": rung, "seed": seed, "itl_p50": 12.0, "itl_p99": 40.0, "itl_p999": 900.0, "itl_max": 9000.0,
         "ttft_p50": 100.0, "fwd_share_clean_median": 0.97, "fwd_share_tail_median": 0.2,
         "tail_share": {k: 0.0 for k in LABELS}, "all_share": {k: 0.0 for k in LABELS},
         "tail_count": {k: 0 for k in CAUSES + ["clean"]}, "gc_counts": {"0": 400, "1": 30, "2": 3},
         "gen2_serving_ms": [200.0], "eager_steps": 300, "preemptions": 100,
         "reconcile_max_err_ms": 0.0, "skipped_steps_without_eviction": 0}
    s["tail_share"].update(preempt=0.7, prefill=0.2, graph=0.002, tok=0.05)
    s["all_share"].update(graph=0.02, kernel=0.9)
    s["tail_count"].update(prefill=800, preempt=200)
    for k, v in over.items():
        if isinstance(v, dict):
            s[k] = {**s[k], **v}
        else:
            s[k] = v
    return s


def article_like(seeds=(1, 2, 3)):
    runs = []
    for seed in seeds:
        runs += [fake("baseline", seed),
                 fake("+gc.freeze", seed, gen2_serving_ms=[60.0]),
                 fake("+compact history", seed, gen2_serving_ms=[], gc_counts={"0": 30}),
                 fake("+graphs to 48", seed, eager_steps=0, gen2_serving_ms=[], itl_p99=37.0),
                 fake("+budget 256", seed, eager_steps=0, gen2_serving_ms=[], itl_p99=30.0),
                 fake("+tokenize off-loop", seed, eager_steps=0, gen2_serving_ms=[], itl_p99=30.0,
                      tail_share={"tok": 0.0}),
                 fake("+admit watermark", seed, eager_steps=0, gen2_serving_ms=[], itl_p99=28.0,
                      itl_p999=50.0, itl_max=110.0, preemptions=2, ttft_p50=900.0,
                      tail_share={"tok": 0.0, "preempt": 0.002})]
    return runs


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
        "could not be tested (no step ran off the captured path on the rung before)")
    assert "no request was preempted" in report.verdict(table, "watermark_preempt")
    assert report.verdict(table, "p999_end") == "held"
    assert report.verdicts(table)["graphs48"] == report.verdict(table, "graphs48")


def test_a_missing_rung_is_named_as_the_reason():
    runs = [r for r in article_like() if r["rung"] != "+graphs to 48"]
    table = report.findings(runs)
    assert table.loc["graphs48", "held"] is None and table.loc["budget", "held"] is None
    assert report.verdict(table, "graphs48") == "could not be tested (the rung +graphs to 48 is not in this build)"
    assert table.loc["p999_end", "reason"] == ""


def test_verdict_word_reads_as_a_predicate():
    assert report.verdict_word(True) == "held" and report.verdict_word(False) == "did not hold"
    assert report.verdict_word(None) == "could not be tested"
    assert report.verdict_word(float("nan"), "no runs") == "could not be tested (no runs)"


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
    idle = report.findings([{**r, "eager_steps": 0, "preemptions": 0} for r in article_like()])
    # nothing ran eager and nothing was preempted: graphs48, watermark_preempt and both graph findings
    assert report.verdict_counts(idle)["n_untestable"] == 4


def test_what_the_article_measured_is_quoted_from_its_figures():
    """The report's 'article' column is formatted from analysis/runs/article.py, the one
    place the article's numbers live; these are the article's own words for them."""
    from analysis.runs.article import MEASURED
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
        assert report.verdict(table, key) == "could not be tested (no baseline decode step ran off the captured path)"
    held = report.findings(article_like())
    assert held.loc["graph_tail", "held"] is True and held.loc["graph_body", "held"] is True
