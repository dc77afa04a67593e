"""The book builds in the smoke profile, every chapter renders with its figures and
tables, a failing cell fails the build, and a chapter re-runs under papermill.

Every test that builds a book or executes a chapter is marked ``slow`` (those reading
the smoke build by tests/conftest.py); the checks of the sources alone (config, toc,
clean notebooks) are not."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import yaml

from tests.support.book import JUPYTER_BOOK, REPO, chapter_notebooks, copy_book_sources, run_build, toc_docnames
from tests.support.readonly import read_only, read_only_preexec

TRACEBACK_MARKERS = ("Traceback (most recent call last)", "ExecutionError", "CellExecutionError")
# Sphinx's own format ("file:line: WARNING: ..." or "WARNING: ..."). Python logging lines
# such as "ERROR:tornado.general:..." (kernel-client noise on shutdown, no space after the
# colon) are not Sphinx warnings and do not affect the pages.
SPHINX_WARNING = re.compile(r"(^|: )(WARNING|ERROR|CRITICAL|SEVERE): ")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def build(smoke_book):
    return smoke_book


# ---------------------------------------------------------------- layout and config
def test_toc_symlink_is_relative():
    link = REPO / "book" / "_toc.yml"
    assert link.is_symlink() and os.readlink(link) == "../_toc.yml"


def test_config_executes_every_build_and_fails_on_errors():
    cfg = yaml.safe_load((REPO / "_config.yml").read_text())
    ex = cfg["execute"]
    assert ex["execute_notebooks"] == "cache"          # keyed by code, profile and runs: exec_cache
    assert ex["allow_errors"] is False and ex["raise_on_error"] is True
    assert ex["timeout"] == -1
    assert {"profile_runs", "exec_cache"} <= set(cfg["sphinx"]["local_extensions"])


@pytest.mark.parametrize("nb_path", chapter_notebooks(), ids=lambda p: p.stem)
def test_chapter_notebook_is_clean_and_parameterized(nb_path: Path):
    nb = nbformat.read(nb_path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and "parameters" in code[0].metadata.get("tags", []), "first code cell must be tagged parameters"
    for name in ("profile", "seeds", "duration", "rate"):
        assert re.search(rf"^{name}\s*=\s*None", code[0].source, re.M), f"parameters cell lacks {name} = None"
    for c in code:
        assert not c.outputs and c.execution_count is None, "commit notebooks without outputs"


# ---------------------------------------------------------------- the smoke build
def test_build_is_warning_free(build):
    lines = (ANSI.sub("", line) for line in build.output.splitlines())
    warnings = [line for line in lines if SPHINX_WARNING.search(line)]
    assert not warnings, "Sphinx warnings:\n" + "\n".join(warnings)


def _page_text(html: Path) -> str:
    from bs4 import BeautifulSoup
    main = BeautifulSoup(html.read_text(), "html.parser").find("main")
    return main.get_text(" ", strip=True)


def test_an_unchanged_rebuild_reads_every_chapter_back(build, tmp_path):
    """Nothing a chapter reads changed, so no chapter executes, and the pages say the same.
    On a private copy of the warm run cache, which no other test writes to between the
    two builds (a new run there would rightly make every chapter execute again)."""
    cache = tmp_path / "cache"
    shutil.copytree(Path(os.environ["ITL_CACHE_DIR"]), cache, ignore=shutil.ignore_patterns(".*"))
    root = copy_book_sources(tmp_path)
    env = {**os.environ, "BOOK_PROFILE": "smoke", "ITL_CACHE_DIR": str(cache)}
    first = run_build(root, env, timeout=900)
    assert first.returncode == 0, first.output[-4000:]
    assert "to run" not in first.output                   # every run was in the copy
    executed = set(re.findall(r"book/(\w+)\.ipynb: Executing notebook", first.output))
    assert executed == {p.stem for p in chapter_notebooks()}          # a new cache folder: a new key
    pages = [n for n in toc_docnames() if (first.html / f"{n}.html").exists()]
    before = {n: _page_text(first.html / f"{n}.html") for n in pages}
    again = run_build(root, env, timeout=900)
    assert again.returncode == 0, again.output[-4000:]
    assert "[exec_cache] reusing executed chapters" in again.output
    assert not re.findall(r"book/(\w+)\.ipynb: Executing notebook", again.output)
    assert {n: _page_text(again.html / f"{n}.html") for n in pages} == before


def test_a_rebuild_reexecutes_every_chapter_from_a_read_only_warm_cache(build, tmp_path):
    """No page may outlive what computed it: another run cache (here a read-only copy of
    the warm one) is another key, so every chapter executes again. Runs and summaries
    found are only read (writes there would fail: permission bits bind even for root)."""
    cache = read_only(Path(os.environ["ITL_CACHE_DIR"]), tmp_path / "read-only-cache")
    again = run_build(build.root, {**os.environ, "BOOK_PROFILE": "smoke", "ITL_CACHE_DIR": str(cache)},
                      timeout=900, preexec_fn=read_only_preexec)
    assert again.returncode == 0, again.output[-4000:]
    assert "to run" not in again.output and "not kept" not in again.output and "unusable" not in again.output
    executed = set(re.findall(r"book/(\w+)\.ipynb: Executing notebook", again.output))
    assert executed == {p.stem for p in chapter_notebooks()}


def test_build_ran_the_profile_first(build):
    assert "[profile_runs] profile 'smoke'" in build.output


@pytest.mark.parametrize("doc", toc_docnames())
def test_chapter_rendered_with_figures_and_tables(build, doc):
    page = build.html / f"{doc}.html"
    assert page.exists(), f"{doc} was not rendered"
    html = page.read_text(encoding="utf-8")
    for marker in TRACEBACK_MARKERS:
        assert marker not in html, f"{doc}: rendered page contains {marker!r}"
    for src in re.findall(r'<img[^>]+src="([^"]+)"', html):
        if src.startswith(("http:", "https:", "data:")):
            continue
        img = (page.parent / src).resolve()
        assert img.exists() and img.stat().st_size > 0, f"{doc}: image {src} missing or empty"
    executed = build.root / "_build" / "jupyter_execute" / f"{doc}.ipynb"
    if (REPO / "book" / f"{doc}.ipynb").exists():
        # every figure and table the executed notebook produced is on the page
        outputs = [o for c in nbformat.read(executed, as_version=4).cells if c.cell_type == "code"
                   for o in c.outputs if o.output_type in ("display_data", "execute_result")]
        n_fig = sum("image/png" in o.data or "image/svg+xml" in o.data for o in outputs)
        n_tab = sum("<table" in o.data.get("text/html", "") for o in outputs)
        for o in (o for c in nbformat.read(executed, as_version=4).cells for o in c.get("outputs", [])):
            assert o.output_type != "error", f"{doc}: a cell raised"
        assert html.count("<img") >= n_fig, f"{doc}: {n_fig} figure(s) produced, fewer rendered"
        assert html.count("<table") >= n_tab, f"{doc}: {n_tab} table(s) produced, fewer rendered"


@pytest.mark.parametrize("doc", toc_docnames())
def test_every_figure_has_a_caption(build, doc):
    """Each image a chapter draws sits in a figure whose caption says what it shows."""
    html = (build.html / f"{doc}.html").read_text(encoding="utf-8")
    figures = re.findall(r"<figure.*?</figure>", html, re.S)
    captioned = sum(len(re.findall(r'<img[^>]+src="[^"]*_images/', f)) for f in figures
                    if re.search(r"<figcaption>.*?\w.*?</figcaption>", f, re.S))
    images = len(re.findall(r'<img[^>]+src="[^"]*_images/', html))
    assert captioned == images, f"{doc}: {images - captioned} of {images} figure(s) without a caption"


def test_stall_chapter_has_its_figure_and_glued_numbers(build):
    html = (build.html / "stall.html").read_text(encoding="utf-8")
    assert re.search(r'<img[^>]+src="_images/[^"]+\.png"', html)
    assert "{glue" not in html and "glue:text" not in html


# ---------------------------------------------------------------- a failing cell fails the build
def _tiny_book(root: Path, failing: bool) -> Path:
    """A two-page book with the project's execution settings (no run matrix)."""
    cfg = yaml.safe_load((REPO / "_config.yml").read_text())
    cfg["sphinx"].pop("local_extensions", None)
    (root / "_config.yml").write_text(yaml.safe_dump(cfg))
    (root / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n  - file: chapter\n")
    (root / "intro.md").write_text("# Tiny\n\nA test book.\n")
    cell = "raise RuntimeError('this chapter fails on purpose')" if failing else "print('fine')"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Chapter"),
                                         nbformat.v4.new_code_cell(cell)],
                                  metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                           "language": "python"}})
    nbformat.write(nb, root / "chapter.ipynb")
    return root


@pytest.mark.slow
@pytest.mark.parametrize("failing", [False, True], ids=["passing-cell", "raising-cell"])
def test_raising_cell_fails_the_build(tmp_path, failing):
    root = _tiny_book(tmp_path, failing)
    proc = subprocess.run(JUPYTER_BOOK + ["build", str(root)], cwd=root, text=True, timeout=600,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    if failing:
        assert proc.returncode != 0, f"a raising cell did not fail the build:\n{proc.stdout[-3000:]}"
        assert "this chapter fails on purpose" in proc.stdout
    else:
        assert proc.returncode == 0, proc.stdout[-3000:]


# ---------------------------------------------------------------- papermill with other seeds
@pytest.mark.slow
def test_chapter_reruns_with_other_seeds_under_papermill(tmp_path):
    out = tmp_path / "out.ipynb"
    proc = subprocess.run([sys.executable, "-m", "papermill", "book/reproducing.ipynb", str(out),
                           "-y", "profile: smoke\nseeds: [2]", "--cwd", "book"],
                          cwd=REPO, text=True, capture_output=True, stdin=subprocess.DEVNULL, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    nb = nbformat.read(out, as_version=4)
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert injected and "seeds = [2]" in injected[0].source
    glued = {}
    for c in nb.cells:
        for o in c.get("outputs", []):
            book = o.get("metadata", {}).get("scrapbook", {})
            if "name" in book:
                glued[book["name"]] = o["data"][book.get("mime_prefix", "") + "text/plain"]
    assert glued["seeds"] == "'2'"
    assert glued["profile"] == "'smoke'"
    assert glued["first_run"] == "'baseline, seed 2'"     # the run it read is seed 2's
