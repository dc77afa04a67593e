"""The findings the summary and the report both count, made one way for both: the
ladder's runs, plus the overload sidebar's when they join (render/chapter_runs.py,
overload_joins), with a sentence saying which; and the load sweep's frame for the
report's operating-point table."""
from __future__ import annotations

from ..engine_link import ensure_runs, sweep_specs
from ..across_runs.findings import findings
from ..across_runs.scope import OVERLOAD_LEFT_OUT
from ..across_runs.summaries import run_summaries
from ..across_runs.load_sweep import sweep_frame
from .chapter_runs import overload_joins, overload_specs


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
    specs = overload_specs(chapter.profile, seeds, duration, rate)
    if specs:
        ensure_runs(specs)
    table = findings(chapter.runs, run_summaries(specs))
    return table, overload_note(overload_joins(seeds), seeds)


def sweep_of(profile, rate=None):
    """(sweep frame, its specs) for the profile's load sweep at the given operating point
    (the profile's calibrated rate when None); runs it first if missing."""
    specs = sweep_specs(profile, rate=rate)
    if not specs:
        return None, specs
    ensure_runs(specs)
    return sweep_frame(specs, run_summaries(specs)), specs
