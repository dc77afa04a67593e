"""The overload sidebar's page module (analysis/chapters/overload.py) in the smoke profile,
without executing its notebook: every glue value its prose cites is there, and its counts
agree with its tables."""
import matplotlib
import pytest

import engine
from analysis.chapters import overload
from analysis.across_runs import signflip
from analysis.across_runs import verdicts as vocabulary
from tests.support.page_cells import cited, notebook_code

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def page():
    return overload.page("smoke")


@pytest.mark.slow
def test_every_value_the_prose_cites_is_computed(page):
    assert cited("overload") <= set(page.numbers)


@pytest.mark.slow
def test_the_counts_agree_with_the_tables(page):
    n = page.numbers
    prof = engine.get_profile("smoke")
    assert n["n_seeds"] == len(prof.overload_seeds) == len({s["seed"] for s in page.runs})
    assert n["n_main_seeds"] == len(prof.seeds) and n["duration"] == prof.duration
    assert list(page.table("percentiles").index) == page.order == list(engine.LADDER)
    assert len(page.table("tail_shares")) == len(page.order) == len(page.table("verdicts"))
    assert n["best_verdict"] == vocabulary.strongest(n["n_seeds"])
    assert n["p_floor"] == signflip.min_p(n["n_seeds"])
    assert {"overload_preempt", "overload_watermark"} <= {k for k in n if "art_" + k in n and k + "_verdict" in n}


@pytest.mark.slow
def test_the_figure_draws_and_an_unknown_one_is_named(page):
    assert page.figure().axes
    with pytest.raises(ValueError, match="unknown figure 'pie'; valid figures: ladder"):
        page.figure("pie")


def test_the_notebook_only_calls_its_page():
    code = notebook_code("overload")
    assert "from analysis.chapters import overload" in code and "import engine" not in code
    assert "across_runs" not in code
