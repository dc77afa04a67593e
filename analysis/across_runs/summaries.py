"""Summaries of many runs, for the book: cached per raw log and the code that computes them.

A chapter summarizes dozens of 60 s runs; doing that from scratch on every build would
dominate a warm rebuild. Each summary (and any other per-run result a chapter reads on
every build, per_run_cached) is stored as JSON beside the run cache, keyed by the raw
log's file name (a hash of what the run was asked to do), its size and time of writing
(which tell apart two runs made under one name) and a hash of the analysis modules the
computation imports (code_key.py), so a change to the method never serves an old number
and a fixed word in a sentence recomputes none. Writes are atomic.
"""
from __future__ import annotations

import contextlib
import json
import warnings
from pathlib import Path

import numpy as np

from ..core.gaps import partition_run
from ..core.run_summary import summarize
from ..engine_link import CacheWarning, cache_dir, write_atomic_text
from .code_key import code_key
from .hosts import read_where


SUMMARY_KEYS = ("reconcile_max_err_ms",)     # present in every summary, whatever the scheme


def read_cached(out: Path, required=()):
    """A cached per-run result if it reads back whole; a damaged one (truncated, not JSON,
    missing a required key) is reported with a warning naming the file, removed, and None
    returned so it is recomputed."""
    try:
        data = json.loads(out.read_text())
        problem = (None if not required or (isinstance(data, dict) and all(k in data for k in required))
                   else "not a run summary")
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


def per_run_cached(path, kind: str, compute, default=None, required=()):
    """``compute()`` (JSON-able) once per (raw log, kind, code that computes it: the
    analysis modules that ``compute``'s module imports), stored beside the run cache; a
    miss returns the same JSON round trip as a hit. A stored entry that does
    not read back (or lacks a ``required`` key) is reported and recomputed. Storing is best
    effort: on a read-only or full cache folder the result is computed, not kept (warned
    once). ``default``: how json writes what it cannot (NumPy scalars as their numbers)."""
    path = Path(path)
    folder = cache_dir() / "summaries"
    code = code_key(getattr(compute, "__module__", None))
    out = folder / f"{path.stem}__{kind}__{code}__{_identity(path)}.json"
    if (cached := read_cached(out, required)) is not None:
        return cached
    text = json.dumps(compute(), default=default or _plain)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_atomic_text(out, text)
    except OSError as e:
        if folder not in _unkept:
            _unkept.add(folder)
            warnings.warn(f"run summaries are computed but not kept: {e.strerror or e} in {folder}",
                          CacheWarning, stacklevel=2)
    return json.loads(text)


_unkept: set = set()


def _identity(path: Path) -> str:
    """The raw log's size and modification time: a log made again under the same name (a
    cleared run cache, another cache folder) is another log, whose results are not these."""
    st = path.stat()
    return f"{st.st_size:x}-{st.st_mtime_ns:x}"


def _plain(value):
    """NumPy scalars as the Python numbers they hold (an int stays an int)."""
    return value.item() if hasattr(value, "item") else float(value)


def summary_cached(path, scheme: str = "article") -> dict:
    """summarize(path), computed once per (raw log, scheme, code it runs)."""
    return per_run_cached(path, scheme, lambda: summarize(path, scheme=scheme), default=float,
                          required=SUMMARY_KEYS)


def run_summaries(specs, scheme: str = "article") -> list[dict]:
    """One summary per run spec (engine.RunSpec), with the spec's rung, seed, rate and path,
    and where the run was measured (host, cpu_model, cpus_allowed, concurrency: hosts.py)."""
    out = []
    for s in specs:
        summary = summary_cached(s.path, scheme)
        where = per_run_cached(s.path, "where", lambda: read_where(s.path))  # noqa: B023  (called before the loop moves on)
        out.append({**summary, "rung": s.rung, "seed": s.seed, "rate": s.rate,
                    "group": getattr(s, "group", "ladder"), "path": str(s.path), **where})
    return out


def run_gaps(path):
    """partition_run of one raw log (not cached: one run takes well under a second)."""
    return partition_run(path)


def prefix_percentiles(specs, windows, metrics=(("itl_p999", 99.9), ("itl_max", 100.0))) -> list[dict]:
    """What shorter runs would have measured: each run's ITL percentiles over only the gaps
    that ended within the first `w` seconds of arrivals, for each w in `windows`.

    One row per (run, window) with rung, seed and duration=w, the shape that
    paired.seed_subsample_intervals(..., by="duration") takes, so the book can show how
    run length, not only the number of seeds, narrows an interval."""
    def one_run(path) -> list[dict]:
        gaps = run_gaps(path)
        out = []
        for w in windows:
            ms = gaps.loc[gaps["t1"] <= w, "gap_ms"].to_numpy()
            if len(ms):
                out.append({"duration": float(w), **{name: float(np.percentile(ms, q)) for name, q in metrics}})
        return out

    kind = "prefix-" + "-".join(f"{w:g}" for w in windows) + "-" + "-".join(f"{n}@{q:g}" for n, q in metrics)
    return [{"rung": s.rung, "seed": s.seed, **row}     # each lambda is called before the next s
            for s in specs for row in per_run_cached(s.path, kind, lambda: one_run(s.path))]  # noqa: B023
