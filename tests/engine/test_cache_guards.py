"""The cache serves nothing damaged and nothing outside itself, and nothing hangs: a
relative cache folder, a stamped log overwritten in place, a symbolic link, a damaged
fidelity result, a disk too full for the log, a child run that never ends, Ctrl-C."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.paths import GOLDEN_LOGS, REPO


@pytest.fixture
def tmp_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ITL_CACHE_DIR", str(tmp_path))
    return tmp_path


def _entry(tmp_cache: Path) -> Path:
    """A valid raw log placed in the cache's runs folder."""
    runs = tmp_cache / "runs"
    runs.mkdir(exist_ok=True)
    path = runs / "entry.npz"
    shutil.copy(GOLDEN_LOGS[0], path)
    path.chmod(0o644)
    return path


IS_CACHED = "import sys; from pathlib import Path; from engine.runs import cache; print(cache.is_cached(Path(sys.argv[1])))"


def _is_cached_in_a_fresh_process(path: Path) -> tuple[str, str]:
    proc = subprocess.run([sys.executable, "-c", IS_CACHED, str(path)], cwd=REPO, capture_output=True,
                          text=True, timeout=120)
    return proc.stdout.strip(), proc.stderr


# ---------------------------------------------------------------- a relative cache folder
def test_children_get_the_cache_folder_made_absolute(tmp_path, monkeypatch):
    from engine.runs import cache
    from engine.runs.child import child_env
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ITL_CACHE_DIR", "rel/c")
    assert cache.cache_dir() == tmp_path / "rel" / "c"
    assert child_env()["ITL_CACHE_DIR"] == str(tmp_path / "rel" / "c")


def test_a_relative_cache_folder_works_from_any_working_directory(tmp_path):
    """The child measures in the repository's folder; the log must land where the parent looks."""
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    env = {**os.environ, "ITL_CACHE_DIR": "../../c", "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "engine", "matrix", "--profile", "smoke", "--rungs", "baseline",
                           "--seeds", "1", "--duration", "0.5", "--rate", "20"], cwd=work, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    [path] = proc.stdout.split()
    assert Path(path).parent == tmp_path / "c" / "runs" and Path(path).exists()
    assert not (REPO / "c").exists()


# ---------------------------------------------------------------- the verification stamp
def test_a_stamped_log_overwritten_in_place_with_its_mtime_restored_is_not_served(tmp_cache):
    path = _entry(tmp_cache)
    assert _is_cached_in_a_fresh_process(path)[0] == "True"            # checked whole, stamped
    assert os.getxattr(path, "user.itl_verified")
    st = path.stat()
    with open(path, "r+b") as f:
        f.seek(st.st_size // 2)
        f.write(b"\xa5" * 64)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
    served, err = _is_cached_in_a_fresh_process(path)
    assert served == "False" and f"cached raw log {path} is unusable" in err
    assert not path.exists()


def test_a_log_overwritten_in_this_process_after_its_check_is_checked_again(tmp_cache):
    from engine.runs import cache
    path = _entry(tmp_cache)
    assert cache.is_cached(path)
    st = path.stat()
    with open(path, "r+b") as f:
        f.seek(st.st_size // 2)
        f.write(b"\xa5" * 64)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    with pytest.warns(cache.CacheWarning, match="is unusable"):
        assert not cache.is_cached(path)


# ---------------------------------------------------------------- symbolic links
def test_a_symbolic_link_in_the_cache_is_not_followed(tmp_cache, tmp_path_factory):
    from engine.runs import cache
    outside = tmp_path_factory.mktemp("outside") / "log.npz"
    shutil.copy(GOLDEN_LOGS[0], outside)
    outside.chmod(0o644)
    before = outside.read_bytes()
    (tmp_cache / "runs").mkdir()
    link = tmp_cache / "runs" / "entry.npz"
    link.symlink_to(outside)
    with pytest.warns(cache.CacheWarning, match="not a regular file \\(a symbolic link\\)"):
        assert not cache.is_cached(link)
    assert not link.is_symlink() and not link.exists()             # the link is gone ...
    assert outside.read_bytes() == before                         # ... what it pointed at is untouched
    assert "user.itl_verified" not in os.listxattr(outside)


# ---------------------------------------------------------------- the fidelity benchmark's cache
def _fidelity_path(tmp_cache: Path, repeats: int):
    folder = tmp_cache / "fidelity"
    folder.mkdir(exist_ok=True)
    calls = []

    def fake(*args, **kw):
        calls.append(args)
        return {"rows": [{"measurement": "m", "article_ms": 1.0, "fast_ms": 0.5}], "repeats": repeats,
                "article_engine": False, "numpy": "x"}
    return folder, calls, fake


@pytest.mark.parametrize("damage", ['{"rows": [{"measurement"', "{}", '{"rows": [], "repeats": 3}', "[1]"])
def test_a_damaged_fidelity_result_is_reported_and_measured_again_under_the_lock(tmp_cache, monkeypatch, damage):
    import engine.fidelity as fid
    from engine.runs import cache, child
    folder, calls, fake = _fidelity_path(tmp_cache, 3)
    held = []
    monkeypatch.setattr(child, "engine_child_json", lambda *a, **k: (held.append(cache.holds_lock()), fake(*a))[1])
    fid.cached_compare(repeats=3)                                     # measured, stored
    [stored] = folder.glob("*.json")
    stored.write_text(damage)
    with pytest.warns(cache.CacheWarning, match=f"fidelity result {stored} is unusable"):
        res = fid.cached_compare(repeats=3)
    assert res["rows"][0]["measurement"] == "m" and len(calls) == 2 and held == [True, True]
    assert json.loads(stored.read_text()) == res


def test_fidelity_temp_files_of_dead_writers_are_swept(tmp_cache):
    from engine.runs import cache
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait(timeout=30)
    (tmp_cache / "fidelity").mkdir()
    left = tmp_cache / "fidelity" / f".tmp-{dead.pid}-x.json"
    left.write_text("{")
    assert cache.sweep_temp_files() == 1 and not left.exists()


# ---------------------------------------------------------------- free space
def test_too_little_free_space_is_found_before_measuring(tmp_cache, monkeypatch, capsys):
    import engine.serve.experiment as experiment
    from engine import cli
    from engine.runs import cache
    monkeypatch.setattr(cache.shutil, "disk_usage", lambda p: shutil._ntuple_diskusage(10**12, 10**12, 4096))
    monkeypatch.setattr(experiment, "execute", lambda *a, **k: pytest.fail("measured on a full disk"))
    assert cli.main(["run", "baseline", "--seed", "5", "--duration", "4", "--rate", "14"]) == 1
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"engine: error: {tmp_cache / 'runs'} has 0.0 MiB free but the raw log of run "
                           f"'baseline' seed 5") and "nothing was measured" in line
    import engine
    specs = engine.profile_specs("smoke", rungs=["baseline"], seeds=[5], duration=4.0, rate=14.0)
    monkeypatch.setattr("engine.runs.execute.engine_child", lambda *a, **k: pytest.fail("measured"))
    with pytest.raises(OSError, match="has 0.0 MiB free but the raw logs of 1 runs need"):
        engine.ensure_runs(specs, progress=False)


def test_the_expected_log_size_bounds_a_real_log(smoke_log):
    """The free-space check asks for at least what a real run writes."""
    from engine.runs.spec import expected_log_bytes
    assert smoke_log.stat().st_size < expected_log_bytes(4.0, 14.0)


# ---------------------------------------------------------------- hangs
def test_a_child_that_runs_past_its_time_is_killed_with_one_line():
    from engine.runs.child import ChildFailed, engine_child
    t = time.monotonic()
    with pytest.raises(ChildFailed) as err:
        engine_child("capacity", "--seconds", "120", what="a capacity measurement", timeout=2)
    assert time.monotonic() - t < 60
    assert str(err.value) == ("a capacity measurement was still running after 2 s, far past what it should "
                              "take, and was killed; nothing was kept")


def test_every_child_run_has_a_timeout_from_its_arrival_duration(tmp_cache, monkeypatch):
    import engine
    from engine.runs import execute
    got = {}
    monkeypatch.setattr(execute, "engine_child", lambda *a, **k: got.update(k))
    [spec] = engine.profile_specs("smoke", rungs=["baseline"], seeds=[1], duration=60.0, rate=7.0)
    with pytest.raises(RuntimeError, match="wrote no usable log"):
        execute.execute_spec(spec)
    assert got["timeout"] == spec.timeout_s() == 5 * spec.expected_seconds() + 300
    assert spec.timeout_s() > 4 * (spec.duration + 60)


# ---------------------------------------------------------------- Ctrl-C
@pytest.mark.parametrize("cmd", ["run", "matrix"])
def test_ctrl_c_is_one_line_exit_130_and_leaves_nothing_half_written(tmp_path, cmd):
    args = (["run", "baseline", "--seed", "2"] if cmd == "run"
            else ["matrix", "--profile", "smoke", "--rungs", "baseline", "--seeds", "2"])
    env = {**os.environ, "ITL_CACHE_DIR": str(tmp_path), "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "engine", *args, "--duration", "60", "--rate", "8"],
                            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)                # its own group, as a terminal's job
    lock = tmp_path / ".measuring.lock"
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None and \
            not (lock.exists() and "run 'baseline'" in lock.read_text(errors="replace")):
        time.sleep(0.2)
    time.sleep(6)                                                     # start-up done, serving under way
    assert proc.poll() is None
    os.killpg(proc.pid, signal.SIGINT)                               # what Ctrl-C sends: the whole group
    out, err = proc.communicate(timeout=60)
    said = [line for line in err.splitlines() if line.startswith("engine:") or "Traceback" in line]
    assert proc.returncode == 130 and said == ["engine: interrupted; nothing half-written was kept in the cache"], err
    assert err.rstrip().endswith(said[0]) and out == ""
    runs = tmp_path / "runs"
    assert not list(runs.glob("*.npz")) and not list(runs.glob(".tmp-*"))
