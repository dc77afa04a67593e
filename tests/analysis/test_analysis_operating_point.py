"""The operating point beside the article's: per-run signature, the side-by-side table and
the computed band sentence in every direction."""

import numpy as np
import pandas as pd
import pytest

import analysis
from analysis.across_runs import operating_point as op
from analysis.across_runs import regime_reading as reading
from analysis.engine_link import Band


def test_signature_of_a_real_run(smoke_log):
    log = analysis.load(smoke_log)
    sig = op.run_signature(log, capacity_tokens_per_s=1000.0, mean_output_tokens=250.0)
    assert sig["requests"] == len(log.requests) and sig["gaps"] == len(log.emissions) - len(log.requests)
    assert sig["load"] == pytest.approx(float(log.config["rate"]) * 250.0 / 1000.0)
    per_min = 60.0 / float(log.config["duration"])
    assert sig["preemptions_per_min"] == pytest.approx(log.steps[:, 5].sum() * per_min)
    assert sig["tracked_start_k"] > 400                     # the 400,000-object start-up heap
    table = op.side_by_side(op.signatures([log]))
    assert list(table.columns) == ["metric", "article (5 runs)", "this build (1 run)"]
    row = table.set_index("metric").loc["requests"]
    assert row["article (5 runs)"] == "385-422" and row["this build (1 run)"] == str(len(log.requests))


def _sig(per_min, ttft_ms):
    return pd.DataFrame({"preemptions_per_min": per_min, "ttft_p50_ms": ttft_ms})


BAND = Band(low=100, high=200, max_ttft_p50_s=2.0)


@pytest.mark.parametrize("per_min, ttft, expect", [
    ([150, 160, 140], [300, 200, 400], "inside it, with queues that drained"),
    ([50, 60, 40], [300, 200, 400], "50% below its lower end"),
    ([300, 260, 320], [300, 200, 400], "50% above its upper end"),
    ([150, 160, 140], [3000, 2500, 4000], "the queue did not drain"),
])
def test_band_sentence_in_every_direction(per_min, ttft, expect):
    s = op.band_sentence(_sig(per_min, ttft), BAND)
    assert expect in s and "band of 100-200" in s


def test_unrecorded_values_say_so():
    assert op._spread([np.nan, np.nan], "{:.0f}") == "not recorded"
    assert op._spread([1.0, 3.0, 2.0], "{:.0f}") == "2 [1-3]"


def _cal(rate, per_min, drains, place, per_seed=(90, 130, 300)):
    return {"check_seeds": [101, 102, 103], "checks": [
        {"rate": rate * 0.8, "preemptions_per_min": 10.0, "drains": True, "place": "below", "per_seed": []},
        {"rate": rate, "preemptions_per_min": per_min, "drains": drains, "place": place,
         "per_seed": [{"preemptions_per_min": p} for p in per_seed]}]}


def test_check_sentence_when_the_check_and_the_ladder_disagree_or_agree():
    sig = _sig([526, 482, 682], [2500, 700, 7000]).assign(rate=11.78, load=1.0)
    split = op.check_sentence(sig, _cal(11.78, 134, True, "below"), BAND)
    assert "checked this same rate on seeds 101, 102, 103: a median of 134 preemptions" in split
    assert "(90-300 across seeds)" in split and "the ladder's seeds read 526 (482-682 across runs)" in split
    assert "fall on different sides of the band" in split and "steep at 1.00 of capacity" in split
    same = op.check_sentence(sig, _cal(11.78, 560, False, "above"), BAND)
    assert same.endswith("on the same side of the band.") and "did not drain" in same
    none = op.check_sentence(sig, _cal(9.0, 134, True, "below"), BAND)
    assert none.startswith("No calibration check ran at the rate the ladder used")
    assert op.check_sentence(sig, None, BAND).startswith("No calibration check")


def test_check_sentence_names_a_rate_carried_by_decode_demand():
    """The ladder ran at a rate carried from the checks' by decode demand: the sentence reads
    the check at the rate the calibration chose, and says how far the ladder's rate moved."""
    sig = _sig([150, 160, 140], [300, 200, 400]).assign(rate=9.9068)
    carried = {"rate": 9.9068, "check_rate": 10.4374, "check_demand": 0.9346, "demand_at_check_rate": 0.9894}
    s = op.check_sentence(sig, _cal(10.4374, 150, True, "in band"), BAND, rate_info=carried)
    assert s.startswith("The calibration's checks chose 10.44 req/s on seeds 101, 102, 103")
    assert "asked for 0.93 of the workload's expected decode tokens" in s and "ask for 0.99" in s
    assert "its runs used 9.91 req/s" in s and "The checks read a median of 150 preemptions" in s
    assert s.endswith("on the same side of the band.")
    # without the provenance, the same runs have no check at their own rate
    assert op.check_sentence(sig, _cal(10.4374, 150, True, "in band"), BAND).startswith("No calibration check")


def test_the_calibration_table_shows_a_carried_rate():
    from analysis.render import protocol_tables
    info = {"rate": 9.9068, "source": "calibration", "method": "checked", "check_rate": 10.4374,
            "check_demand": 0.9346, "demand_at_check_rate": 0.9894, "demand": 0.9853}
    rows = protocol_tables.calibration_table(protocol_tables.calibration_summary(info, None)).set_index("what")
    assert rows.loc["arrival rate used (req/s)", "value"] == "9.907"
    assert rows.loc["rate the checks chose (req/s, check seeds)", "value"] == "10.437"
    assert rows.loc["decode tokens the check seeds asked for (x expected)", "value"] == "0.935"
    given = protocol_tables.calibration_table(protocol_tables.calibration_summary({"rate": 7.0}, None))
    assert list(given["what"]) == ["arrival rate used (req/s)", "source", "method"]


def _check(rate, fullness, per_min, ttft_ms, b32):
    return {"rate": rate, "fullness": fullness, "preemptions_per_min": per_min, "ttft_p50_ms": ttft_ms,
            "forward_ms_b32": b32, "drains": ttft_ms <= 2000}


def _ladder(fullness, ttft_ms, b32, per_min=(787, 715, 830), rate=14.41):
    n = len(fullness)
    return pd.DataFrame({"fullness": fullness, "ttft_p50_ms": ttft_ms, "forward_ms_b32": b32,
                         "preemptions_per_min": per_min[:n], "eager_steps_per_min": [2600.0] * n,
                         "p50_ms": [7.3] * n, "rate": [rate] * n})


# A calibration shaped like this machine's of 2026-12-07: the rate chose a check past the
# band by its preemptions, the next check down was below it by fullness.
CLIFF = {"rate": 15.227, "checks": [_check(14.005, 0.81, 273, 23, 6.06), _check(17.506, 1.06, 817, 3629, 6.55),
                                    _check(15.658, 1.04, 681, 1246, 6.89), _check(14.808, 0.85, 338, 29, 6.06),
                                    _check(15.227, 0.98, 633, 645, 6.76)]}
CARRIED = {"rate": 14.41, "check_rate": 15.227}


def test_carry_sentence_sets_the_runs_step_time_beside_the_checks_when_they_land_apart():
    s = reading.carry_sentence(_ladder([0.98, 0.92, 0.99], [3880, 1710, 5480], [7.51, 7.44, 8.29]), CLIFF, CARRIED)
    assert s.startswith("The calibration's check at 15.23 req/s, on held-out seeds, had placed that rate "
                        "past the article's regime (judged by its preemptions); this build's baseline at "
                        "14.41 req/s")
    assert "ran past the article's regime (judged by its queues, which did not drain)" in s
    assert "took 7.51 ms against the check runs' 6.76 ms (11% slower)" in s
    assert "median time to first token was 3.88 s against the check's 0.65 s" in s
    # the cliff: the highest check below (14.81) and the lowest past (15.23, by its preemptions)
    assert s.endswith("read below the regime at 14.81 req/s and past it (judged by its preemptions) at 15.23 "
                      "req/s, so here the whole regime lies within 2.8% of rate, while the runs' step time "
                      "moved by 11%.")
    # a faster step is named as faster
    fast = reading.carry_sentence(_ladder([0.70, 0.72, 0.71], [30, 25, 40], [6.08, 6.1, 6.0]), CLIFF, CARRIED)
    assert "below the article's regime (judged by how full its steps were)" in fast and "(10% faster)" in fast


def test_carry_sentence_agrees_or_stays_silent():
    agree = _ladder([0.98, 0.97, 0.99], [700, 600, 800], [6.80, 6.7, 6.9])
    assert reading.carry_sentence(agree, CLIFF, CARRIED).endswith(
        "ran past the article's regime (judged by its preemptions), the same reading.")
    # a rate given by hand, or one the checks did not choose, has no check to compare with
    assert reading.carry_sentence(agree, CLIFF, {"rate": 14.41, "source": "given"}) == ""
    assert reading.carry_sentence(agree, CLIFF, {"rate": 14.41, "check_rate": 9.0}) == ""
    assert reading.carry_sentence(agree, None, CARRIED) == ""
    # a check recorded without its forward pass is compared by place alone
    blind = {**CLIFF, "checks": CLIFF["checks"][:-1] + [{**CLIFF["checks"][-1], "forward_ms_b32": np.nan}]}
    late = _ladder([0.98, 0.92, 0.99], [3880, 1710, 5480], [7.51, 7.44, 8.29])
    assert reading.carry_sentence(late, blind, CARRIED).endswith("one has no batch-32 forward pass.")


def _seed_run(fullness, per_min, ttft_ms, eager=2000.0):
    return {"fullness": fullness, "preemptions_per_min": per_min, "ttft_p50_ms": ttft_ms,
            "eager_steps_per_min": eager}


# Each seed of each check, shaped like this machine's calibration of 2026-12-07 (60 s checks):
# the runs as full as the article's that drained preempted 354-572 times per 60 s.
SEEDED = {"rate": 11.405, "band_reached": False, "checks": [
    {"rate": 11.405, "per_seed": [_seed_run(0.77, 181, 31), _seed_run(0.76, 136, 28), _seed_run(0.92, 408, 368, 1812)]},
    {"rate": 12.751, "per_seed": [_seed_run(1.02, 621, 3374), _seed_run(1.01, 483, 3038),
                                  _seed_run(1.03, 572, 673, 2570)]},
    {"rate": 12.401, "per_seed": [_seed_run(0.87, 354, 42, 1660), _seed_run(0.66, 190, 24), _seed_run(0.66, 80, 20)]}]}


def test_overlap_sentence_reads_each_check_run_per_60_s_and_per_request():
    s = reading.overlap_sentence(SEEDED)
    assert s.startswith("Of the calibration's 9 check runs (every seed of every checked rate), 3 had steps as "
                        "full as the article's with queues that drained; they preempted 354-572 times per 60 s "
                        "against the article's 142-318 and ran 1,660-2,570 eager steps against its 207-1,087: "
                        "counted per 60 s, every one preempted more often than")
    # per request: 408 / (60 x 11.405) = 0.60, 572 / (60 x 12.751) = 0.75, 354 / (60 x 12.401) = 0.48;
    # the article's band over 6.5 req/s x 60 s: 142/390 = 0.36 to 318/390 = 0.82
    assert s.endswith("Per request that arrived (their checks' 11.40-12.75 req/s against the article's 6.5), "
                      "they preempted 0.48-0.75 times against the article's 0.36-0.82, 3 of 3 within its range.")


def test_overlap_sentence_counts_runs_in_the_band_and_says_when_none_was_full():
    one_in = {**SEEDED, "checks": SEEDED["checks"] + [{"rate": 6.5, "per_seed": [_seed_run(1.0, 300, 50)]}]}
    s = reading.overlap_sentence(one_in)
    assert "; 1 of them preempted within the article's band." in s and "counted per 60 s" not in s
    # 300 / 390 = 0.77 is within the article's per-request range, as are the other three
    assert s.endswith("4 of 4 within its range.")
    light = {"checks": [{"rate": 9.0, "per_seed": [_seed_run(0.39, 0, 16), _seed_run(0.70, 20, 30)]},
                        {"rate": 14.0, "per_seed": [_seed_run(1.0, 700, 6000)]}]}
    assert reading.overlap_sentence(light).endswith(
        "none had steps as full as the article's (0.86-1.34 of a batch-32 forward pass) with queues that "
        "drained; the fullest that drained reached 0.70.")
    # one full run reads as one value, not a range from itself to itself
    single = reading.overlap_sentence({"checks": [{"rate": 12.854, "per_seed": [_seed_run(0.93, 388, 57, 2168)]}]})
    assert "they preempted 388 times per 60 s" in single and "ran 2,168 eager steps" in single
    assert "(their checks' 12.85 req/s against the article's 6.5), they preempted 0.50 times" in single
    jammed = {"checks": [{"rate": 14.0, "per_seed": [_seed_run(1.0, 700, 6000)]}]}
    assert reading.overlap_sentence(jammed).endswith("; none drained.")
    # a capacity proposal, or checks recorded without their seeds, give nothing to read
    assert reading.overlap_sentence(None) == ""
    assert reading.overlap_sentence({"rate": 9.0, "checks": [{"rate": 9.0, "fullness": 0.8}]}) == ""
