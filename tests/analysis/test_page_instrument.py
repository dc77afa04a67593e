"""The instrument page module (analysis/chapters/instrument.py): in the smoke profile,
without executing its notebook, every glue value its prose cites is there and agrees with
its tables (the microbenchmark's are measured afresh on each call, so they are checked
against the page's own table, never against numbers); the benchmark's rounds by profile."""
import pytest

import engine
from analysis.chapters import instrument
from analysis.across_runs import article
from analysis.across_runs.rungs import FIRST
from tests.support.page_cells import cited, notebook_code


@pytest.fixture(scope="module")
def page(run_cache):
    return instrument.page("smoke")


@pytest.mark.slow
def test_every_value_the_prose_cites_is_computed(page):
    assert cited("instrument") <= set(page.numbers)


@pytest.mark.slow
def test_the_run_numbers_agree_with_the_tables(page):
    n = page.numbers
    spec = engine.profile_specs("smoke", rungs=[FIRST])[0]
    assert n["profile_name"] == "smoke" and n["seed"] == n["rf_seed"] == spec.seed
    assert n["rf_duration"] == spec.duration and n["run_rate"] == spec.rate
    segs = page.table("step_segments")
    assert segs["lasts ms"].sum() == pytest.approx(n["step_ms"], abs=1e-2)   # the table is rounded to 3 places
    gc = page.table("gc")
    assert n["gc_n"] == gc["pauses"].sum() and n["gc_gen2_max"] == pytest.approx(gc.loc[2, "largest_ms"], abs=5e-3)
    assert list(page.table("knobs").index) and len(page.table("ladder_knobs")) > 0
    assert n["cal_n_checks"] == len(page.table("calibration")) and n["article_rate"] == article.RATE
    if "was not found" in n["rf_sentence"]:          # no article text beside the repository: nothing to set beside
        assert page.table("run_fidelity").empty and page.table("run_load").empty
    else:
        assert len(page.table("run_fidelity")) and list(page.table("run_load").columns)[0] == "ours"
        assert f"at seed {spec.seed}" in n["rf_sentence"]


@pytest.mark.slow
def test_the_microbenchmark_numbers_are_its_table(page):
    mb = page.table("microbench")
    for name, (batch, col) in instrument.MICROBENCH_BATCHES.items():
        assert round(page.numbers[name], 2) == pytest.approx(mb.loc[batch, col], abs=0.006), name
    assert page.numbers["article_fwd32"] == article.FORWARD_MS_BATCH32
    assert page.numbers["fid_rounds"] == instrument.fidelity_repeats("smoke")
    sentence = page.numbers["fid_sentence"]
    assert f"medians of {page.numbers['fid_rounds']} rounds" in sentence or "was not found" in sentence


def test_the_smoke_profile_runs_the_mechanism_benchmark_briefly():
    assert instrument.fidelity_repeats("smoke") == instrument.SMOKE_REPEATS < instrument.REPEATS
    assert instrument.fidelity_repeats("article") == instrument.fidelity_repeats("quick") == instrument.REPEATS


def test_the_notebook_only_calls_its_page():
    code = notebook_code("instrument")
    assert "from analysis.chapters import instrument" in code and "import engine" not in code
    assert "analysis.instrument" not in code and "across_runs" not in code and "engine_link" not in code


def test_the_carried_rate_is_explained_both_ways():
    carried = instrument.carried_sentence({"rate": 9.9, "check_rate": 10.44, "check_demand": 0.9346,
                                           "demand_at_check_rate": 0.9894})
    assert "asked for 0.93 of the workload's expected decode tokens" in carried and "seeds for 0.99" in carried
    assert instrument.carried_sentence({"rate": 8.0, "source": "calibration", "method": "capacity"}) == (
        "The runs used the calibrated rate as it is.")
    assert instrument.carried_sentence({"rate": 8.0, "source": "given"}).startswith("That rate was given")
