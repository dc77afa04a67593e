"""The summary's page (book/summary), computed: one call makes the runs, the glue values
and the figure; the notebook only displays them. The findings, the overload note and the
regime sentence are the report's too (render/book_findings.evidence)."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..across_runs import headline, load_sweep
from ..render import figures, pages
from ..render.book_findings import Evidence, evidence

SWEEP_WHAT = "preemption's share of baseline tail time with the article forward"
NO_SWEEP = "This build's profile ran no load sweep."


@dataclass
class SummaryPage:
    """What book/summary shows: `numbers` (every glue value by name) and its figure."""

    evidence: Evidence
    numbers: dict = field(default_factory=dict)

    def figure(self, name: str):
        makers = {"ladder": lambda: figures.ladder_figure(self.evidence.chapter.runs,
                                                          order=self.evidence.chapter.order)}
        if name not in makers:
            raise ValueError(f"unknown figure {name!r}; valid figures: {', '.join(makers)}")
        return makers[name]()


def sweep_line(sweep) -> str:
    """Where the load sweep's baseline crossed half its tail time in preemption; or that no
    sweep ran."""
    if sweep is None:
        return NO_SWEEP
    return load_sweep.crossing_sentence(load_sweep.crossing_load(sweep, "article"), SWEEP_WHAT)


def summary_numbers(ev: Evidence) -> dict:
    """Every value the summary glues, from the evidence it shares with the report."""
    specs, runs = ev.chapter.specs, ev.chapter.runs
    return {"profile_name": ev.chapter.profile.name, "n_runs": len(runs), "n_seeds": ev.n_seeds,
            "n_rungs": ev.n_rungs, "duration": ev.duration,
            "rate_clause": headline.rate_clause(specs[0].rate, specs[0].rate_info.get("source", "")),
            # every finding's figure, verdict and lead-in, the counts, and the protocol's power
            **pages.summary_values(ev.found, runs, ev.n_seeds, ev.duration, ev.n_rungs),
            "overload_note": ev.overload_note, "regime_sentence": ev.regime_sentence,
            "sweep_line": sweep_line(ev.sweep)}


def page(profile=None, seeds=None, duration=None, rate=None) -> SummaryPage:
    """Everything book/summary shows; runs that are missing are made first."""
    ev = evidence(profile, seeds, duration, rate)
    return SummaryPage(ev, summary_numbers(ev))
