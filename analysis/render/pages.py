"""The glued words of the pages that state the findings' verdicts (summary, report,
takeaways), computed from the one findings table, and a renderer that puts them into a
page's markdown, so a test can read every page as a reader would and check that they
agree."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

from ..across_runs import findings as F
from ..across_runs import headline, power

BOOK = Path(__file__).resolve().parents[2] / "book"
END_KEYS = ("p999_end", "max_end", "p50_flat")   # the summary's one bullet on the ladder's ends


def finding_values(found: pd.DataFrame) -> dict:
    """Per finding: this build's figure, the verdict, the lead-in and the article's figure."""
    out = {}
    for key in found.index:
        out[key] = found.loc[key, "this build"]
        out[key + "_verdict"] = F.verdict(found, key)
        out["lead_" + key] = headline.lead_in(found, key)
        out["art_" + key] = found.loc[key, "article"]
    return out


def summary_values(found: pd.DataFrame, runs, n_seeds: int, duration: float, n_rungs: int) -> dict:
    """Everything the summary glues that is about the findings and the evidence."""
    return {**finding_values(found), **F.verdict_counts(found),
            "lead_ends": headline.group_lead(found, END_KEYS),
            "power": power.power_paragraph(runs, n_seeds, duration, n_rungs),
            "count_time": headline.count_time_sentence(headline.count_time_split(runs))}


def report_values(found: pd.DataFrame, runs, n_seeds: int, duration: float, n_rungs: int) -> dict:
    return {**F.verdict_counts(found), "failed_sentence": F.failed_sentence(found),
            "power": power.power_paragraph(runs, n_seeds, duration, n_rungs)}


def report_table(found: pd.DataFrame) -> pd.DataFrame:
    """The report's table, named by claim, its verdict column the findings table's."""
    return found.assign(verdict=F.verdicts(found)).set_index("claim")[
        ["article", "this build", "criterion", "verdict"]]


# ---------------------------------------------------------------- reading a page as rendered
_GLUE = re.compile(r"\{glue:text\}`([^`:]+)(?::[^`]*)?`")


def markdown_of(chapter: str) -> str:
    """A chapter's markdown cells (a .md page's text), joined."""
    path = BOOK / f"{chapter}.ipynb"
    if not path.exists():
        return (BOOK / f"{chapter}.md").read_text()
    cells = json.loads(path.read_text())["cells"]
    return "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


def render(markdown: str, values: dict) -> str:
    """The markdown with every {glue:text}`name` replaced by its value; a glue the values
    lack stays as '{name}' so a test sees which."""
    return _GLUE.sub(lambda m: str(values.get(m.group(1), "{" + m.group(1) + "}")), markdown)
