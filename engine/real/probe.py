"""The probe: transformers' continuous-batching loop, tagged as the book tags its own engine.

One *step* is one pass of the engine's loop that had work: it opens when
``ContinuousBatchProcessor.prepare_next_batch`` starts (scheduling, and with it any
eviction and readmission) and closes when ``update_batch`` returns (the new tokens
handed to their requests). Inside it the probe tags, with the book's segment codes:

* the eviction of victims (``OffloadingManager.offload_requests``): code swap, detail
  kv_reserve, as the book's engine tags making room; under ``preempt="swap"`` their KV is
  copied to the CPU pool, otherwise they are soft reset (recompute);
* the readmission of swapped victims (``restore_scheduled_requests``): swap / swap_in;
* the forward pass (``_generation_step``: model, logits processing, sampling, copy out).
  A step mixing prefill and decode is ONE forward pass, so the probe splits it by the
  step's token mix: re-prefill tokens first, then first-time prefill tokens, then decode
  rows, each share of the pass in proportion to its tokens. That split is an assumption,
  recorded as such (``step_mix``), and checked against steps that were pure decode.

Every token's time is the engine's own (``RequestState._timestamps``, read with
``record_timestamps=True``): it is stamped in ``update_batch``, after the forward pass,
so a token lies on the step's bookkeeping boundary, not at delivery to the client.
Cyclic-GC pauses are timed with ``gc.callbacks``; a pause in the engine's thread goes to
``gcs``, one in another thread (the frontend's) to ``gcs_other_thread``. On CPU the loop
is synchronous (no async batching, no CUDA streams): a step's CPU work never overlaps
another step's compute, so everything tagged in a step lay on its path.
"""
from __future__ import annotations

import contextlib
import gc
import importlib
import threading
import time

import numpy as np

from ..serve import segments as S
from .internals import CB, check

clock = time.perf_counter


class Probe:
    def __init__(self):
        self.recording = False
        self.origin = None
        self.loop_thread = None
        self.steps, self.segs, self.mix = [], [], []     # segs: (step, kind, detail, t0, t1, work)
        self.gcs, self.gcs_other = [], []
        self.emissions = []                               # (request, t, step)
        self.evictions: dict[int, list] = {}             # request -> [[evicted, readmitted or None], ...]
        self.first_token: dict[int, float] = {}
        self._draft = None
        self._gc_start = None

    # ------------------------------------------------------------ the run's clock
    def start(self) -> float:
        """Serving starts now: times from here on are recorded (s since this instant)."""
        self.origin = clock()
        self.recording = True
        return self.origin

    def stop(self) -> None:
        self.recording = False

    # ------------------------------------------------------------ the step
    def _open(self):
        if self.loop_thread is None:
            self.loop_thread = threading.get_ident()
        self._draft = {"t0": clock(), "segs": [], "preempted": 0, "readmitted": 0, "n_decode": 0,
                       "n_prefill": 0, "n_reprefill": 0, "fwd_end": None, "index": len(self.steps)}

    def _seg(self, kind, detail, t0, t1, work):
        self._draft["segs"].append((kind, detail, t0, t1, work))

    def _close(self, t1):
        d, self._draft = self._draft, None
        idx = len(self.steps)
        graph = S.EAGER if d["n_decode"] else S.NO_DECODE
        self.steps.append((d["t0"], t1, d["n_decode"], d["n_prefill"] + d["n_reprefill"], graph,
                           d["preempted"], d["readmitted"]))
        self.mix.append((d["n_reprefill"], d["n_prefill"], d["n_decode"]))
        for kind, detail, a, b, work in d["segs"]:
            self.segs.append((idx, kind, detail, a, b, work))

    # ------------------------------------------------------------ wrappers
    def _prepare(self, orig):
        probe = self

        def prepare_next_batch(self_):
            if not probe.recording:
                return orig(self_)
            probe._open()
            ok = orig(self_)
            if not ok:                         # nothing to run: a step only if it evicted someone
                if probe._draft["segs"]:
                    probe._close(clock())
                else:
                    probe._draft = None
            return ok
        return prepare_next_batch

    def _offload(self, orig):
        probe = self

        def offload_requests(self_):
            if probe._draft is None:
                return orig(self_)
            sched = self_.scheduler
            before = set(sched.active_requests)
            a = clock()
            ok = orig(self_)
            b = clock()
            victims = before - set(sched.active_requests)
            for rid in victims:
                probe.evictions.setdefault(int(rid), []).append([a - probe.origin, None])
            probe._draft["preempted"] += len(victims)
            probe._seg(S.SWAP, S.D_RESERVE, a, b, len(victims))
            return ok
        return offload_requests

    def _restore(self, orig):
        probe = self

        def restore_scheduled_requests(self_, requests_in_batch):
            if probe._draft is None:
                return orig(self_, requests_in_batch)
            back = [int(f.state.request_id) for f in requests_in_batch if f.state.is_cpu_offloaded]
            a = clock()
            out = orig(self_, requests_in_batch)
            b = clock()
            for rid in back:
                probe._readmit(rid, a)
            if back:
                probe._seg(S.SWAP, S.D_SWAP_IN, a, b, len(back))
            return out
        return restore_scheduled_requests

    def _forward(self, orig):
        probe = self

        def _generation_step(self_, model):
            if probe._draft is None:
                return orig(self_, model)
            rp = pf = nd = 0
            for f in self_.inputs_and_outputs.requests_in_batch:
                st = f.state
                # the scheduler marks a request DECODING as soon as its last prefill chunk is
                # scheduled, so status cannot tell prefill from decode: a row decodes when the
                # state (since its last admission) has generated a token already
                if st.generated_tokens:
                    nd += 1
                elif st._true_initial_tokens:  # a soft-reset request rebuilding its KV
                    rp += int(f.query_length)
                else:
                    pf += int(f.query_length)
            a = clock()
            out = orig(self_, model)
            b = clock()
            d = probe._draft
            d.update(n_decode=nd, n_prefill=pf, n_reprefill=rp, fwd_end=b)
            total, t = rp + pf + nd, a
            for kind, detail, n in ((S.PREFILL, S.D_REPREFILL, rp), (S.PREFILL, S.D_PREFILL, pf),
                                    (S.DECODE, S.D_DECODE, nd)):
                if n:
                    end = b if n == total else t + (b - t) * n / total
                    probe._seg(kind, detail, t, end, n)
                    t, total = end, total - n
            return out
        return _generation_step

    def _update(self, orig):
        probe = self

        def update_batch(self_):
            if probe._draft is None:
                return orig(self_)
            out = orig(self_)
            probe._close(clock())
            return out
        return update_batch

    def _emit(self, orig):
        probe = self

        def update_and_check_completion(self_, token_id, logprob):
            n = len(self_._timestamps)
            done = orig(self_, token_id, logprob)
            if probe._draft is not None and len(self_._timestamps) > n:
                rid, t = int(self_.request_id), self_._timestamps[-1] - probe.origin
                probe.emissions.append((rid, t, probe._draft["index"]))
                probe.first_token.setdefault(rid, t)
                if probe._open_eviction(rid):          # a soft-reset victim's re-prefill just ended
                    probe._readmit(rid, probe._draft["fwd_end"])
            return done
        return update_and_check_completion

    def _open_eviction(self, rid) -> bool:
        ev = self.evictions.get(rid)
        return bool(ev) and ev[-1][1] is None

    def _readmit(self, rid, t):
        if self._open_eviction(rid):
            self.evictions[rid][-1][1] = t - self.origin
            self._draft["readmitted"] += 1

    # ------------------------------------------------------------ GC
    def _gc_callback(self, phase, info):
        if not self.recording:
            return
        if phase == "start":
            self._gc_start = (clock(), threading.get_ident())
        elif self._gc_start is not None:
            (t0, who), self._gc_start = self._gc_start, None
            row = (t0, clock(), info.get("generation", 0))
            (self.gcs if who == self.loop_thread else self.gcs_other).append(row)

    # ------------------------------------------------------------ attach / detach
    @contextlib.contextmanager
    def attached(self):
        """The engine's classes wrapped for the block's length (checked first: ChangedInternals
        if transformers moved any of them), and the GC callback installed."""
        check()
        api = importlib.import_module(f"{CB}.continuous_api")
        off = importlib.import_module(f"{CB}.offloading_manager")
        req = importlib.import_module(f"{CB}.requests")
        plan = [(api.ContinuousBatchProcessor, "prepare_next_batch", self._prepare),
                (api.ContinuousBatchProcessor, "_generation_step", self._forward),
                (api.ContinuousBatchProcessor, "update_batch", self._update),
                (off.OffloadingManager, "offload_requests", self._offload),
                (off.OffloadingManager, "restore_scheduled_requests", self._restore),
                (req.RequestState, "update_and_check_completion", self._emit)]
        saved = []
        try:
            for cls, name, wrap in plan:
                orig = cls.__dict__[name]
                saved.append((cls, name, orig))
                setattr(cls, name, wrap(orig))
            gc.callbacks.append(self._gc_callback)
            yield self
        finally:
            with contextlib.suppress(ValueError):
                gc.callbacks.remove(self._gc_callback)
            for cls, name, orig in reversed(saved):
                setattr(cls, name, orig)

    # ------------------------------------------------------------ the raw log's arrays
    def arrays(self, requests: list, trace_rows: list) -> dict:
        """The book's raw-log arrays (DESIGN.md section 1). ``requests``: (id, arrival s,
        prompt tokens, max_new) of every request served, arrival in run time."""
        o = self.origin
        steps = np.array([(a - o, b - o, nd, npf, g, pre, rin) for a, b, nd, npf, g, pre, rin in self.steps],
                         dtype=np.float64).reshape(-1, 7)
        segs = np.array([(i, k, a - o, b - o) for i, k, _, a, b, _ in self.segs], dtype=np.float64).reshape(-1, 4)
        gcs = np.array([(a - o, b - o, g) for a, b, g in self.gcs], dtype=np.float64).reshape(-1, 3)
        other = np.array([(a - o, b - o, g) for a, b, g in self.gcs_other], dtype=np.float64).reshape(-1, 3)
        emis = np.array(self.emissions, dtype=np.float64).reshape(-1, 3)
        evs = np.array([(rid, a, np.nan if b is None else b) for rid, rows in sorted(self.evictions.items())
                        for a, b in rows], dtype=np.float64).reshape(-1, 3)
        reqs = np.array([(rid, arr, n, mx, self.first_token[rid]) for rid, arr, n, mx in requests],
                        dtype=np.float64).reshape(-1, 5)
        n_steps, n_segs = len(steps), len(segs)
        nan2 = np.full((n_steps, 2), np.nan)
        return {"steps": steps, "segs": segs, "gcs": gcs, "emissions": emis, "evictions": evs,
                "requests": reqs, "trace": np.asarray(trace_rows, dtype=np.float64).reshape(-1, 4),
                "seg_detail": np.array([d for _, _, d, _, _, _ in self.segs], dtype=np.int8),
                "seg_work": np.array([w for *_, w in self.segs], dtype=np.int64),
                "seg_cpu_end": np.full(n_segs, np.nan), "seg_runq_end": np.full(n_segs, np.nan),
                "step_cpu": nan2, "step_runq": nan2.copy(),
                "injections": np.zeros((0, 6)), "runq_reads": np.array(0, dtype=np.int64),
                # this engine's own: the forward pass's token mix (re-prefill, prefill, decode
                # rows) by step, which the split above assumed; GC pauses outside the loop
                "step_mix": np.array(self.mix, dtype=np.int64).reshape(-1, 3),
                "gcs_other_thread": other}
