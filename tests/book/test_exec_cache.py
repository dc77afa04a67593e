"""A rebuild reads executed chapters back only while nothing they read
has changed. The execution cache's folder is named by build_key (book/_ext/exec_cache.py)."""
from __future__ import annotations

import importlib.util
import os

import pytest

from tests.support.paths import REPO

_spec = importlib.util.spec_from_file_location("exec_cache", REPO / "book" / "_ext" / "exec_cache.py")
exec_cache = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(exec_cache)

FACTS = {"profile": "smoke", "cache": "/c", "machine": "m", "libraries": "l", "render": "r"}


@pytest.fixture
def world(tmp_path):
    code = tmp_path / "analysis"
    (code / "core").mkdir(parents=True)
    (code / "core" / "gaps.py").write_text("X = 1\n")
    book = tmp_path / "book-root"
    book.mkdir()
    (book / "_config.yml").write_text("title: t\n")
    cache = tmp_path / "cache"
    for folder in ("runs", "calibration", "summaries", "fidelity"):
        (cache / folder).mkdir(parents=True)
    (cache / "runs" / "baseline__s1.npz").write_bytes(b"log")
    return code, book, cache


def _key(world, facts=FACTS):
    code, book, cache = world
    return exec_cache.build_key([code], book, cache, facts)


def test_key_is_stable_while_nothing_read_changes(world):
    code, book, cache = world
    first = _key(world)
    assert _key(world) == first
    (cache / "summaries" / "baseline__s1__article.json").write_text("{}")     # derived: not read back
    (cache / "fidelity" / "m-c-b-r15-seed.json").write_text("{}")             # written mid-build, self-keyed
    (cache / "runs" / ".tmp-123-x.npz").write_bytes(b"half")                  # a writer's temp file
    (code / "core" / "__pycache__").mkdir()
    (code / "core" / "__pycache__" / "gaps.cpython-311.pyc").write_bytes(b"\0")
    assert _key(world) == first


@pytest.mark.parametrize("change", ["code", "new module", "config", "run", "run rewritten", "calibration", "profile"])
def test_key_changes_with_anything_a_chapter_reads(world, change):
    code, book, cache = world
    before = _key(world)
    facts = FACTS
    if change == "code":
        (code / "core" / "gaps.py").write_text("X = 2\n")
    elif change == "new module":
        (code / "core" / "extra.py").write_text("")
    elif change == "config":
        (book / "_config.yml").write_text("title: u\n")
    elif change == "run":
        (cache / "runs" / "baseline__s2.npz").write_bytes(b"log")
    elif change == "run rewritten":
        log = cache / "runs" / "baseline__s1.npz"
        st = log.stat()
        log.write_bytes(b"LOG")
        os.utime(log, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    elif change == "calibration":
        (cache / "calibration" / "checked.json").write_text("{}")
    elif change == "profile":
        facts = {**FACTS, "profile": "article"}
    assert _key(world, facts) != before


def test_this_builds_key_covers_the_installed_packages_and_this_books_extensions(monkeypatch, tmp_path):
    monkeypatch.setenv("ITL_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("BOOK_PROFILE", "smoke")
    smoke = exec_cache.this_build_key()
    assert smoke == exec_cache.this_build_key()
    monkeypatch.setenv("BOOK_PROFILE", "quick")
    assert exec_cache.this_build_key() != smoke
