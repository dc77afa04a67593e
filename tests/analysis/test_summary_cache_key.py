"""The summaries cache is keyed by the code that computes a summary (analysis/across_runs/code_key.py),
so a sentence fix re-executes the chapters but recomputes no summary."""
import shutil
import sys
import threading
from pathlib import Path

import pytest

import analysis
from analysis.render import pages
from analysis.across_runs import cause_fixes, code_key, summaries
from tests.support.paths import GOLDEN_LOGS


def test_the_summary_cache_key_follows_the_code_that_computes_a_summary(tmp_path, monkeypatch):
    """Summaries are keyed by the analysis modules their computation imports: fixing a word
    of a sentence-only module keeps every cached summary, a change to the core recomputes them."""
    real = Path(analysis.__file__).parent
    copy = shutil.copytree(real, tmp_path / "analysis", ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(code_key, "ANALYSIS_DIR", copy)

    def key():
        code_key.code_key.cache_clear()
        return code_key.code_key(summaries.__name__)

    try:
        before = key()
        for sentences in (cause_fixes, pages):                 # what pages say, not what a run measured
            f = copy / Path(sentences.__file__).relative_to(real)
            f.write_text(f.read_text().replace("the", "thee", 1))
            assert key() == before, f"a change to {sentences.__name__} re-keyed the summaries"
        for core in ("core/gaps.py", "core/schemes.py", "core/run_summary.py"):
            (copy / core).write_text((copy / core).read_text() + "\n# the method changed\n")
            assert key() != before, f"a change to {core} kept the summaries' key"
            before = key()
    finally:
        code_key.code_key.cache_clear()


def _files_run_by(call) -> set:
    """The files of every Python function called during ``call()``, helper threads included."""
    ran = set()

    def note(frame, event, arg):
        if event == "call":
            ran.add(frame.f_code.co_filename)

    sys.setprofile(note)
    threading.setprofile(note)
    try:
        call()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    return {Path(f).resolve() for f in ran}


@pytest.mark.parametrize("scheme", ["article", "refined"])
def test_every_analysis_module_a_summary_runs_is_in_its_key(scheme, request):
    """The import scan misses nothing a summary runs: every analysis file whose code runs
    while a raw log is read, checked and summarized is in the summaries' key. The article
    scheme on a golden log (the article engine's), the refined one on a run of ours."""
    from analysis.core.run_summary import summarize
    path = GOLDEN_LOGS[0] if scheme == "article" else request.getfixturevalue("smoke_log")
    real = Path(analysis.__file__).resolve().parent
    ran = {f for f in _files_run_by(lambda: summarize(path, scheme=scheme)) if f.is_relative_to(real)}
    keyed = {f.resolve() for f in code_key.modules_of(summaries.__name__).values()}
    assert ran and ran <= keyed, sorted(str(f.relative_to(real)) for f in ran - keyed)
