"""A cached calibration is confirmed against the machine's capacity before runs are measured
on it, and made again (the old record kept, the new one saying why) when the machine changed."""
import json
import time

import pytest

from engine.real.operating import _record_path
from engine.runs import freshness
from engine.runs.cache import CACHE_ENV
from engine.runs.calibrate import _write_json_atomic, calibration_dir, calibration_path
from engine.runs.profiles import get_profile
from engine.serve.provenance import machine_fingerprint

OLD = "2026-12-05T22:30:00"


def _record(rate=10.4, tokens_per_s=3000.0, created=OLD, machine=None):
    return {"rate": rate, "method": "checked", "capacity": {"tokens_per_s": tokens_per_s, "seconds": 20.0},
            "proposed_rate": 8.0, "checks": [], "check_seeds": [101, 102, 103], "check_duration_s": 20.0,
            "concurrency": 1, "forward": "article", "created": created,
            "machine": machine_fingerprint() if machine is None else machine}


@pytest.fixture
def quick(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    monkeypatch.delenv("ITL_JOBS", raising=False)
    monkeypatch.delenv("ITL_EXECUTOR", raising=False)
    monkeypatch.delenv(freshness.BUILD_ENV, raising=False)      # not inside a book build
    prof = get_profile("quick")
    return prof, calibration_path("checked", "article", prof.check_duration, 1)


class Measure:
    """A stand-in for measure_capacity that reads `tokens_per_s` and remembers its calls."""

    def __init__(self, tokens_per_s):
        self.tokens_per_s, self.calls = tokens_per_s, []

    def __call__(self, seconds, forward, concurrency):
        self.calls.append((seconds, forward, concurrency))
        return {"tokens_per_s": self.tokens_per_s, "seconds": seconds, "forward_ms_b32": 7.0}


@pytest.mark.parametrize("now, want", [(1090.0, False), (1110.0, True), (910.0, False), (900.0, True)])
def test_capacity_moved_is_judged_by_ratio_either_way(now, want):
    assert freshness.moved(1000.0, now, tolerance=0.10) is want


@pytest.mark.parametrize("then, now", [(0.0, 10.0), (10.0, -1.0), (float("nan"), 10.0)])
def test_moved_refuses_capacities_that_are_not_positive(then, now):
    with pytest.raises(ValueError, match="capacities must be positive"):
        freshness.moved(then, now)


def test_record_age_reads_created_and_is_infinite_without_it():
    now = time.mktime(time.strptime(OLD, "%Y-%m-%dT%H:%M:%S")) + 90.0
    assert freshness.record_age_s({"created": OLD}, now) == pytest.approx(90.0)
    assert freshness.record_age_s({}, now) == float("inf")
    assert freshness.record_age_s({"created": "yesterday"}, now) == float("inf")


def test_a_young_record_is_not_probed(quick):
    prof, path = quick
    _write_json_atomic(path, _record(created=time.strftime("%Y-%m-%dT%H:%M:%S")))
    measure = Measure(1.0)
    assert freshness.confirm(prof, measure=measure) is None and measure.calls == []


def test_a_machine_that_still_matches_keeps_its_record(quick):
    prof, path = quick
    _write_json_atomic(path, _record(tokens_per_s=3000.0))
    before = path.read_bytes()
    measure = Measure(3100.0)
    found = freshness.confirm(prof, measure=measure, progress=False)
    assert measure.calls == [(20.0, "article", 1)]            # measured as the record was
    assert found["remade"] is False and found["ratio"] == pytest.approx(3100 / 3000)
    assert path.read_bytes() == before and not (calibration_dir() / "retired").exists()


def test_one_probe_serves_a_process_that_confirms_twice(quick, monkeypatch):
    """A build confirms before its ladder's runs and again before its real-engine runs."""
    prof, path = quick
    _write_json_atomic(path, _record(tokens_per_s=3000.0))
    measure = Measure(3100.0)
    assert freshness.confirm(prof, measure=measure, progress=False)["remade"] is False
    assert freshness.confirm(prof, measure=measure, progress=False) is None
    assert len(measure.calls) == 1
    # ... within FRESH_S only: past it (a kernel that lives long) it probes again
    monkeypatch.setattr(freshness, "FRESH_S", 0.0)
    assert freshness.confirm(prof, measure=measure, progress=False)["remade"] is False
    assert len(measure.calls) == 2


def test_a_changed_machine_retires_its_records_and_calibrates_again(quick, monkeypatch):
    prof, path = quick
    _write_json_atomic(path, _record(tokens_per_s=3000.0))
    sweep = calibration_path("checked", "article", 40.0, 1)          # another protocol of this machine
    _write_json_atomic(sweep, _record(tokens_per_s=3000.0))
    other = calibration_dir() / path.name.replace("checked-", "checked-other-")
    _write_json_atomic(other, _record(machine={"cpu": "another machine"}))
    real_record = _record_path(20.0)                                 # the real engine's, of this machine
    _write_json_atomic(real_record, {"rate": 7.0, "method": "checked", "duration": 20.0})
    real_run = real_record.parent.parent / "real_runs" / "baseline__s101__d20__r7.000__0123456789abcdef.npz"
    real_run.parent.mkdir(parents=True)
    real_run.write_bytes(b"a real-engine run of the old machine")
    made = []

    def fake_calibrate(**kw):
        made.append(kw)
        _write_json_atomic(path, {**_record(rate=7.0, tokens_per_s=kw["capacity"]["tokens_per_s"],
                                            created=time.strftime("%Y-%m-%dT%H:%M:%S")),
                                  "replaces": kw["replaces"]})

    monkeypatch.setattr("engine.runs.calibrate.calibrate", fake_calibrate)
    found = freshness.confirm(prof, measure=Measure(1800.0), progress=False)
    assert found["remade"] is True and found["ratio"] == pytest.approx(0.6)
    retired = sorted(p.name.split("-", 1)[1] for p in (calibration_dir() / "retired").iterdir())
    assert retired == sorted([path.name, sweep.name])               # kept, not deleted
    assert other.exists()                                           # not this machine's
    # the real engine's record and runs go too: its search would walk the same rates and
    # find its old checks in the run cache
    assert not real_record.exists() and [p.name.split("-", 1)[1] for p in (real_record.parent / "retired").iterdir()] == [real_record.name]
    (kept_run,) = (real_run.parent / "retired").iterdir()
    assert not real_run.exists() and kept_run.name.endswith(real_run.name)
    assert kept_run.read_bytes() == b"a real-engine run of the old machine"
    assert found["retired_real_runs"] == [str(kept_run)]
    (kw,) = made
    assert kw["check_duration"] == prof.check_duration and kw["capacity"]["tokens_per_s"] == 1800.0
    assert kw["replaces"]["record_rate"] == 10.4 and kw["replaces"]["record_created"] == OLD
    assert sorted(kw["replaces"]["retired"]) == sorted(
        p.name for d in (calibration_dir(), real_record.parent) for p in (d / "retired").iterdir())
    assert kw["replaces"]["retired_real_runs"] == 1
    sentence = freshness.replacement_sentence(json.loads(path.read_text()))
    assert "1800 tokens/s" in sentence and "3000" in sentence and "0.60 times" in sentence and OLD in sentence


def test_a_capacity_proposal_is_never_probed(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    monkeypatch.delenv("ITL_JOBS", raising=False)
    _write_json_atomic(calibration_path("capacity", "article", concurrency=1),
                       {**_record(), "method": "capacity", "check_seeds": []})
    measure = Measure(1.0)
    assert freshness.confirm(get_profile("smoke"), measure=measure) is None and measure.calls == []


def test_the_book_says_how_a_kept_record_stays_fresh():
    said = freshness.replacement_sentence(_record())
    assert OLD in said and f"{freshness.TOLERANCE:.0%}" in said
    assert freshness.replacement_sentence({**_record(), "method": "capacity"}) == ""
    assert freshness.replacement_sentence(None) == ""


@pytest.mark.parametrize("missing, remade", [(False, False), (True, False), (True, True)])
def test_a_build_confirms_only_when_it_has_runs_to_measure(tmp_path, monkeypatch, missing, remade):
    from types import SimpleNamespace

    from engine.runs import protocol
    log = tmp_path / "run.npz"
    if not missing:
        log.write_bytes(b"")
    monkeypatch.setattr("engine.runs.cache.is_cached", lambda p: p.exists())
    listed, confirmed, measured = [], [], []

    def profile_runs(prof):
        listed.append(prof.name)
        return {"alone": [], "beside": [], "k": 0}, [SimpleNamespace(path=log, group="ladder")]

    monkeypatch.setattr(protocol, "_profile_runs", profile_runs)
    monkeypatch.setattr("engine.runs.freshness.confirm",
                        lambda prof, **k: confirmed.append(prof.name) or {"remade": remade})
    monkeypatch.setattr(protocol, "ensure_runs", lambda specs, **k: measured.extend(specs))
    monkeypatch.setattr("engine.runs.interference.interference_capacity", lambda k: None)
    protocol.ensure_profile("quick", progress=False)
    # a build with nothing to measure reads its cached runs as they were measured
    assert confirmed == (["quick"] if missing else [])
    # a remade calibration lists the runs again, at its new rates
    assert listed == ["quick"] * (2 if remade else 1) and [s.path for s in measured] == [log]


@pytest.fixture
def build(quick, monkeypatch):
    """A book build in progress (its variables restored after the test)."""
    monkeypatch.setenv(freshness.TRUSTED_ENV, "")
    monkeypatch.setenv(freshness.BUILD_ENV, "")
    return quick


def test_a_build_trusts_the_record_it_made_to_its_end(build, monkeypatch):
    """A long build must not retire, half-way, the record its runs were planned on."""
    prof, path = build
    freshness.begin_build()
    _write_json_atomic(path, _record(created=time.strftime("%Y-%m-%dT%H:%M:%S")))
    monkeypatch.setattr(freshness, "FRESH_S", 0.0)          # as if the build had run for hours
    measure = Measure(1.0)                                  # and the machine had changed
    assert freshness.confirm(prof, measure=measure) is None and measure.calls == []


def test_a_build_probes_an_older_record_once_and_its_kernels_inherit_the_verdict(build, monkeypatch):
    prof, path = build
    _write_json_atomic(path, _record(tokens_per_s=3000.0))      # made before the build began
    freshness.begin_build()
    monkeypatch.setattr(freshness, "FRESH_S", 0.0)
    measure = Measure(3100.0)
    assert freshness.confirm(prof, measure=measure, progress=False)["remade"] is False
    assert len(measure.calls) == 1
    # a chapter's kernel is another process: it knows the verdict only from the environment
    monkeypatch.setattr(freshness, "_KEPT", {})
    assert freshness.confirm(prof, measure=Measure(1.0), progress=False) is None
    # a new build probes again
    freshness.begin_build()
    monkeypatch.setattr(freshness, "_KEPT", {})
    again = Measure(3100.0)
    assert freshness.confirm(prof, measure=again, progress=False)["remade"] is False and len(again.calls) == 1


def test_trusted_by_build_reads_when_the_build_began(build):
    made = "2026-12-07T05:04:08"
    at = time.mktime(time.strptime(made, "%Y-%m-%dT%H:%M:%S"))
    freshness.begin_build(now=at - 60)
    assert freshness.trusted_by_build({"created": made}, now=at + 7200)
    freshness.begin_build(now=at + 60)
    assert not freshness.trusted_by_build({"created": made}, now=at + 7200)
    assert not freshness.trusted_by_build({}, now=at + 7200)


def test_outside_a_build_nothing_is_trusted_and_a_bad_mark_is_named(build, monkeypatch):
    monkeypatch.delenv(freshness.BUILD_ENV)
    assert not freshness.trusted_by_build({"created": time.strftime("%Y-%m-%dT%H:%M:%S")})
    monkeypatch.setenv(freshness.BUILD_ENV, "yesterday")
    with pytest.raises(ValueError, match="ITL_BUILD_STARTED must be the epoch seconds"):
        freshness.trusted_by_build({"created": OLD})


def _plan_of(tmp_path, cached: set, listed: list):
    """A plan of three runs over two lists, one run in both, `cached` of them on disk."""
    from types import SimpleNamespace
    runs = [SimpleNamespace(path=tmp_path / f"{name}.npz") for name in "abc"]
    for r in runs:
        if r.path.stem in cached:
            r.path.write_bytes(b"")

    def plan():
        listed.append(1)
        return runs[:2], runs[1:]
    return plan, runs


@pytest.mark.parametrize("cached, rate, remade, probes, plans", [
    ("", None, False, 1, 1),        # runs to measure at the record's rate: confirm first
    ("", None, True, 1, 2),         # a remade record: the runs are planned again at its rates
    ("abc", None, False, 0, 1),     # every run cached: nothing to measure, nothing probed
    ("", 12.5, False, 0, 1),        # a rate given: the plan reads no record
])
def test_a_page_measures_its_missing_runs_on_a_confirmed_record(tmp_path, monkeypatch, cached, rate, remade,
                                                                probes, plans):
    monkeypatch.setattr("engine.runs.cache.is_cached", lambda p: p.exists())
    confirmed, measured, listed = [], [], []
    monkeypatch.setattr(freshness, "confirm", lambda prof, **k: confirmed.append(prof) or {"remade": remade})
    monkeypatch.setattr("engine.runs.execute.ensure_runs", lambda specs, **k: measured.append(list(specs)))
    plan, runs = _plan_of(tmp_path, set(cached), listed)
    got = freshness.made_on_confirmed("quick", plan, rate, progress=False)
    assert len(confirmed) == probes and len(listed) == plans
    # the plan comes back as planned; each run is handed to the executor once, in plan order
    assert got == (runs[:2], runs[1:]) and measured == [runs]


def test_specs_in_flattens_a_plan_and_lists_each_run_once(tmp_path):
    plan, runs = _plan_of(tmp_path, set(), [])
    assert freshness.specs_in(plan()) == runs
    assert freshness.specs_in(runs[::-1] + runs) == runs[::-1]
    assert freshness.specs_in([]) == [] and freshness.specs_in(([], [])) == []
