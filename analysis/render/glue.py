"""myst-nb glue for the chapters, with NumPy scalars turned into Python numbers first.

myst-nb formats a glued number from its text repr; a NumPy scalar's repr is
'np.float64(3.5)', which no format spec can read, so `{glue:text}`x:.1f`` would fail.
"""
from __future__ import annotations

import numpy as np


def plain(value):
    """NumPy scalars to Python scalars; everything else unchanged."""
    return value.item() if isinstance(value, np.generic) else value


def glue(name: str, value, display: bool = False):
    from myst_nb import glue as _glue
    return _glue(name, plain(value), display=display)
