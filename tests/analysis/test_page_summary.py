"""The summary's page module (analysis/chapters/summary.py) in the smoke profile, without
executing its notebook: every glue value its prose cites is there and its counts agree
with the runs and the findings table; the sweep's sentence both ways on synthetic frames."""
import matplotlib
import pandas as pd
import pytest

from analysis.across_runs.findings import verdict_counts
from analysis.chapters import summary
from tests.support.page_cells import calls_only_its_page, cited

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def page(run_cache):
    return summary.page("smoke")


@pytest.mark.slow
def test_every_value_the_prose_cites_is_computed(page):
    assert cited("summary") <= set(page.numbers)


@pytest.mark.slow
def test_the_counts_agree_with_the_runs_and_the_findings(page):
    n, ev = page.numbers, page.evidence
    runs, specs = ev.chapter.runs, ev.chapter.specs
    assert n["profile_name"] == "smoke" and n["n_runs"] == len(runs) == len(specs)
    assert n["n_seeds"] * n["n_rungs"] == n["n_runs"]
    assert n["n_rungs"] == len(ev.chapter.order) and n["duration"] == specs[0].duration
    counts = verdict_counts(ev.found)
    assert {k: n[k] for k in counts} == counts
    assert n["n_findings"] == len(ev.found) == n["n_held"] + n["n_not"] + n["n_untestable"]
    for key in ev.found.index:                       # each finding's figure, verdict and lead-in
        assert key + "_verdict" in n and "lead_" + key in n and "art_" + key in n
        if key != "count_time":                      # that one the summary states as a sentence
            assert n[key] == ev.found.loc[key, "this build"], key
    assert "overload sidebar" in n["overload_note"]
    assert (n["sweep_line"] == summary.NO_SWEEP) == (ev.sweep is None)


@pytest.mark.slow
def test_the_figure_draws_and_an_unknown_one_is_named(page):
    assert page.figure("ladder").axes
    with pytest.raises(ValueError, match="unknown figure 'pie'; valid figures: ladder"):
        page.figure("pie")


def _sweep(tail_preempt):
    """A baseline sweep, article forward, two seeds: preemption's share of tail time per load."""
    return pd.DataFrame([{"forward": "article", "rung": "baseline", "load": load, "seed": seed,
                          "tail_preempt": share} for seed in (1, 2) for load, share in tail_preempt.items()])


def test_the_sweep_sentence_says_where_preemption_took_half_the_tail_or_that_it_never_did():
    crossed = summary.sweep_line(_sweep({0.5: 0.1, 1.0: 0.3, 1.5: 0.7}))
    assert crossed.startswith("Preemption's share of baseline tail time with the article forward first passed 50%")
    assert "1.25x the operating point" in crossed and "in all 2 seed(s)" in crossed
    never = summary.sweep_line(_sweep({0.5: 0.1, 1.5: 0.2}))
    assert "passed 50% in no seed within the sweep (0.50-1.50x the operating point)" in never
    assert summary.sweep_line(None) == summary.NO_SWEEP == "This build's profile ran no load sweep."


def test_the_notebook_only_calls_its_page():
    assert calls_only_its_page("summary") == []
