"""Shared fixtures: a tiny real run, made once per session in its own cache folder."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"


def engine_cli(*args, cache_dir, timeout=300, check=True):
    env = {**os.environ, "ITL_CACHE_DIR": str(cache_dir), "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-m", "engine", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"engine {args} failed ({proc.returncode}):\n{proc.stderr}")
    return proc


@pytest.fixture(scope="session")
def run_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("itl-cache")


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
    """The instrument's control runs (engine/controls.py) at smoke size: config name -> log."""
    import engine
    from engine.runs import cache
    old = os.environ.get(cache.CACHE_ENV)
    os.environ[cache.CACHE_ENV] = str(run_cache)
    try:
        specs = engine.control_specs("smoke", seeds=[1], duration=3.0, rate=14.0)
        engine.ensure_runs(specs, progress=False)
        return {s.rung: s.path for s in specs}
    finally:
        if old is None:
            os.environ.pop(cache.CACHE_ENV, None)
        else:
            os.environ[cache.CACHE_ENV] = old
