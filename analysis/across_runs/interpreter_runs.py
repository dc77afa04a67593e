"""Which cached runs of the GC rungs each interpreter made, at its own calibrated rate
(book/causes reads them for interpreters.gc_rung_table and interpreter_sentence).

A run's cache key holds the versions of its interpreter and libraries, and a calibration
record's name holds the machine's fingerprint, the interpreter's version included: under
each interpreter this machine is calibrated apart, and its runs have their own names. So
the runs are found from what the cache holds, never made here: every raw log of a GC rung
at the profile's duration and seeds is read for the interpreter its provenance names; the
interpreter's calibration record (the profile's protocol, this engine code) gives its rate
(carried to the profile's seeds by decode demand, as the build carries it);
and a run is kept only if its file is the very one the profile's run at that rate would be
under that interpreter and its libraries (so a run at another rate, of another engine code
or another concurrency is left out).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..engine_link import (LADDER, carried_rate, default_concurrency, get_profile, load_calibration, run_path,
                           runs_dir, slug)
from .interpreters import GC_RUNGS
from .summaries import run_summaries

FORWARD = "article"      # the ladder's forward
GROUP = "interpreters"   # the runs' group in their summaries
# <rung slug>__s<seed>__d<duration>__r<rate>[__k<concurrency>]__<key>.npz (engine/runs/cache.py run_path)
RUN_NAME = re.compile(r"(?P<slug>.+?)__s(?P<seed>\d+)__d(?P<duration>[^_]+)__r(?P<rate>[^_]+)"
                      r"(?:__k(?P<k>\d+))?__(?P<key>[0-9a-f]+)\.npz")
LIBS = ("python", "numpy", "tokenizers")   # the library versions a run's key holds


@dataclass(frozen=True)
class CachedRun:
    """A run found in the cache: what run_summaries needs of a run spec."""

    path: Path
    rung: str
    seed: int
    rate: float
    group: str = GROUP


@dataclass
class InterpreterRuns:
    """`runs`: Python version -> one summary per kept run, GC rungs only (interpreters
    with none kept are absent); `skipped`: Python version -> why its runs were left out."""

    runs: dict = field(default_factory=dict)
    skipped: dict = field(default_factory=dict)


def read_provenance(path) -> dict:
    """A raw log's provenance (empty if it has none)."""
    with np.load(Path(path)) as z:
        return json.loads(str(z["provenance"])) if "provenance" in z.files else {}


def gc_candidates(seeds, duration: float, concurrency: int, folder: Path | None = None) -> list[tuple]:
    """(path, rung, seed) of every raw log in the run cache named as a GC rung's run of one
    of `seeds`, `duration` seconds long, at `concurrency`, whatever its rate."""
    rungs = {slug(r): r for r in GC_RUNGS}
    folder = runs_dir() if folder is None else folder
    out = []
    for p in sorted(folder.glob("*.npz")) if folder.is_dir() else []:
        m = RUN_NAME.fullmatch(p.name)
        if (m and m["slug"] in rungs and int(m["seed"]) in seeds and float(m["duration"]) == float(duration)
                and int(m["k"] or 1) == concurrency):
            out.append((p, rungs[m["slug"]], int(m["seed"])))
    return out


def _record_words(prof) -> str:
    checks = f", {prof.check_duration:g} s checks" if prof.check_duration else ""
    return f"{prof.calibration} calibration record ({FORWARD} forward{checks}) of this machine and engine code"


def gc_runs_by_python(profile=None, seeds=None, duration=None, concurrency=None, summarize=run_summaries,
                      read=read_provenance) -> InterpreterRuns:
    """The GC rungs' cached runs per interpreter, each at that interpreter's own calibrated
    rate (module docstring). `seeds`, `duration`: the profile's unless given; `concurrency`:
    the level the runs are made at (this environment's unless given). `summarize` and `read`
    (run_summaries and read_provenance) are there for tests."""
    prof = get_profile(profile)
    seeds = set(prof.seeds if seeds is None else seeds)
    duration = float(prof.duration if duration is None else duration)
    k = default_concurrency() if concurrency is None else int(concurrency)
    found: dict[str, list] = {}
    for path, rung, seed in gc_candidates(seeds, duration, k):
        prov = read(path)
        if prov.get("python"):
            found.setdefault(str(prov["python"]), []).append((path, rung, seed, prov))
    out = InterpreterRuns()
    for python in sorted(found):
        record = load_calibration(prof.calibration, FORWARD, prof.check_duration, k, python=python)
        if record is None:
            out.skipped[python] = f"no {_record_words(prof)} under Python {python}"
            continue
        carried = carried_rate(record, sorted(seeds), duration)    # as the build carries it
        rate = float(record["rate"]) if carried is None else carried["rate"]
        kept = [CachedRun(path, rung, seed, rate) for path, rung, seed, prov in found[python]
                if path.name == run_path(LADDER[rung], seed, duration, rate, concurrency=k,
                                         libs={lib: prov.get(lib) for lib in LIBS}).name]
        if not kept:
            out.skipped[python] = (f"none of its {len(found[python])} run(s) of the GC rungs is at its "
                                   f"calibrated rate ({rate:.3f} req/s) with this engine code")
            continue
        out.runs[python] = summarize(sorted(kept, key=lambda r: (GC_RUNGS.index(r.rung), r.seed)))
    return out


def holdings_sentence(found: InterpreterRuns, duration: float) -> str:
    """What the run cache holds of the GC rungs per interpreter, and which interpreters'
    runs were left out and why."""
    held = [f"Python {py} ({len(runs)} run(s) at {runs[0]['rate']:.2f} req/s)" for py, runs in found.runs.items()]
    rungs = ", ".join(GC_RUNGS)
    text = (f"This run cache holds the GC rungs ({rungs}) with {duration:g} s of arrivals at each interpreter's "
            f"own calibrated rate under {_and(held)}." if held else
            f"This run cache holds no run of the GC rungs ({rungs}) with {duration:g} s of arrivals at an "
            f"interpreter's own calibrated rate.")
    return " ".join([text] + [f"Python {py} is left out: {why}." for py, why in found.skipped.items()])


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
