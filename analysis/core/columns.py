"""The raw log's column layout (DESIGN.md, "The raw log"), by name.

``COLUMNS`` lists each 2-d array's columns in file order; ``STEP.graph``,
``SEG.kind`` and the like are their positions, so code reads ``steps[:, STEP.graph]``
rather than a bare index.
"""
from __future__ import annotations

from types import SimpleNamespace

COLUMNS: dict[str, tuple[str, ...]] = {
    "steps": ("t0", "t1", "n_decode", "n_prefill_tok", "graph", "preempted", "swapped_in"),
    "segs": ("step", "kind", "t0", "t1"),
    "gcs": ("t0", "t1", "generation"),
    "emissions": ("request", "t", "step"),
    "evictions": ("request", "evicted", "readmitted"),
    "requests": ("request", "arrival", "prompt_tokens", "max_new", "first_token"),
    "trace": ("request", "arrival", "chars", "max_new"),
}


def _positions(array: str) -> SimpleNamespace:
    return SimpleNamespace(**{name: i for i, name in enumerate(COLUMNS[array])})


STEP = _positions("steps")
SEG = _positions("segs")
GC = _positions("gcs")
EMIT = _positions("emissions")
EVICT = _positions("evictions")
REQ = _positions("requests")
TRACE = _positions("trace")
