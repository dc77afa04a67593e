"""Fidelity in runs: the article's engine and ours, each making a whole run as its book makes it.

The side-by-side microbenchmark (fidelity.py) gives both engines a warm allocator;
runs do not. Here each engine makes a run of the baseline rung at the same seed, rate
and duration: a fresh single-threaded process with the default glibc allocator (no
MALLOC_* setting), the start-up heap alive, the trace served until it drains, the raw
log written.

  ours    the book's own run (`python -m engine run baseline`, the run cache)
  theirs  the article's engine.py and run.py, cut from the article's text at run time
          into a temporary folder and run there unmodified: `python run.py baseline
          <seed> <duration>` with ITL_RATE set; its raw log is cached under fidelity_runs/

Each serves the trace its own generator draws for the seed (the same arrival process,
prompt and output-length distributions, not the same requests). One trace for both
does not work: the article's tokenizer has no unknown token and raises on this book's
text, and this book's tokenizer cuts the article's text into far more tokens than the
article's does (each was trained on its own vocabulary), which would load our engine
far more heavily. analysis/instrument/run_fidelity.py reads both logs, compares them
and shows the load each run met.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .fidelity import LISTING, SEED_TEXT, cut_listing
from .runs import cache
from .runs.child import child_env, engine_child

RUN_LISTING = ("run.py — runs one rung and dumps raw timing logs\n",
               "analyze.py — recomputes every number from the raw logs")
RUNG = "baseline"
TIMEOUT_S = 1800.0


def article_sources(seed_text: Path = SEED_TEXT) -> dict[str, str] | None:
    """The article's engine.py and run.py, as its text lists them; None without the text."""
    if not Path(seed_text).exists():
        return None
    text = Path(seed_text).read_text()
    return {"engine.py": cut_listing(text, *LISTING), "run.py": cut_listing(text, *RUN_LISTING)}


def _key(seed: int, duration: float, rate: float, sources: dict) -> str:
    h = hashlib.sha256()
    for name in sorted(sources):
        h.update(sources[name].encode())
    h.update(json.dumps({"machine": cache.machine_key(), "libs": cache.library_versions(),
                         "seed": int(seed),
                         "duration": float(duration), "rate": round(float(rate), 6)}, sort_keys=True).encode())
    return h.hexdigest()[:16]


def run_path(seed: int, duration: float, rate: float, sources: dict) -> Path:
    """Where the article engine's raw log lives: keyed by its listings, the machine and
    the library versions (and the seed, duration and rate)."""
    key = _key(seed, duration, rate, sources)
    return cache.cache_dir() / "fidelity_runs" / f"article-engine__s{seed}__d{duration:g}__r{rate:.3f}__{key}.npz"


def article_env(rate: float) -> dict:
    """The article process's environment: single-threaded BLAS and tokenizer, the default
    allocator (any MALLOC_* tuning removed), nothing of this repository importable."""
    env = {k: v for k, v in child_env().items() if not k.startswith("MALLOC_") and k != "PYTHONPATH"}
    env["ITL_RATE"] = repr(float(rate))
    return env


def run_article(seed: int, duration: float, rate: float, seed_text: Path = SEED_TEXT) -> Path | None:
    """The article engine's raw log (made once, then cached); None without the article's text."""
    sources = article_sources(seed_text)
    if sources is None:
        return None
    path = run_path(seed, duration, rate, sources)
    if path.exists():
        return path
    what = f"the article's engine, seed {seed} @ {rate:.2f} req/s, {duration:g} s"
    cache.ensure_writable(path.parent, why=f"{what} is not cached and must be measured there")
    with cache.measuring(what), tempfile.TemporaryDirectory(prefix="article-run-") as d:
        if path.exists():
            return path
        for name, src in sources.items():
            Path(d, name).write_text(src)
        proc = subprocess.run([sys.executable, "run.py", RUNG, str(seed), repr(float(duration))], cwd=d,
                              env=article_env(rate), capture_output=True, text=True, timeout=TIMEOUT_S)
        if proc.returncode != 0:
            raise RuntimeError(f"{what} failed (exit {proc.returncode}):\n{proc.stderr.strip()[-2000:]}")
        made = Path(d, proc.stdout.strip().splitlines()[-1])
        tmp = path.with_name(f".tmp-{os.getpid()}-{path.name}")
        try:
            shutil.copyfile(made, tmp)
            os.replace(tmp, path)
        finally:
            if tmp.exists():
                tmp.unlink()
    return path


def run_ours(seed: int, duration: float, rate: float) -> Path:
    """Our engine's raw log of the baseline rung (the book's run cache)."""
    out = engine_child("run", RUNG, "--seed", str(seed), "--duration", repr(float(duration)),
                       "--rate", repr(float(rate)), what=f"our engine, seed {seed}")
    return Path(out.strip().splitlines()[-1])


def run_pair(seed: int, duration: float, rate: float, ours_first: bool = True,
             seed_text: Path = SEED_TEXT) -> tuple[Path, Path | None]:
    """(our raw log, the article engine's or None without its text), one after the other."""
    if ours_first:
        ours = run_ours(seed, duration, rate)
        return ours, run_article(seed, duration, rate, seed_text)
    theirs = run_article(seed, duration, rate, seed_text)
    return run_ours(seed, duration, rate), theirs
