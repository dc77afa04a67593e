"""The takeaways' page module (analysis/chapters/takeaways.py) in the smoke profile, without
executing its notebook: every glue value its prose cites is there and its tables hold one
row per cause; on synthetic ladders, its numbers both ways (a fix's rung ran / is missing)."""
from types import SimpleNamespace

import pytest

from analysis.across_runs.findings import findings
from analysis.across_runs.rungs import ADMIT_WATERMARK
from analysis.chapters import takeaways
from analysis.core.run_summary import HIST_BINS
from analysis.core.schemes import CAUSES, CLEAN
from tests.support.page_cells import calls_only_its_page, cited
from tests.support.summaries import article_like


@pytest.fixture(scope="module")
def page(run_cache):
    return takeaways.page("smoke")


@pytest.mark.slow
def test_every_value_the_prose_cites_is_computed(page):
    assert cited("takeaways") <= set(page.numbers)
    assert {k for k in page.numbers if k.startswith("take_")} == {"take_" + c for c in CAUSES}


@pytest.mark.slow
def test_the_tables_hold_one_row_per_cause_and_the_counts_agree(page):
    for name in ("where", "fixes", "card_fixes"):
        assert len(page.table(name).data) == len(CAUSES), name
    assert list(page.table("where").data["cause"]) == list(page.frame["name"])
    assert page.numbers["n_seeds"] == len({r["seed"] for r in page.runs})
    assert page.numbers["n_seeds"] == page.frame["base_runs"].iloc[0]
    card = page.table("card_measured").data
    assert {"article", "this build"} <= set(card.columns) and len(card)
    with pytest.raises(ValueError, match="unknown table 'pie'; valid tables: where, fixes"):
        page.table("pie")


def _chapter(drop=()):
    """A ladder chapter of article-like runs (six seeds, no gaps binned), without the rungs in ``drop``."""
    hist = [{"lo": lo, "hi": hi, "n": 0, **{c: 0 for c in CAUSES + [CLEAN]}}
            for lo, hi in zip(HIST_BINS[:-1], HIST_BINS[1:])]
    runs = [{**r, "hist": hist, "tok_per_s": 100.0} for r in article_like((1, 2, 3, 4, 5, 6))
            if r["rung"] not in drop]
    specs = [SimpleNamespace(seed=r["seed"], duration=60.0) for r in runs]
    return SimpleNamespace(runs=runs, specs=specs, found=findings(runs))


def _numbers(chapter):
    frame = takeaways.cause_fixes.cause_frame(chapter.runs)
    return takeaways.takeaway_numbers(chapter, frame, takeaways.cause_fixes.fix_effects(chapter.runs))


def test_the_numbers_follow_the_ladder_both_ways():
    full = _numbers(_chapter())
    assert full["n_seeds"] == 6 and full["duration"] == 60.0 and full["band_coverage"].endswith("%")
    assert "is not in this build's ladder" not in full["take_preempt"]
    assert "fell below it in every run" in full["removed"]
    assert full["cost_finding"].startswith('The article\'s finding "') and full["cost_finding"].endswith(" here.")
    short = _numbers(_chapter(drop=(ADMIT_WATERMARK,)))
    assert "is not in this build's ladder" in short["take_preempt"]
    assert short["ends"].startswith("This build lacks an end of the ladder")
    assert full["ends"].startswith("From the first rung to the last")


def test_the_notebook_only_calls_its_page():
    assert calls_only_its_page("takeaways") == []
