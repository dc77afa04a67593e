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


def test_the_ladder_baselines_are_the_ladders_own_runs(tmp_path, monkeypatch):
    """A sweep seed that is one of the ladder's reads the ladder's run of it (the rate carried
    to the ladder's whole seed set), not a run at a rate carried to that seed alone."""
    from engine.runs.cache import CACHE_ENV
    from engine.runs.calibrate import _write_json_atomic, calibration_path
    from engine.runs.profiles import get_profile
    from engine.runs.protocol import profile_specs
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    monkeypatch.delenv("ITL_JOBS", raising=False)
    prof = get_profile("quick")
    _write_json_atomic(calibration_path("checked", "article", prof.check_duration, 1),
                       {"rate": 13.2984, "method": "checked", "capacity": {"tokens_per_s": 3322.0},
                        "proposed_rate": 9.25, "checks": [], "check_seeds": [101, 102, 103],
                        "check_duration_s": prof.check_duration, "concurrency": 1})
    ladder = {s.seed: s.path for s in profile_specs(prof, rungs=[regimes.FIRST])}
    got = regimes.ladder_baselines(prof, [1])
    assert [s.path for s in got] == [ladder[1]]
    alone = profile_specs(prof, rungs=[regimes.FIRST], seeds=[1])
    assert alone[0].rate != got[0].rate          # seed 1 carried on its own asks for another rate
    outside = regimes.ladder_baselines(prof, [7])  # not a ladder seed: run at its own carried rate
    assert [s.path for s in outside] == [s.path for s in profile_specs(prof, rungs=[regimes.FIRST], seeds=[7])]
