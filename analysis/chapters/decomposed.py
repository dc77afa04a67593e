"""The decomposed page (book/decomposed), computed: one rung's runs decomposed by cause:
the forward pass's share and what a faster one buys, tail time by label under both
schemes, count against time, the median run's histogram and each cause's band; the
notebook only displays them."""
from __future__ import annotations

import numpy as np

from ..engine_link import made_on_confirmed, sweep_specs
from ..across_runs import (decomposition, headline, ladder_steps, load_sweep, per_cause, scheme_compare,
                           summaries, tables)
from ..across_runs.rungs import FIRST
from ..render import figures, texthist
from ..render.chapter_runs import ladder_runs
from ..render.page_view import PageView


def gaps_per_run(runs) -> float:
    """The median run's number of gaps (NaN without runs)."""
    return float(np.median([r["gaps"] for r in runs])) if runs else float("nan")


def page(profile=None, seeds=None, duration=None, rate=None, rung=None) -> PageView:
    """Everything book/decomposed shows for ``rung`` (the ladder's first if None); its runs,
    and the load sweep's near the operating point, are made first if missing."""
    rung = rung or FIRST
    chapter = ladder_runs(profile, seeds, duration, rate, rungs=[rung])
    specs, runs = chapter.specs, chapter.runs
    found = decomposition.rung_findings(runs, rung)     # the report's baseline criteria, on this rung's runs
    out = PageView(numbers={"intro": decomposition.intro_sentence(rung), "n_runs": len(runs), "rung": rung,
                            "seeds": ", ".join(str(s.seed) for s in specs), "rate": specs[0].rate,
                            "duration": specs[0].duration, "gaps_per_run": gaps_per_run(runs)})
    _forward(out, chapter, runs, found, rung, rate)
    share = tables.tail_share_by_run(runs, rung)
    labels = [c for c in share.columns if c != "p99"]
    out.numbers.update(row_sum_err=float((share[labels].sum(axis=1) - 1).abs().max()),
                       preempt_sentence=decomposition.preempt_sentence(found, rung),
                       graph_sentence=headline.graph_sentence(found))
    by_run = tables.percent_cells(share[labels])
    by_run.insert(0, "p99 ms", share["p99"].round(1))
    out.tables["tail_share"] = by_run
    side = scheme_compare.scheme_side_by_side(runs, summaries.run_summaries(specs, scheme="refined"), order=[rung])
    out.numbers["scheme_caveat"] = scheme_compare.scheme_caveat(side, rung)
    out.tables["schemes"] = tables.percent_cells(side).replace("nan%", "")
    cvt = per_cause.count_vs_time(runs, rung)
    out.numbers.update(n_disagree=int(cvt["disagree"].sum()), prefill_count=found.loc["prefill_count", "this build"])
    out.tables["count_vs_time"] = cvt.assign(
        **{"its share of tail time": cvt["its share of tail time"].map("{:.1%}".format)})
    _median_run(out, runs, rung)
    bands = per_cause.cause_bands(runs, rung)
    out.tables["bands"] = bands.assign(band=bands.apply(per_cause.band_text, axis=1))[["gaps", "band"]]
    return out


def _forward(out: PageView, chapter, runs, found, rung: str, rate) -> None:
    """The forward pass's share by run, and what a faster forward buys, measured on the load
    sweep's runs of both forwards near the operating point."""
    out.numbers["fwd_sentence"] = decomposition.forward_share_sentence(found, rung)
    near = made_on_confirmed(chapter.profile, lambda: decomposition.near_operating_point(
        sweep_specs(chapter.profile, rate=rate), rung), rate)
    gain = decomposition.forward_gain(load_sweep.sweep_frame(near, summaries.run_summaries(near)) if near else None)
    out.numbers["speedup"] = decomposition.forward_gain_sentence(gain)
    out.tables["forward_share"] = tables.percent_cells(tables.forward_share_table(runs, rung), 0)


def _median_run(out: PageView, runs, rung: str) -> None:
    """The run of median p99: its histogram as text and as a figure."""
    mid = ladder_steps.median_run(runs, rung)
    out.numbers.update(mid_seed=mid["seed"], band_coverage=f"{100 * per_cause.BAND_COVERAGE:g}%",
                       mid_p99=mid["itl_p99"])
    out.tables["text_histogram"] = texthist.text_histogram(
        mid, title=f"ITL by primary cause, {rung}, run {mid['seed']} (p99 = {mid['itl_p99']:.1f} ms)")
    out.figures["histogram"] = lambda: figures.cause_histogram_figure(
        summaries.run_gaps(mid["path"]), title=f"{rung}, run {mid['seed']}: gaps by primary cause")
