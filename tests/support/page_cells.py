"""A notebook's cells as its page module's tests read them (tests/analysis/test_page_*),
without executing it: the glue names its prose cites, and the modules its code imports."""
from __future__ import annotations

import ast
import json
import re

from .paths import REPO

CITED = re.compile(r"\{glue(?::\w+)?\}`([^`:]+)")
# what a page's notebook may import besides its page module: the glue and pandas' display options
DISPLAY_IMPORTS = {"analysis.render.glue", "pandas"}


def _cells(page: str, kind: str) -> list[str]:
    cells = json.loads((REPO / "book" / f"{page}.ipynb").read_text())["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == kind]


def cited(page: str) -> set[str]:
    """Every glue name the markdown of book/<page>.ipynb cites ({glue:text}`name:fmt` and kin)."""
    return {m.group(1) for text in _cells(page, "markdown") for m in CITED.finditer(text)}


def imported(page: str) -> set[str]:
    """Every module the code cells of book/<page>.ipynb import (``from a import b``: ``a.b``
    when b is a module of the analysis package, else ``a``); IPython magics are skipped."""
    out = set()
    for text in _cells(page, "code"):
        code = "\n".join("" if line.lstrip().startswith("%") else line for line in text.splitlines())
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, ast.Import):
                out.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                parent = node.module or ""
                for a in node.names:
                    out.add(f"{parent}.{a.name}" if parent in ("analysis", "analysis.chapters") else parent)
    return out


def calls_only_its_page(page: str) -> list[str]:
    """What book/<page>.ipynb imports beyond its own page module and the display helpers."""
    return sorted(imported(page) - DISPLAY_IMPORTS - {f"analysis.chapters.{page}"})


def notebook_code(page: str) -> str:
    """The code cells of book/<page>.ipynb, joined."""
    return "\n".join(_cells(page, "code"))
