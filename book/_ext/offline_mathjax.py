"""Sphinx extension: serve MathJax from the build, so the pages render offline.

Sphinx loads MathJax 3 from a CDN by default; a reader without a network (or behind a
firewall) then sees raw TeX. This points `mathjax_path` at a copy inside the build's
_static/ and copies there, from the pinned `django-static-mathjax` package (MathJax
3.2.2 as plain files; nothing of Django is used), the CHTML bundle Sphinx would have
loaded and what it loads lazily: TeX extensions, CHTML fonts, the menu and its
accessibility components.
"""
from __future__ import annotations

import shutil
from importlib.resources import files
from pathlib import Path

BUNDLE = "tex-mml-chtml.js"               # the bundle Sphinx 7 loads from its CDN
LAZY = ("input", "output/chtml", "ui", "a11y", "sre", "adaptors")   # loaded on demand by the bundle
TARGET = "mathjax"                        # under the build's _static/


def mathjax_source() -> Path:
    return Path(str(files("mathjax") / "static" / "mathjax" / "es5"))


def use_local_mathjax(app, config) -> None:
    config.mathjax_path = f"{TARGET}/{BUNDLE}"       # relative paths are relative to _static/


def copy_mathjax(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    src, dest = mathjax_source(), Path(app.outdir) / "_static" / TARGET
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src / BUNDLE, dest / BUNDLE)
    for part in LAZY:
        shutil.copytree(src / part, dest / part, dirs_exist_ok=True)


def setup(app):
    mathjax_source()                                   # fails the build early if the package is missing
    app.connect("config-inited", use_local_mathjax)
    app.connect("build-finished", copy_mathjax)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
