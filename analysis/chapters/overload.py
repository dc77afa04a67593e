"""The overload sidebar's page (book/overload), computed: one call makes its runs past
capacity, the glue values, the tables and the figure; the notebook only displays them."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..engine_link import LADDER, OVERLOAD_FACTOR, get_profile, made_on_confirmed, profile_specs
from ..across_runs import findings, overload_findings, paired, signflip, tables
from ..across_runs import verdicts as vocabulary
from ..across_runs.rungs import FIRST
from ..across_runs.summaries import run_summaries
from ..render import figures


@dataclass
class OverloadPage:
    """What book/overload shows: `numbers` (every glue value by name), its tables and figure."""

    runs: list[dict]
    order: list[str]
    numbers: dict = field(default_factory=dict)
    tables: dict = field(default_factory=dict)

    def table(self, name: str):
        if name not in self.tables:
            raise ValueError(f"unknown table {name!r}; valid tables: {', '.join(self.tables)}")
        return self.tables[name]

    def figure(self, name: str = "ladder"):
        if name != "ladder":
            raise ValueError(f"unknown figure {name!r}; valid figures: ladder")
        return figures.ladder_figure(self.runs, order=self.order)


def page(profile=None, seeds=None, duration=None, rate=None) -> OverloadPage:
    """Everything book/overload shows; runs that are missing are made first. `rate` is the
    calibrated regime's (the sidebar multiplies it), as in the notebook's parameters."""
    prof = get_profile(profile)
    specs = made_on_confirmed(prof, lambda: profile_specs(prof, overload=True, seeds=seeds, duration=duration, rate=rate), rate)
    runs = run_summaries(specs)
    out = OverloadPage(runs, list(LADDER))
    info = specs[0].rate_info
    out.numbers.update(
        rate_sentence=overload_findings.rate_sentence(specs[0].rate, specs[0].rate / OVERLOAD_FACTOR,
                                                      OVERLOAD_FACTOR, info.get("source", "")),
        n_seeds=len({s.seed for s in specs}), n_main_seeds=len(prof.seeds), duration=specs[0].duration)

    ttft = tables.ladder_table(runs, metrics=("ttft_p50",), order=out.order)["ttft_p50"]
    out.numbers["ttft_base"] = overload_findings.seconds_span(ttft.loc[FIRST, ['min', 'max']])
    out.tables["percentiles"] = tables.median_range_cells(tables.ladder_table(runs, order=out.order))

    for f in overload_findings.overload_findings(tables.summaries_frame(runs)):
        key = f["key"]
        out.numbers[key] = f["this build"]
        out.numbers[key + "_verdict"] = findings.verdict_word(f["held"], f["reason"])
        out.numbers["art_" + key] = f["article"]   # the article's figure, from analysis/across_runs/article.py
    capacity = overload_findings.past_capacity(runs, info.get("capacity_tokens_per_s"))
    out.numbers["capacity_sentence"] = overload_findings.overload_sentence(capacity,
                                                                           overload_findings.tail_movers(runs))
    out.tables["tail_shares"] = tables.percent_cells(tables.tail_share_table(runs, order=out.order))

    verdicts = paired.ladder_verdicts(runs, rungs=out.order)
    n = len({s["seed"] for s in runs})
    out.numbers["p_floor"] = signflip.min_p(n) if n else float("nan")
    out.numbers["best_verdict"] = vocabulary.strongest(n)
    out.tables["verdicts"] = paired.verdict_cells(verdicts)
    return out
