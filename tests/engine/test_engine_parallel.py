"""Runs measured side by side: the executors, the concurrency in the key, the pinned
workers' records, bad options, and a parallel build killed and resumed."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import engine
from engine.runs import cache, executors, topology
from engine.runs.execute import ensure_runs
from engine.runs.order import blocked_order
from engine.runs.workers import deal_blocks

from tests.support.paths import REPO

TWO_CORES = len(topology.measuring_cpus()) >= 2
needs_two = pytest.mark.skipif(not TWO_CORES, reason="needs two physical cores to pin two workers")


def _specs(seeds=(1, 2), rungs=("baseline",), duration=1.0, rate=10.0):
    return blocked_order([engine.RunSpec(engine.rung_config(r), s, duration, rate, {}, concurrency=1)
                          for r in rungs for s in seeds])


def _prov(path):
    with np.load(path) as z:
        return json.loads(str(z["provenance"]))


@pytest.fixture
def temp_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ITL_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


# ---------------------------------------------------------------- cheap: no runs
def test_physical_cores_keep_smt_siblings_together(tmp_path):
    # 4 logical CPUs on 2 cores: 0/2 and 1/3 are siblings
    for cpu, core in [(0, 0), (1, 1), (2, 0), (3, 1)]:
        topo = tmp_path / f"cpu{cpu}" / "topology"
        topo.mkdir(parents=True)
        (topo / "core_id").write_text(f"{core}\n")
        (topo / "physical_package_id").write_text("0\n")
    assert topology.physical_cores([0, 1, 2, 3], root=tmp_path) == [(0, 2), (1, 3)]
    assert topology.measuring_cpus([0, 1, 2, 3], root=tmp_path) == [0, 1]


def test_auto_stays_serial_below_four_cpus_and_leaves_a_core_above():
    assert executors.auto_jobs([0, 1]) == 1
    assert executors.auto_jobs([0, 1, 2]) == 1
    # without a readable topology every CPU counts as its own core: 8 cores, one left to the build
    assert executors.auto_jobs(range(8)) == len(topology.physical_cores(range(8))) - 1


def test_blocks_are_dealt_whole_and_in_their_order():
    specs = blocked_order([engine.RunSpec(engine.rung_config(r), s, 3.0, 8.0, {}, concurrency=1)
                           for r in engine.RUNGS for s in (1, 2, 3, 4, 5)])
    from engine.runs.order import execution_order
    lists = deal_blocks(execution_order(specs), 2)
    assert deal_blocks(execution_order(specs), 2) == lists               # deterministic
    seeds = [{s.seed for s in w} for w in lists]
    assert not seeds[0] & seeds[1] and seeds[0] | seeds[1] == {1, 2, 3, 4, 5}
    for w in lists:                      # each block whole, in the shuffled order order.py gives
        for seed in {s.seed for s in w}:
            block = [s for s in w if s.seed == seed]
            assert [s.schedule["in_block"] for s in block] == list(range(len(engine.RUNGS)))


def test_concurrency_is_in_the_key_and_alone_keeps_its_old_key():
    cfg = engine.rung_config("baseline")
    alone = cache.run_key(cfg, 1, 3.0, 8.0)
    assert cache.run_key(cfg, 1, 3.0, 8.0, concurrency=1) == alone
    assert len({alone, cache.run_key(cfg, 1, 3.0, 8.0, concurrency=2),
                cache.run_key(cfg, 1, 3.0, 8.0, concurrency=3)}) == 3
    assert "__k2__" in cache.run_path(cfg, 1, 3.0, 8.0, concurrency=2).name


def test_calibration_is_recorded_per_concurrency():
    from engine.runs.calibrate import calibration_path
    assert calibration_path("capacity", "article", concurrency=1) != calibration_path("capacity", "article", concurrency=2)
    assert "-k2-" in calibration_path("capacity", "article", concurrency=2).name


def test_environment_sets_the_specs_default_level(monkeypatch):
    monkeypatch.setenv("ITL_JOBS", "1")
    monkeypatch.setenv("ITL_EXECUTOR", "serial")
    assert engine.RunSpec(engine.rung_config("baseline"), 1, 3.0, 8.0).concurrency == 1
    if TWO_CORES:
        monkeypatch.setenv("ITL_JOBS", "2")
        monkeypatch.setenv("ITL_EXECUTOR", "local")
        assert engine.RunSpec(engine.rung_config("baseline"), 1, 3.0, 8.0).concurrency == 2


def test_a_parallel_run_is_never_measured_alone(temp_cache):
    from engine.runs.execute import execute_spec
    import dataclasses
    spec = dataclasses.replace(_specs(seeds=(1,))[0], concurrency=2)
    with pytest.raises(ValueError, match="beside 1 other"):
        execute_spec(spec)


def _cli(*args, cache_dir, env=None, pre=None):
    code = (f"{pre}\n" if pre else "") + "import sys; from engine.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, "ITL_CACHE_DIR": str(cache_dir), **(env or {})}, timeout=120)


@pytest.mark.parametrize("args, says", [
    (["--jobs", "0"], "--jobs must be a whole number >= 1 or 'auto', got '0'"),
    (["--jobs", "-1"], "--jobs must be a whole number >= 1 or 'auto', got '-1'"),
    (["--jobs", str(len(topology.measuring_cpus()) + 1)], "is more than the"),
    (["--executor", "dask"], "unknown executor 'dask'; valid executors: serial, local, submitit-local, slurm"),
    (["--executor", "slurm", "--jobs", "2"], "needs a Slurm scheduler"),
    (["--executor", "serial", "--jobs", "2"], "measures one run at a time"),
])
def test_bad_jobs_and_executors_get_one_line_and_exit_2(tmp_path, args, says):
    if "slurm" in args and subprocess.run(["which", "sbatch"], capture_output=True).returncode == 0:
        pytest.skip("Slurm is installed here")
    proc = _cli("matrix", "--profile", "smoke", "--rate", "8", *args, cache_dir=tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("engine: error: ") and says in lines[0]
    assert not (tmp_path / "runs").exists()                                # nothing was measured


def test_a_missing_cluster_package_gets_one_line_and_exit_2(tmp_path):
    proc = _cli("matrix", "--profile", "smoke", "--rate", "8", "--executor", "submitit-local", "--jobs", "1",
                cache_dir=tmp_path, pre="import sys; sys.modules['submitit'] = None   # as if not installed")
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("engine: error: executor 'submitit-local' needs the submitit package, "
                                   "which is not installed (pip install -r requirements.txt)")


# ---------------------------------------------------------------- real runs (a few seconds each)
@needs_two
def test_cluster_backend_gives_the_local_executors_keys_and_verified_logs(tmp_path, monkeypatch):
    made = {}
    for name in ("local", "submitit-local"):
        monkeypatch.setenv("ITL_CACHE_DIR", str(tmp_path / name))
        paths = ensure_runs(_specs(), progress=False, jobs=2, executor=name)
        assert all(cache.raw_log_problem(p) is None for p in paths)
        made[name] = {p.name: _prov(p) for p in paths}
    assert sorted(made["local"]) == sorted(made["submitit-local"])          # same keys
    for name, logs in made.items():
        cores = set()
        for file, prov in logs.items():
            sched = prov["schedule"]
            seed = int(file.split("__s")[1].split("__")[0])
            assert sched["block"] == seed and sched["concurrency"] == 2 and sched["executor"] == name
            assert sched["cpus_allowed"].isdigit()                          # one core, as the kernel lists it
            assert prov["cores_usable"] == 1                                # the child itself saw one core
            assert sched["host"] == topology.host() and sched["cpu_model"] == prov["cpu_model"]
            cores.add(sched["cpus_allowed"])
        assert len(cores) == 2, f"{name}: both workers on one core {cores}"


@needs_two
def test_a_serial_build_does_not_reuse_a_parallel_run_nor_the_reverse(temp_cache):
    parallel = ensure_runs(_specs(seeds=(1, 2)), progress=False, jobs=2, executor="local")
    alone = ensure_runs(_specs(seeds=(1,)), progress=False, jobs=1, executor="serial")
    assert alone[0] != parallel[0] and "__k2__" in parallel[0].name and "__k" not in alone[0].name
    assert _prov(alone[0])["schedule"]["concurrency"] == 1                 # it was measured, alone
    assert _prov(alone[0])["started_unix"] > _prov(parallel[0])["started_unix"]
    import dataclasses
    assert not cache.is_cached(dataclasses.replace(_specs(seeds=(2,))[0], concurrency=1).path)


def _finished(runs: Path) -> list[Path]:
    """The runs written whole: pathlib's "*" also matches a worker's .tmp-<pid>-... file,
    which is renamed into place (or removed) a moment later."""
    return [p for p in runs.glob("*.npz") if not p.name.startswith(".")]


def _workers_of(pid: int) -> list[int]:
    try:
        kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []
    return [int(k) for k in kids if "engine.runs.workers" in Path(f"/proc/{k}/cmdline").read_text(errors="replace")]


@needs_two
@pytest.mark.parametrize("how", ["ctrl-c", "a worker killed"])
def test_killing_a_parallel_build_loses_nothing_and_the_next_build_resumes(temp_cache, how):
    args = [sys.executable, "-m", "engine", "matrix", "--profile", "smoke", "--rungs", "baseline", "+gc.freeze",
            "--seeds", "1", "2", "--duration", "1", "--rate", "10", "--jobs", "2", "--executor", "local"]
    env = {**os.environ, "ITL_CACHE_DIR": str(temp_cache)}
    runs = temp_cache / "runs"
    build = subprocess.Popen(args, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             start_new_session=True)
    deadline = time.time() + 120
    while not _finished(runs) and time.time() < deadline and build.poll() is None:
        time.sleep(0.2)
    first = {p: p.stat().st_mtime_ns for p in _finished(runs)}
    assert first, "no run finished before the deadline"
    if how == "ctrl-c":
        os.killpg(build.pid, signal.SIGINT)
    else:
        workers = _workers_of(build.pid)
        assert workers, "no worker process found"
        os.kill(workers[0], signal.SIGKILL)
    _, err = build.communicate(timeout=120)
    assert build.returncode != 0
    if how != "ctrl-c":
        assert b"died" in err
    kept = {p: p.stat().st_mtime_ns for p in _finished(runs)}
    assert set(first) <= set(kept) and all(cache.raw_log_problem(p) is None for p in kept)
    again = subprocess.run(args, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    done = [Path(line) for line in again.stdout.split()]
    assert len(done) == 4 and all(cache.raw_log_problem(p) is None for p in done)
    assert all(p.stat().st_mtime_ns == t for p, t in kept.items())         # resumed, nothing redone
    assert not list(temp_cache.rglob(".tmp-*")) and not list(temp_cache.glob(cache.WORKER_LOCKS))
