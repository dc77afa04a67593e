"""Shared fixtures: a tiny real run, made once per session in its own cache folder.

Helpers the test modules share are in the ``tests.support`` package; a test module
never imports another test module. ``tests`` is a package, so pytest puts the repository
root on the path (never tests/, whose engine/ and analysis/ would shadow the packages).

Every test, the book's smoke build and the engine fixtures share one session-scoped
temporary cache (ITL_CACHE_DIR is set for the whole session), so the tests never read
or write the user's cache and the control runs the book needs are measured once.
"""
import os
import signal
from pathlib import Path

import pytest

from tests.ci_skips import pytest_runtest_logreport, pytest_sessionfinish, pytest_terminal_summary  # noqa: F401  (hooks)
from tests.support.book import smoke_build
from tests.support.cli import PRESSURED, engine_cli


@pytest.fixture(scope="session", autouse=True)
def children_take_ctrl_c():
    """The Ctrl-C tests send SIGINT to an engine they start. A shell that starts the test run
    in the background without job control (`pytest &` in a script) sets SIGINT to ignored, a
    child inherits that across exec, and Python then keeps it ignored: those engines would run
    to the end instead of stopping. A handler, unlike an ignore, is reset to the default in
    every child, so the engines get Python's own."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    yield


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


@pytest.fixture(scope="session")
def smoke_log(run_cache) -> Path:
    """A 4 s baseline run at a rate that makes preemption and eager steps likely."""
    proc = engine_cli("run", "baseline", "--seed", "1", "--duration", "4", "--rate", "14",
                      cache_dir=run_cache)
    return Path(proc.stdout.strip().splitlines()[-1])


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


@pytest.hookimpl(tryfirst=True)      # before -m deselects by marker
def pytest_collection_modifyitems(items):
    """A test that reads the smoke build is slow (a cold build takes minutes): marked here,
    once, so ``-m "not slow"`` leaves out every one of them."""
    for item in items:
        if "smoke_book" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def smoke_book():
    """The book built once per session in the smoke profile (tests/book; marked slow)."""
    b = smoke_build()
    assert b.returncode == 0, f"smoke build failed ({b.returncode}):\n{b.output[-6000:]}"
    return b
