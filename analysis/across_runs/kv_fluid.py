"""The queueing cross-check of the KV-demand model (kv_demand.py).

A decode step costs a + b B ms for B rows (the
measured line), in the share of time the prefill work λ E[P] leaves; each request
needs O + 1 steps. Without the fixed part a the decode server is processor sharing
with utilisation ρ = λ E[O + 1] b, whose mean number in service is ρ / (1 - ρ)
whatever the length distribution; the fixed part adds c = λ E[O + 1] a running
requests by Little's law, stretched alike: N = (ρ + c) / (1 - ρ). A request holds its
prompt and half its output on average, weighted by how long it stays, so the KV
demand is N E[(O + 1)((P + (O + 1)/2) / block + 1/2)] / E[O + 1] blocks. At the
swell's peak rate this is quasi-static: it assumes requests live much shorter than
the swell's period, which near the operating point they do not.

The other assumptions are kv_demand's.
"""
from __future__ import annotations

import math

import numpy as np

from .kv_costs import StepCosts
from .kv_demand import Scheduler


def mean_running_little(rate: float, out_tokens: float, step_s: float) -> float:
    """Little's law for the running set: λ requests/s, each resident for O + 1 steps
    (its prefill step and one per output token) of step_s seconds."""
    return rate * (out_tokens + 1) * step_s


def fluid(rate: float, prompt, out, sched: Scheduler, costs: StepCosts, swell: float = 0.0) -> dict:
    """The queueing estimate (module docstring) at rate x (1 + swell): the mean number of
    running requests, the decode server's utilisation and the mean KV demand in blocks;
    'saturated' when the utilisation reaches 1."""
    lam = rate * (1.0 + swell)
    P, O1 = np.asarray(prompt, float), np.asarray(out, float) + 1.0
    n_chunks = np.ceil(P / sched.token_budget).mean()            # prefill steps per request
    busy = lam * (P.mean() * costs.prefill_line[1] + n_chunks * costs.prefill_line[0] + costs.tok_ms) / 1e3
    a, b = costs.decode_line
    a += costs.overhead_ms
    free = max(1e-9, 1.0 - busy)                                 # the share of time left to decode
    rho = lam * O1.mean() * b / 1e3 / free
    c = lam * O1.mean() * a / 1e3 / free
    saturated = busy >= 1.0 or rho >= 1.0
    n = (rho + c) / (1.0 - rho) if not saturated else math.inf
    per_req = np.mean(O1 * ((P + O1 / 2) / sched.block_size + 0.5)) / O1.mean()   # residence-weighted
    return {"running": float(n), "rho": float(rho), "busy": float(busy), "kv_blocks": float(n * per_req),
            "saturated": bool(saturated)}


def fluid_onset(base_rate: float, prompt, out, sched: Scheduler, costs: StepCosts, swell: float,
                lo: float = 0.05, hi: float = 4.0) -> float:
    """The load (a multiple of base_rate) at which the queueing estimate's KV demand at the
    swell's peak rate first fills the pool; NaN if not within [lo, hi]."""
    def full(x):
        f = fluid(base_rate * x, prompt, out, sched, costs, swell)
        return f["saturated"] or f["kv_blocks"] >= sched.kv_blocks
    if full(lo) or not full(hi):
        return math.nan
    for _ in range(50):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if full(mid) else (mid, hi)
    return (lo + hi) / 2
