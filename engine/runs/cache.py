"""The run cache: one immutable raw log per (engine code, config, workload, seed,
duration, rate, library versions), named by a hash of all of them.

A change to any file of the measured package (engine/serve, hashed whole, so a module
added there is in the key without anyone listing it), any knob or any library version
gives a new key, so a stale log is never reused; edits to this package (engine/runs)
never change a key. Entries appear only by atomic rename, so a killed run leaves
nothing behind but a temp file, which is ignored and later swept.
"""
from __future__ import annotations

import hashlib
import json
import os
import platform
import time
from pathlib import Path

from ..serve.config import Config, slug
from ..serve.workload import Workload

REPO = Path(__file__).resolve().parents[2]
MEASURED_DIR = Path(__file__).resolve().parents[1] / "serve"   # every file here is in the key
CACHE_ENV = "ITL_CACHE_DIR"


def cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or REPO / ".cache")


def runs_dir() -> Path:
    return cache_dir() / "runs"


def measured_files(folder: Path = MEASURED_DIR) -> list[Path]:
    """Every Python file of the measured package, recursively, in a stable order."""
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def code_version(folder: Path = MEASURED_DIR) -> str:
    """A hash of the measured package's files (names and bytes)."""
    h = hashlib.sha256()
    for p in measured_files(folder):
        h.update(p.relative_to(folder).as_posix().encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def library_versions() -> dict:
    import numpy
    import tokenizers
    return {"python": platform.python_version(), "numpy": numpy.__version__,
            "tokenizers": tokenizers.__version__}


def run_key(cfg: Config, seed: int, duration: float, rate: float, workload: Workload = Workload()) -> str:
    spec = {"code": code_version(), "config": cfg.to_dict(), "workload": workload.to_dict(),
            "seed": int(seed), "duration": float(duration), "rate": round(float(rate), 6),
            "libs": library_versions()}
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]


def run_path(cfg: Config, seed: int, duration: float, rate: float, workload: Workload = Workload()) -> Path:
    key = run_key(cfg, seed, duration, rate, workload)
    return runs_dir() / f"{slug(cfg.name)}__s{seed}__d{duration:g}__r{rate:.3f}__{key}.npz"


def ensure_writable(folder: Path) -> Path:
    """Create the folder and prove we can write there; a clear error otherwise."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".probe-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as e:
        raise PermissionError(f"cache folder {folder} is not writable ({e.strerror or e}); "
                              f"set {CACHE_ENV} to a writable folder") from None
    return folder


def sweep_temp_files(folder: Path, older_than_s: float = 3600.0) -> int:
    """Remove temp files left by killed runs (only old ones: a live run may own a new one)."""
    n = 0
    for p in folder.glob(".tmp-*"):
        try:
            if time.time() - p.stat().st_mtime > older_than_s:
                p.unlink()
                n += 1
        except OSError:
            pass
    return n
