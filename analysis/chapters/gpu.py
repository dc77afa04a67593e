"""The GPU page (book/gpu), computed: what the engine records per run, the one table and
number the page shows; the notebook only displays them."""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from ..engine_link import get_profile
from ..instrument import tags


@dataclass
class GpuPage:
    """What book/gpu shows: `numbers` (every glue value by name) and the raw log's columns."""

    columns: pd.DataFrame                       # one row per raw-log array (tags.raw_log_columns)
    numbers: dict = field(default_factory=dict)

    def table(self, name: str):
        makers = {"columns": lambda: self.columns.style.hide(axis="index")}
        if name not in makers:
            raise ValueError(f"unknown table {name!r}; valid tables: {', '.join(makers)}")
        return makers[name]()


def page(profile=None, seeds=None, duration=None, rate=None) -> GpuPage:
    """Everything book/gpu shows. It makes no runs; a profile that does not exist is refused
    by name, as on every page (seeds, duration and rate are the book's common parameters)."""
    get_profile(profile)
    columns = tags.raw_log_columns()
    return GpuPage(columns, {"n_arrays": len(columns)})
