"""Loading raw logs: ours, the article's, and files that are not raw logs."""
import json

import numpy as np
import pytest

import analysis
from analysis import RawLogError, load
from analysis.core.synthetic import runlog_from_steps

from tests.support.paths import GOLDEN_LOGS


def small_arrays():
    """Arrays of a tiny valid raw log (two requests, one eviction, one GC pause)."""
    steps = [{"t0": 0.00, "t1": 0.01, "seg": (("prefill", 0.001, 0.004), ("decode", 0.005, 0.009)),
              "graph": 2, "n_decode": 2},
             {"t0": 0.01, "t1": 0.02, "seg": (("swap", 0.011, 0.012), ("decode", 0.013, 0.019)),
              "graph": "eager", "n_decode": 1},
             {"t0": 0.02, "t1": 0.03, "seg": (("decode", 0.021, 0.029),), "graph": 1, "n_decode": 1}]
    log = runlog_from_steps(steps, gcs=[(0.0145, 0.0150)],
                            emissions=[(0, 0.0095), (1, 0.0095), (0, 0.0195), (0, 0.0295), (1, 0.0295)],
                            evictions=[(1, 0.0105, 0.0205)])
    return {k: getattr(log, k) for k in ("steps", "segs", "gcs", "emissions", "evictions",
                                         "requests", "trace")} | {
        "wall": np.float64(1.0), "config": np.str_(json.dumps({"rung": "tiny", "seed": 3}))}


def write(tmp_path, name="log.npz", savez=np.savez, **changes):
    """A raw log with ``changes``; ``savez=np.savez_compressed`` writes it deflated, as
    the engines do (load reads those in one pass, stored ones through np.load)."""
    arrays = small_arrays()
    for k, v in changes.items():
        if v is None:
            arrays.pop(k)
        else:
            arrays[k] = v
    path = tmp_path / name
    savez(path, **arrays)
    return path


def with_cell(key, row, col, value):
    a = small_arrays()[key].copy()
    a[row, col] = value
    return a


def test_our_schema_with_provenance_and_extra_arrays(tmp_path):
    path = write(tmp_path, schema_version=np.int64(1),
                 provenance=np.str_(json.dumps({"git": "abc", "python": "3.11"})),
                 cpu_ms=np.arange(3.0))
    log = load(path)
    assert log.schema_version == 1
    assert log.provenance == {"git": "abc", "python": "3.11"}
    assert list(log.extras) == ["cpu_ms"] and (log.extras["cpu_ms"] == np.arange(3.0)).all()
    assert log.rung == "tiny" and log.seed == 3 and log.path == str(path)
    summary = analysis.summarize(log)
    assert summary["gaps"] == 3 and summary["preemptions"] == 0


def test_article_log_is_schema_zero():
    paths = GOLDEN_LOGS
    log = load(paths[0])
    assert log.schema_version == 0 and log.provenance == {} and log.extras == {}
    assert log.steps.shape[1] == 7 and log.config["seed"] == 1


def test_steps_from_log_round_trip(tmp_path):
    log = load(write(tmp_path))
    steps = analysis.steps_from_log(log)
    assert steps[1]["graph"] == "eager" and steps[0]["graph"] == 2
    assert steps[1]["seg"][0] == ("swap", 0.011, 0.012)
    assert analysis.evictions_by_request(log) == {1: [(0.0105, 0.0205)]}


def test_truncated_file(tmp_path):
    good = write(tmp_path)
    bad = tmp_path / "truncated.npz"
    bad.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    with pytest.raises(RawLogError, match="truncated.npz.*truncated or corrupt"):
        load(bad)


def test_truncated_compressed_article_log(tmp_path):
    paths = GOLDEN_LOGS
    data = paths[0].read_bytes()
    bad = tmp_path / "cut.npz"
    bad.write_bytes(data[: len(data) - 1000])
    with pytest.raises(RawLogError, match="cut.npz"):
        load(bad)


def test_random_bytes(tmp_path):
    bad = tmp_path / "noise.npz"
    bad.write_bytes(np.random.default_rng(0).bytes(4096))
    with pytest.raises(RawLogError, match="noise.npz.*corrupt"):
        load(bad)


def test_a_single_array_file_is_not_a_raw_log(tmp_path):
    bad = tmp_path / "steps.npy"
    np.save(bad, np.zeros((3, 7)))
    with pytest.raises(RawLogError, match="steps.npy.*not an .npz"):
        load(bad)


def test_object_arrays_are_refused(tmp_path):
    path = tmp_path / "pickled.npz"
    arrays = small_arrays()
    arrays["config"] = np.array([{"rung": "x"}], dtype=object)
    np.savez(path, **arrays)
    with pytest.raises(RawLogError, match="pickled.npz"):
        load(path)


def test_missing_file():
    with pytest.raises(FileNotFoundError, match="nowhere.npz"):
        load("nowhere.npz")


@pytest.mark.parametrize("changes, message", [
    (dict(gcs=None), r"missing array\(s\) \['gcs'\]"),
    (dict(evictions=None, wall=None), r"missing array\(s\) \['evictions', 'wall'\]"),
    (dict(schema_version=np.int64(4)), "unsupported schema_version 4"),
    (dict(schema_version=np.float64(1.0)), "schema_version.*integer"),
    (dict(config=np.str_("{not json")), "'config' is not valid JSON"),
    (dict(provenance=np.str_("[1, 2]")), "'provenance' must be a JSON object"),
    (dict(wall=np.float64(np.nan)), "'wall' must be a positive finite"),
    (dict(steps=np.zeros((3, 6))), r"'steps' must have 7 columns"),
    (dict(segs=np.zeros(4)), r"'segs' must have 4 columns"),
    (dict(steps=with_cell("steps", 1, 0, np.nan)), r"'steps' has a NaN.*row 1, column 't0'"),
    (dict(emissions=with_cell("emissions", 2, 1, np.inf)), "'emissions' has a NaN or infinite"),
    (dict(evictions=with_cell("evictions", 0, 1, np.nan)), "'evictions' has a NaN"),
    (dict(steps=with_cell("steps", 0, 1, -0.5)), "steps: t1 < t0"),
    (dict(steps=small_arrays()["steps"][::-1].copy()), "unsorted or overlapping steps"),
    (dict(segs=with_cell("segs", 0, 3, 0.0005)), "segs: t1 < t0"),
    (dict(segs=with_cell("segs", 0, 3, 0.0055)), "segs: row 1 overlaps"),
    (dict(segs=with_cell("segs", 0, 0, 7)), "refers to step 7, but the log has 3 steps"),
    (dict(segs=with_cell("segs", 0, 1, 9)), "unknown segment code 9"),
    (dict(segs=with_cell("segs", 0, 2, -0.5)), "outside its step"),
    (dict(steps=with_cell("steps", 0, 4, -2)), "unknown graph code -2"),
    (dict(steps=with_cell("steps", 0, 4, 2.5)), "'graph' must hold integers"),
    (dict(gcs=with_cell("gcs", 0, 1, 0.0)), "gcs: pause ends before it starts"),
    (dict(gcs=np.array([[0.001, 0.003, 0], [0.002, 0.004, 1]])), "GC pauses overlap"),
    (dict(gcs=with_cell("gcs", 0, 2, 3)), "unknown GC generation"),
    (dict(emissions=with_cell("emissions", 2, 1, 0.001)), "emits a token earlier.*reversed"),
    (dict(emissions=with_cell("emissions", 2, 2, 11)), "refers to a step"),
    (dict(evictions=with_cell("evictions", 0, 2, 0.001)), "readmitted before evicted"),
    (dict(evictions=np.array([[1, 0.0105, np.nan], [1, 0.02, 0.021]])), "overlapping evictions"),
    (dict(requests=with_cell("requests", 0, 4, -1.0)), "first token before arrival"),
])
@pytest.mark.parametrize("savez", [np.savez, np.savez_compressed], ids=["stored", "deflated"])
def test_broken_logs_name_the_file_and_the_problem(tmp_path, changes, message, savez):
    path = write(tmp_path, name="broken.npz", savez=savez, **changes)
    with pytest.raises(RawLogError, match=message) as err:
        load(path)
    assert str(err.value).startswith(str(path))
    assert isinstance(err.value, ValueError)


def test_open_eviction_is_allowed(tmp_path):
    log = load(write(tmp_path, evictions=np.array([[1, 0.0105, np.nan]])))
    gaps = analysis.partition_run(log)
    last = gaps[gaps.request == 1].iloc[-1]
    assert last["preempt"] == pytest.approx((0.0295 - 0.0105) * 1e3)


def test_empty_tables_written_as_flat_arrays(tmp_path):
    log = load(write(tmp_path, gcs=np.array([]), evictions=np.array([])))
    assert log.gcs.shape == (0, 3) and log.evictions.shape == (0, 3)
    assert analysis.summarize(log)["gc_counts"] == {0: 0, 1: 0, 2: 0}
