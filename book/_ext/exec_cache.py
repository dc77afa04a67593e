"""Sphinx extension: reuse the executed chapters when nothing they read has changed.

MyST-NB's notebook cache (jupyter-cache) knows a notebook only by its code cells, but a
chapter's numbers also come from engine/, analysis/, the profile and the run cache: a
cache keyed on the notebook alone would serve a page computed by older code or older
runs. So the cache lives in a folder named by a hash of all of those (build_key). Any
change to them gives a new folder, and every chapter executes again; a rebuild with
nothing changed reads every chapter's outputs back instead of executing it.

The key is taken after profile_runs has made the profile's missing runs, so a cold
build keys its pages by the runs they read. The folders sit in the build's own
_build/.jupyter_cache (writable even when the run cache is read-only); the most recent
KEEP are kept, so switching between two profiles does not discard either.
"""
from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from sphinx.util import logging

logger = logging.getLogger(__name__)

BOOK_ROOT = Path(__file__).resolve().parents[2]          # the folder holding _config.yml
CONFIG_FILES = ("_config.yml", "_toc.yml", "requirements.txt")
# What chapters read. Not summaries/ (derived from runs and the analysis code, both in
# the key) nor fidelity/ and fidelity_runs/ (written while the instrument chapter executes, and keyed
# themselves by machine and code, which the key holds too).
CACHE_FOLDERS = ("runs", "calibration", "real_runs", "real_calibration")
RENDER_LIBRARIES = ("pandas", "matplotlib", "myst-nb", "jupyter-book")   # how a page's outputs look
KEEP = 4
PRIORITY = 450          # builder-inited: after profile_runs (400), before myst-nb reads its config (500)


def _code_digest(h, roots) -> None:
    """Each root (a package, or book/_ext) by the engine's own code hash of a folder
    (every Python file in it, by path and bytes)."""
    from engine.runs.cache import code_version
    for root in roots:
        h.update(f"{Path(root).name}={code_version(Path(root))}\n".encode())


def _config_digest(h, book_root: Path) -> None:
    for name in CONFIG_FILES:
        p = book_root / name
        h.update(name.encode())
        h.update(p.read_bytes() if p.exists() else b"")


def _cache_listing(h, cache: Path) -> None:
    """Every cached entry by name, size and time of writing (not its bytes: a listing is
    enough, since an entry is only ever replaced whole, never edited in place)."""
    for folder in CACHE_FOLDERS:
        base = cache / folder
        if not base.is_dir():
            continue
        for p in sorted(base.iterdir()):
            if p.name.startswith(".") or not p.is_file():          # temp files and locks
                continue
            st = p.stat()
            h.update(f"{folder}/{p.name}:{st.st_size}:{st.st_mtime_ns}\n".encode())


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return f"{dist}={version(dist)}"
    except PackageNotFoundError:
        return f"{dist}=absent"


def build_key(code_roots, book_root: Path, cache_dir: Path, facts: dict) -> str:
    """A hash of what every chapter's outputs depend on besides its own cells: the code
    it imports (code_roots), the book's configuration, the run cache's contents and the
    ``facts`` (profile, cache folder, machine, library versions)."""
    h = hashlib.sha256()
    _code_digest(h, code_roots)
    _config_digest(h, Path(book_root))
    h.update(repr(sorted(facts.items())).encode())
    _cache_listing(h, Path(cache_dir))
    return h.hexdigest()[:16]


def this_build_key() -> str:
    """build_key for this build: the engine and analysis packages that will run (wherever
    they are installed from), this book's extensions and configuration, the active profile."""
    import analysis
    import engine
    from engine.runs import cache

    facts = {"profile": engine.get_profile().name, "cache": str(cache.cache_dir().resolve()),
             "machine": cache.machine_key(), "libraries": repr(sorted(cache.library_versions().items())),
             "render": repr([_version(d) for d in RENDER_LIBRARIES])}
    roots = [Path(engine.__file__).parent, Path(analysis.__file__).parent, Path(__file__).parent]
    return build_key(roots, BOOK_ROOT, cache.cache_dir(), facts)


def _prune(root: Path, keep: int = KEEP) -> None:
    folders = sorted((p for p in root.iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in folders[keep:]:
        shutil.rmtree(old, ignore_errors=True)


def use_keyed_cache(app) -> None:
    if app.config.nb_execution_mode != "cache":
        return
    root = Path(app.outdir).parent / ".jupyter_cache"
    folder = root / this_build_key()
    reuse = folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    os.utime(folder)                             # most recently used: pruned last
    _prune(root)
    app.config.nb_execution_cache_path = str(folder)
    logger.info(f"[exec_cache] {'reusing' if reuse else 'new'} executed chapters for key {folder.name}"
                + ("" if reuse else " (code, profile or runs changed: every chapter executes)"))


def setup(app):
    app.connect("builder-inited", use_keyed_cache, priority=PRIORITY)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
