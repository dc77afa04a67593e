"""Shared by the page modules' tests (tests/analysis/test_page_*): what a chapter's prose
cites, read from its notebook without executing it."""
from __future__ import annotations

import json
import re

from .paths import REPO

GLUE_REF = re.compile(r"\{glue(?::\w+)?\}`([^`:]+)")


def glued_names(page: str) -> set[str]:
    """Every glue name the markdown of book/<page>.ipynb cites ({glue:text}`name:fmt` and kin)."""
    cells = json.loads((REPO / "book" / f"{page}.ipynb").read_text())["cells"]
    return {m.group(1) for c in cells if c["cell_type"] == "markdown"
            for m in GLUE_REF.finditer("".join(c["source"]))}


def notebook_code(page: str) -> str:
    """The code cells of book/<page>.ipynb, joined."""
    cells = json.loads((REPO / "book" / f"{page}.ipynb").read_text())["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
