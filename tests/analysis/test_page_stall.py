"""The stall page module (analysis/chapters/stall.py): in the smoke profile, without
executing its notebook, every glue value its prose cites is there and agrees with its
tables and its run; its numbers, the hypothesis' verdict both ways, on fake summaries."""
import math

import matplotlib
import numpy as np
import pandas as pd
import pytest

from analysis.chapters import stall
from analysis.core.schemes import ARTICLE, CAUSES, CLEAN, get_scheme
from analysis.across_runs.rungs import FIRST
from tests.support.page_cells import cited, notebook_code
from tests.support.summaries import fake

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def page(run_cache):
    return stall.page("smoke")


@pytest.mark.slow
def test_every_value_the_prose_cites_is_computed(page):
    assert cited("stall") <= set(page.numbers)


@pytest.mark.slow
def test_the_example_is_a_tail_gap_of_the_first_rung_whose_parts_make_the_gap(page):
    n = page.numbers
    assert n["stall_rung"] == FIRST and n["stall_quantile"] == 99.0
    assert n["stall_gap_ms"] >= n["run_p99"] >= n["run_p50"] > 0
    assert math.isclose(n["stall_parts_sum_ms"], n["stall_gap_ms"], abs_tol=1e-6)
    assert n["stall_cause"] in CAUSES and n["n_gaps"] > 0
    parts = page.table("partition").data.set_index("label")
    assert parts.loc["sum of parts", "ms"] == pytest.approx(n["stall_parts_sum_ms"])
    assert parts.loc["sum of parts", "share of gap"] == pytest.approx(1.0, abs=1e-6)
    assert len(page.table("kinds").data) == len(CAUSES)


@pytest.mark.slow
def test_the_figure_draws_and_an_unknown_one_is_named(page):
    assert len(page.figure("anatomy").axes) == 2
    with pytest.raises(ValueError, match="unknown figure 'pie'; valid figures: anatomy"):
        page.figure("pie")
    with pytest.raises(ValueError, match="unknown table 'pie'; valid tables: partition, kinds"):
        page.table("pie")


@pytest.mark.parametrize("tail, verdict", [(0.2, "holds on this run"), (0.8, "does not hold")])
def test_the_summary_numbers_carry_the_verdict_both_ways(tail, verdict):
    s = fake("baseline", 4, fwd_share_clean_median=0.97, fwd_share_tail_median=tail, gaps=1234)
    n = stall.summary_numbers(s)
    assert n["hypothesis_verdict"].startswith(verdict)
    assert (n["stall_rung"], n["stall_seed"], n["n_gaps"], n["fwd_tail"]) == ("baseline", 4, 1234, tail)
    assert n["cause_order"] == ", ".join(ARTICLE.causes) and n["primary_floor_ms"] == ARTICLE.floor_ms


def test_the_stall_numbers_are_the_facts_the_prose_cites_and_the_quantile():
    facts = {key: i for i, key in enumerate(stall.FACT_KEYS)} | {"token": 9, "gc_ms": 1.0}
    n = stall.stall_numbers(facts, 99.5)
    assert n == {**{f"stall_{k}": i for i, k in enumerate(stall.FACT_KEYS)}, "stall_quantile": 99.5}


def _gaps(causes: dict, evicted=()) -> pd.DataFrame:
    """200 gaps of 1..200 ms, clean unless ``causes`` names one; ``evicted`` had an eviction."""
    ms = np.arange(1.0, 201.0)
    return pd.DataFrame({"gap_ms": ms, "cause": [causes.get(m, CLEAN) for m in ms],
                         "n_evictions": [int(m in evicted) for m in ms]})


def test_the_stall_is_the_smallest_caused_tail_gap_without_an_eviction():
    assert stall.pick_stall(_gaps({199.0: "gc", 200.0: "gc"}))["gap_ms"] == 199.0
    assert stall.pick_stall(_gaps({199.0: "preempt", 200.0: "gc"}, evicted={199.0}))["gap_ms"] == 200.0
    assert stall.pick_stall(_gaps({150.0: "gc"}))["gap_ms"] == 200.0     # none in the tail has a cause: the largest
    assert stall.pick_stall(_gaps({150.0: "gc"}), quantile=50.0)["gap_ms"] == 150.0
    with pytest.raises(ValueError, match="no gaps to pick a stall from"):
        stall.pick_stall(_gaps({}).iloc[:0])


def test_the_partition_table_lists_every_part_and_sums_to_the_gap():
    labels = get_scheme("article").labels
    parts = dict(zip(labels, np.linspace(1.0, 2.0, len(labels))))
    gap = pd.Series({"gap_ms": sum(parts.values()), "cause": "gc", "request": 3, "token": 7, "step0": 10,
                     "step1": 12, **parts})
    facts = stall.stall_facts(gap)
    assert facts["steps_spanned"] == 2 and facts["parts_sum_ms"] == pytest.approx(facts["gap_ms"])
    table = stall.partition_frame(gap)
    assert len(table) == len(labels) + 1 and table["label"].iloc[-1] == "sum of parts"
    assert table["ms"].iloc[-1] == pytest.approx(gap["gap_ms"]) and table["share of gap"].iloc[-1] == pytest.approx(1.0)


def test_the_notebook_only_calls_its_page():
    code = notebook_code("stall")
    assert "from analysis.chapters import stall" in code and "import engine" not in code
    assert "render" not in code.replace("analysis.render.glue", "") and "across_runs" not in code and "engine_link" not in code
