"""Claims the pages make about the instrument, checked against the code that would back
them: a claim the code cannot back is not on the page."""
import numpy as np

from analysis.core.overlap import overcounted
from analysis.instrument import control_scores
from analysis.render.pages import markdown_of


def test_overlapped_parts_pass_reconciliation_and_are_caught_only_by_a_negative_residual():
    gap = np.array([10.0, 10.0])
    tagged = np.array([[6.0, 3.0], [8.0, 6.0]])        # the second counts 4 ms of overlap twice
    residual = gap - tagged.sum(axis=1)                 # what is left, as the partition computes it
    parts = np.c_[tagged, residual]
    assert np.allclose(parts.sum(axis=1), gap)           # reconciliation holds for both
    assert overcounted(parts, gap).tolist() == [False, True]
    gpu = markdown_of("gpu")
    assert "which the reconciliation check will flag" not in gpu
    assert "negative residual" in gpu


def test_the_partition_page_points_to_the_controls_the_book_runs():
    text = markdown_of("partition")
    assert "are a separate piece of work" not in text and "{doc}`checking`" in text


def test_checking_does_not_promise_an_answer_its_runs_may_not_hold():
    text = markdown_of("checking")
    assert "The last test then answers the question" not in text
    assert "whether\nthis build's runs hold enough of them to answer it" in text
    # the two-sided bound, in the words of the bound the scoring applies
    assert "Between {glue:text}`positive_low` and {glue:text}`positive_high`" in text
    words = control_scores.bound_words()
    lo, hi = (float(words[k].rstrip("%")) / 100 for k in ("positive_low", "positive_high"))
    bound = control_scores.DEFAULT_POSITIVE_BOUND
    assert control_scores.within([lo, hi], bound).all() and not control_scores.within([lo - 1e-3, hi + 1e-3], bound).any()
    assert "(at most {glue:text}`negative_bound` of all gap time)" in text
    assert float(words["negative_bound"].rstrip("%")) / 100 == control_scores.NEGATIVE_BOUND


def test_the_report_does_not_say_the_rate_reached_the_articles_regime():
    text = markdown_of("report")
    assert "calibrated to the article's regime\nrather than copied" not in text
    assert "{doc}`reproducing` says where this build's\nruns landed" in text
