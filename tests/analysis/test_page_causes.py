"""The causes page module (analysis/chapters/causes.py) in the smoke profile, without
executing its notebook: every glue value its prose cites is there, its counts agree with
its tables, and its GC rungs per interpreter are this interpreter's very ladder runs."""
import platform

import pytest

import engine
from analysis.chapters import causes
from analysis.across_runs import interpreters, per_cause
from tests.support.page_cells import cited, notebook_code


@pytest.fixture(scope="module")
def page():
    return causes.page("smoke")


@pytest.mark.slow
def test_every_value_the_prose_cites_is_computed(page):
    assert cited("causes") <= set(page.numbers)


@pytest.mark.slow
def test_the_counts_agree_with_the_tables(page):
    n = page.numbers
    assert n["n_causes"] == len(page.table("causes")) == len(per_cause.CAUSE_FIX)
    gone = [] if n["gone"] == "none" else n["gone"].split(", ")
    assert n["n_gone"] == len(gone) and set(gone) <= set(page.table("causes").index)
    assert len(page.table("effects"))


@pytest.mark.slow
def test_the_gc_rungs_under_this_interpreter_are_its_ladder_runs(page):
    """With only this interpreter's runs in the cache, the loader finds exactly the
    profile's GC-rung runs, and the page says that no second interpreter ran."""
    found = page.interpreters
    assert list(found.runs) == [platform.python_version()] and not found.skipped
    specs = engine.profile_specs("smoke", rungs=list(interpreters.GC_RUNGS))
    assert sorted(s["path"] for s in found.runs[platform.python_version()]) == sorted(str(s.path) for s in specs)
    assert len(page.table("interpreters")) == len(interpreters.GC_RUNGS)
    assert page.numbers["interpreter_sentence"].startswith("The GC rungs have not been run under two interpreters")
    assert f"under Python {platform.python_version()} (" in page.numbers["interpreter_runs"]


def test_the_notebook_only_calls_its_page():
    code = notebook_code("causes")
    assert "from analysis.chapters import causes" in code and "import engine" not in code
    assert "across_runs" not in code and "chapter_runs" not in code
