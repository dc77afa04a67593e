"""Tables that show what the instrument records: one step's tags, GC pauses, the raw
log's arrays, and the forward-pass microbenchmark."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.columns import COLUMNS, GC, SEG, STEP
from ..core.runlog import RunLog
from ..core.schemes import SEGMENT_KINDS

def busiest_step(log: RunLog) -> int:
    """A step that shows every kind of tag at once: tokenizing, prefill and decode, longest first."""
    segs, steps = log.segs, log.steps
    kinds = pd.DataFrame({"step": segs[:, SEG.step].astype(int), "kind": segs[:, SEG.kind].astype(int),
                          "dur": segs[:, SEG.t1] - segs[:, SEG.t0]})
    per = kinds.pivot_table(index="step", columns="kind", values="dur", aggfunc="sum", fill_value=0.0)
    full = per[(per > 0).sum(axis=1) == per.shape[1]] if len(per.columns) else per
    pool = full if len(full) else per
    dur = steps[pool.index.to_numpy(), STEP.t1] - steps[pool.index.to_numpy(), STEP.t0]
    return int(pool.index.to_numpy()[int(np.argmax(dur))])


def step_segments(log: RunLog, step: int) -> pd.DataFrame:
    """The tags of one step: each segment's kind, start and length (ms, from the step's start)."""
    t0, t1 = log.steps[step, STEP.t0], log.steps[step, STEP.t1]
    segs = log.segs[log.segs[:, SEG.step] == step]
    rows = [{"segment": SEGMENT_KINDS[int(c)], "starts at ms": (a - t0) * 1e3, "lasts ms": (b - a) * 1e3}
            for _, c, a, b in segs]
    covered = float((segs[:, SEG.t1] - segs[:, SEG.t0]).sum())
    rows.append({"segment": "(untagged: planning, bookkeeping)", "starts at ms": np.nan,
                 "lasts ms": ((t1 - t0) - covered) * 1e3})
    return pd.DataFrame(rows)


def gc_table(log: RunLog) -> pd.DataFrame:
    """GC pauses by generation: how many, total and largest pause (ms)."""
    g = pd.DataFrame({"generation": log.gcs[:, GC.generation].astype(int),
                      "ms": (log.gcs[:, GC.t1] - log.gcs[:, GC.t0]) * 1e3})
    out = g.groupby("generation")["ms"].agg(pauses="count", total_ms="sum", largest_ms="max")
    return out.reindex([0, 1, 2], fill_value=0)


def raw_log_columns() -> pd.DataFrame:
    """What the engine records per run: each raw-log array and its columns."""
    return pd.DataFrame([{"array": name, "columns": ", ".join(cols)} for name, cols in COLUMNS.items()])


def rawlog_table(log: RunLog) -> pd.DataFrame:
    """The article's arrays in a raw log: rows (in this log) and columns."""
    table = raw_log_columns().set_index("array")
    table.insert(0, "rows", [len(getattr(log, name)) for name in table.index])
    return table


def microbench_frame(rows: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(rows).set_index("batch")
    df["eager / batched"] = df["eager_ms"] / df["batched_ms"]
    return df

