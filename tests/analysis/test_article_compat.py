"""The article's own analysis script runs unmodified on our raw logs and agrees with ours.

The script is not part of this project: it is cut out of the article text in
../shared/seed at test time, into a temporary folder, and run there as-is.
"""
import json
import math
import subprocess
import sys

import numpy as np
import pytest

from tests.support.paths import SHARED

ARTICLE = SHARED / "seed" / "000_6ff97997f1f5eff0.txt"
LISTINGS = {  # file name -> (heading that opens it, text that follows it)
    "attribution.py": ("attribution.py — the exclusive gap partitioner\n", "test_attribution.py — unit tests"),
    "analyze.py": ("analyze.py — recomputes every number from the raw logs\n", "DEV Community"),
}


@pytest.fixture(scope="module")
def article_scripts(tmp_path_factory):
    if not ARTICLE.exists():
        pytest.skip(f"the article text is not at {ARTICLE}")
    text = ARTICLE.read_text()
    folder = tmp_path_factory.mktemp("article")
    for name, (start, end) in LISTINGS.items():
        i = text.index(start) + len(start)
        (folder / name).write_text(text[i:text.index(end, i)])
    return folder


def assert_same(ours, theirs, path=""):
    if isinstance(theirs, dict):
        assert set(map(str, ours)) == set(theirs), path
        for k, v in theirs.items():
            assert_same({str(a): b for a, b in ours.items()}[k], v, f"{path}.{k}")
    elif isinstance(theirs, list):
        assert len(ours) == len(theirs), path
        for i, (a, b) in enumerate(zip(ours, theirs)):
            assert_same(a, b, f"{path}[{i}]")
    elif isinstance(theirs, float) and path.endswith("reconcile_max_err_ms"):
        assert ours < 1e-9 and theirs < 1e-9, path       # float rounding noise on both sides
    elif isinstance(theirs, (int, float)) and not isinstance(theirs, bool):
        assert math.isclose(ours, theirs, rel_tol=1e-9, abs_tol=1e-12), (path, ours, theirs)
    else:
        assert ours == theirs, path


@pytest.mark.parametrize("which", ["smoke_log", "pressured_log"])
def test_article_script_runs_on_our_log_and_matches_our_summary(article_scripts, which, request):
    from analysis import summarize
    log = request.getfixturevalue(which)
    proc = subprocess.run([sys.executable, "analyze.py", str(log)], cwd=article_scripts,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    theirs = json.loads(proc.stdout)
    ours = json.loads(json.dumps(summarize(log), default=float))
    assert_same(ours, theirs)
    if which == "pressured_log":        # the comparison covered every mechanism, full collections too
        assert theirs["preemptions"] > 0 and theirs["eager_steps"] > 0 and theirs["gc_counts"]["2"] >= 1
        assert sum(theirs["evicted_context_ms"].values()) > 0
        with np.load(log) as z:             # and counted every collection the log holds, by generation
            gens = z["gcs"][:, 2].astype(int)
        assert {g: theirs["gc_counts"][str(g)] for g in range(3)} == {g: int((gens == g).sum()) for g in range(3)}
