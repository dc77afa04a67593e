"""The findings the summary and the report both count, made one way for both: the
ladder's runs, plus the overload sidebar's when they join (render/chapter_runs.py,
overload_joins), with a sentence saying which; the build's regime sentence; and the load
sweep's frame. Both pages (analysis/chapters/summary.py and report.py) start from
`evidence`, so they cannot count a different table."""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..engine_link import get_profile, made_on_confirmed, sweep_specs
from ..across_runs.findings import findings
from ..across_runs.regime_reading import build_regime
from ..across_runs.scope import OVERLOAD_LEFT_OUT
from ..across_runs.summaries import run_summaries
from ..across_runs.load_sweep import sweep_frame
from .chapter_runs import LadderRuns, ladder_runs, overload_joins, overload_specs


def overload_note(joined: bool, seeds=None) -> str:
    """Whether the overload sidebar's runs are among the findings, and why not if not."""
    if joined:
        return ("The overload sidebar's runs are included: its findings close the report's table, on "
                "the sidebar's own seeds.")
    return (f"This chapter was run with seeds {list(seeds)}; the overload sidebar's runs are left out, "
            f"because {OVERLOAD_LEFT_OUT}. Run the overload chapter with the same seeds to check its findings.")


def book_findings(chapter, seeds=None, duration=None, rate=None):
    """(findings table, overload note) for a chapter's ladder runs (render.chapter_runs.ladder_runs)
    and its papermill parameters."""
    specs = made_on_confirmed(chapter.profile, lambda: overload_specs(chapter.profile, seeds, duration, rate), rate)
    table = findings(chapter.runs, run_summaries(specs))
    return table, overload_note(overload_joins(seeds), seeds)


def sweep_of(profile, rate=None):
    """(sweep frame, its specs) for the profile's load sweep at the given operating point
    (the profile's calibrated rate when None); runs it first if missing."""
    specs = made_on_confirmed(get_profile(profile), lambda: sweep_specs(profile, rate=rate), rate)
    if not specs:
        return None, specs
    return sweep_frame(specs, run_summaries(specs)), specs


@dataclass
class Evidence:
    """What the summary and the report both state: the ladder's runs, the findings table
    (with the overload sidebar's runs when they join), the note saying which, the build's
    regime sentence, and the load sweep (None and no specs when the profile runs none)."""

    chapter: LadderRuns
    found: pd.DataFrame
    overload_note: str
    regime_sentence: str
    sweep: pd.DataFrame | None
    sweep_specs: list

    @property
    def n_seeds(self) -> int:
        return len({s.seed for s in self.chapter.specs})

    @property
    def n_rungs(self) -> int:
        return len({s.rung for s in self.chapter.specs})

    @property
    def duration(self) -> float:
        return self.chapter.specs[0].duration


def evidence(profile=None, seeds=None, duration=None, rate=None) -> Evidence:
    """The evidence of a build for its papermill parameters; runs that are missing are made first."""
    chapter = ladder_runs(profile, seeds, duration, rate)
    found, note = book_findings(chapter, seeds, duration, rate)
    reg = build_regime(profile, seeds, duration, rate)
    # where, then against its check, then (when no check reached the regime) what each check run read
    missed = (reg["calibration"] or {}).get("band_reached") is False
    regime = " ".join(filter(None, (reg["sentence"], reg["carry"], reg["overlap"] if missed else "")))
    sweep, specs = sweep_of(chapter.profile, rate)
    return Evidence(chapter, found, note, regime, sweep, specs)
