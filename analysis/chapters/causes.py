"""The causes page (book/causes), computed: one call makes the ladder's runs, the glue
values and the tables, and reads the GC rungs' cached runs under every interpreter the
run cache holds; the notebook only displays them."""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from ..across_runs import cross_effects, fix_costs, interpreter_runs, interpreters, per_cause, tables
from ..render.chapter_runs import ladder_runs


@dataclass
class CausesPage:
    """What book/causes shows: `numbers` (every glue value by name) and its tables."""

    numbers: dict = field(default_factory=dict)
    tables: dict = field(default_factory=dict)
    interpreters: interpreter_runs.InterpreterRuns | None = None   # the GC rungs' runs per Python

    def table(self, name: str) -> pd.DataFrame:
        if name not in self.tables:
            raise ValueError(f"unknown table {name!r}; valid tables: {', '.join(self.tables)}")
        return self.tables[name]


def page(profile=None, seeds=None, duration=None, rate=None) -> CausesPage:
    """Everything book/causes shows; the ladder's runs that are missing are made first (the
    other interpreters' runs are only read: see interpreter_runs)."""
    chapter = ladder_runs(profile, seeds, duration, rate)
    runs = chapter.runs
    out = CausesPage()
    out.tables["causes"] = per_cause.cause_table(runs)
    gone = per_cause.causes_gone(runs)
    out.numbers.update(n_gone=len(gone), gone=", ".join(gone) if gone else "none",
                       n_causes=len(per_cause.CAUSE_FIX), band_coverage=f"{100 * per_cause.BAND_COVERAGE:g}%",
                       gone_share=f"{100 * per_cause.GONE_SHARE:g}%")
    effects = cross_effects.fix_effects(cross_effects.tail_times(runs), chapter.order,
                                        shares=tables.summaries_frame(runs))
    out.numbers.update(others_sentence=cross_effects.others_sentence(effects),
                       relative_sentence=cross_effects.relative_sentence(effects),
                       cost_sentence=fix_costs.ttft_cost_sentence(runs, chapter.order),
                       floor=f"{100 * cross_effects.FLOOR:g}%")
    out.tables["effects"] = cross_effects.effects_cells(effects)

    gc_duration = chapter.specs[0].duration
    out.interpreters = interpreter_runs.gc_runs_by_python(chapter.profile, seeds=seeds, duration=gc_duration)
    by_python = out.interpreters.runs
    out.numbers.update(interpreter_runs=interpreter_runs.holdings_sentence(out.interpreters, gc_duration),
                       interpreter_sentence=interpreters.interpreter_sentence(by_python))
    out.tables["interpreters"] = interpreters.gc_rung_table(by_python).set_index(["Python", "rung"])
    return out
