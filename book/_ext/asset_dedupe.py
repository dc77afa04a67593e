"""Sphinx extension: remove repeated inline <script> lines from the written HTML pages.

With Sphinx 7.4 and Jupyter Book 1's theme stack, the inline configuration scripts of
sphinx-thebe and sphinx-togglebutton are emitted twice in every page head, and the
second `const THEBE_JS_URL = ...` is a SyntaxError in the browser console. When the
build has finished, this keeps the first of identical inline-script lines per page.
"""
from __future__ import annotations

import re
from pathlib import Path

INLINE_SCRIPT = re.compile(r"^\s*<script>.*</script>\s*$")


def dedupe_page(text: str) -> str:
    seen, out = set(), []
    for line in text.splitlines(keepends=True):
        if INLINE_SCRIPT.match(line):
            key = line.strip()
            if key in seen:
                continue
            seen.add(key)
        out.append(line)
    return "".join(out)


def dedupe_outputs(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    for page in Path(app.outdir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        fixed = dedupe_page(text)
        if fixed != text:
            page.write_text(fixed, encoding="utf-8")


def setup(app):
    app.connect("build-finished", dedupe_outputs)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
