"""The scheduler: the request queues, and every choice of who runs.

Swap-in brings preempted requests back first, oldest eviction first, when they fit with
headroom; every decode then gets a KV slot, evicting the newest running request when
the pool is full; the token budget left after the decodes goes to running partial
prefills, then to admission from the waiting queue (first come, first served, keeping
`admit_watermark` of the pool free). Evictions and readmissions are timestamped on the
request (`evictions`: [evicted, readmitted]).

An evicted request either swaps (`preempt_mode` "swap", the article's: its KV copied to
the host, then back when it fits) or recomputes ("recompute", vLLM V1's default: its
blocks freed at once, and it goes to the front of the waiting queue with `refill`, the
tokens its KV held, i.e. its prompt and what it has emitted; admission prefills them in
chunks under the token budget like any prompt, and the readmission is stamped when that
re-prefill completes, in runner.py). A request needs prefill while `computed` is short
of `refill or prompt`.
"""
from __future__ import annotations

import time

clock = time.perf_counter


class Scheduler:
    def __init__(self, cfg, pool):
        self.cfg, self.pool = cfg, pool
        self.waiting: list = []    # tokenized, not admitted
        self.running: list = []    # admitted, holding KV
        self.swapped: list = []    # preempted, KV on the host
        self.done: list = []

    def busy(self) -> bool:
        return bool(self.waiting or self.running or self.swapped)

    def holding(self) -> bool:
        """hold_decode (a control): decode waits while any prompt is still being prefilled."""
        if not self.cfg.hold_decode:
            return False
        mid_prefill = any(r.computed < len(r.refill or r.prompt) for r in self.running)
        return mid_prefill or bool(self.waiting and len(self.running) < self.cfg.max_num_seqs)

    def swap_in(self) -> int:
        """Readmit swapped requests in order while each fits with headroom; how many."""
        cfg, pool, n_in = self.cfg, self.pool, 0
        while self.swapped and len(self.running) < cfg.max_num_seqs:
            r = self.swapped[0]
            if not pool.fits_back(r, cfg.swap_in_headroom) or r.held_until > clock():
                break
            self.swapped.pop(0)
            self.readmit(r)
            self.running.append(r)
            n_in += 1
        return n_in

    def readmit(self, r) -> None:
        """r's KV copied back in, the readmission stamped when the copy is done."""
        self.pool.copy_in(r)
        r.evictions[-1][1] = clock()

    def decodes(self) -> list:
        """The running requests that decode this step (prefill done)."""
        if self.holding():
            return []
        return [r for r in self.running if r.computed >= len(r.refill or r.prompt)]

    def reserve(self, decodes: list) -> int:
        """A KV slot for every decode, evicting the newest running request while the pool
        is full; victims leave `decodes`. How many were evicted."""
        grow, n_out = self.pool.grow, 0
        for r in list(decodes):
            if r not in decodes:                 # already evicted as someone's victim
                continue
            while not grow(r, r.computed + 1) and self.running:
                victim = self.running[-1]
                self.preempt(victim)
                n_out += 1
                if victim in decodes:
                    decodes.remove(victim)
                if victim is r:
                    break
        return n_out

    def preempt(self, r) -> None:
        """Evict r: mid-prefill it starts over from the waiting queue's front (a first
        prefill: nothing was emitted; a re-prefill: its eviction stays open); otherwise
        its KV is swapped out and it joins the swapped queue, or is dropped and r goes to
        the waiting queue's front to be recomputed."""
        self.running.remove(r)
        if r.computed < len(r.refill or r.prompt):
            self.pool.release(r)
            r.computed = 0
            self.waiting.insert(0, r)
            return
        r.evictions.append([clock(), None])      # stamped before the copy-out
        if self.cfg.preempt_mode == "recompute":
            # its KV held the prompt, the last prompt token fed again as the first decode
            # input, then each emitted token but the newest (the next decode's input)
            r.refill = (r.prompt + r.prompt[-1:] + r.out[:-1])[:r.computed]
            self.pool.release(r)
            r.computed = 0
            self.waiting.insert(0, r)
            return
        self.pool.copy_out(r)
        self.swapped.append(r)

    def plan_prefill(self, n_decode: int) -> list:
        """(request, tokens) chunks for the budget the decodes leave: running partial
        prefills first, then admission in arrival order above the watermark."""
        cfg, pool = self.cfg, self.pool
        budget = cfg.token_budget - n_decode
        chunks = []
        for r in self.running:
            need = len(r.refill or r.prompt) - r.computed
            if need > 0 and budget > 0:
                n = min(budget, need)
                if pool.grow(r, r.computed + n):
                    chunks.append((r, n))
                    budget -= n
        reserve = cfg.admit_watermark * cfg.kv_blocks
        while self.waiting and budget > 0 and len(self.running) < cfg.max_num_seqs:
            r = self.waiting[0]
            if r.held_until and r.held_until > clock():      # a forced preemption's hold
                break
            size = len(r.refill or r.prompt)
            if pool.free_blocks - pool.blocks(size) < reserve:
                break
            n = min(budget, size)
            if not pool.grow(r, n):
                break
            self.waiting.pop(0)
            self.running.append(r)
            chunks.append((r, n))
            budget -= n
        return chunks

    def emit(self, idx: int, decodes: list, tokens: list, now: float, history) -> None:
        """One token to each decoded request, all stamped `now`; finished ones leave."""
        for r, tok in zip(decodes, tokens):
            r.computed += 1
            r.out.append(tok)
            r.emit_t.append(now)
            r.emit_step.append(idx)
            if r.first_token_t is None:
                r.first_token_t = now
            history.add(r.rid, tok, now)
            if len(r.out) >= r.max_new:
                self.running.remove(r)
                self.pool.release(r)
                self.done.append(r)
