"""In CI, a skip that is not on the known list fails the run (tests/ci_skips.py)."""
import os
import subprocess
import sys

import pytest

from tests.ci_skips import CI_MAY_SKIP, unexpected_skips
from tests.support.paths import REPO

KNOWN = next(iter(CI_MAY_SKIP)).partition("::")[0].removeprefix("tests/")   # a file allowed to skip
SKIPS = "import pytest\n\ndef test_passes():\n    pass\n\ndef test_skips():\n    pytest.skip('no data')\n"


def test_only_the_named_tests_may_skip():
    allowed = [f"{prefix}test_x" for prefix in CI_MAY_SKIP]
    assert unexpected_skips(allowed) == []
    assert unexpected_skips(allowed + ["tests/analysis/test_analysis_golden.py::test_gap_table_shape"]) == \
        ["tests/analysis/test_analysis_golden.py::test_gap_table_shape"]


def test_every_known_skip_names_a_test_file_that_exists():
    """A known skip is matched by node id, which is the file's path: a moved test file
    must move its entry too, or its skip would fail CI."""
    for prefix in CI_MAY_SKIP:
        path, sep, _ = prefix.partition("::")
        assert sep and (REPO / path).is_file(), f"{prefix!r} names no test file"


@pytest.mark.parametrize("ci, name, fails", [("true", "engine/test_other.py", True), ("", "engine/test_other.py", False),
                                             ("true", KNOWN, False)])
def test_an_unknown_skip_fails_the_session_in_ci(tmp_path, ci, name, fails):
    (tmp_path / "tests" / name).parent.mkdir(parents=True)
    (tmp_path / "tests" / name).write_text(SKIPS)
    env = {**os.environ, "CI": ci, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.ci_skips",
                           "--rootdir", str(tmp_path), f"tests/{name}"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert (proc.returncode != 0) == fails, proc.stdout
    said = f"ci: skipped in CI but not on the known list (fails the run): tests/{name}::test_skips"
    assert (said in proc.stdout) == fails, proc.stdout


def test_ci_run_fails_when_chromium_cannot_be_installed(tmp_path):
    """.ci/run with no chromium on PATH and an apt-get that fails: exit 1 and one error
    line, before any setup (nothing else on PATH, so nothing else could run)."""
    import shutil
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for tool in ("dirname", "id"):
        (bin_ / tool).symlink_to(shutil.which(tool))
    (bin_ / "apt-get").write_text("#!/bin/sh\nexit 100\n")
    (bin_ / "apt-get").chmod(0o755)
    proc = subprocess.run([shutil.which("bash"), str(REPO / ".ci" / "run")], env={"PATH": str(bin_)},
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and proc.stderr.strip().splitlines() == [
        "ci: error: could not install chromium (apt-get install -y chromium failed); the browser tests need it"], \
        proc.stderr
