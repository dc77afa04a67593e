"""Against the golden logs: raw logs written by the article's own engine, each next
to the JSON its analysis script printed for it (tests/data/golden, in the repository).

* summarize() gives the same keys and numbers (1e-9 relative; ints and lists exact);
* the whole-run path equals the scalar Partitioner on every gap of every log.

reconcile_max_err_ms is the one key compared differently: it is the largest
|sum(parts) - gap| over a run, pure float rounding (about 1e-15 ms in the article's
output; 0 or ~1e-12 here because residual is computed as what the others leave).
Two rounding noises are not equal to each other in any relative sense, so the
test checks that both are far below a nanosecond-scale 1e-9 ms.
"""
import json
import math

import numpy as np
import pytest

import analysis
from analysis import LABELS

from tests.support.golden import assert_paths_agree
from tests.support.paths import GOLDEN, GOLDEN_LOGS as LOGS


def test_the_golden_logs_are_in_the_repository():
    """They are committed (tests/data/golden): a missing one is a failure, never a skip."""
    assert len(LOGS) == 3 and all(p.with_suffix(".json").exists() for p in LOGS), GOLDEN


def leaves(obj, where=""):
    """Flatten nested dicts/lists to {path: value}."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from leaves(v, f"{where}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from leaves(v, f"{where}[{i}]")
    else:
        yield where, obj


@pytest.fixture(scope="module", params=LOGS, ids=lambda p: p.stem)
def golden(request):
    path = request.param
    log = analysis.load(path)
    return path, log, analysis.partition_run(log)


def test_summary_matches_the_article_script(golden):
    path, log, gaps = golden
    want = json.loads(path.with_suffix(".json").read_text())
    got = analysis.summarize(log, gaps=gaps)
    assert list(got) == list(want)
    got = json.loads(json.dumps(got))  # same JSON types (int keys become strings)
    assert got["reconcile_max_err_ms"] < 1e-9 and want["reconcile_max_err_ms"] < 1e-9
    got.pop("reconcile_max_err_ms"), want.pop("reconcile_max_err_ms")
    g, w = dict(leaves(got)), dict(leaves(want))
    assert g.keys() == w.keys()
    for key, expected in w.items():
        value = g[key]
        assert type(value) is type(expected), key
        if isinstance(expected, float):
            assert math.isclose(value, expected, rel_tol=1e-9), (key, value, expected)
        else:
            assert value == expected, key


def test_summarize_from_a_path_is_the_same(golden):
    path, log, gaps = golden
    assert analysis.summarize(path)["itl_p99"] == analysis.summarize(log, gaps=gaps)["itl_p99"]


def test_summary_without_pandas_is_the_summary_of_the_frame_exactly(golden):
    """summarize(log) reads partition_gaps' arrays; given partition_run's frame it reads
    the frame: the two must agree to the last bit, every key."""
    path, log, gaps = golden
    from_arrays = json.dumps(analysis.summarize(log), default=float)
    assert from_arrays == json.dumps(analysis.summarize(log, gaps=gaps), default=float)


def test_whole_run_path_equals_scalar_partitioner_on_every_gap(golden):
    path, log, gaps = golden
    assert_paths_agree(log, gaps)


def test_gap_table_shape(golden):
    _, log, gaps = golden
    assert len(gaps) == len(log.emissions) - len(np.unique(log.emissions[:, 0]))
    assert (gaps["token"] >= 1).all()
    assert (gaps[LABELS].to_numpy() >= -1e-9).all()
    assert str(gaps["cause"].dtype) == "category"
