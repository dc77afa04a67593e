"""Offered load: the decode tokens a seed set's traces ask for, and the rate that carries a
checked operating point from the check seeds to a run protocol's own seeds."""
import numpy as np
import pytest

from engine.runs import offered
from engine.runs.cache import CACHE_ENV
from engine.runs.calibrate import _write_json_atomic, calibration_path, checked_rate, run_rate
from engine.runs.profiles import get_profile
from engine.serve.workload import Workload, arrival_times, request_contents


def test_output_lengths_are_the_traces_own():
    wl = Workload()
    want = [m for _, m, _ in request_contents(7, 300, wl)]
    assert offered.output_lengths(7, 300).tolist() == want
    assert offered.output_lengths(7, 10).tolist() == want[:10]       # a prefix, from the same cached block


def test_decode_demand_sums_the_requests_that_arrive():
    wl = Workload()
    per_seed = [sum(m for _, m, _ in request_contents(s, len(arrival_times(s, 20.0, 9.0, wl)), wl))
                for s in (1, 2)]
    assert offered.decode_demand((1, 2), 20.0, 9.0) == pytest.approx(np.mean(per_seed) / 20.0)
    expected = 9.0 * wl.mean_output_tokens()
    assert offered.demand_ratio((1, 2), 20.0, 9.0) == pytest.approx(np.mean(per_seed) / 20.0 / expected)


@pytest.mark.parametrize("bad", [dict(seeds=()), dict(duration=0.0), dict(rate=-1.0)])
def test_decode_demand_refuses_an_empty_protocol(bad):
    args = {"seeds": (1,), "duration": 20.0, "rate": 9.0, **bad}
    with pytest.raises(ValueError, match="decode demand needs"):
        offered.decode_demand(args["seeds"], args["duration"], args["rate"])


@pytest.mark.parametrize("from_seeds, to_seeds, duration", [
    ((101, 102, 103), (1, 2, 3, 4, 5), 60.0),      # the article profile's checks and ladder
    ((101, 102, 103), (1, 2), 20.0),               # the quick profile's
    ((101, 102, 103), (1,), 20.0),
])
def test_matched_rate_asks_for_the_checks_decode_tokens(from_seeds, to_seeds, duration):
    rate = 11.0
    carried = offered.matched_rate(rate, from_seeds, duration, to_seeds, duration)
    want = offered.decode_demand(from_seeds, duration, rate)
    # within a fraction of one request's output: the arrival count moves in whole requests
    assert offered.decode_demand(to_seeds, duration, carried) == pytest.approx(want, rel=0.01)
    heavier = offered.demand_ratio(to_seeds, duration, rate) > offered.demand_ratio(from_seeds, duration, rate)
    assert (carried < rate) == heavier


def test_the_same_protocol_keeps_its_rate():
    assert offered.matched_rate(10.4374, (101, 102, 103), 60.0, (101, 102, 103), 60.0) == 10.4374


def test_run_rate_records_both_demands():
    got = run_rate(10.4374, (101, 102, 103), 60.0, (1, 2, 3, 4, 5), 60.0)
    assert got["check_rate"] == 10.4374 and got["matched_by"] == "decode tokens asked per second"
    assert got["check_demand"] == pytest.approx(offered.demand_ratio((101, 102, 103), 60.0, 10.4374), abs=1e-4)
    assert got["demand_at_check_rate"] == pytest.approx(offered.demand_ratio((1, 2, 3, 4, 5), 60.0, 10.4374),
                                                         abs=1e-4)
    # the carried rate times its seeds' demand ratio is the checks' offered load
    assert got["rate"] * got["demand"] == pytest.approx(10.4374 * got["check_demand"], rel=0.005)


def _checked_record(rate, duration):
    return {"rate": rate, "method": "checked", "capacity": {"tokens_per_s": 3500.0}, "proposed_rate": 9.0,
            "checks": [], "check_seeds": [101, 102, 103], "check_duration_s": duration, "concurrency": 1}


def test_checked_rate_carries_the_record_to_the_runs_seeds(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    prof = get_profile("quick")
    _write_json_atomic(calibration_path("checked", "article", prof.check_duration, 1),
                       _checked_record(12.764, prof.check_duration))
    rate, info = checked_rate(prof, (1, 2), prof.check_duration, None, concurrency=1)
    assert rate == info["rate"] == run_rate(12.764, (101, 102, 103), prof.check_duration, (1, 2),
                                            prof.check_duration)["rate"]
    assert info["check_rate"] == 12.764 and info["source"] == "calibration" and info["method"] == "checked"
    # the check seeds and the runs' seeds ask for as many decode tokens per second
    assert offered.decode_demand((1, 2), prof.check_duration, rate) == pytest.approx(
        offered.decode_demand((101, 102, 103), prof.check_duration, 12.764), rel=0.01)
    assert checked_rate(prof, (1, 2), 20.0, 7.0) == (7.0, {"rate": 7.0, "source": "given"})


def test_a_capacity_proposal_is_not_carried(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    prof = get_profile("smoke")
    _write_json_atomic(calibration_path("capacity", "article", concurrency=1),
                       {**_checked_record(8.5, None), "method": "capacity", "check_seeds": []})
    rate, info = checked_rate(prof, (1,), 5.0, None, concurrency=1)
    assert rate == 8.5 and "check_rate" not in info


def test_the_real_engine_carries_its_record_the_same_way():
    from engine.real import operating
    record = {"rate": 7.5, "duration": 20.0, "seeds": [101, 102, 103], "reached": True, "checks": []}
    assert operating.run_rate(record, (1, 2), 20.0) == run_rate(7.5, (101, 102, 103), 20.0, (1, 2), 20.0)
