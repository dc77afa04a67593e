"""The partition page module (analysis/chapters/partition.py): its cases with known answers
(no runs needed) and its reconciliation's numbers on a small frame; in the smoke profile,
without executing the notebook, every glue value its prose cites is there and its counts
agree with its table, with the overload runs joining only the profile's own seeds."""
import pandas as pd
import pytest

import engine
from analysis.chapters import partition
from analysis.instrument import cases as examples
from tests.support.page_cells import cited, notebook_code


@pytest.fixture(scope="module")
def page(run_cache):
    return partition.page("smoke")


def test_the_cases_reconcile_and_the_numbers_are_the_tables():
    view = partition.cases_view()
    n, cases, side = view.numbers, view.table("cases"), view.table("reviewer")
    assert n["cases_max_err"] < 1e-9
    assert list(view.table("stories").index) == list(cases.index) == [c.name for c in examples.ARTICLE_CASES]
    ev, gcx = examples.EVICTED.name, examples.GC_IN_EAGER.name
    assert n["ex1_gap"] == pytest.approx(side.loc[(ev, "first version"), "gap ms"])
    assert n["ex1_fixed_preempt"] == pytest.approx(side.loc[(ev, "corrected"), "preempt"])
    assert n["ex2_fixed_gc"] == pytest.approx(side.loc[(gcx, "corrected"), "gc"])
    # the first version overcharges the evicted gap; the corrected one splits it exactly
    assert n["ex1_v1_causes"] > n["ex1_gap"]
    assert n["ex1_fixed_preempt"] + n["ex1_fixed_kernel"] <= n["ex1_gap"] + 1e-9


def test_the_reconciliation_numbers_agree_with_its_table():
    frame = pd.DataFrame({"group": ["ladder", "ladder", "overload"], "rung": ["a", "b", "a"],
                          "gaps": [10, 20, 5], "reconcile_max_err_ms": [1e-9, 3e-9, 2e-9],
                          "skipped_steps_without_eviction": [0, 1, 0]})
    n = partition.reconcile_numbers(frame)
    assert n == {"rec_runs": 3, "rec_gaps": 35, "rec_max_err": 3e-9, "rec_skipped": 1}
    table = partition.reconcile_table(frame)
    assert list(table.index) == [("ladder", "a"), ("ladder", "b"), ("overload", "a")]
    assert table["gaps"].sum() == n["rec_gaps"] and table["reconcile_max_err_ms"].max() == n["rec_max_err"]


@pytest.mark.slow
def test_every_value_the_prose_cites_is_computed(page):
    assert cited("partition") <= set(page.numbers)


@pytest.mark.slow
def test_the_reconciliation_covers_the_ladder_and_the_overload_runs(page):
    n = page.numbers
    ladder = engine.profile_specs("smoke")
    overload = engine.profile_specs("smoke", overload=True)
    assert n["rec_runs"] == len(ladder) + len(overload)
    assert n["rec_gaps"] == page.table("reconcile")["gaps"].sum() > 0
    assert f"{len(overload)} runs of the overload sidebar" in n["rec_scope"]


@pytest.mark.slow
def test_given_seeds_the_overload_runs_are_left_out_and_said_so(page):
    mine = partition.page("smoke", seeds=[1])
    assert mine.numbers["rec_runs"] == len(engine.profile_specs("smoke", seeds=[1]))
    assert "seeds given (1)" in mine.numbers["rec_scope"] and "left out" in mine.numbers["rec_scope"]


def test_the_notebook_only_calls_its_page():
    code = notebook_code("partition")
    assert "from analysis.chapters import partition" in code and "import engine" not in code
    assert "across_runs" not in code and "analysis.instrument" not in code and "Partitioner" not in code
