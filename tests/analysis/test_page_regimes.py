"""The load sweep's page module (analysis/chapters/regimes.py) in the smoke profile,
without executing its notebook: every glue value its prose cites is there, its counts
agree with its frame and tables, and its drain clause both ways."""
import math

import matplotlib
import pytest

from analysis.chapters import regimes
from tests.support.page_cells import cited, notebook_code

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def page():
    return regimes.page("smoke")


@pytest.mark.slow
def test_every_value_the_prose_cites_is_computed(page):
    assert cited("regimes") <= set(page.numbers)


@pytest.mark.slow
def test_the_counts_agree_with_the_frame_and_tables(page):
    n, frame = page.numbers, page.frame
    loads = sorted(set(frame["load"]))
    assert n["n_runs"] == len(frame) and n["n_seeds"] == frame["seed"].nunique()
    assert n["n_levels"] == len(loads) == len(page.table("watermark")) == len(page.table("forwards"))
    assert n["levels"] == ", ".join(f"{x:g}" for x in loads)
    assert set(page.drain) == set(frame["forward"])
    for forward, limit in page.drain.items():
        assert n[f"drain_{forward}"] == regimes.drain_phrase(limit)


def test_the_drain_clause_both_ways():
    assert regimes.drain_phrase(math.nan) == "every load drained"
    assert regimes.drain_phrase(1.5) == "from 1.50x the operating point on, the queue did not drain"


@pytest.mark.slow
def test_every_figure_draws_and_an_unknown_one_is_named(page):
    for name in ("anatomy", "percentiles", "signature"):
        assert page.figure(name).axes, name
    with pytest.raises(ValueError, match="unknown figure 'pie'; valid figures: anatomy"):
        page.figure("pie")


def test_the_notebook_only_calls_its_page():
    code = notebook_code("regimes")
    assert "from analysis.chapters import regimes" in code and "import engine" not in code
    assert "across_runs" not in code and "engine_link" not in code
