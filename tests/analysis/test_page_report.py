"""The report's page module (analysis/chapters/report.py) in the smoke profile, without
executing its notebook: every glue value its prose cites is there, its counts agree with
its findings table and with the summary's, and the sweep's sentence reads both ways."""
import pandas as pd
import pytest

from analysis.across_runs import sweep_findings
from analysis.chapters import report, summary
from tests.support.page_cells import calls_only_its_page, cited


@pytest.fixture(scope="module")
def page(run_cache):
    return report.page("smoke")


@pytest.mark.slow
def test_every_value_the_prose_cites_is_computed(page):
    assert cited("report") <= set(page.numbers)


@pytest.mark.slow
def test_the_counts_agree_with_the_findings_table(page):
    n, table = page.numbers, page.table("findings")
    assert n["n_findings"] == len(table) == len(page.evidence.found)
    words = list(table["verdict"])
    assert n["n_held"] == words.count("held") and n["n_not"] == words.count("did not hold")
    assert n["n_held"] + n["n_not"] + n["n_untestable"] == n["n_findings"]
    failed = [claim for claim, word in zip(table.index, words) if word == "did not hold"]
    assert all(f'"{claim}"' in n["failed_sentence"] for claim in failed)
    assert ("None did not hold" in n["failed_sentence"]) == (not failed)


@pytest.mark.slow
def test_the_tables_cover_the_ladder_and_the_sweep(page):
    ev = page.evidence
    assert len(page.table("ladder")) >= len(ev.chapter.order)
    by_load = page.table("by_load")
    if ev.sweep is None:
        assert by_load.empty and "ran no load sweep" in page.numbers["sweep_read"]
    else:
        forwards = ev.sweep["forward"].nunique()
        assert len(by_load) == forwards * len(sweep_findings.LOAD_FINDINGS)
        assert f"{len({s.seed for s in ev.sweep_specs})} seed(s)" in page.numbers["sweep_read"]
    with pytest.raises(ValueError, match="unknown table 'pie'; valid tables: findings, ladder"):
        page.table("pie")


@pytest.mark.slow
def test_the_summary_counts_the_same_table(page):
    said = summary.page("smoke").numbers
    for key in ("n_findings", "n_held", "n_not", "n_untestable", "power", "overload_note", "regime_sentence"):
        assert said[key] == page.numbers[key], key


def test_the_sweep_sentence_reads_the_table_or_says_no_sweep_ran():
    class Spec:
        def __init__(self, seed):
            self.seed, self.duration = seed, 12.0

    none = report.sweep_read(sweep_findings.load_findings(None), [])
    assert none.startswith("This build's profile ran no load sweep")
    one_row = pd.DataFrame([{"claim": "c"}])
    some = report.sweep_read(one_row, [Spec(1), Spec(2), Spec(1)])
    assert "the medians over 2 seed(s) of 12 s per level" in some


def test_the_notebook_only_calls_its_page():
    assert calls_only_its_page("report") == []
