"""Shared fixtures: a tiny real run, made once per session in its own cache folder.

Every test, the book's smoke build and the engine fixtures share one session-scoped
temporary cache (ITL_CACHE_DIR is set for the whole session), so the tests never read
or write the user's cache and the control runs the book needs are measured once.
"""
import ctypes
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from ci_skips import pytest_runtest_logreport, pytest_sessionfinish, pytest_terminal_summary  # noqa: F401  (hooks)

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"      # the article's text lives here, outside the repository
# The article engine's own timing logs, each beside the JSON its analysis script printed:
# part of the repository, so the tests that read them run on every fresh clone.
GOLDEN = REPO / "tests" / "data" / "golden"
GOLDEN_LOGS = sorted(GOLDEN.glob("*.npz"))


def engine_cli(*args, cache_dir, timeout=300, check=True):
    env = {**os.environ, "ITL_CACHE_DIR": str(cache_dir), "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-m", "engine", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"engine {args} failed ({proc.returncode}):\n{proc.stderr}")
    return proc


@pytest.fixture(scope="session", autouse=True)
def run_cache(tmp_path_factory):
    """The session's cache folder, for this process and every child it starts."""
    folder = tmp_path_factory.mktemp("itl-cache")
    old = os.environ.get("ITL_CACHE_DIR")
    os.environ["ITL_CACHE_DIR"] = str(folder)
    yield folder
    if old is None:
        os.environ.pop("ITL_CACHE_DIR", None)
    else:
        os.environ["ITL_CACHE_DIR"] = old


def read_only(src: Path, dest: Path) -> Path:
    """A copy of a folder tree with every write bit cleared."""
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns(".measuring.lock"))
    for p in [dest, *dest.rglob("*")]:
        p.chmod(p.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    return dest


def read_only_preexec() -> None:
    """In a child about to exec: make permission bits bind even for root, by dropping
    CAP_DAC_OVERRIDE and CAP_FOWNER from the bounding set (a no-op for other users)."""
    if os.geteuid() == 0:
        libc = ctypes.CDLL(None, use_errno=True)
        for cap in (1, 3):                      # CAP_DAC_OVERRIDE, CAP_FOWNER
            if libc.prctl(24, cap, 0, 0, 0) != 0:    # PR_CAPBSET_DROP
                raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


@pytest.fixture(scope="session")
def smoke_log(run_cache) -> Path:
    """A 4 s baseline run at a rate that makes preemption and eager steps likely."""
    proc = engine_cli("run", "baseline", "--seed", "1", "--duration", "4", "--rate", "14",
                      cache_dir=run_cache)
    return Path(proc.stdout.strip().splitlines()[-1])


PRESSURED = '{"name": "pressured", "kv_blocks": 250, "capture_sizes": [1, 2, 4, 8]}'


@pytest.fixture(scope="session")
def pressured_log(run_cache) -> Path:
    """A short run with every mechanism firing: a small KV pool (evictions) and few
    captured sizes (eager steps), besides GC, tokenization and prefill."""
    proc = engine_cli("run", "--config-json", PRESSURED, "--seed", "1", "--duration", "4", "--rate", "16",
                      cache_dir=run_cache)
    return Path(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def control_logs(run_cache) -> dict:
    """The instrument's control runs (engine/controls.py) of the smoke profile, the very
    runs the book's smoke build uses (same session cache): config name -> log."""
    import engine
    specs = engine.control_specs("smoke")
    engine.ensure_runs(specs, progress=False)
    return {s.rung: s.path for s in specs}
