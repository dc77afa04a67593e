"""Across-run tables, the text histogram and the figures."""

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from analysis.render import axes

import analysis
from analysis.render import figures
from analysis.core.schemes import CAUSES, LABELS
from analysis.core.run_summary import HIST_BINS
from analysis.render.texthist import histogram_bar


def fake_summary(rung, seed, p99, share_preempt):
    hist = [{"lo": lo, "hi": hi, "n": 0, **dict.fromkeys(CAUSES + ["clean"], 0)}
            for lo, hi in zip(HIST_BINS[:-1], HIST_BINS[1:])]
    hist[0].update(n=10, clean=10)
    share = dict.fromkeys(LABELS, 0.0)
    share.update(preempt=share_preempt, kernel=1 - share_preempt)
    return {"rung": rung, "seed": seed, "itl_p50": p99 / 4, "itl_p99": p99, "itl_p999": p99 * 10,
            "itl_max": p99 * 100, "tail_share": share, "all_share": share,
            "tail_count": {**dict.fromkeys(CAUSES, 0), "clean": 3},
            "fwd_share_clean_median": 0.98, "fwd_share_tail_median": 1 - share_preempt,
            "hist": hist}


@pytest.fixture
def runs():
    out = [fake_summary("baseline", s, p, sh) for s, p, sh in
           [(1, 30.9, 0.5), (2, 34.1, 0.1), (3, 50.3, 0.9), (4, 47.0, 0.8), (5, 62.8, 0.7)]]
    out += [fake_summary("+admit watermark", s, p, 0.0) for s, p in [(2, 24.2), (1, 27.8), (3, 32.5)]]
    return out


def test_summaries_frame_flattens_and_keeps_rung_order(runs):
    frame = analysis.summaries_frame(runs)
    assert len(frame) == 8
    assert list(frame["rung"].cat.categories) == ["baseline", "+admit watermark"]
    assert frame.loc[0, "tail_share_preempt"] == 0.5 and frame.loc[0, "tail_count_clean"] == 3
    assert analysis.summaries_frame(frame) is frame


def test_ladder_table_median_min_max(runs):
    table = analysis.ladder_table(runs)
    assert list(table.index) == ["baseline", "+admit watermark"]
    assert table.loc["baseline", ("itl_p99", "median")] == pytest.approx(47.0)
    assert table.loc["baseline", ("itl_p99", "min")] == pytest.approx(30.9)
    assert table.loc["baseline", ("itl_p99", "max")] == pytest.approx(62.8)
    assert table.loc["+admit watermark", ("runs", "")] == 3
    cells = analysis.median_range_cells(table)
    assert list(cells.columns) == ["p50", "p99", "p99.9", "max"]
    assert cells.loc["baseline", "p99"] == "47.0 [30.9-62.8]"
    assert cells.loc["baseline", "p99.9"] == "470 [309-628]"


def test_ladder_table_explicit_order(runs):
    table = analysis.ladder_table(runs, order=["+admit watermark", "baseline"])
    assert list(table.index) == ["+admit watermark", "baseline"]


def test_tail_share_tables(runs):
    med = analysis.tail_share_table(runs)
    assert list(med.columns) == LABELS
    assert med.loc["baseline", "preempt"] == pytest.approx(0.7)
    assert analysis.percent_cells(med).loc["baseline", "fwd"] == "30.0%"
    per_run = analysis.tail_share_by_run(runs, "baseline")
    assert list(per_run.index) == [1, 2, 3, 4, 5]
    assert per_run.loc[3, "preempt"] == 0.9 and per_run.loc[3, "p99"] == 50.3
    fwd = analysis.forward_share_table(runs, "baseline")
    assert fwd.loc[("baseline", 5), "tail"] == pytest.approx(0.3)
    assert analysis.tail_count_table(runs).loc["baseline", "clean"] == 3


@pytest.mark.parametrize("counts, bar", [
    # rows of the article's baseline run-4 histogram, with counts consistent with it
    (dict(n=13760, clean=13760), "·" * 36),
    (dict(n=58, prefill=33, preempt=2, tok=23), "P" * 20 + "S" + "T" * 14),
    (dict(n=111, prefill=109, preempt=2), "P" * 35 + "S"),
    (dict(n=171, preempt=171), "S" * 36),
    (dict(n=0), ""),
])
def test_histogram_bar_matches_the_article(counts, bar):
    assert histogram_bar(counts) == bar


def test_text_histogram_layout(runs):
    text = analysis.text_histogram(runs[3])
    lines = text.splitlines()
    assert lines[0] == "ITL HISTOGRAM BY PRIMARY CAUSE, baseline, run 4   (p99 = 47.0 ms)"
    assert lines[1] == "  ITL ms     tokens  share of the bin's tokens by primary cause"
    assert lines[2] == "     0-5         10  " + "·" * 36
    assert lines[-1] == " 800-inf          0"
    assert len(lines) == 2 + len(HIST_BINS) - 1


def test_figures_render(runs, tmp_path):
    gaps = pd.DataFrame({"gap_ms": np.geomspace(1, 500, 200),
                         "cause": pd.Categorical(["clean"] * 150 + ["prefill"] * 40 + ["preempt"] * 10,
                                                 categories=CAUSES + ["clean"])})
    made = [figures.cause_histogram_figure(gaps), figures.cause_histogram_figure(runs[0]),
            figures.ladder_figure(runs), figures.tail_composition_figure(runs)]
    for i, fig in enumerate(made):
        assert isinstance(fig, Figure)
        fig.savefig(tmp_path / f"{i}.png", dpi=50)
        assert axes.problems(fig) == [], i          # every axis labelled, no tick label on another
    assert set(figures.COLOURS) >= set(LABELS) | {"clean"}


def test_stacked_shares_sit_on_each_other_in_column_order_with_the_label_colours():
    from matplotlib.colors import to_hex
    fig = Figure()
    ax = fig.add_subplot()
    from analysis.across_runs.tables import LABEL_NAMES
    shares = pd.DataFrame({"kernel": [10.0, 30.0], "preempt": [60.0, 0.0], "new label": [5.0, 20.0]})
    figures.stack_shares(ax, np.arange(2), shares)
    layers = ax.containers
    assert [c.get_label() for c in layers] == [LABEL_NAMES["kernel"], LABEL_NAMES["preempt"], "new label"]
    assert [[p.get_y() for p in c] for c in layers] == [[0, 0], [10, 30], [70, 30]]
    assert [[p.get_height() for p in c] for c in layers] == [[10, 30], [60, 0], [5, 20]]
    assert [to_hex(c[0].get_facecolor()) for c in layers] == [
        figures.COLOURS["kernel"].lower(), figures.COLOURS["preempt"].lower(), "#cccccc"]


def test_a_log_axis_under_a_decade_labels_plain_ticks_that_do_not_collide():
    def short_log_axis():
        fig = Figure(figsize=(3, 1.6), layout="constrained")
        ax = fig.add_subplot()
        ax.plot([1, 2, 3], [0.3, 0.38, 0.45])
        ax.set_yscale("log")
        ax.set_xlabel("x")
        ax.set_ylabel("y")
        return fig, ax
    fig, ax = short_log_axis()
    fig.canvas.draw()
    texts = [t.get_text() for t in ax.yaxis.get_ticklabels(which="both") if t.get_text()]
    assert any("10^{" in t for t in texts)           # matplotlib's own: '3x10^-1', '4x10^-1'
    fig, ax = short_log_axis()
    axes.tidy_log(ax, "y")
    assert axes.problems(fig) == []
    texts = [t.get_text() for t in ax.yaxis.get_ticklabels(which="both") if t.get_text()]
    assert texts and not any("10^" in t for t in texts)


def test_tables_print_every_cell_whole():
    import analysis.render  # noqa: F401  (every chapter imports it: the display options)
    long = "a knob's description " * 12
    html = pd.DataFrame({"what": [long]})._repr_html_()
    assert long.strip() in html and "..." not in html
