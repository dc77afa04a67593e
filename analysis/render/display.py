"""How the chapters' tables print: every cell whole. pandas cuts a text cell at 50
characters and a long table at 60 rows, each with '...'; a book's table is read, not
skimmed, so neither is cut (the HTML wraps a long cell instead). Applied when
analysis.render is imported, which every chapter does for glue."""
from __future__ import annotations

import pandas as pd

WHOLE = {"display.max_colwidth": None, "display.max_columns": None, "display.max_rows": 1000,
         "display.width": None, "styler.render.max_elements": 2 ** 22}


def show_whole_cells() -> None:
    """Print every row, column and character of a table (and let HTML wrap long cells)."""
    for option, value in WHOLE.items():
        pd.set_option(option, value)
