"""Inputs the engine must refuse before it measures anything: one line on stderr naming
the input and what is allowed, exit status 2, and no raw log written."""
import json

import pytest

from tests.support.cli import engine_cli
from engine.serve.config import Config, Injection

RUN = ["--seed", "1", "--duration", "2", "--rate", "5"]


def _config(**fields) -> list[str]:
    return ["run", "--config-json", json.dumps(fields), *RUN]


@pytest.mark.parametrize("args, message", [
    # a seed that is a valid integer but cannot name a traffic pattern or a file
    (["run", "baseline", "--seed", str(10**300), "--duration", "2", "--rate", "5"],
     "--seed: seed must be an integer in [0, 4294967295], got '1000000000"),
    # a run that would hold no request at all (its log could not be summarized)
    (["run", "baseline", "--seed", "1", "--duration", "1e-9", "--rate", "5"],
     "duration 1e-09 s at 5 req/s gives seed 1 no request at all"),
    (["matrix", "--profile", "smoke", "--rungs", "baseline", "--seeds", "1", "--duration", "0.01", "--rate", "5"],
     "duration 0.01 s at 5 req/s gives seed 1 no request at all"),
    (["matrix", "--profile", "smoke", "--rungs", "baseline", "--seeds", "1", "1", "--duration", "1", "--rate", "5"],
     "seeds must be distinct, got [1, 1]"),
    # a config JSON is checked, never coerced
    (_config(capture_sizes=[1.5]), "'capture_sizes' must be a list of integers, got [1.5]"),
    (_config(capture_sizes=[1, 1e9]), "'capture_sizes' must be a list of integers"),
    (_config(capture_sizes=[1, 10**9]), "capture_sizes must be whole batch sizes in [1, 4096]"),
    (_config(kv_blocks=10**12), "kv_blocks must be in [1, 10000000], got 1000000000000"),
    (_config(kv_blocks=1e12), "Config field 'kv_blocks' must be int"),
    (_config(swap_in_headroom=-100), "swap_in_headroom must be a block count in [0, kv_blocks = 1000], got -100"),
    (_config(injections=[5]), "'injections' must be a list of objects"),
    (["run", "--config-json", '{"injections": [{"kind": "pause", "step": 3, "amount": Infinity}]}', *RUN],
     "amount of a 'pause' injection must be a number in [0, 60000]"),
    (_config(injections=[{"kind": "hog", "step": 3, "amount": 1e300}]),
     "amount of a 'hog' injection must be a number in [0, 60000]"),
    (_config(injections=[{"kind": "gc", "step": "x", "amount": 1}]), "injection step must be a step index"),
])
def test_bad_input_is_one_line_and_exit_2_before_any_measuring(args, message, tmp_path):
    proc = engine_cli(*args, cache_dir=tmp_path, check=False, timeout=60)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and message in lines[0], proc.stderr
    assert not list(tmp_path.rglob("*.npz"))


def test_valid_configs_are_unchanged_by_the_checks():
    """Integral sizes given as floats, tuples of injections: as before."""
    cfg = Config(capture_sizes=(1, 2.0, 4), injections=(("pause", 7, 3.5),))
    assert cfg.capture_sizes == (1, 2, 4) and cfg.injections == (Injection("pause", 7, 3.5),)
    assert Config.from_dict(Config().to_dict()) == Config()


@pytest.mark.parametrize("kind, amount", [("pause", float("inf")), ("hog", 1e300), ("gc", float("nan")),
                                          ("prefill", 10**9), ("preempt", -1.0), ("pause", "30")])
def test_injection_amounts_are_finite_and_bounded(kind, amount):
    with pytest.raises(ValueError, match=f"amount of a '{kind}' injection must be a number in"):
        Injection(kind, 3, amount)


def test_a_config_name_too_long_for_a_file_name_is_refused(tmp_path):
    proc = engine_cli(*_config(name="x" * 300), cache_dir=tmp_path, check=False, timeout=60)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and "is too long: its file-name form may have at most 120" \
        in lines[0], proc.stderr
    assert "unusable" not in proc.stderr and not list(tmp_path.rglob("*.npz"))
