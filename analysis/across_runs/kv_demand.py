"""A model of KV demand: when preemption sets in, and what the watermark costs.

Two models of one engine, driven by its measured step costs (kv_costs.py):

* `simulate`: a discrete-event simulation of the engine's scheduler, step by step, with
  the loop's own rules (engine/serve/loop.py): intake, swap-in first when the request
  fits with headroom, a KV slot for every decode (evicting the newest running request
  when the pool is full), the leftover token budget to running prefills and then FCFS
  admission above the watermark, one padded decode forward. A step lasts what its work
  costs by the measured costs. Under "recompute" a victim's blocks are freed, it goes to
  the front of the waiting queue with its prompt and emitted tokens, and is readmitted
  when that re-prefill completes.
* `fluid` (kv_fluid.py): a queueing cross-check of the same demand.

Assumptions (both models): arrivals are the workload's own non-homogeneous Poisson times (the
same generator and seed as the engine's runs); prompt and output lengths are drawn from
the workload's distributions with a separate stream, prompts converted to tokens at the
measured tokens per character and truncated to max_model_len; every cost is a function
of the step's work only (decode by padded batch size, not by context length; prefill
linear in tokens, not quadratic in the prefix); the loop's other stalls (garbage
collection, the tokenizer worker, the operating system) are absent, so the model's
tail holds less besides preemption than the engine's.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .kv_costs import StepCosts
from .kv_trace import Trace, sample_lengths, workload_trace  # noqa: F401  (the model's inputs, here too)


@dataclass(frozen=True)
class Scheduler:
    """The engine's knobs the model reads (engine/serve/config.py names)."""

    kv_blocks: int = 1000
    block_size: int = 16
    max_num_seqs: int = 48
    token_budget: int = 2048
    max_model_len: int = 2048
    admit_watermark: float = 0.0
    swap_in_headroom: int = 8
    capture_sizes: tuple = (1, 2, 4, 8, 16, 24, 32)
    preempt_mode: str = "swap"

    def __post_init__(self):
        if self.preempt_mode not in ("swap", "recompute"):
            raise ValueError(f"preempt_mode must be 'swap' or 'recompute', got {self.preempt_mode!r}")
        object.__setattr__(self, "capture_sizes", tuple(int(s) for s in self.capture_sizes))

    @classmethod
    def from_config(cls, cfg, **override) -> "Scheduler":
        """From an engine Config (or its dict); unknown knobs are ignored."""
        d = cfg if isinstance(cfg, dict) else cfg.to_dict()
        known = {k: d[k] for k in cls.__dataclass_fields__ if k in d}
        return cls(**{**known, **override})

    def blocks(self, tokens: int) -> int:
        return -(-int(tokens) // self.block_size)


class _Req:
    __slots__ = ("i", "arrival", "prompt", "target", "max_new", "computed", "out", "blocks",
                 "emits", "evicted", "waits", "victim")

    def __init__(self, i, arrival, prompt, max_new):
        self.i, self.arrival, self.prompt, self.max_new = i, arrival, prompt, max_new
        self.target = prompt          # tokens to prefill before decoding (prompt, or prompt + emitted)
        self.computed = self.out = self.blocks = 0
        self.emits: list = []
        self.evicted = None           # time of the open eviction
        self.waits: list = []         # (evicted, readmitted) per eviction
        self.victim = False


@dataclass
class SimResult:
    t: np.ndarray                 # step start, s
    dt: np.ndarray                # step length, s
    used: np.ndarray              # blocks held in the step
    demand: np.ndarray            # blocks held + blocks the evicted requests need back
    running: np.ndarray           # requests running in the step
    preemptions: int
    ttft_ms: np.ndarray
    gaps_ms: np.ndarray           # every inter-token gap
    gap_wait_ms: np.ndarray       # the part of each gap its request sat evicted
    victim_wait_s: float          # summed time victims sat evicted
    others_paid_s: float          # copy time (swap) or re-prefill time (recompute) in steps
    duration: float = field(default=0.0)

    def time_mean(self, x) -> float:
        """The time average of a per-step record over the busy steps."""
        return float(np.average(x, weights=self.dt)) if len(x) and self.dt.sum() > 0 else math.nan

    def summary(self) -> dict:
        per_min = 60.0 / self.duration if self.duration else math.nan
        g = self.gaps_ms
        if len(g):
            p50, p99, p999 = np.percentile(g, [50, 99, 99.9])
            tail = g >= p99
            share = float(self.gap_wait_ms[tail].sum() / g[tail].sum())
        else:
            p50 = p99 = p999 = share = math.nan
        pct = (lambda q: float(np.percentile(self.ttft_ms, q))) if len(self.ttft_ms) else (lambda q: math.nan)
        return {"preempt_per_min": self.preemptions * per_min, "ttft_p50": pct(50), "ttft_p99": pct(99),
                "itl_p50": float(p50), "itl_p99": float(p99), "itl_p999": float(p999),
                "tail_preempt": share, "peak_demand": float(self.demand.max()) if len(self.demand) else 0.0,
                "mean_used": self.time_mean(self.used),
                "victim_wait_per_min": self.victim_wait_s * per_min,
                "others_paid_per_min": self.others_paid_s * per_min}


def simulate(trace: Trace, sched: Scheduler, costs: StepCosts, duration: float | None = None,
             max_steps: int = 2_000_000) -> SimResult:
    """Serve the trace with the engine's scheduling rules at the measured step costs.
    duration: the seconds of arrivals (for rates per 60 s; default: the last arrival)."""
    reqs = [_Req(i, float(a), int(p), int(o)) for i, (a, p, o)
            in enumerate(zip(trace.arrival, trace.prompt, trace.max_new))]
    big = [r.i for r in reqs if sched.blocks(r.prompt + r.max_new) + sched.swap_in_headroom > sched.kv_blocks]
    if big:
        raise ValueError(f"request(s) {big[:5]} need more than the pool's {sched.kv_blocks} blocks "
                         f"(less the swap-in headroom); the model, like the engine, cannot serve them")
    recompute = sched.preempt_mode == "recompute"
    free = sched.kv_blocks
    waiting, running, swapped, done = [], [], [], 0
    nxt, t = 0, 0.0
    rec_t, rec_dt, rec_used, rec_demand, rec_run = [], [], [], [], []
    preemptions, paid = 0, 0.0

    def grow(r, n):
        nonlocal free
        need = sched.blocks(n) - r.blocks
        if need > free:
            return False
        free -= need
        r.blocks += need
        return True

    def release(r):
        nonlocal free
        free += r.blocks
        r.blocks = 0

    def preempt(r, now):
        running.remove(r)
        release(r)
        if r.computed < r.target:               # mid-prefill: start that prefill over
            r.computed = 0
            waiting.insert(0, r)
            return
        r.evicted = now
        if recompute:
            r.computed, r.target, r.victim = 0, r.prompt + r.out, True
            waiting.insert(0, r)
        else:
            swapped.append(r)

    for _ in range(max_steps):
        if done == len(reqs):
            break
        if not (waiting or running or swapped) and nxt < len(reqs) and reqs[nxt].arrival > t:
            t = reqs[nxt].arrival                # idle until the next arrival
        ms = costs.overhead_ms
        while nxt < len(reqs) and reqs[nxt].arrival <= t:
            waiting.append(reqs[nxt])
            nxt += 1
            ms += costs.tok_ms
        # swap-in first, when the request fits with headroom
        while swapped and len(running) < sched.max_num_seqs:
            r = swapped[0]
            if sched.blocks(r.computed + 1) + sched.swap_in_headroom > free:
                break
            swapped.pop(0)
            grow(r, r.computed)
            ms += costs.swap_in_ms
            paid += costs.swap_in_ms / 1e3
            r.waits.append((r.evicted, t + ms / 1e3))
            r.evicted = None
            running.append(r)
        # a KV slot for every decode; evict the newest running request when full
        decodes = [r for r in running if r.computed >= r.target]
        out_ms = 0.0
        for r in list(decodes):
            if r not in decodes:
                continue
            while not grow(r, r.computed + 1) and running:
                victim = running[-1]
                preempt(victim, t + (ms + out_ms) / 1e3)
                preemptions += 1
                if not recompute and victim.evicted is not None:
                    out_ms += costs.swap_out_ms
                if victim in decodes:
                    decodes.remove(victim)
                if victim is r:
                    break
        ms += out_ms
        paid += out_ms / 1e3
        # leftover budget: running prefills, then FCFS admission above the watermark
        budget = sched.token_budget - len(decodes)
        chunks = []
        for r in running:
            if r.computed < r.target and budget > 0:
                n = min(budget, r.target - r.computed)
                if grow(r, r.computed + n):
                    chunks.append((r, n))
                    budget -= n
        reserve = sched.admit_watermark * sched.kv_blocks
        while waiting and budget > 0 and len(running) < sched.max_num_seqs:
            r = waiting[0]
            if free - sched.blocks(r.target) < reserve:
                break
            n = min(budget, r.target)
            if not grow(r, n):
                break
            waiting.pop(0)
            running.append(r)
            chunks.append((r, n))
            budget -= n
        n_pre = sum(n for _, n in chunks)
        pre_ms = costs.prefill(n_pre)
        re_tok = sum(n for r, n in chunks if r.victim)
        if re_tok:
            paid += pre_ms * re_tok / n_pre / 1e3
        ms += pre_ms
        for r, n in chunks:
            r.computed += n
            if r.victim and r.computed >= r.target:     # recompute: readmitted when re-prefilled
                r.waits.append((r.evicted, t + ms / 1e3))
                r.evicted, r.victim = None, False
        ms += costs.decode(len(decodes), sched.capture_sizes)
        now = t + ms / 1e3
        rec_t.append(t)
        rec_dt.append(ms / 1e3)                  # what the step held, before finished requests leave
        rec_used.append(sched.kv_blocks - free)
        rec_demand.append(sched.kv_blocks - free + sum(sched.blocks(r.computed + 1) for r in swapped)
                          + sum(sched.blocks(r.target) for r in waiting if r.victim))
        rec_run.append(len(running))
        for r in decodes:
            r.computed += 1
            r.out += 1
            r.emits.append(now)
            if r.out >= r.max_new:
                running.remove(r)
                release(r)
                done += 1
        t = now if (ms > 0 or decodes or chunks) else t + 1e-6
    else:
        raise RuntimeError(f"the model did not finish the trace in {max_steps} steps "
                           f"({done} of {len(reqs)} requests served): the pool cannot serve this load")
    res = _result(reqs, (rec_t, rec_dt, rec_used, rec_demand, rec_run), preemptions, paid)
    if duration is not None:
        res.duration = float(duration)
    return res


def _result(reqs, records, preemptions, paid) -> SimResult:
    gaps, wait = [], []
    for r in reqs:
        e = np.asarray(r.emits)
        g = np.diff(e) * 1e3
        w = np.zeros(len(g))
        for ev, re_ in r.waits:                  # charge each wait to the gap that spans it
            k = int(np.searchsorted(e, ev, side="right")) - 1
            if 0 <= k < len(g):
                w[k] += (re_ - ev) * 1e3
        gaps.append(g)
        wait.append(np.minimum(w, g))
    ttft = np.array([(r.emits[0] - r.arrival) * 1e3 for r in reqs if r.emits])
    arrivals = [r.arrival for r in reqs]
    return SimResult(*(np.asarray(x, float) for x in records), preemptions, ttft,
                     np.concatenate(gaps) if gaps else np.zeros(0),
                     np.concatenate(wait) if wait else np.zeros(0),
                     float(sum(b - a for r in reqs for a, b in r.waits)), float(paid),
                     duration=float(max(arrivals)) if arrivals else 0.0)
