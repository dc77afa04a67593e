"""The summaries cache is keyed by the code that computes a summary (analysis/runs/code_key.py),
so a sentence fix re-executes the chapters but recomputes no summary."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import analysis
from analysis.render import pages
from analysis.runs import code_key, summaries, takeaways
from tests.support.paths import REPO


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
        for sentences in (takeaways, pages):                 # what pages say, not what a run measured
            f = copy / Path(sentences.__file__).relative_to(real)
            f.write_text(f.read_text().replace("the", "thee", 1))
            assert key() == before, f"a change to {sentences.__name__} re-keyed the summaries"
        for core in ("core/gaps.py", "core/schemes.py", "core/summary.py"):
            (copy / core).write_text((copy / core).read_text() + "\n# the method changed\n")
            assert key() != before, f"a change to {core} kept the summaries' key"
            before = key()
    finally:
        code_key.code_key.cache_clear()


def test_the_summary_key_covers_every_analysis_module_a_summary_loads():
    """The import scan misses nothing a summary runs: in a fresh process, every analysis
    module loaded by importing the summaries cache and summarizing a log is in its key."""
    code = ("import sys, json\n"
            "from analysis.runs import summaries\n"
            "from analysis.core.synthetic import runlog_from_steps\n"
            "steps = [{'t0': 0.0, 't1': 0.01, 'n_decode': 1, 'graph': 1, 'seg': [('decode', 0.0, 0.01)]},\n"
            "         {'t0': 0.01, 't1': 0.02, 'n_decode': 1, 'graph': 1, 'seg': [('decode', 0.01, 0.02)]}]\n"
            "log = runlog_from_steps(steps, emissions=[(0, 0.01), (0, 0.02), (0, 0.021)])\n"
            "from analysis.core.summary import summarize\n"
            "summarize(log)\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'analysis')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(REPO)}).stdout
    loaded = set(json.loads(out))
    keyed = set(code_key.modules_of(summaries.__name__))
    packages = {"analysis", "analysis.runs"}               # entered on the way, their code runs no summary
    assert loaded - packages <= keyed, sorted(loaded - packages - keyed)
    assert "analysis.core.summary" in keyed and not any(m.startswith("analysis.render") for m in keyed)
