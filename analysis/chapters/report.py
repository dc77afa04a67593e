"""The reproduction report's page (book/report), computed: one call makes the runs, the
glue values and the tables; the notebook only displays them. The findings, the overload
note and the regime sentence are the summary's too (render/book_findings.evidence)."""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from ..across_runs import article, ladder_steps, sweep_findings
from ..render import pages
from ..render.book_findings import Evidence, evidence


@dataclass
class ReportPage:
    """What book/report shows: `numbers` (every glue value by name) and its tables."""

    evidence: Evidence
    numbers: dict = field(default_factory=dict)
    tables: dict = field(default_factory=dict)

    def table(self, name: str) -> pd.DataFrame:
        if name not in self.tables:
            raise ValueError(f"unknown table {name!r}; valid tables: {', '.join(self.tables)}")
        return self.tables[name]


def sweep_read(by_load: pd.DataFrame, sweep_specs) -> str:
    """The sentence over the table of findings by load, with the sweep's seeds and run length."""
    return sweep_findings.load_findings_sentence(
        by_load, len({s.seed for s in sweep_specs}), sweep_specs[0].duration if sweep_specs else float("nan"))


def page(profile=None, seeds=None, duration=None, rate=None) -> ReportPage:
    """Everything book/report shows; runs that are missing are made first."""
    ev = evidence(profile, seeds, duration, rate)
    runs = ev.chapter.runs
    by_load = sweep_findings.load_findings(ev.sweep)
    numbers = {**pages.report_values(ev.found, runs, ev.n_seeds, ev.duration, ev.n_rungs),
               "overload_note": ev.overload_note, "article_protocol": article.protocol_text(),
               "regime_sentence": ev.regime_sentence, "sweep_read": sweep_read(by_load, ev.sweep_specs)}
    tables = {"findings": pages.report_table(ev.found),   # named by claim; the verdicts are the findings table's
              "ladder": ladder_steps.ladder_side_by_side(runs),
              "tail_shares": ladder_steps.tail_share_side_by_side(runs),
              "by_load": by_load}
    return ReportPage(ev, numbers, tables)
