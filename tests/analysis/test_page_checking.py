"""The checking page module (analysis/chapters/checking.py): its words and numbers both ways
on small synthetic inputs; in the smoke profile, without executing its notebook, every glue
value its prose cites is there and its counts agree with its tables. The clock reads' cost
is measured afresh on every call: only its form is checked, never its value."""
import math

import matplotlib
import numpy as np
import pandas as pd
import pytest

import engine
from analysis.chapters import checking
from analysis.across_runs.rungs import FIRST, LAST
from tests.support.page_cells import cited, notebook_code

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def page(run_cache):
    return checking.page("smoke")


# ---------------------------------------------------------------- words, both ways
def test_the_failing_causes_are_listed_or_none():
    assert checking.failing_words([]) == "none"
    assert checking.failing_words(["preempt", "prefill"]) == "preempt, prefill"


def test_the_article_scheme_phrase_both_ways():
    assert checking.article_phrase(True) == "holds under both schemes"
    assert checking.article_phrase(False).startswith("does not hold under the article's scheme")


def test_the_overhead_goal_both_ways():
    assert (checking.goal_words(True), checking.goal_words(False)) == ("met", "missed")


def test_an_interference_control_without_engines_says_none():
    none = checking.interference_numbers({"k": None, "seeds": 0, "duration": math.nan, "sentence": "s"})
    assert (none["ifc_k"], none["ifc_neighbours"], none["ifc_seeds"]) == ("none", 0, 0)
    three = checking.interference_numbers({"k": 3, "seeds": 2, "duration": 10.0, "sentence": "t"})
    assert (three["ifc_k"], three["ifc_neighbours"], three["ifc_duration"], three["ifc_sentence"]) == (3, 2, 10.0, "t")


# ---------------------------------------------------------------- numbers on synthetic tables
def test_the_scheme_shares_are_read_per_rung_and_scheme():
    labels = ["preempt", "residual", "os", "sched"]
    cols = pd.MultiIndex.from_tuples([(r, s) for r in (FIRST, LAST) for s in ("article", "refined")])
    cmp = pd.DataFrame(np.arange(16).reshape(4, 4) / 100, index=labels, columns=cols)
    n = checking.scheme_numbers(cmp)
    assert n["base_preempt_article"] == "0.0%" and n["base_preempt_refined"] == "1.0%"
    assert n["last_preempt_article"] == "2.0%" and n["last_residual_refined"] == "7.0%"
    assert n["base_os"] == "9.0%" and n["last_sched"] == "15.0%"
    assert len(n) == 12


def test_the_clean_tail_numbers_name_the_largest_label_but_the_forward_pass():
    counts = pd.Series({"os": 7, "clean": 3, "prefill": 2})
    time = pd.Series({"kernel": 0.6, "os": 0.25, "sched": 0.15})
    n = checking.clean_numbers(counts, time)
    assert (n["clean_total"], n["clean_still"], n["clean_to_os"]) == ("12", "3", "7")
    assert (n["clean_fwd"], n["clean_os_time"], n["clean_stall_label"], n["clean_stall_share"]) == ("60%", "25%", "os", "25%")
    none_left = checking.clean_numbers(pd.Series({"prefill": 2000}), time)
    assert (none_left["clean_total"], none_left["clean_still"], none_left["clean_to_os"]) == ("2,000", "0", "0")


def test_a_positive_control_without_a_label_says_so():
    pos = pd.DataFrame({"kind": ["gc", "hog"], "worst recovered": [0.97, np.nan],
                        "worst, article scheme": [0.96, np.nan], "bound": [0.95, 0.9],
                        "injected ms": [100.0, 50.04], "recovered ms": [97.0, 48.0]})
    shown = checking.positive_cells(pos)
    assert list(shown["worst recovered"]) == ["97.0%", "no label"]
    assert list(shown["injected ms"]) == ["100.0", "50.0"] and list(shown["bound"]) == ["95.0%", "90.0%"]


# ---------------------------------------------------------------- the page, smoke profile
@pytest.mark.slow
def test_every_value_the_prose_cites_is_computed(page):
    assert cited("checking") <= set(page.numbers)


@pytest.mark.slow
def test_the_counts_agree_with_the_tables(page):
    n = page.numbers
    assert n["last_rung"] == LAST
    controls = engine.control_specs("smoke")
    assert n["n_control_seeds"] == len({s.seed for s in controls}) and n["control_duration"] == controls[0].duration
    assert n["n_end_seeds"] == len({s.seed for s in engine.profile_specs("smoke", rungs=[FIRST])})
    assert n["pile_runs"] == f"{n['n_end_seeds']:,}"
    assert len(page.table("slow_steps")) <= min(checking.SLOW_SHOWN, int(n["pile_slow_steps"].replace(",", "")))
    assert n["clean_total"] == f"{int(page.table('clean_tail')['tail gaps'].sum()):,}"
    assert set(checking.SCHEME_COLUMNS.values()) <= set(page.table("negative").columns)
    assert (n["ifc_k"] == "none") == (page.table("interference") is None)
    assert n["overhead_goal"] in ("met", "missed") and n["cost_cpu_us"].replace(".", "").isdigit()


@pytest.mark.slow
def test_both_figures_draw(page):
    for name in ("hog", "schemes"):
        assert page.figure(name).axes, name
    with pytest.raises(ValueError, match="unknown figure 'pie'; valid figures: hog, schemes"):
        page.figure("pie")


def test_the_notebook_only_calls_its_page():
    code = notebook_code("checking")
    assert "from analysis.chapters import checking" in code and "import engine" not in code
    assert "analysis.instrument" not in code and "across_runs" not in code and "engine_link" not in code
