"""The reproducing page's module (analysis/chapters/reproducing.py) in the smoke profile,
without executing its notebook: every glue value its prose cites is there and agrees with
the tables it shows; the calibration's checks, the search's outcome and the re-run
commands both ways on small inputs."""
import pandas as pd
import pytest

from analysis.chapters import reproducing
from analysis.render import protocol_tables
from tests.support.page_cells import calls_only_its_page, cited


@pytest.fixture(scope="module")
def page(run_cache):
    return reproducing.page("smoke")


@pytest.mark.slow
def test_every_value_the_prose_cites_is_computed(page):
    assert cited("reproducing") <= set(page.numbers)


@pytest.mark.slow
def test_the_numbers_agree_with_the_tables(page):
    n = page.numbers
    proto = dict(page.table("protocol").data.values)
    assert proto["profile"] == n["profile"] == "smoke" and proto["seeds"] == n["seeds"]
    assert len(n["seeds"].split(", ")) == n["n_seeds"] and len(proto["rungs"].split(" → ")) == n["n_rungs"]
    assert proto["runs in all"] == str(n["n_runs"]) and proto["run cache"] == n["cache_dir"]
    versions = page.table("versions").data
    assert n["n_pins"] == len(versions) and n["n_pins_ok"] == int(versions["matches"].sum())
    assert 1 <= n["n_present"] <= n["n_runs"] and n["n_envs"] >= 1
    calibration = dict(page.table("calibration").data.values)
    assert calibration["source"] == n["rate_source"] and calibration["method"] == n["rate_method"]
    assert n["has_calibration"] == ("capacity_tokens_per_s" in n)
    assert n["first_run"].rpartition("seed ")[2] in n["seeds"].split(", ")
    assert len(page.table("operating_point").data) and len(page.table("regime").data)
    with pytest.raises(ValueError, match="unknown table 'pie'; valid tables: protocol"):
        page.table("pie")


def test_the_checks_are_shown_or_a_line_says_there_were_none(capsys):
    none = reproducing.ReproducingPage(tables={"checks": pd.DataFrame(columns=["rate, req/s"])})
    assert none.checks_or_note() is None
    assert capsys.readouterr().out == reproducing.NO_CHECKS + "\n"
    checks = pd.DataFrame({"rate, req/s": [5.0, 6.0]})
    assert reproducing.ReproducingPage(tables={"checks": checks}).checks_or_note() is checks
    assert capsys.readouterr().out == ""


def test_the_search_outcome_in_words():
    assert reproducing.band_reached({"band_reached": True}) == "landed in the article's regime"
    assert reproducing.band_reached({"band_reached": False}) == "did not land in the article's regime"
    assert reproducing.band_reached(None) == reproducing.band_reached({}) == \
        "used the capacity-based proposal without checks"


def test_the_rerun_commands_pass_lists_as_yaml():
    """-y keeps a list a list (-p would pass a string); one command per example, in order."""
    assert reproducing.rerun_commands() == (
        "papermill book/reproducing.ipynb out.ipynb -y 'seeds: [6, 7, 8]'\n"
        "papermill book/stall.ipynb out.ipynb -y 'profile: \"smoke\"\nseeds: [2]'")
    assert reproducing.rerun_commands((("gpu", {"rate": 5.0}),)) == "papermill book/gpu.ipynb out.ipynb -y 'rate: 5.0'"


def test_the_notebook_only_calls_its_page():
    assert calls_only_its_page("reproducing") == []


def test_the_checks_table_shows_each_statistic_as_read():
    """Rates to the search's step, fullness to two places, counts and TTFT in whole units; a
    check that lacks a statistic shows it as missing rather than failing the page."""
    cal = {"checks": [{"rate": 13.19812, "fullness": 0.890416, "preemptions_per_min": 332.0,
                       "eager_steps_per_min": 1741.0, "ttft_p50_ms": 40.298061, "drains": True,
                       "place": "above", "decided_by": "preemptions"},
                      {"rate": 10.8571, "fullness": 0.408999, "preemptions_per_min": 2.0,
                       "eager_steps_per_min": 82.0, "drains": True, "place": "below", "decided_by": "fullness"}]}
    table = protocol_tables.calibration_checks(cal)
    assert table["rate, req/s"].tolist() == [13.198, 10.857]
    assert table["gap / batch-32 forward"].tolist() == [0.89, 0.41]
    assert table["preemptions / 60 s"].tolist() == [332, 2]
    assert str(table["TTFT p50, ms"].dtype) == "Int64"
    assert table["TTFT p50, ms"].iloc[0] == 40 and pd.isna(table["TTFT p50, ms"].iloc[1])
    assert protocol_tables.calibration_checks(None).empty
