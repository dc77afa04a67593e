"""The ladder's page module (analysis/chapters/ladder.py) in the smoke profile, without
executing its notebook: every glue value its prose cites is there, and its counts agree
with its tables."""
import matplotlib
import pytest

from analysis.chapters import ladder
from analysis.across_runs import paired, signflip
from analysis.across_runs.rungs import LAST
from tests.support.page_cells import cited, notebook_code

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def page():
    return ladder.page("smoke")


@pytest.mark.slow
def test_every_value_the_prose_cites_is_computed(page):
    assert cited("ladder") <= set(page.numbers)


@pytest.mark.slow
def test_the_counts_agree_with_the_tables(page):
    n = page.numbers
    assert n["n_rungs"] == len(page.order) == len(page.table("percentiles")) == len(page.table("tail_shares"))
    assert list(page.table("percentiles").index) == page.order
    assert n["n_seeds"] == len({s["seed"] for s in page.runs}) == page.table("run_order").shape[1]
    assert sorted(page.table("run_order").index) == sorted(page.order)
    assert n["p_floor"] == signflip.min_p(n["n_seeds"]) and n["min_seeds"] == signflip.min_seeds()
    steps = page.table("verdicts")
    assert len(steps) == len(page.order)          # each step down the ladder, and end to end
    assert n["left_clean_tail_gaps"] <= n["left_tail_gaps"]
    assert page.last["rung"] == LAST and f"run {page.last['seed']}" in page.last_histogram_text()
    assert set(paired.METRICS) <= {k[len("e2e_"):] for k in n if k.startswith("e2e_")}


@pytest.mark.slow
def test_every_figure_draws_and_an_unknown_one_is_named(page):
    for name in ("percentiles", "seed_intervals", "tail_composition", "last_histogram"):
        assert page.figure(name).axes, name
    with pytest.raises(ValueError, match="unknown figure 'pie'; valid figures: percentiles"):
        page.figure("pie")
    with pytest.raises(ValueError, match="unknown table 'pie'; valid tables: percentiles"):
        page.table("pie")


def test_the_notebook_only_calls_its_page():
    code = notebook_code("ladder")
    assert "from analysis.chapters import ladder" in code and "import engine" not in code
    assert "ensure_runs" not in code and "across_runs" not in code
