"""The cache never serves a damaged entry, never leaves a killed writer's temp
file, measures one thing at a time per cache folder, works read-only when warm, and
says clearly when the disk fills."""
from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from tests.support.cli import engine_cli
from tests.support.paths import REPO
from tests.support.readonly import read_only, read_only_preexec

RUN = ["run", "baseline", "--seed", "1", "--duration", "4", "--rate", "14"]       # the smoke_log's spec


@pytest.fixture
def tmp_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ITL_CACHE_DIR", str(tmp_path))
    return tmp_path


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait(timeout=30)
    return p.pid


def _identity(path: Path) -> tuple:
    st = path.stat()
    return st.st_ino, st.st_mtime_ns, st.st_size


# ---------------------------------------------------------------- verified on read
def test_raw_log_check_catches_truncation_bit_flips_and_missing_arrays(smoke_log, tmp_path):
    from engine.runs.cache import raw_log_problem
    good = tmp_path / "good.npz"
    shutil.copy(smoke_log, good)
    assert raw_log_problem(good) is None
    data = good.read_bytes()
    grown = tmp_path / "grown.npz"                        # checked once, then changed: the check is redone
    shutil.copy(smoke_log, grown)
    assert raw_log_problem(grown) is None
    with open(grown, "r+b") as f:
        f.seek(len(data) // 3)
        f.write(b"\0" * 64)
        f.seek(0, 2)
        f.write(b"x")
    assert raw_log_problem(grown) is not None
    cut = tmp_path / "cut.npz"
    cut.write_bytes(data[: len(data) // 2])
    assert "not a readable .npz" in raw_log_problem(cut)
    flipped = bytearray(data)
    flipped[len(data) // 3] ^= 0xFF                       # inside a compressed member
    bad = tmp_path / "flipped.npz"
    bad.write_bytes(bytes(flipped))
    assert raw_log_problem(bad) is not None
    partial = tmp_path / "partial.npz"
    with np.load(smoke_log) as z:
        np.savez(partial, **{k: z[k] for k in z.files if k != "steps"})
    assert raw_log_problem(partial) == "arrays missing: steps"
    assert raw_log_problem(tmp_path / "absent.npz") == "missing"


def test_raw_log_overwritten_anywhere_is_reported_not_raised(smoke_log, tmp_path):
    """Zeros written over a deflated member used to escape as zlib.error (a CI run hit
    one); wherever the damage falls, the check names a problem and raises nothing."""
    from engine.runs.cache import raw_log_problem
    data = smoke_log.read_bytes()
    for fill in (b"\0", b"\xff"):
        for k in range(1, 200):
            hit = bytearray(data)
            at = len(data) * k // 200
            hit[at:at + 64] = fill * 64
            if hit == data:
                continue
            path = tmp_path / f"hit{k}.npz"
            path.write_bytes(bytes(hit))
            assert raw_log_problem(path) is not None, f"damage at byte {at} of {len(data)} passed"


def test_truncated_raw_log_is_reported_and_measured_again(smoke_log, tmp_path):
    (tmp_path / "runs").mkdir()
    damaged = tmp_path / "runs" / smoke_log.name
    damaged.write_bytes(smoke_log.read_bytes()[:5000])
    proc = engine_cli(*RUN, cache_dir=tmp_path)
    assert proc.stdout.strip() == str(damaged)
    assert f"engine: warning: cached raw log {damaged} is unusable" in proc.stderr
    from engine.runs.cache import raw_log_problem
    assert raw_log_problem(damaged) is None
    with np.load(damaged) as z:
        assert len(z["steps"]) > 0


def test_corrupt_summary_is_recomputed_with_a_warning(smoke_log, tmp_cache):
    from analysis.across_runs.summaries import summary_cached
    from engine.runs.cache import CacheWarning
    first = summary_cached(smoke_log)
    [stored] = (tmp_cache / "summaries").glob("*.json")
    for damage in (stored.read_text()[:40], "[]", ""):
        stored.write_text(damage)
        with pytest.warns(CacheWarning, match=f"cached run summary {stored} is unusable"):
            assert summary_cached(smoke_log) == first
        assert json.loads(stored.read_text()) == first     # rewritten whole


def _calibration_record(rate=7.5) -> dict:
    return {"rate": rate, "method": "capacity", "forward": "article", "capacity": {"tokens_per_s": 900.0},
            "proposed_rate": rate, "checks": [], "band_reached": None, "mean_output_tokens": 100.0}


@pytest.mark.parametrize("damage", ['{"rate": 7.5, "meth', '{"rate": "fast"}', '{"rate": NaN}', "[1, 2]"])
def test_corrupt_calibration_record_is_reported_and_redone(tmp_cache, damage):
    from engine.runs.cache import CacheWarning
    from engine.runs.calibrate import _write_json_atomic, calibration_path, load_calibration
    path = calibration_path("capacity")
    _write_json_atomic(path, _calibration_record())
    assert load_calibration("capacity")["rate"] == 7.5
    path.write_text(damage)
    with pytest.warns(CacheWarning, match=f"calibration record {path} is unusable"):
        assert load_calibration("capacity") is None        # so calibrated_rate calibrates again
    assert not path.exists()


def test_temp_files_of_dead_writers_are_swept_in_all_three_folders(tmp_cache):
    from engine.runs import cache
    dead, alive = _dead_pid(), os.getpid()
    left, kept = [], []
    for folder in ("runs", "summaries", "calibration"):
        (tmp_cache / folder).mkdir()
        left.append(tmp_cache / folder / f".tmp-{dead}-x.npz")
        kept.append(tmp_cache / folder / f".tmp-{alive}-y.json")
    left.append(tmp_cache / "runs" / f".probe-{dead}")
    for p in left + kept:
        p.write_bytes(b"half")
    assert cache.sweep_temp_files() == len(left)
    assert not any(p.exists() for p in left) and all(p.exists() for p in kept)


@pytest.mark.parametrize("phase", ["serving", "writing"])
def test_killed_run_leaves_no_entry_and_its_temp_file_is_swept(tmp_path, phase):
    """Kill a run mid-serve, and while its raw log is being written (held inside the
    log's fsync); neither leaves a cache entry, and the next run sweeps the temp file."""
    marker = tmp_path / "writing"
    hook = textwrap.dedent(f"""
        import os, sys, time
        real_fsync = os.fsync
        def slow_fsync(fd):
            open({str(marker)!r}, "w").close()
            time.sleep(600)
        os.fsync = slow_fsync
        from engine.cli import main
        sys.exit(main(sys.argv[1:]))
    """)
    duration = "30" if phase == "serving" else "1"
    env = {**os.environ, "ITL_CACHE_DIR": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-c", hook, "run", "baseline", "--seed", "3", "--duration", duration,
                             "--rate", "8"], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 120
        if phase == "serving":
            time.sleep(8)                                  # start-up done, serving under way
        else:
            while not marker.exists() and time.time() < deadline and proc.poll() is None:
                time.sleep(0.1)
            assert marker.exists(), proc.stderr.read().decode()[-2000:]
        assert proc.poll() is None
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    runs = tmp_path / "runs"
    assert not [p for p in runs.glob("*") if not p.name.startswith(".")]
    if phase == "writing":
        assert [p.name for p in runs.glob(".tmp-*")] != []    # the killed writer's half file
    engine_cli("run", "baseline", "--seed", "4", "--duration", "1", "--rate", "8", cache_dir=tmp_path)
    assert not list(runs.glob(".tmp-*")) and not list(runs.glob(".probe-*"))
    assert len(list(runs.glob("*.npz"))) == 1


# ---------------------------------------------------------------- one measuring process per cache
HOLD = textwrap.dedent("""
    import sys, time
    from engine.runs import cache
    with cache.measuring(sys.argv[1]):
        print("held", flush=True)
        time.sleep(float(sys.argv[2]))
        exec(sys.argv[3])
""")


def _holder(cache_dir: Path, what: str, seconds: float, then: str = "pass") -> subprocess.Popen:
    env = {**os.environ, "ITL_CACHE_DIR": str(cache_dir)}
    env.pop("ITL_MEASURING_LOCK", None)
    proc = subprocess.Popen([sys.executable, "-c", HOLD, what, str(seconds), then], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_calibration_waits_for_the_measuring_process_then_reuses_its_record(tmp_cache, monkeypatch, capsys):
    from engine.runs import calibrate as cal
    record = json.dumps(_calibration_record(6.25))
    write = (f"from engine.runs.calibrate import _write_json_atomic, calibration_path; import json; "
             f"_write_json_atomic(calibration_path('capacity'), json.loads({record!r}))")
    holder = _holder(tmp_cache, "calibration (capacity, article forward)", 2.0, write)
    monkeypatch.setattr(cal, "measure_capacity", lambda *a, **k: pytest.fail("measured under contention"))
    t0 = time.time()
    try:
        assert cal.calibrate(checks=False)["rate"] == 6.25
    finally:
        holder.wait(timeout=60)
    assert time.time() - t0 > 1.0
    err = capsys.readouterr().err
    assert f"waiting for pid {holder.pid} (calibration (capacity, article forward)" in err


def test_runs_wait_with_the_bar_saying_for_what_then_reuse(tmp_cache, monkeypatch, capsys):
    from engine.runs import execute as runner
    from engine.serve.workload import Workload
    specs = [SimpleNamespace(path=tmp_cache / "runs" / f"r{i}.npz", expected_seconds=lambda: 5.0, group="ladder",
                             schedule={}, rung="baseline", seed=i, rate=7.0, duration=3.0, workload=Workload(),
                             expected_log_bytes=lambda: 0) for i in range(2)]
    make = "; ".join(f"import numpy as np; np.savez({str(s.path)!r}, **{{k: np.zeros((1, 3)) for k in "
                     f"('steps','segs','gcs','emissions','evictions','requests','trace')}}, wall=1.0, config='{{}}')"
                     for s in specs)
    (tmp_cache / "runs").mkdir()
    holder = _holder(tmp_cache, "run 'baseline' seed 1 @ 7.00 req/s, 3 s", 2.0, make)
    monkeypatch.setattr(runner, "execute_spec", lambda s: pytest.fail("measured what the other process made"))
    try:
        assert runner.ensure_runs(specs, progress=True, label="profile smoke") == [s.path for s in specs]
    finally:
        holder.wait(timeout=60)
    err = capsys.readouterr().err
    assert f"profile smoke: waiting for pid {holder.pid} (run 'baseline' seed 1 @ 7.00 req/s, 3 s" in err


def test_two_cli_runs_of_one_spec_measure_it_once(tmp_path):
    env = {**os.environ, "ITL_CACHE_DIR": str(tmp_path)}
    args = [sys.executable, "-m", "engine", "run", "baseline", "--seed", "2", "--duration", "2", "--rate", "10"]
    first = subprocess.Popen(args, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lock = tmp_path / ".measuring.lock"
    deadline = time.time() + 60
    while not (lock.exists() and lock.read_text()) and time.time() < deadline:
        time.sleep(0.05)
    second = subprocess.Popen(args, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out1, err1 = first.communicate(timeout=120)
    path = Path(out1.strip())
    made = _identity(path)
    out2, err2 = second.communicate(timeout=120)
    assert first.returncode == second.returncode == 0, err1 + err2
    assert out2.strip() == str(path) and _identity(path) == made        # reused, not measured again
    assert f"waiting for pid {first.pid} (run 'baseline' seed 2 @ 10.00 req/s, 2 s" in err2


# ---------------------------------------------------------------- a warm cache, read-only
def test_warm_read_only_cache_is_reused_and_missing_work_names_the_folder(smoke_log, tmp_path):
    cache = read_only(smoke_log.parent.parent, tmp_path / "ro")
    env = {**os.environ, "ITL_CACHE_DIR": str(cache)}
    run = lambda *a: subprocess.run([sys.executable, "-m", "engine", *a], cwd=REPO, env=env, text=True,
                                    capture_output=True, timeout=120, preexec_fn=read_only_preexec)
    hit = run(*RUN)
    assert hit.returncode == 0, hit.stderr
    assert hit.stdout.strip() == str(cache / "runs" / smoke_log.name) and hit.stderr == ""
    miss = run("run", "baseline", "--seed", "9", "--duration", "4", "--rate", "14")
    assert miss.returncode == 2
    [line] = miss.stderr.strip().splitlines()
    assert line.startswith(f"engine: error: cache folder {cache / 'runs'} is not writable (Permission denied) but "
                           f"run 'baseline' seed 9 @ 14.00 req/s, 4 s is not cached and must be measured there")


# ---------------------------------------------------------------- a full disk
class _FullDisk:
    """A file whose writes stop half way with ENOSPC, as on a full disk."""

    def __init__(self, path, mode="r", *a, **k):
        self.f = open(path, mode, *a, **k)

    def write(self, data):
        self.f.write(data[: len(data) // 2])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def __getattr__(self, name):
        return getattr(self.f, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.f.close()


def test_full_disk_while_writing_a_raw_log(smoke_log, tmp_path, monkeypatch, capsys):
    import engine.serve.experiment as experiment
    from engine import cli
    from engine.serve import rawlog
    (tmp_path / "runs").mkdir()
    shutil.copy(smoke_log, tmp_path / "runs" / smoke_log.name)         # an entry already there
    before = _identity(tmp_path / "runs" / smoke_log.name)
    monkeypatch.setenv("ITL_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(rawlog, "open", _FullDisk, raising=False)     # the real atomic writer, a full disk
    monkeypatch.setattr(experiment, "execute", lambda cfg, seed, d, r, out, **k:
                        rawlog.write_atomic(out, {"steps": np.zeros((2, 7))}, 1.0, {}, {}))
    assert cli.main(["run", "baseline", "--seed", "5", "--duration", "4", "--rate", "14"]) == 1
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("engine: error: could not write the raw log baseline__s5__") and \
        "(No space left on device); nothing was kept in" in line
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == [smoke_log.name]      # no half file
    assert not list((tmp_path / "runs").glob(".tmp-*"))
    assert _identity(tmp_path / "runs" / smoke_log.name) == before
    monkeypatch.undo()
    hit = engine_cli(*RUN, cache_dir=tmp_path)                          # the cache is still valid
    assert hit.stdout.strip() == str(tmp_path / "runs" / smoke_log.name) and "warning" not in hit.stderr


def test_full_disk_while_writing_a_summary_or_calibration(smoke_log, tmp_cache, monkeypatch):
    from engine.runs import cache
    from engine.runs.cache import CacheWarning
    from engine.runs.calibrate import _write_json_atomic, calibration_path
    from analysis.across_runs import summaries
    monkeypatch.setattr(cache, "open", _FullDisk, raising=False)
    with pytest.warns(CacheWarning, match="run summaries are computed but not kept: could not write"):
        summary = summaries.summary_cached(smoke_log)
    assert summary["reconcile_max_err_ms"] < 1e-6
    with pytest.raises(OSError, match=r"could not write .*capacity-article.*\(No space left on device\)"):
        _write_json_atomic(calibration_path("capacity"), _calibration_record())
    leftovers = [p for folder in ("summaries", "calibration") for p in (tmp_cache / folder).glob("*")]
    leftovers += list((tmp_cache / "summaries").glob(".*")) + list((tmp_cache / "calibration").glob(".*"))
    assert leftovers == []
