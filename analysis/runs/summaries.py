"""Summaries of many runs, for the book: cached per raw log and analysis code version.

A chapter summarizes dozens of 60 s runs; doing that from scratch on every build would
dominate a warm rebuild. Each summary is stored as JSON beside the run cache, keyed by
the raw log's file name (itself a content hash of the run) and a hash of this package's
code, so a change to the analysis never serves an old number. Writes are atomic.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import warnings
from pathlib import Path

import numpy as np

from ..core.gaps import partition_run
from ..core.summary import summarize
from ..engine_link import CacheWarning, cache_dir, write_atomic_text

ANALYSIS_DIR = Path(__file__).resolve().parent.parent


@functools.cache                       # the code does not change under a running process
def analysis_code_version() -> str:
    """Hash of every module of the analysis package, subpackages included."""
    h = hashlib.sha256()
    for p in sorted(ANALYSIS_DIR.rglob("*.py")):
        h.update(p.relative_to(ANALYSIS_DIR).as_posix().encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


SUMMARY_KEYS = ("reconcile_max_err_ms",)     # present in every summary, whatever the scheme


def read_summary(out: Path) -> dict | None:
    """A cached summary if it reads back whole; a damaged one (truncated, not JSON, not a
    summary) is reported with a warning naming the file, removed, and None returned so
    it is recomputed."""
    try:
        data = json.loads(out.read_text())
        problem = None if isinstance(data, dict) and all(k in data for k in SUMMARY_KEYS) else "not a run summary"
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        problem = f"not readable JSON: {e}"
    if problem is None:
        return data
    warnings.warn(f"cached run summary {out} is unusable ({problem}); recomputing it", CacheWarning, stacklevel=3)
    with contextlib.suppress(OSError):
        out.unlink()
    return None


def summary_cached(path, scheme: str = "article") -> dict:
    """summarize(path), computed once per (raw log, scheme, analysis code). Storing it is
    best effort: on a read-only or full cache folder it is computed, not kept (warned once)."""
    path = Path(path)
    folder = cache_dir() / "summaries"
    out = folder / f"{path.stem}__{scheme}__{analysis_code_version()}.json"
    if (cached := read_summary(out)) is not None:
        return cached
    text = json.dumps(summarize(path, scheme=scheme), default=float)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_atomic_text(out, text)
    except OSError as e:
        if folder not in _unkept:
            _unkept.add(folder)
            warnings.warn(f"run summaries are computed but not kept: {e.strerror or e} in {folder}",
                          CacheWarning, stacklevel=2)
    return json.loads(text)                  # the same JSON round trip as a cache hit


_unkept: set = set()


def run_summaries(specs, scheme: str = "article") -> list[dict]:
    """One summary per run spec (engine.RunSpec), with the spec's rung, seed, rate and path."""
    out = []
    for s in specs:
        summary = summary_cached(s.path, scheme)
        out.append({**summary, "rung": s.rung, "seed": s.seed, "rate": s.rate,
                    "group": getattr(s, "group", "ladder"), "path": str(s.path)})
    return out


def partition_frame(path):
    """partition_run of one raw log (not cached: one run takes well under a second)."""
    return partition_run(path)


def prefix_percentiles(specs, windows, metrics=(("itl_p999", 99.9), ("itl_max", 100.0))) -> list[dict]:
    """What shorter runs would have measured: each run's ITL percentiles over only the gaps
    that ended within the first `w` seconds of arrivals, for each w in `windows`.

    One row per (run, window) with rung, seed and duration=w, the shape that
    stats.seed_subsample_intervals(..., by="duration") takes, so the book can show how
    run length, not only the number of seeds, narrows an interval."""
    rows = []
    for s in specs:
        gaps = partition_frame(s.path)
        for w in windows:
            ms = gaps.loc[gaps["t1"] <= w, "gap_ms"].to_numpy()
            if len(ms):
                rows.append({"rung": s.rung, "seed": s.seed, "duration": float(w),
                             **{name: float(np.percentile(ms, q)) for name, q in metrics}})
    return rows
