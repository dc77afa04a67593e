"""Sphinx extension: run the active profile's whole run matrix before any notebook executes.

Chapters only read raw logs from the engine's run cache. Doing every missing run here,
one at a time in fresh subprocesses, keeps the measurements out of the notebook
kernels and puts a single progress bar (which run, how many left, time left) on the
terminal of a long build. With a warm cache this is a few cache look-ups.

The profile comes from BOOK_PROFILE (article when unset); the kernels inherit the same
variable, so every chapter sees the same protocol.
"""
from __future__ import annotations

import time

from sphinx.util import logging

logger = logging.getLogger(__name__)


def run_profile(app) -> None:
    import engine
    from engine.runs.freshness import begin_build

    begin_build()      # the record this build confirms or makes now is the one its pages read
    profile = engine.get_profile()
    logger.info(f"[profile_runs] profile {profile.name!r}: seeds {list(profile.seeds)}, "
                f"{profile.duration:g} s per run, {len(profile.rungs)} rungs, overload seeds "
                f"{list(profile.overload_seeds)} ({profile.minutes_2core} min on 2 cores "
                f"from an empty cache)")
    t0 = time.time()
    runs = engine.ensure_profile(profile, progress=True)
    n = len({s.path for v in runs.values() for s in v})      # a run two chapters share counts once
    logger.info(f"[profile_runs] {n} runs ready in {time.time() - t0:.0f} s")
    from analysis.chapters import real_engine
    t0 = time.time()
    n = len(real_engine.ensure_real(profile))
    logger.info(f"[profile_runs] {n} real-engine runs ready in {time.time() - t0:.0f} s")
    from analysis.instrument import interference_scores
    found = interference_scores.control(profile)
    if interference_scores.moved(found["table"]):       # said on the terminal too, not only on the page
        logger.info(f"[profile_runs] interference control: {found['sentence']}")


def reread_everything(app, env, added, changed, removed):
    """Re-read every document on every build, not just edited ones.

    Sphinx re-reads only sources whose text changed, but a chapter's numbers also depend
    on engine/, analysis/ and the run cache, which Sphinx cannot see; without this a page
    computed by older code would be served. A re-read chapter executes only if the keyed
    execution cache (exec_cache.py) holds no outputs for it under today's key."""
    return sorted(env.found_docs - set(added) - set(changed) - set(removed))


def setup(app):
    app.connect("builder-inited", run_profile, priority=400)     # before exec_cache keys the runs
    app.connect("env-get-outdated", reread_everything)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
