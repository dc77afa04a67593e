"""Tables that show the instrument itself: knobs, one step's tags, GC pauses, the raw
log's arrays and the forward-pass microbenchmark."""
from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from .labels import SEGMENT_KINDS
from .environment import raw_log_columns
from .rawlog import RunLog

KNOB_MEANING = {
    "forward": "the model's numerics: \"article\" (float64 compute over a float32 KV cache, as the article's engine) or \"fast\" (float32)",
    "max_num_seqs": "most requests running at once",
    "token_budget": "tokens one step may process (decodes first, prefill gets the rest)",
    "capture_sizes": "batch sizes with an emulated captured graph; larger batches run eager",
    "kv_blocks": "KV pool size in blocks",
    "block_size": "tokens per KV block",
    "max_model_len": "prompts are cut to this many tokens",
    "admit_watermark": "share of the pool that must stay free when admitting a request",
    "swap_in_headroom": "free blocks a readmission needs beyond its own",
    "gc_freeze": "gc.collect(); gc.freeze() once before serving",
    "async_tokenize": "tokenize in a worker process instead of on the engine loop",
    "compact_history": "per-token records in a flat array instead of Python objects",
    "gc_disable": "a control: no automatic collection while serving",
    "hold_decode": "a control: no decode while a prompt waits or is mid-prefill",
    "thread_clocks": "read the thread's CPU and run-queue clocks beside the wall clock",
    "injections": "positive controls: stalls of known size at chosen steps",
}


def knob_table(cfg) -> pd.DataFrame:
    """Every knob of an engine Config with its value and meaning."""
    rows = [{"knob": f.name, "value": getattr(cfg, f.name), "meaning": KNOB_MEANING.get(f.name, "")}
            for f in dataclasses.fields(cfg) if f.name != "name"]
    return pd.DataFrame(rows).set_index("knob")


def busiest_step(log: RunLog) -> int:
    """A step that shows every kind of tag at once: tokenizing, prefill and decode, longest first."""
    segs, steps = log.segs, log.steps
    kinds = pd.DataFrame({"step": segs[:, 0].astype(int), "kind": segs[:, 1].astype(int),
                          "dur": segs[:, 3] - segs[:, 2]})
    per = kinds.pivot_table(index="step", columns="kind", values="dur", aggfunc="sum", fill_value=0.0)
    full = per[(per > 0).sum(axis=1) == per.shape[1]] if len(per.columns) else per
    pool = full if len(full) else per
    dur = steps[pool.index.to_numpy(), 1] - steps[pool.index.to_numpy(), 0]
    return int(pool.index.to_numpy()[int(np.argmax(dur))])


def step_segments(log: RunLog, step: int) -> pd.DataFrame:
    """The tags of one step: each segment's kind, start and length (ms, from the step's start)."""
    t0, t1 = log.steps[step, 0], log.steps[step, 1]
    segs = log.segs[log.segs[:, 0] == step]
    rows = [{"segment": SEGMENT_KINDS[int(c)], "starts at ms": (a - t0) * 1e3, "lasts ms": (b - a) * 1e3}
            for _, c, a, b in segs]
    covered = float((segs[:, 3] - segs[:, 2]).sum())
    rows.append({"segment": "(untagged: planning, bookkeeping)", "starts at ms": np.nan,
                 "lasts ms": ((t1 - t0) - covered) * 1e3})
    return pd.DataFrame(rows)


def gc_table(log: RunLog) -> pd.DataFrame:
    """GC pauses by generation: how many, total and largest pause (ms)."""
    g = pd.DataFrame({"generation": log.gcs[:, 2].astype(int), "ms": (log.gcs[:, 1] - log.gcs[:, 0]) * 1e3})
    out = g.groupby("generation")["ms"].agg(pauses="count", total_ms="sum", largest_ms="max")
    return out.reindex([0, 1, 2], fill_value=0)


def rawlog_table(log: RunLog) -> pd.DataFrame:
    """The article's arrays in a raw log: rows (in this log) and columns."""
    table = raw_log_columns().set_index("array")
    table.insert(0, "rows", [len(getattr(log, name)) for name in table.index])
    return table


def microbench_frame(rows: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(rows).set_index("batch")
    df["eager / batched"] = df["eager_ms"] / df["batched_ms"]
    return df



def fidelity_frame(result: dict) -> pd.DataFrame:
    """engine.fidelity.compare()'s rows as a table: ms per side, and ours over theirs."""
    df = pd.DataFrame(result["rows"]).set_index("measurement")
    names = {"article_ms": "ours, article forward (ms)", "fast_ms": "ours, fast forward (ms)",
             "theirs_ms": "the article's engine (ms)", "article_ratio": "ratio, article forward",
             "fast_ratio": "ratio, fast forward"}
    return df[[c for c in names if c in df]].rename(columns=names).round(2)


def fidelity_sentence(result: dict, low: float = 0.85, high: float = 1.15) -> str:
    """What the fidelity table says, computed: which article-forward ratios fall outside
    [low, high], and how much faster the fast forward decodes a batch of 32."""
    if not result["article_engine"]:
        return ("The article's text was not found beside this repository, so only our side was "
                "timed; no ratio can be given.")
    rows = {r["measurement"]: r for r in result["rows"]}
    off = [(m, r["article_ratio"]) for m, r in rows.items() if not low <= r["article_ratio"] <= high]
    b32 = rows.get("decode captured, batch 32")
    fast = (f" The fast forward decodes a batch of 32 in {b32['fast_ratio']:.2f} of the article "
            f"engine's time." if b32 else "")
    if not off:
        return (f"Every ratio of the article forward lies within {low:.2f}-{high:.2f} "
                f"(medians of {result['repeats']} rounds): mechanism by mechanism, this engine costs "
                f"what the article's does on this machine." + fast)
    listed = "; ".join(f"{m} ({r:.2f})" for m, r in off)
    return (f"{len(off)} of {len(rows)} article-forward ratios fall outside {low:.2f}-{high:.2f} "
            f"(medians of {result['repeats']} rounds): {listed}. The others are within it." + fast)
