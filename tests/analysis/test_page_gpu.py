"""The GPU page's module (analysis/chapters/gpu.py), without executing its notebook: the
number its prose cites is the table's row count, and the notebook only calls its page."""
import pytest

from analysis.chapters import gpu
from analysis.core.columns import COLUMNS
from tests.support.page_cells import calls_only_its_page, cited


def test_the_count_it_glues_is_the_tables_rows():
    page = gpu.page("smoke")
    assert cited("gpu") <= set(page.numbers)
    shown = page.table("columns").data
    assert page.numbers["n_arrays"] == len(shown) == len(COLUMNS)
    assert list(shown["array"]) == list(COLUMNS)


def test_an_unknown_table_or_profile_is_named():
    with pytest.raises(ValueError, match="unknown table 'arrays'; valid tables: columns"):
        gpu.page("smoke").table("arrays")
    with pytest.raises(ValueError, match="unknown profile 'huge'"):
        gpu.page("huge")


def test_the_notebook_only_calls_its_page():
    assert calls_only_its_page("gpu") == []
