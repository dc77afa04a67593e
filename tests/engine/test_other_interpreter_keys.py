"""Another interpreter's runs and calibration records can be named (the causes page reads
the GC rungs under every interpreter the cache holds): naming this interpreter changes no
key, naming another gives its own."""
import platform

from engine import LADDER
from engine.runs import cache
from engine.runs.calibrate import calibration_path


def test_naming_this_interpreter_changes_no_key_and_another_gets_its_own():
    cfg = LADDER["baseline"]
    here = cache.library_versions()
    assert cache.run_path(cfg, 1, 20.0, 7.5, libs=here) == cache.run_path(cfg, 1, 20.0, 7.5)
    other = cache.run_path(cfg, 1, 20.0, 7.5, libs={**here, "python": "0.0.1"})
    assert other != cache.run_path(cfg, 1, 20.0, 7.5) and other.name.split("__")[:4] == \
        cache.run_path(cfg, 1, 20.0, 7.5).name.split("__")[:4]        # same rung, seed, duration, rate
    assert cache.machine_key(platform.python_version()) == cache.machine_key() != cache.machine_key("0.0.1")
    assert calibration_path("checked", "article", 20.0, 1, python=platform.python_version()) == \
        calibration_path("checked", "article", 20.0, 1)
    assert calibration_path("checked", "article", 20.0, 1, python="0.0.1") != calibration_path("checked", "article", 20.0, 1)
