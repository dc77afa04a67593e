"""The decomposed page module (analysis/chapters/decomposed.py): in the smoke profile,
without executing its notebook, every glue value its prose cites is there and its counts
agree with its tables and its runs; the median gap count with and without runs."""
import math

import matplotlib
import pytest

import engine
from analysis.chapters import decomposed
from analysis.core.schemes import CAUSES
from analysis.across_runs.rungs import FIRST
from tests.support.page_cells import cited, notebook_code

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def page(run_cache):
    return decomposed.page("smoke")


def test_gaps_per_run_is_the_median_and_nan_without_runs():
    assert decomposed.gaps_per_run([{"gaps": 1}, {"gaps": 10}, {"gaps": 3}]) == 3.0
    assert math.isnan(decomposed.gaps_per_run([]))


@pytest.mark.slow
def test_every_value_the_prose_cites_is_computed(page):
    assert cited("decomposed") <= set(page.numbers)


@pytest.mark.slow
def test_the_counts_agree_with_the_tables(page):
    n = page.numbers
    specs = engine.profile_specs("smoke", rungs=[FIRST])
    assert n["rung"] == FIRST and n["n_runs"] == len(specs) == len(n["seeds"].split(", "))
    assert n["rate"] == specs[0].rate and n["duration"] == specs[0].duration
    assert len(page.table("tail_share")) == len(page.table("count_vs_time")) == n["n_runs"]
    assert n["n_disagree"] == page.table("count_vs_time")["disagree"].sum()
    assert n["row_sum_err"] < 1e-9
    assert list(page.table("bands").columns) == ["gaps", "band"] and set(page.table("bands").index) <= set(CAUSES)
    assert f"run {n['mid_seed']} (p99 = {n['mid_p99']:.1f} ms)" in page.table("text_histogram")


@pytest.mark.slow
def test_the_histogram_draws(page):
    assert page.figure("histogram").axes
    with pytest.raises(ValueError, match="unknown figure 'pie'; valid figures: histogram"):
        page.figure("pie")


def test_the_notebook_only_calls_its_page():
    code = notebook_code("decomposed")
    assert "from analysis.chapters import decomposed" in code and "import engine" not in code
    assert "across_runs" not in code and "chapter_runs" not in code and "engine_link" not in code
