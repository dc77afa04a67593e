"""The preemption page module (analysis/chapters/preemption.py) in the smoke profile,
without executing its notebook: every glue value its prose cites is there and its counts
agree with its frames and tables (its sentences both ways: test_preemption_chapter.py)."""
import matplotlib
import pytest

from analysis.chapters import preemption
from tests.support.page_cells import cited, notebook_code

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def page():
    return preemption.page("smoke")


@pytest.mark.slow
def test_every_value_the_prose_cites_is_computed(page):
    assert cited("preemption") <= set(page.numbers) | set(page.text)
    assert not set(page.numbers) & set(page.text)          # one loop glues both: no name twice


@pytest.mark.slow
def test_the_counts_agree_with_the_frames_and_tables(page):
    n = page.numbers
    assert n["n_op_runs"] == len(page.op) and n["n_sweep_runs"] == len(page.sweep)
    assert n["op_seeds"] == page.op["seed"].nunique() and n["sweep_seeds"] == page.sweep["seed"].nunique()
    assert n["pool_blocks"] == page.pool and n["pool_tokens"] == n["pool_blocks"] * n["block_size"]
    modes = page.op["mode"].nunique()
    assert len(page.op_table()) == page.op["rung"].nunique() * modes
    assert (modes == 2) == page.available


@pytest.mark.slow
def test_every_figure_draws_and_an_unknown_one_is_named(page):
    for name in ("percentiles", "tails", "wait_paid", "loads", "demand"):
        assert page.figure(name).axes, name
    with pytest.raises(ValueError, match="unknown figure 'pie'; valid figures: percentiles"):
        page.figure("pie")


def test_the_notebook_only_calls_its_page():
    code = notebook_code("preemption")
    assert "from analysis.chapters import preemption" in code and "import engine" not in code
    assert "across_runs" not in code and "render.preemption" not in code
