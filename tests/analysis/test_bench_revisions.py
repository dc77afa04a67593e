"""benchmarks/bench_revisions.py, as a tool: it compares two trees' summaries and says when
they differ, and refuses a missing log by name. Its timings are the benchmark's business."""
import importlib.util
import subprocess

import pytest

from tests.support.paths import GOLDEN_LOGS, REPO

spec = importlib.util.spec_from_file_location("bench_revisions", REPO / "benchmarks" / "bench_revisions.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def _is_git_checkout() -> bool:
    return subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _is_git_checkout(), reason="needs the repository's git history")
def test_the_same_tree_twice_reads_identical_and_leaves_no_worktree(capsys):
    before = subprocess.run(["git", "-C", str(REPO), "worktree", "list"], capture_output=True, text=True).stdout
    assert bench.main(["--before", "HEAD", "--after", "HEAD", "--rounds", "1", str(GOLDEN_LOGS[0])]) == 0
    out = capsys.readouterr().out
    assert "identical" in out and "DIFFER" not in out and GOLDEN_LOGS[0].name in out
    after = subprocess.run(["git", "-C", str(REPO), "worktree", "list"], capture_output=True, text=True).stdout
    assert after == before


def test_differing_summaries_fail_the_run(monkeypatch, capsys):
    seen = iter(range(100))
    monkeypatch.setattr(bench, "worktree", lambda stack, rev: REPO)
    monkeypatch.setattr(bench, "probe", lambda tree, log: {"s": 0.01, "summary": str(next(seen))})
    assert bench.main(["--rounds", "1", str(GOLDEN_LOGS[0])]) == 1
    assert "DIFFER" in capsys.readouterr().out


def test_a_missing_log_is_refused_by_name(capsys, tmp_path):
    with pytest.raises(SystemExit) as e:
        bench.main([str(tmp_path / "nope.npz")])
    assert e.value.code == 2 and "no such raw log" in capsys.readouterr().err
