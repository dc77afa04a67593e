"""Raw logs in memory (DESIGN.md, "The raw log"): read one, checked, as a RunLog.

A raw log is an ``.npz`` with the article engine's arrays, same names, columns,
codes and units (seconds since engine start).  Our engine adds ``schema_version``
(0-d int: 3 from the current writer, engine/serve/rawlog.py; 1 and 2 from earlier
ones, DESIGN.md says what each added) and ``provenance`` (0-d JSON string); the
article's logs have neither and are schema 0.  Any other array is kept, untouched,
in ``RunLog.extras``.  What a log must satisfy, and the errors that name what it
breaks, are in contract.py.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
import zipfile  # noqa: F401  (np.load's first call imports it; paid with this module, like numpy.ma)

import numpy as np

from .columns import STEP
from .contract import ByRequest, RawLogError, checked
from .schemes import GRAPH_EAGER, GRAPH_NONE, SEGMENT_KINDS

__all__ = ["RawLogError", "RunLog", "evictions_by_request", "load", "steps_from_log"]


@dataclass(eq=False)
class RunLog:
    """One run's raw log, validated.  Arrays keep the file's layout (see COLUMNS)."""

    path: str
    steps: np.ndarray = field(repr=False)
    segs: np.ndarray = field(repr=False)
    gcs: np.ndarray = field(repr=False)
    emissions: np.ndarray = field(repr=False)
    evictions: np.ndarray = field(repr=False)
    requests: np.ndarray = field(repr=False)
    trace: np.ndarray = field(repr=False)
    wall: float
    config: dict
    provenance: dict = field(default_factory=dict)
    schema_version: int = 0
    extras: dict = field(default_factory=dict, repr=False)
    by_request: ByRequest | None = field(default=None, repr=False)   # made by validation

    @property
    def rung(self):
        return self.config.get("rung", self.config.get("name"))

    @property
    def seed(self):
        return self.config.get("seed")

    @classmethod
    def from_arrays(cls, path: Any = "<arrays>", **arrays: Any) -> "RunLog":
        """Validate in-memory arrays as if they had been loaded from ``path``."""
        return RunLog(**checked(str(path), arrays))


def load(path: str | Path) -> RunLog:
    """Read and validate a raw log; raise RawLogError naming the file and problem."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such raw log")
    try:
        z = np.load(path, allow_pickle=False)
    except Exception as e:  # zipfile/pickle errors: not an archive numpy can read
        raise RawLogError(path, f"unreadable .npz archive, truncated or corrupt "
                                f"({type(e).__name__}: {e})") from e
    if not isinstance(z, np.lib.npyio.NpzFile):
        raise RawLogError(path, "not an .npz archive (a single .npy array?)")
    try:
        with z:
            # np.load is lazy: decompression (and so truncation) errors surface here
            arrays = {k: z[k] for k in z.files}
    except Exception as e:  # zipfile/zlib/EOF/pickle errors all mean "not a raw log"
        raise RawLogError(path, f"unreadable .npz archive, truncated or corrupt "
                                f"({type(e).__name__}: {e})") from e
    return RunLog(**checked(str(path), arrays))


def steps_from_log(log: RunLog) -> list[dict]:
    """Step dicts for the scalar Partitioner (times in seconds, plain Python types)."""
    steps = [{"t0": float(r[STEP.t0]), "t1": float(r[STEP.t1]), "n_decode": int(r[STEP.n_decode]),
              "n_prefill_tok": int(r[STEP.n_prefill_tok]), "graph": _graph_value(int(r[STEP.graph])),
              "preempted": int(r[STEP.preempted]), "swapped_in": int(r[STEP.swapped_in]), "seg": []}
             for r in log.steps.tolist()]
    for i, kind, a, b in log.segs.tolist():
        steps[int(i)]["seg"].append((SEGMENT_KINDS[int(kind)], a, b))
    for s in steps:
        s["seg"] = tuple(sorted(s["seg"], key=lambda x: x[1]))
    return steps


def evictions_by_request(log: RunLog) -> dict[int, list[tuple[float, float | None]]]:
    """{request: [(evicted, readmitted or None), ...]} for the scalar Partitioner."""
    out: dict[int, list] = {}
    for rid, a, b in log.evictions.tolist():
        out.setdefault(int(rid), []).append((a, None if b != b else b))
    return out


def _graph_value(code: int):
    if code == GRAPH_NONE:
        return None
    return "eager" if code == GRAPH_EAGER else code
