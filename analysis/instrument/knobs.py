"""The engine's knobs: what each means, a Config's values, and what each rung of the
ladder changes against the rung above."""
from __future__ import annotations

import dataclasses
import math

import pandas as pd

from ..engine_link import LADDER, Workload

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
    "preempt_mode": "what an eviction does with the victim's KV: 'swap' copies it to the host and back "
                    "(the article's), 'recompute' drops it and prefills it again (vLLM V1's)",
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


def ladder_knobs() -> pd.DataFrame:
    """One row per rung: the knob(s) it changes against the rung above, from -> to.

    Computed from engine.LADDER, so it cannot drift from what the runs used.
    """
    rows, prev = [], None
    for name, cfg in LADDER.items():
        if prev is None:
            rows.append({"rung": name, "knob": "(none: the article's defaults)", "from": "", "to": ""})
        else:
            for f in dataclasses.fields(cfg):
                if f.name != "name" and getattr(prev, f.name) != getattr(cfg, f.name):
                    rows.append({"rung": name, "knob": f.name, "from": _fmt(getattr(prev, f.name)),
                                 "to": _fmt(getattr(cfg, f.name))})
        prev = cfg
    return pd.DataFrame(rows, columns=["rung", "knob", "from", "to"])


def _fmt(v) -> str:
    if isinstance(v, tuple):
        return "{" + ", ".join(map(str, v)) + "}"
    return str(v)


def workload_facts(wl=None) -> dict:
    """The synthetic workload in numbers a reader can check (engine.Workload)."""
    wl = wl or Workload()
    return {"swell_pct": 100 * wl.swell, "period_s": wl.period_s,
            "prompt_median_chars": math.exp(wl.prompt_log_mu), "doc_pct": 100 * wl.doc_probability,
            "doc_lo": wl.doc_chars[0], "doc_hi": wl.doc_chars[1], "out_min": wl.out_min,
            "out_mean": wl.out_min + wl.out_mean, "out_cap": wl.out_cap,
            "out_mean_capped": wl.mean_output_tokens(), "startup_objects": wl.startup_objects}

