"""The fix ladder's rungs by name.

The names come from the engine's ladder, once: a renamed or reordered rung fails
here, at import, instead of silently matching no run.
"""
from __future__ import annotations

from ..engine_link import RUNGS

(BASELINE, GC_FREEZE, COMPACT_HISTORY, GRAPHS_48, BUDGET_256, TOKENIZE_OFF_LOOP,
 ADMIT_WATERMARK) = RUNGS
FIRST, LAST = RUNGS[0], RUNGS[-1]
