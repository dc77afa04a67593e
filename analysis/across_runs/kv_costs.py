"""The engine's step costs, read off its own raw logs: what the KV-demand model
(kv_demand.py) charges for a step.

From each step's segments: the decode forward's time by padded batch size (eager steps
as a line in the batch size), the prefill time as a line in the step's prefill tokens,
the swap time per eviction and per readmission (least squares over the steps that did
either), the tokenizer's time per request, and what a step costs beyond its segments
(the median). Also the tokens per prompt character, from the requests the runs served.
"""
from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field

import numpy as np

from ..core.columns import REQ, SEG, STEP, TRACE
from ..core.runlog import RunLog, load
from ..core.schemes import GRAPH_EAGER, SEGMENT_KINDS

TOK, SWAP, PREFILL, DECODE = (SEGMENT_KINDS.index(k) for k in ("tok", "swap", "prefill", "decode"))


@dataclass(frozen=True)
class StepCosts:
    """Milliseconds per unit of engine work (see the module docstring)."""

    decode_ms: dict = field(default_factory=dict)   # padded (captured) batch size -> ms
    decode_line: tuple = (0.0, 0.0)                 # ms = a + b * rows: sizes never measured
    eager_line: tuple = (0.0, 0.0)                  # ms = a + b * B above the largest captured size
    prefill_line: tuple = (0.0, 0.0)                # ms = a + b * tokens, for a step with prefill
    swap_out_ms: float = 0.0                        # per eviction (copy-out)
    swap_in_ms: float = 0.0                         # per readmission (copy-in)
    tok_ms: float = 0.0                             # per arriving request, tokenized on the loop
    overhead_ms: float = 0.0                        # per step, outside every segment
    tokens_per_char: float = 0.25

    def decode(self, batch: int, capture_sizes) -> float:
        """One decode forward of `batch` rows: padded to the smallest captured size that
        holds it, or eager above the largest."""
        if batch <= 0:
            return 0.0
        i = bisect.bisect_left(list(capture_sizes), batch)
        if i == len(capture_sizes):
            a, b = self.eager_line
            return a + b * batch
        size = capture_sizes[i]
        if size in self.decode_ms:
            return self.decode_ms[size]
        a, b = self.decode_line
        return a + b * size

    def prefill(self, tokens: int) -> float:
        if tokens <= 0:
            return 0.0
        a, b = self.prefill_line
        return a + b * tokens


def _line(x, y) -> tuple:
    """Least-squares a + b x with both non-negative; a proportional fit through the means
    when x does not vary."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if not len(x):
        return (0.0, 0.0)
    if np.ptp(x) == 0:
        return (0.0, float(y.mean() / x.mean())) if x.mean() > 0 else (float(y.mean()), 0.0)
    b, a = np.polyfit(x, y, 1)
    if a < 0:                                    # a negative intercept: refit through zero
        a, b = 0.0, float((x @ y) / (x @ x))
    return (float(a), float(max(b, 0.0)))


def _per_step(log: RunLog, kind: int) -> np.ndarray:
    seg = log.segs[log.segs[:, SEG.kind] == kind]
    return np.bincount(seg[:, SEG.step].astype(np.intp), weights=(seg[:, SEG.t1] - seg[:, SEG.t0]) * 1e3,
                       minlength=len(log.steps))


def measured_costs(logs) -> StepCosts:
    """Step costs pooled over raw logs (RunLogs or paths) of one configuration."""
    logs = [lg if isinstance(lg, RunLog) else load(lg) for lg in logs]
    if not logs:
        raise ValueError("measured_costs needs at least one raw log")
    obs = {k: [] for k in ("graph", "n_dec", "dec", "n_pre", "pre", "out", "in", "swap", "rest")}
    tok_ms = n_req = chars = toks = 0.0
    for lg in logs:
        st = lg.steps
        by = {k: _per_step(lg, k) for k in (TOK, SWAP, PREFILL, DECODE)}
        step_ms = (st[:, STEP.t1] - st[:, STEP.t0]) * 1e3
        obs["graph"].append(st[:, STEP.graph])
        obs["n_dec"].append(st[:, STEP.n_decode])
        obs["dec"].append(by[DECODE])
        obs["n_pre"].append(st[:, STEP.n_prefill_tok])
        obs["pre"].append(by[PREFILL])
        obs["out"].append(st[:, STEP.preempted])
        obs["in"].append(st[:, STEP.swapped_in])
        obs["swap"].append(by[SWAP])
        obs["rest"].append(step_ms - sum(by.values()))
        tok_ms += by[TOK].sum()
        n_req += len(lg.requests)
        chars_of = dict(zip(lg.trace[:, TRACE.request], lg.trace[:, TRACE.chars]))
        max_len = lg.config.get("max_model_len", 2048)
        for rid, p in zip(lg.requests[:, REQ.request], lg.requests[:, REQ.prompt_tokens]):
            if p < max_len and rid in chars_of:          # truncated prompts say nothing of the ratio
                toks += p
                chars += chars_of[rid]
    o = {k: np.concatenate(v) for k, v in obs.items()}
    decoding = o["graph"] > 0
    decode_ms = {int(g): float(np.median(o["dec"][o["graph"] == g])) for g in np.unique(o["graph"][decoding])}
    eager = o["graph"] == GRAPH_EAGER
    rows = np.where(eager, o["n_dec"], o["graph"])
    any_decode = o["graph"] >= GRAPH_EAGER
    pre = o["n_pre"] > 0
    sw = (o["out"] > 0) | (o["in"] > 0)
    out_ms, in_ms = 0.0, 0.0
    if sw.any():
        A = np.column_stack([o["out"][sw], o["in"][sw]])
        coef, *_ = np.linalg.lstsq(A, o["swap"][sw], rcond=None)
        out_ms, in_ms = (float(max(c, 0.0)) for c in coef)
    return StepCosts(
        decode_ms=decode_ms,
        decode_line=_line(rows[any_decode], o["dec"][any_decode]),
        eager_line=_line(o["n_dec"][eager], o["dec"][eager]) if eager.any()
        else _line(rows[any_decode], o["dec"][any_decode]),
        prefill_line=_line(o["n_pre"][pre], o["pre"][pre]),
        swap_out_ms=out_ms, swap_in_ms=in_ms,
        tok_ms=float(tok_ms / n_req) if n_req else 0.0,
        overhead_ms=float(np.median(o["rest"])) if len(o["rest"]) else 0.0,
        tokens_per_char=float(toks / chars) if chars else math.nan)
