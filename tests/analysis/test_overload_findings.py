"""The overload sidebar's reading, computed: past capacity or not, and which rungs moved
the tail (analysis/across_runs/overload_findings.py), on synthetic run summaries."""
import math

from analysis.core.schemes import LABELS
from analysis.across_runs import overload_findings

RUNGS = ["baseline", "+gc.freeze", "+compact history", "+graphs to 48", "+budget 256",
         "+tokenize off-loop", "+admit watermark"]


MEAN_OUT = 300.0      # mean output tokens per request: rate 5 req/s offers 1500 tokens/s


def _run(rung, seed, p999, ttft_ms=8000.0, rate=5.0, duration=20.0, preempt=0.8):
    shares = {k: 0.0 for k in LABELS}
    shares.update(preempt=preempt, kernel=1 - preempt)
    return {"rung": rung, "seed": seed, "itl_p999": p999, "ttft_p50": ttft_ms, "rate": rate,
            "duration": duration, "tail_share": shares}


def ladder(p999s, seeds=(1, 2), **kw):
    return [_run(r, s, p, **kw) for r, p in zip(RUNGS, p999s) for s in seeds]


FLAT_THEN_WATERMARK = [1000, 900, 800, 1100, 700, 1000, 60]


def test_past_capacity_and_only_the_watermark_moved():
    runs = ladder(FLAT_THEN_WATERMARK)
    cap = overload_findings.past_capacity(runs, capacity_tokens_per_s=1000.0, mean_out=MEAN_OUT)
    assert cap["past"].all() and not cap["drained"].any()
    assert cap["offered_load"].tolist() == [1.5, 1.5]
    movers = overload_findings.tail_movers(runs)
    assert movers["last_moved"] and movers["middle_moved"] == []
    s = overload_findings.overload_sentence(cap, movers)
    assert s.startswith("These runs were past capacity (median time to first token 8.0 s against the 2 s")
    assert "offered work 1.50 times the measured capacity" in s
    assert "only the last rung moved the tail: median p99.9 1000 ms -> 60.0 ms" in s
    assert "As in the article" in s and "the admission watermark is the fix that counts" in s


def test_a_draining_queue_is_not_past_capacity():
    runs = ladder(FLAT_THEN_WATERMARK, ttft_ms=300.0, rate=5.0 / 3)
    cap = overload_findings.past_capacity(runs, capacity_tokens_per_s=1000.0, mean_out=MEAN_OUT)
    assert not cap["past"].any()
    s = overload_findings.overload_sentence(cap, overload_findings.tail_movers(runs))
    assert s.startswith("These runs were not clearly past capacity: 2 of 2 baseline run(s)")
    assert "fix that counts" not in s


def test_offered_load_alone_is_not_past_capacity_and_is_unknown_without_capacity():
    runs = ladder(FLAT_THEN_WATERMARK, ttft_ms=300.0, rate=5.0)
    cap = overload_findings.past_capacity(runs, 1000.0, mean_out=MEAN_OUT)
    assert not cap["past"].any() and (cap["offered_load"] > 1).all()
    s = overload_findings.overload_sentence(cap, overload_findings.tail_movers(runs))
    assert "median time to first token 300 ms" in s and "offered work 1.50 times the measured capacity" in s
    assert "although they offered more work than the engine can serve" in s
    cap = overload_findings.past_capacity(runs, None)
    assert cap["offered_load"].isna().all() and not cap["past"].any()
    s = overload_findings.overload_sentence(cap, overload_findings.tail_movers(runs))
    assert "times the measured capacity" not in s and "although" not in s


def test_an_earlier_rung_that_halves_the_tail_is_named():
    runs = ladder([1000, 900, 300, 300, 300, 300, 20])
    s = overload_findings.overload_sentence(overload_findings.past_capacity(runs), overload_findings.tail_movers(runs))
    assert "it was not alone: +compact history" in s and "Unlike the article" in s


def test_a_watermark_that_does_not_halve_the_tail():
    runs = ladder([1000, 900, 800, 1100, 700, 1000, 800])
    s = overload_findings.overload_sentence(overload_findings.past_capacity(runs), overload_findings.tail_movers(runs))
    assert "the watermark did not halve the tail" in s and "did not fix the tail past capacity" in s


def test_missing_runs_or_rungs_are_said():
    assert "no overloaded baseline runs" in overload_findings.overload_sentence(overload_findings.past_capacity([]), {})
    runs = [r for r in ladder(FLAT_THEN_WATERMARK) if r["rung"] != "+tokenize off-loop"]
    movers = overload_findings.tail_movers(runs)
    assert movers == {"complete": False}
    assert "lacks the rungs" in overload_findings.overload_sentence(overload_findings.past_capacity(runs), movers)


def test_overload_findings_rows():
    rows = {r["key"]: r for r in overload_findings.overload_findings(ladder(FLAT_THEN_WATERMARK))}
    assert rows["overload_preempt"]["held"] is True and rows["overload_watermark"]["held"] is True
    rows = {r["key"]: r for r in overload_findings.overload_findings(ladder(FLAT_THEN_WATERMARK, preempt=0.3))}
    assert rows["overload_preempt"]["held"] is False
    rows = {r["key"]: r for r in overload_findings.overload_findings(ladder([1000, 900, 300, 300, 300, 300, 20]))}
    assert rows["overload_watermark"]["held"] is False and "rungs between: 300 ms-900 ms" in rows["overload_watermark"]["this build"]
    rows = {r["key"]: r for r in overload_findings.overload_findings(ladder(FLAT_THEN_WATERMARK)[:2])}
    assert rows["overload_watermark"]["held"] is None and rows["overload_watermark"]["reason"]
    assert math.isnan(rows["overload_watermark"]["value"])


def test_rate_sentence_says_calibrated_only_when_it_was():
    s = overload_findings.rate_sentence(8.0, 5.2, 10 / 6.5, "calibration")
    assert "this machine's calibrated rate of 5.20 req/s" in s and "(10 / 6.5 req/s)" in s
    g = overload_findings.rate_sentence(8.0, 5.2, 10 / 6.5, "given")
    assert "calibrated rate" not in g and "the rate given to this chapter" in g


def test_offered_load_is_rate_times_mean_output_over_the_measured_capacity():
    # the sidebar read 1.40 where 12.14 req/s x 287 tokens / 2,833 tokens/s is 1.23: one function now
    from analysis.across_runs.load import offered_load
    assert round(offered_load(12.14, 2833.0, 287.0), 2) == 1.23
    cap = overload_findings.past_capacity(ladder(FLAT_THEN_WATERMARK, rate=12.14), 2833.0, mean_out=287.0)
    assert cap["offered_load"].round(2).tolist() == [1.23, 1.23]
    assert math.isnan(offered_load(12.14, None, 287.0))


def test_a_time_to_first_token_in_milliseconds_does_not_print_as_zero_seconds():
    assert overload_findings.seconds_span([32.0, 48.0]) == "32 ms-48 ms"
    assert overload_findings.seconds_span([2100.0, 17000.0]) == "2.1 s-17.0 s"
    assert "0.0" not in overload_findings.seconds_span([32.0, 32.0])
