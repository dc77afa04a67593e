"""The GC rungs' cached runs per interpreter (analysis/across_runs/interpreter_runs.py), in a
temporary run cache holding tiny raw logs of three fake interpreters: each is kept at its own
calibrated rate only (carried to the profile's seeds by decode demand, as the build carries
it), and one without a calibration record is left out with the reason."""
import json

import numpy as np
import pytest

import engine
from analysis.across_runs import interpreter_runs as IR
from analysis.across_runs import interpreters
from engine.runs.cache import run_path
from engine.runs.calibrate import CHECK_SEEDS, _write_json_atomic, calibration_path, run_rate
from tests.support.summaries import fake

PROFILE = "quick"           # checked, with checks as long as its runs: seeds 1-2
PROF = engine.get_profile(PROFILE)
SEEDS, DURATION = PROF.seeds, PROF.duration
GC_RUNGS = interpreters.GC_RUNGS
PYTHONS = {"3.11.7": 7.5, "3.13.1": 9.25}      # interpreter -> its calibrated rate (the check seeds')
NO_RECORD = "3.12.4"                          # runs under it, but never calibrated


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ITL_CACHE_DIR", str(tmp_path))
    (tmp_path / "runs").mkdir()
    return tmp_path


def carried(rate):
    """The rate the profile's runs use under a record whose checks chose `rate`."""
    return run_rate(rate, CHECK_SEEDS, PROF.check_duration, SEEDS, DURATION)["rate"]


def libs(python):
    return {"python": python, "numpy": "1.26.4", "tokenizers": "0.19.1"}


def calibrate(python, rate, check_duration=PROF.check_duration):
    record = {"rate": rate, "method": "checked", "forward": "article", "capacity": {"tokens_per_s": 900.0},
              "proposed_rate": rate, "checks": [], "band_reached": True, "machine": {"python": python},
              "check_seeds": list(CHECK_SEEDS), "check_duration_s": check_duration}
    _write_json_atomic(calibration_path("checked", "article", check_duration, 1, python=python), record)


def log(python, rung, seed, rate, duration=DURATION, lib_over=None):
    """A raw log with only its provenance, named as the run would be under that interpreter."""
    path = run_path(engine.LADDER[rung], seed, duration, rate, concurrency=1,
                    libs={**libs(python), **(lib_over or {})})
    np.savez(path, provenance=np.array(json.dumps({**libs(python), "cores_usable": 2})))
    return path


def summarize(runs):
    return [fake(r.rung, r.seed, rate=r.rate, path=str(r.path)) for r in runs]


def load(**kw):
    return IR.gc_runs_by_python(PROFILE, concurrency=1, summarize=summarize, **kw)


def test_each_interpreter_at_its_own_rate_and_nothing_else(cache):
    for python, rate in PYTHONS.items():
        calibrate(python, rate)
        for rung in GC_RUNGS:
            for seed in SEEDS:
                log(python, rung, seed, carried(rate))
    mine = carried(PYTHONS["3.11.7"])
    other_rate = log("3.11.7", GC_RUNGS[0], SEEDS[0], 8.0)                 # another rate
    uncarried = log("3.11.7", GC_RUNGS[1], SEEDS[0], PYTHONS["3.11.7"])    # the checks' own rate
    rival = log("3.11.7", GC_RUNGS[0], SEEDS[0], carried(PYTHONS["3.13.1"]))   # the other interpreter's rate
    longer = log("3.11.7", GC_RUNGS[0], SEEDS[0], mine, duration=2 * DURATION)
    stranger = log("3.11.7", GC_RUNGS[0], 99, mine)                        # not a profile seed
    older = log("3.11.7", GC_RUNGS[1], SEEDS[0], mine, lib_over={"numpy": "1.0.0"})
    log("3.11.7", engine.RUNGS[-1], SEEDS[0], mine)                        # not a GC rung
    found = load()
    assert sorted(found.runs) == sorted(PYTHONS) and not found.skipped
    for python, rate in PYTHONS.items():
        runs = found.runs[python]
        assert len(runs) == len(GC_RUNGS) * len(SEEDS)
        assert {s["rate"] for s in runs} == {carried(rate)} != {rate}
        assert [s["rung"] for s in runs] == [r for r in GC_RUNGS for _ in SEEDS]
    kept = {s["path"] for runs in found.runs.values() for s in runs}
    assert not kept & {str(p) for p in (other_rate, uncarried, rival, longer, stranger, older)}
    table = interpreters.gc_rung_table(found.runs)
    assert len(table) == len(PYTHONS) * len(GC_RUNGS)
    said = interpreters.interpreter_sentence(found.runs)
    assert "Under Python 3.11.7" in said and "under Python 3.13.1" in said
    said = IR.holdings_sentence(found, DURATION)
    assert (f"Python 3.11.7 (6 run(s) at {mine:.2f} req/s) and Python 3.13.1 "
            f"(6 run(s) at {carried(PYTHONS['3.13.1']):.2f} req/s)") in said


def test_an_interpreter_without_its_calibration_record_is_left_out_with_the_reason(cache):
    calibrate("3.11.7", PYTHONS["3.11.7"])
    calibrate(NO_RECORD, 8.0, check_duration=PROF.check_duration / 3)   # a record, but for another check length
    for python in ("3.11.7", NO_RECORD):
        for rung in GC_RUNGS:
            log(python, rung, SEEDS[0], 8.0 if python == NO_RECORD else carried(PYTHONS[python]))
    found = load()
    assert list(found.runs) == ["3.11.7"]
    assert found.skipped[NO_RECORD] == (f"no checked calibration record (article forward, "
                                        f"{PROF.check_duration:g} s checks) of this "
                                        f"machine and engine code under Python {NO_RECORD}")
    said = IR.holdings_sentence(found, DURATION)
    assert said.endswith(f"Python {NO_RECORD} is left out: {found.skipped[NO_RECORD]}.")
    assert interpreters.interpreter_sentence(found.runs).startswith("The GC rungs have not been run under two")


def test_an_interpreter_whose_runs_are_all_at_another_rate_is_left_out_with_the_reason(cache):
    calibrate("3.13.1", PYTHONS["3.13.1"])
    log("3.13.1", GC_RUNGS[0], SEEDS[0], 8.0)
    found = load()
    assert not found.runs
    assert found.skipped["3.13.1"].startswith(
        f"none of its 1 run(s) of the GC rungs is at its calibrated rate ({carried(PYTHONS['3.13.1']):.3f}")
    assert IR.holdings_sentence(found, DURATION).startswith("This run cache holds no run of the GC rungs")


def test_an_empty_cache_holds_nothing(cache):
    found = load()
    assert found.runs == {} and found.skipped == {}
    assert interpreters.gc_rung_table(found.runs).empty
