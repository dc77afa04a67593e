"""The fix ladder's page (book/ladder), computed: one call makes the runs, the glue values,
the tables and the figures; the notebook only displays them.

The tables and figures are made from what `page` computed, so that displaying one never
runs the engine again; the figures are drawn when asked for, as each cell shows one.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from ..core.runlog import load
from ..across_runs import findings, hosts, larger_protocol, paired, runorder, scheme_compare, signflip, tables
from ..across_runs.ladder_steps import (median_run, paired_by_seed, rung_effects, seeds_needed_sentence,
                                        step_phrases, tail_evidence_sentence, tok_worker_sentence,
                                        ttft_cost_sentence)
from ..across_runs.per_cause import unexplained_tail
from ..across_runs.rungs import ADMIT_WATERMARK, BUDGET_256, FIRST, GRAPHS_48, LAST, TOKENIZE_OFF_LOOP
from ..across_runs.summaries import prefix_percentiles, run_gaps, run_summaries
from ..render import figures, figures_stats, texthist
from ..render.chapter_runs import ladder_runs

END_FINDINGS = ("p99_end", "p999_end", "max_end", "p50_flat")
RUNG_FINDINGS = ("gc_freeze", "compact", "graphs48", "budget", "tok_off", "watermark_preempt", "watermark_ttft")
WINDOW_FRACTIONS = (0.25, 0.5, 0.75, 1.0)   # the parts of each run the run-length table keeps
TAIL_METRIC = "itl_p999"                    # the end-to-end change whose evidence the page weighs


@dataclass
class LadderPage:
    """What book/ladder shows: `numbers` (every glue value by name), its tables and figures."""

    runs: list[dict]
    order: list[str]
    numbers: dict = field(default_factory=dict)
    tables: dict = field(default_factory=dict)
    seed_view: pd.DataFrame | None = None   # interval width by number of seeds (the figure's data)
    last: dict | None = None                # the last rung's median-p99 run
    last_gaps: pd.DataFrame | None = None   # that run's gaps

    def table(self, name: str):
        if name not in self.tables:
            raise ValueError(f"unknown table {name!r}; valid tables: {', '.join(self.tables)}")
        return self.tables[name]

    def last_histogram_text(self) -> str:
        """The last rung's median-p99 run as a text histogram by primary cause."""
        last = self.last
        return texthist.text_histogram(
            last, title=f"ITL by primary cause, {LAST}, run {last['seed']} (p99 = {last['itl_p99']:.1f} ms)")

    def figure(self, name: str):
        makers = {
            "percentiles": lambda: figures.ladder_figure(
                self.runs, order=self.order, title="ITL percentiles per rung (median, min-max band)"),
            "seed_intervals": lambda: figures_stats.seed_interval_figure(
                self.seed_view, title="End-to-end p99.9 ratio: interval width by number of seeds"),
            "tail_composition": lambda: figures.tail_composition_figure(
                self.runs, order=self.order, title="Median share of tail time by label"),
            "last_histogram": lambda: figures.cause_histogram_figure(
                self.last_gaps, title=f"{LAST}, run {self.last['seed']}: gaps by primary cause"),
        }
        if name not in makers:
            raise ValueError(f"unknown figure {name!r}; valid figures: {', '.join(makers)}")
        return makers[name]()


def page(profile=None, seeds=None, duration=None, rate=None) -> LadderPage:
    """Everything book/ladder shows; runs that are missing are made first."""
    chapter = ladder_runs(profile, seeds, duration, rate)
    specs, runs, found, order = chapter.specs, chapter.runs, chapter.found, chapter.order
    out = LadderPage(runs, order)
    ladder = tables.ladder_table(runs, order=order)
    out.numbers.update(n_seeds=len({s.seed for s in specs}), duration=specs[0].duration, rate=specs[0].rate,
                       n_rungs=len(order))
    out.tables["percentiles"] = tables.median_range_cells(ladder)
    _findings(out.numbers, found, END_FINDINGS)
    p50 = ladder["itl_p50"]
    out.numbers["p50_first_range"] = f"{p50.loc[FIRST, 'min']:.1f}-{p50.loc[FIRST, 'max']:.1f} ms"
    out.numbers["p50_last_range"] = f"{p50.loc[LAST, 'min']:.1f}-{p50.loc[LAST, 'max']:.1f} ms"

    order_df = runorder.run_order([load(s.path) for s in specs])
    out.numbers["order_sentence"] = runorder.order_sentence(order_df)
    out.tables["run_order"] = runorder.order_grid(order_df)
    out.numbers["hosts_sentence"] = hosts.hosts_sentence(runs)

    verdicts = _evidence(out, specs, runs, order)
    out.tables["tail_shares"] = tables.percent_cells(tables.tail_share_table(runs, order=order))
    side = scheme_compare.scheme_side_by_side(runs, run_summaries(specs, scheme="refined"), order=order)
    out.numbers["caveat_first"] = scheme_compare.scheme_caveat(side, order[0])
    out.numbers["caveat_last"] = scheme_compare.scheme_caveat(side, order[-1])
    out.tables["schemes"] = tables.percent_cells(side).replace("nan%", "")

    out.tables["rung_effects"] = rung_effects(runs, order)
    _findings(out.numbers, found, RUNG_FINDINGS, article=True)
    for key, phrase in step_phrases(verdicts).items():
        out.numbers["step_" + key] = phrase
    out.numbers["ttft_budget"] = ttft_cost_sentence(verdicts, GRAPHS_48, BUDGET_256)
    out.numbers["ttft_watermark"] = ttft_cost_sentence(verdicts, TOKENIZE_OFF_LOOP, ADMIT_WATERMARK)
    out.numbers["tok_worker"] = tok_worker_sentence(load(specs[0].path).provenance.get("cores_usable"))
    out.tables["watermark_ttft"] = paired_by_seed(runs, TOKENIZE_OFF_LOOP, ADMIT_WATERMARK, "ttft_p50").round(2)

    out.last = median_run(runs, LAST)
    out.last_gaps = run_gaps(out.last["path"])
    left = unexplained_tail(out.last_gaps, load(out.last["path"]))
    out.numbers.update({"left_" + k: v for k, v in left.items()})
    return out


def _findings(numbers: dict, found, keys, article: bool = False) -> None:
    """Each finding's value on this build, its verdict and (for the rungs) the article's."""
    for key in keys:
        numbers[key] = found.loc[key, "this build"]
        numbers[key + "_verdict"] = findings.verdict(found, key)
        if article:
            numbers["art_" + key] = found.loc[key, "article"]   # from analysis/across_runs/article.py


def _evidence(out: LadderPage, specs, runs, order):
    """"How sure is each step?": the paired verdicts, what more seeds and longer runs would
    buy, and the larger build's change where the cache holds one. Returns the verdicts."""
    verdicts = paired.ladder_verdicts(runs, rungs=order)
    n = len({s["seed"] for s in runs})
    out.numbers["p_floor"] = signflip.min_p(n) if n else float("nan")
    out.numbers["min_seeds"] = signflip.min_seeds()
    out.numbers["chance_sentence"] = paired.chance_sentence(verdicts)
    for metric in paired.METRICS:
        row = paired.verdict_row(verdicts, paired.END_TO_END, metric)
        out.numbers["e2e_" + metric] = paired.verdict_phrase(row, detail=True)
    out.tables["verdicts"] = paired.verdict_cells(verdicts)

    out.seed_view = paired.seed_subsample_intervals(runs, TAIL_METRIC, (FIRST, LAST))
    need = out.seed_view.attrs.get("seeds_needed") or {}
    out.numbers["need_seeds"] = seeds_needed_sentence(need.get("projected_seeds", float("nan")),
                                                      signflip.min_seeds())
    out.numbers["tail_evidence"] = tail_evidence_sentence(runs, specs[0].duration)

    ends = [s for s in specs if s.rung in (FIRST, LAST)]
    windows = sorted({round(f * ends[0].duration, 1) for f in WINDOW_FRACTIONS})
    by_length = paired.seed_subsample_intervals(prefix_percentiles(ends, windows), TAIL_METRIC,
                                                (FIRST, LAST), by="duration")
    out.tables["by_length"] = by_length.pivot(index="duration", columns="seeds", values="width_normal").round(
        2).rename_axis(index="seconds of arrivals", columns="seeds")

    larger = larger_protocol.larger_runs()
    larger_view, larger_change = larger_protocol.larger_view(larger) if larger else (None, None)
    out.numbers["larger_sentence"] = larger_protocol.larger_sentence(larger_change)
    out.tables["larger"] = larger_view
    return verdicts
