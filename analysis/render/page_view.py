"""What a page module returns: its glue values, its tables and its figures, by name.

Figures are kept as functions and drawn only when the notebook's display cell asks: the
inline backend shows every figure still open at the end of the cell that drew it, so a
figure drawn inside the page's one call would show under that call instead of in its place.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable


@dataclass
class PageView:
    numbers: dict = field(default_factory=dict)            # glue name -> value
    tables: dict = field(default_factory=dict)             # name -> DataFrame, Styler or text
    figures: dict[str, Callable] = field(default_factory=dict)   # name -> draws the figure

    def table(self, name: str):
        if name not in self.tables:
            raise ValueError(f"unknown table {name!r}; valid tables: {', '.join(self.tables)}")
        return self.tables[name]

    def figure(self, name: str):
        if name not in self.figures:
            raise ValueError(f"unknown figure {name!r}; valid figures: {', '.join(self.figures)}")
        return self.figures[name]()
