"""The command line and the run cache: contract arrays, atomic writes, clear errors."""
import json
import os

import numpy as np
import pytest

from tests.support.cli import engine_cli

ARTICLE_ARRAYS = {"steps": 7, "segs": 4, "gcs": 3, "emissions": 3, "evictions": 3, "requests": 5, "trace": 4}


def test_raw_log_has_the_contract_arrays_columns_and_codes(smoke_log):
    z = np.load(smoke_log)
    for name, cols in ARTICLE_ARRAYS.items():
        assert z[name].ndim == 2 and z[name].shape[1] == cols, name
        assert z[name].dtype == np.float64, name
    assert z["wall"].shape == () and float(z["wall"]) > 0
    cfg = json.loads(str(z["config"]))
    assert {"rung", "seed", "duration", "rate", "max_num_seqs", "token_budget", "capture_sizes",
            "kv_blocks", "admit_watermark", "gc_freeze", "async_tokenize", "compact_history",
            "max_model_len"} <= set(cfg)
    assert int(z["schema_version"]) == 3
    prov = json.loads(str(z["provenance"]))
    for key in ("cpu_model", "cores", "python", "numpy", "blas", "tokenizers", "git_commit", "rate"):
        assert key in prov, key
    steps, segs = z["steps"], z["segs"]
    assert set(np.unique(segs[:, 1])) <= {0, 1, 2, 3}
    g = steps[:, 4]
    assert set(np.unique(g)) <= {-1, 0, 1, 2, 4, 8, 16, 24, 32}
    assert ((g == -1) == (steps[:, 2] == 0)).all()                 # no decode <-> graph code -1
    assert (np.diff(steps[:, 0]) > 0).all() and (steps[:, 1] >= steps[:, 0]).all()
    assert (segs[:, 3] >= segs[:, 2]).all() and segs[:, 0].max() < len(steps)
    # segments lie inside their step, in order, without overlap
    idx = segs[:, 0].astype(int)
    assert (segs[:, 2] >= steps[idx, 0]).all() and (segs[:, 3] <= steps[idx, 1]).all()
    assert (np.diff(segs[:, 2]) >= 0).all()
    assert len(z["seg_detail"]) == len(segs)
    # the thread's own clocks: read after every segment that did work and nowhere else,
    # never running backwards, and CPU time never ahead of wall time by more than the
    # two kernel clocks can disagree
    cpu, runq, work = z["seg_cpu_end"], z["seg_runq_end"], z["seg_work"]
    assert cpu.shape == runq.shape == (len(segs),)
    assert (np.isfinite(cpu) == (work > 0)).all() and (np.isnan(runq) <= np.isnan(cpu)).all()
    scpu, srq = z["step_cpu"], z["step_runq"]
    assert np.isfinite(scpu).all() and (scpu[:, 1] >= scpu[:, 0]).all()
    cpu_t = np.sort(np.concatenate([scpu.ravel(), cpu[work > 0]]))
    wall_t = np.sort(np.concatenate([steps[:, :2].ravel(), segs[work > 0, 3]]))
    assert (np.diff(cpu_t) >= 0).all() and (np.diff(cpu_t) <= np.diff(wall_t) + 2e-3).all()
    if not np.isnan(srq).all():
        rq_t = np.sort(np.concatenate([srq.ravel(), runq[work > 0]]))
        assert (np.diff(rq_t) >= 0).all() and int(z["runq_reads"]) >= 1
    em = z["emissions"]
    assert em[:, 2].max() < len(steps) and len(np.unique(z["requests"][:, 0])) == len(z["requests"])
    # every finished request emitted exactly max_new tokens
    counts = {int(r): int((em[:, 0] == r).sum()) for r in z["requests"][:, 0]}
    assert all(counts[int(r)] == int(m) for r, m in z["requests"][:, [0, 3]])


def test_cached_run_is_reused(smoke_log, run_cache):
    """Judged by the file's identity: a run measured again would be a new file (new
    inode, by atomic rename) however fast it was."""
    before = os.stat(smoke_log)
    proc = engine_cli("run", "baseline", "--seed", "1", "--duration", "4", "--rate", "14", cache_dir=run_cache)
    after = os.stat(smoke_log)
    assert proc.stdout.strip() == str(smoke_log)
    assert (after.st_ino, after.st_mtime_ns, after.st_size) == (before.st_ino, before.st_mtime_ns, before.st_size)


def test_cache_key_changes_with_config_rate_and_seed():
    from engine import LADDER
    from engine.runs.cache import run_path
    base = run_path(LADDER["baseline"], 1, 60, 7.5)
    assert base == run_path(LADDER["baseline"], 1, 60, 7.5)
    others = {run_path(LADDER["+gc.freeze"], 1, 60, 7.5), run_path(LADDER["baseline"], 2, 60, 7.5),
              run_path(LADDER["baseline"], 1, 30, 7.5), run_path(LADDER["baseline"], 1, 60, 7.6)}
    assert base not in others and len(others) == 4


def test_cache_key_changes_with_engine_code(monkeypatch):
    from engine import LADDER
    from engine.runs import cache
    before = cache.run_path(LADDER["baseline"], 1, 60, 7.5)
    monkeypatch.setattr(cache, "code_version", lambda: "0" * 16)
    assert cache.run_path(LADDER["baseline"], 1, 60, 7.5) != before


# a run killed while serving and while writing its log: tests/engine/test_cache_integrity.py


@pytest.mark.parametrize("args, message", [
    (["run", "+faster kernels", "--seed", "1", "--duration", "5", "--rate", "7"], "valid rungs: 'baseline'"),
    (["run", "baseline", "--seed", "1.5", "--duration", "5", "--rate", "7"], "seed must be an integer"),
    (["run", "baseline", "--seed", "1", "--duration", "0", "--rate", "7"], "--duration: must be a finite number"),
    (["run", "baseline", "--seed", "1", "--duration", "5", "--rate", "-2"], "--rate: must be a finite number"),
    (["run", "baseline", "--seed", "1", "--duration", "inf", "--rate", "7"], "--duration: must be a finite number"),
    (["run", "baseline", "--seed", "1", "--duration", "5", "--rate", "nan"], "--rate: must be a finite number"),
    (["run", "baseline", "--seed", "1", "--duration", "5", "--rate", "1e9"], "--rate: must be a finite number"),
    (["run", "baseline", "--seed", "-1", "--duration", "5", "--rate", "7"], "seed must be an integer in [0, 4294967295]"),
    (["run", "--config-json", '{"max_num_seqs": "x"}', "--seed", "1", "--duration", "5", "--rate", "7"],
     "Config field 'max_num_seqs' must be int"),
    (["run", "--config-json", '{"bogus": 1}', "--seed", "1", "--duration", "5", "--rate", "7"],
     "unknown Config fields: ['bogus']"),
    (["run", "baseline", "--forward", "gpu", "--seed", "1", "--duration", "5", "--rate", "7"], "invalid choice: 'gpu'"),
    (["matrix", "--profile", "huge"], "invalid choice: 'huge'"),
    (["matrix", "--profile", "smoke", "--rungs", "nope"], "unknown rung 'nope'"),
])
def test_bad_input_exits_2_with_one_clear_line(args, message, tmp_path):
    proc = engine_cli(*args, cache_dir=tmp_path, check=False, timeout=60)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], proc.stderr
    assert not (tmp_path / "runs").exists() or not list((tmp_path / "runs").glob("*.npz"))


def test_unwritable_cache_folder_exits_2(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    proc = engine_cli("run", "baseline", "--seed", "1", "--duration", "5", "--rate", "7",
                      cache_dir=blocker / "cache", check=False, timeout=60)
    assert proc.returncode == 2 and "not writable" in proc.stderr and "ITL_CACHE_DIR" in proc.stderr


def test_matrix_runs_one_at_a_time_and_resumes(tmp_path):
    args = ["matrix", "--profile", "smoke", "--rungs", "baseline", "+gc.freeze", "--seeds", "1",
            "--duration", "2", "--rate", "10"]
    first = engine_cli(*args, cache_dir=tmp_path)
    paths = first.stdout.split()
    assert len(paths) == 2 and all(os.path.exists(p) for p in paths)
    assert "matrix smoke: 2 of 2 to run" in first.stderr           # the progress bar names the work
    again = engine_cli(*args, cache_dir=tmp_path)
    assert again.stdout.split() == paths and "to run" not in again.stderr


def test_quick_calibration_records_what_it_measured(tmp_path):
    proc = engine_cli("calibrate", "--quick", cache_dir=tmp_path, timeout=300)
    assert "tokens/s" in proc.stdout and "(capacity, capacity only, " in proc.stdout
    assert "batch-32 forward" in proc.stdout and "s to calibrate)" in proc.stdout
    [cal] = list((tmp_path / "calibration").glob("capacity-article-*.json"))
    data = json.loads(cal.read_text())
    assert data["rate"] > 0 and data["capacity"]["tokens_per_s"] > 0 and data["method"] == "capacity"
    assert len(data["capacity"]["forward_ms_b32_readings"]) == 3 and data["capacity"]["forward_ms_b32"] > 0
    assert data["rate"] == pytest.approx(data["target_utilization"] * data["capacity"]["tokens_per_s"]
                                         / data["mean_output_tokens"], rel=1e-3)


def test_progress_bar_survives_fractional_run_estimates(tmp_path, monkeypatch, capsys):
    """Estimates that round up one by one pass a rounded total; tqdm then drops the
    total and the bar's format used to raise after the runs had gone (found on the
    quick profile's cold build)."""
    from types import SimpleNamespace

    from engine.runs import execute as runner
    from engine.serve.workload import Workload
    monkeypatch.setenv("ITL_CACHE_DIR", str(tmp_path))
    ran = []
    specs = [SimpleNamespace(path=tmp_path / f"run{i}.npz", expected_seconds=lambda: 10.6, group="ladder", schedule={},
                             rung="r", seed=i, rate=1.0, duration=9.0, workload=Workload(),
                             expected_log_bytes=lambda: 0) for i in range(3)]
    monkeypatch.setattr(runner, "execute_spec", lambda s: ran.append(s.seed))
    assert runner.ensure_runs(specs, progress=True) == [s.path for s in specs]
    assert ran == [0, 1, 2] and "33/33 s est." in capsys.readouterr().err


def test_cache_key_covers_every_measured_module(tmp_path):
    """A module added to the measured package changes the key, without anyone listing it."""
    import shutil

    from engine.runs import cache
    measured = tmp_path / "serve"
    shutil.copytree(cache.MEASURED_DIR, measured, ignore=shutil.ignore_patterns("__pycache__"))
    before = cache.code_version(measured)
    assert before == cache.code_version(cache.MEASURED_DIR)
    (measured / "new_mechanism.py").write_text("X = 1\n")
    assert cache.code_version(measured) != before
    (measured / "new_mechanism.py").unlink()
    (measured / "sub").mkdir()
    (measured / "sub" / "deeper.py").write_text("Y = 2\n")
    assert cache.code_version(measured) != before


def test_forward_is_selectable_from_the_cli(tmp_path):
    proc = engine_cli("run", "baseline", "--forward", "fast", "--seed", "1", "--duration", "1", "--rate", "5",
                      cache_dir=tmp_path)
    path = proc.stdout.strip().splitlines()[-1]
    with np.load(path) as z:
        assert json.loads(str(z["config"]))["forward"] == "fast"
        assert z["gc_tracked"].shape == (2,) and z["gc_tracked"][0] > 400_000
    rows = json.loads(engine_cli("microbench", "--json", "--context", "50", "--forward", "fast",
                                 cache_dir=tmp_path).stdout)
    assert [r["batch"] for r in rows][:3] == [1, 2, 4] and all(r["batched_ms"] > 0 for r in rows)
