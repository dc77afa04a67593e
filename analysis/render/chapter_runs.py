"""What the chapters share: the setup every ladder chapter starts with, and the small
rules a chapter applies to its runs, kept here (and tested) rather than in a notebook
cell that no test reaches.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..engine_link import LADDER, get_profile, made_on_confirmed, profile_specs
from ..across_runs.findings import findings
from ..across_runs.summaries import run_summaries


@dataclass
class LadderRuns:
    """A chapter's runs of the ladder: the profile, the run specs, one summary per run,
    the article's findings checked on them, and the rungs in ladder order."""

    profile: object
    specs: list
    runs: list[dict]
    found: object = None
    order: list[str] = field(default_factory=lambda: list(LADDER))


def ladder_runs(profile=None, seeds=None, duration=None, rate=None, rungs=None) -> LadderRuns:
    """The chapter preamble: the profile's ladder runs (made first if missing), their
    summaries and the findings.  Arguments are the chapter's papermill parameters."""
    prof = get_profile(profile)
    specs = made_on_confirmed(prof, lambda: profile_specs(prof, rungs=rungs, seeds=seeds, duration=duration, rate=rate),
                              rate)
    runs = run_summaries(specs)
    return LadderRuns(prof, specs, runs, findings(runs))


def overload_joins(seeds) -> bool:
    """The overload sidebar's runs join a chapter's pooled checks (the reconciliation,
    the report) only when the chapter runs the profile's own seeds: re-run with other
    seeds, the chapter speaks for those seeds alone."""
    return seeds is None


def overload_specs(profile=None, seeds=None, duration=None, rate=None) -> list:
    """The overload sidebar's run specs if they join (see overload_joins), else none."""
    if not overload_joins(seeds):
        return []
    return profile_specs(get_profile(profile), overload=True, duration=duration, rate=rate)


def every(flags) -> str:
    """'every' when every flag holds, else 'not every' (for a sentence's verdict)."""
    return "every" if all(flags) else "not every"
