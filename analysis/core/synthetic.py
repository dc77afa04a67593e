"""Build a small RunLog from hand-written steps, for examples, tests and the book.

The scalar Partitioner takes step dicts; the whole-run path takes a RunLog.  This
turns the first into the second, so a controlled example (like the reviewer's) can
be run through both paths.
"""
from __future__ import annotations

import bisect
import json
import math

import numpy as np

from .schemes import GRAPH_EAGER, GRAPH_NONE, SEGMENT_KINDS
from .runlog import RunLog


def graph_code(graph) -> int:
    if graph is None:
        return GRAPH_NONE
    return GRAPH_EAGER if graph == "eager" else int(graph)


def runlog_from_steps(steps, gcs=(), emissions=(), evictions=(), path="<layout>",
                      config=None) -> RunLog:
    """A validated RunLog holding the given steps (dicts as for Partitioner), GC pauses
    ``(start, end)``, emissions ``(request, t)`` and evictions ``(request, evicted,
    readmitted or None)``.  Each emission is stamped with the last step starting at
    or before it; requests arrive at 0 and get their first token at their first
    emission."""
    st = np.array([(s["t0"], s["t1"], s.get("n_decode", 0), s.get("n_prefill_tok", 0),
                    graph_code(s.get("graph")), s.get("preempted", 0), s.get("swapped_in", 0))
                   for s in steps], dtype=float).reshape(-1, 7)
    sg = np.array([(i, SEGMENT_KINDS.index(k), a, b)
                   for i, s in enumerate(steps) for k, a, b in s.get("seg", ())],
                  dtype=float).reshape(-1, 4)
    gc = np.array([(a, b, 0) for a, b in gcs], dtype=float).reshape(-1, 3)
    starts = [s["t0"] for s in steps]
    em = np.array([(r, t, max(0, bisect.bisect_right(starts, t) - 1)) for r, t in emissions],
                  dtype=float).reshape(-1, 3)
    ev = np.array([(r, a, math.nan if b is None else b) for r, a, b in evictions],
                  dtype=float).reshape(-1, 3)
    first = {}
    for r, t in emissions:
        first.setdefault(r, t)
    rq = np.array([(r, 0.0, 1, 1, t) for r, t in first.items()], dtype=float).reshape(-1, 5)
    tr = np.array([(r, 0.0, 1, 1) for r in first], dtype=float).reshape(-1, 4)
    return RunLog.from_arrays(path, steps=st, segs=sg, gcs=gc, emissions=em, evictions=ev,
                              requests=rq, trace=tr, wall=np.float64(1.0),
                              config=np.str_(json.dumps(config or {"rung": "layout", "seed": 0})))
