"""A page measures runs only on a confirmed calibration record.

Every page plans its runs at rates read from the profile's record, and a reader who
re-runs a chapter (other seeds, another day) makes new runs beside cached ones: unless
the record was confirmed first, those runs may be measured on a machine the record no
longer describes (engine/runs/freshness.py). So the analysis makes runs through
`made_on_confirmed`, or confirms before calling `ensure_runs` itself; this test lists the
modules that call `ensure_runs` directly and why each may.
"""
from __future__ import annotations

import re
from pathlib import Path

ANALYSIS = Path(__file__).resolve().parents[2] / "analysis"
# module -> what confirms its record before it calls ensure_runs
CONFIRMED_OTHERWISE = {
    "chapters/reproducing.py": "confirmed_specs, before it plans anything",
    "chapters/real_engine.py": "planned_on_confirmed, with the real engine's own record",
    "instrument/interference_scores.py": "nothing: the control's two arms are made together and compared "
                                         "only with each other",
}


def _callers() -> set[str]:
    return {p.relative_to(ANALYSIS).as_posix() for p in ANALYSIS.rglob("*.py")
            if re.search(r"\bensure_runs\(", p.read_text())}


def test_pages_make_runs_only_on_a_confirmed_record():
    assert _callers() == set(CONFIRMED_OTHERWISE), (
        "a module calls ensure_runs directly: make its runs with made_on_confirmed "
        "(engine/runs/freshness.py), or say here what confirms its record")


def test_the_modules_that_confirm_otherwise_do():
    for module in ("chapters/reproducing.py", "chapters/real_engine.py"):
        text = (ANALYSIS / module).read_text()
        assert "confirmed_specs(" in text or "planned_on_confirmed(" in text, module


def test_a_page_that_makes_runs_shows_their_progress():
    """In a build every run is made before the chapters execute, so a page that makes runs
    prints nothing there; it makes runs only when a reader re-runs it (other seeds, another
    day), and then its probe of the record, a recalibration if the machine changed, and its
    runs take minutes: the reader sees them, with the time left."""
    quiet = {p.relative_to(ANALYSIS).as_posix() for p in ANALYSIS.rglob("*.py")
             if re.search(r"\b(ensure_runs|made_on_confirmed|confirmed_specs)\((?:[^()]|\([^()]*\))*progress=False",
                          p.read_text())}
    assert not quiet, f"these modules make runs without showing their progress: {sorted(quiet)}"
