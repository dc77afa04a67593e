"""The takeaways' page (book/takeaways), computed: one call makes the runs, the glue values
and the tables; the notebook only displays them. What each cause did and what its fix
did and cost are across_runs/cause_fixes.py's; this module puts them on the page."""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from ..across_runs import cause_fixes, headline
from ..across_runs.per_cause import BAND_COVERAGE
from ..instrument.knobs import ladder_knobs
from ..render.chapter_runs import ladder_runs


@dataclass
class TakeawaysPage:
    """What book/takeaways shows: `numbers` (every glue value by name) and its tables, each
    a Styler without the index."""

    runs: list[dict]
    frame: pd.DataFrame        # one row per cause (cause_fixes.cause_frame)
    effects: pd.DataFrame      # the paired change across each fix (fix_effects.fix_effects)
    numbers: dict = field(default_factory=dict)

    def table(self, name: str):
        makers = {"where": lambda: cause_fixes.where_table(self.frame),
                  "fixes": lambda: cause_fixes.fix_table(self.frame, self.effects),
                  "card_measured": lambda: cause_fixes.card_measured(self.runs),
                  "card_fixes": lambda: cause_fixes.card_fixes(self.frame)}
        if name not in makers:
            raise ValueError(f"unknown table {name!r}; valid tables: {', '.join(makers)}")
        return makers[name]().style.hide(axis="index")


def takeaway_numbers(chapter, frame: pd.DataFrame, effects: pd.DataFrame) -> dict:
    """Every value the takeaways glue: the protocol's size, one takeaway per cause, and the
    sentences on removal, costs, the ladder's ends and which cause leads."""
    runs = chapter.runs
    return {"n_seeds": len({s.seed for s in chapter.specs}), "duration": chapter.specs[0].duration,
            "band_coverage": f"{100 * BAND_COVERAGE:g}%",
            **{"take_" + row["cause"]: cause_fixes.cause_takeaway(row) for _, row in frame.iterrows()},
            "removed": cause_fixes.removed_sentence(frame),
            "costs": cause_fixes.costs_sentence(effects),
            "cost_finding": cause_fixes.cost_finding_sentence(chapter.found),   # the findings table's verdict
            "ends": cause_fixes.ends_sentence(runs),
            "count_time": headline.count_time_sentence(headline.count_time_split(runs))}


def page(profile=None, seeds=None, duration=None, rate=None) -> TakeawaysPage:
    """Everything book/takeaways shows; runs that are missing are made first."""
    chapter = ladder_runs(profile, seeds, duration, rate)
    frame = cause_fixes.cause_frame(chapter.runs, knobs=ladder_knobs())
    effects = cause_fixes.fix_effects(chapter.runs)
    return TakeawaysPage(chapter.runs, frame, effects, takeaway_numbers(chapter, frame, effects))
