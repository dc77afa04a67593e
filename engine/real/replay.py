"""The book's workload replayed into transformers' running continuous-batching manager.

The trace is the book's (engine/serve/workload.py: seeded arrivals with the swell, prompt
lengths, pasted documents, output lengths), so a seed serves the same requests here as on
the book's engine. The request thread sleeps until each arrival, tokenizes the prompt with
the book's tokenizer where a server's frontend would (``tokenize="frontend"``: in the
serving process, beside the engine's loop thread, competing with it for the interpreter)
or before the run (``"ahead"``), and adds it to the manager, which has been serving since
before the clock started. Every request generates exactly its ``max_new`` tokens (no
end-of-sequence token), then the run drains and the probe's log is written atomically.

torch runs single-threaded; one run per fresh process (``python -m engine.real``).
"""
from __future__ import annotations

import contextlib
import gc
import importlib
import math
import time
from pathlib import Path

from ..serve import rawlog
from ..serve.provenance import cpu_ticks, cpu_time_during, provenance
from ..serve.tokenizer import get_tokenizer, tokenize
from ..serve.workload import Workload, make_trace, startup_heap
from .config import RealConfig
from .internals import CB, check
from .probe import Probe, clock

DRAIN_S = 600.0            # a run whose requests have not all finished this long after the last arrival fails
POLL_S = 1.0               # how often a wait for results looks whether the engine's loop is still alive


class _Unpinned:
    """torch as the offloading manager sees it, except that ``empty`` never pins memory."""

    def __init__(self, torch):
        self._torch = torch

    def __getattr__(self, name):
        return getattr(self._torch, name)

    def empty(self, *args, pin_memory=False, **kwargs):
        return self._torch.empty(*args, **kwargs)


@contextlib.contextmanager
def swap_pool_on_cpu():
    """transformers allocates the swap pool in pinned memory, which only exists beside an
    accelerator; on a CPU-only machine it fails at start-up. Pinning only speeds up
    asynchronous device copies, and here the "device" cache is in host memory too, so the
    pool is allocated unpinned for the run (recorded as swap_pool_pinned=False)."""
    import torch

    off = importlib.import_module(f"{CB}.offloading_manager")
    if torch.cuda.is_available():
        yield True
        return
    saved = off.torch
    off.torch = _Unpinned(torch)
    try:
        yield False
    finally:
        off.torch = saved


def _result(manager, deadline: float, what: str):
    """The next finished request, failing at once if the engine's loop thread has died
    (transformers logs why and drops the requests) or at the deadline."""
    while True:
        out = manager.get_result(timeout=max(0.0, min(POLL_S, deadline - clock())))
        if out is not None:
            return out
        if not manager.is_running():
            raise RuntimeError(f"the real engine's loop thread died {what} (its error is logged above)")
        if clock() >= deadline:
            return None


def build_model(cfg: RealConfig):
    """The tiny random-weight Llama (seeded; no download), in eval mode, float32, on CPU."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(cfg.model_seed)
    mc = LlamaConfig(vocab_size=cfg.vocab_size, hidden_size=cfg.hidden_size,
                     intermediate_size=cfg.intermediate_size, num_hidden_layers=cfg.num_layers,
                     num_attention_heads=cfg.num_heads, num_key_value_heads=cfg.num_kv_heads,
                     max_position_embeddings=cfg.max_model_len + 1024 + 64)
    model = LlamaForCausalLM(mc).eval()
    model.set_attn_implementation("sdpa")
    return model


def build_manager(model, cfg: RealConfig):
    from transformers import ContinuousBatchingConfig, GenerationConfig

    gen = GenerationConfig(do_sample=False, max_new_tokens=16, eos_token_id=-1, pad_token_id=0)
    cb = ContinuousBatchingConfig(page_size=cfg.page_size, num_blocks=cfg.num_blocks,
                                  max_batch_tokens=cfg.max_batch_tokens,
                                  max_requests_per_batch=cfg.max_requests_per_batch,
                                  cpu_offload_space=cfg.swap_gib if cfg.preempt == "swap" else 0.0,
                                  use_async_batching=False, use_cuda_graph=False, allow_block_sharing=False)
    return model.init_continuous_batching(generation_config=gen, continuous_batching_config=cb)


def _warm_up(manager, n: int = 4) -> None:
    """A few short requests before the clock starts: torch's first passes are slow."""
    ids = [manager.add_request(list(range(5, 5 + 24)), request_id=f"warm-{i}", max_new_tokens=4) for i in range(n)]
    deadline = clock() + 120.0
    for _ in ids:
        if _result(manager, deadline, "during its warm-up") is None:
            raise RuntimeError("the real engine did not finish its warm-up requests within 120 s")


def serve(cfg: RealConfig, seed: int, duration: float, rate: float, workload: Workload = Workload()):
    """Serve one seeded trace; returns (probe, requests rows, trace rows, wall s, gc_tracked)."""
    import torch

    versions = check()
    torch.set_num_threads(1)
    get_tokenizer()
    heap = startup_heap(workload)                       # a server's long-lived heap, as in the book's runs
    trace = make_trace(seed, duration, rate, workload)
    trace_rows = [(r.rid, r.arrival, len(r.text), r.max_new) for r in trace]
    if cfg.tokenize == "ahead":
        for r in trace:
            r.prompt = tokenize(r.text)[:cfg.max_model_len]
    model = build_model(cfg)
    manager = build_manager(model, cfg)
    probe = Probe()
    requests = []
    with probe.attached(), swap_pool_on_cpu() as pinned:
        with torch.inference_mode():         # the loop runs in its starter's inference mode
            manager.start()
        try:
            _warm_up(manager)
            if cfg.gc_freeze:
                gc.collect()
                gc.freeze()
            tracked = [len(gc.get_objects())]
            start = probe.start()
            for r in trace:
                wait = start + r.arrival - clock()
                if wait > 0:
                    time.sleep(wait)
                prompt = r.prompt if r.prompt is not None else tokenize(r.text)[:cfg.max_model_len]
                manager.add_request(prompt, request_id=str(r.rid), max_new_tokens=r.max_new, record_timestamps=True)
                requests.append((r.rid, r.arrival, len(prompt), r.max_new))
            left = {str(r.rid) for r in trace}
            deadline = clock() + DRAIN_S
            while left:
                out = _result(manager, deadline, "while serving")
                if out is None:
                    raise RuntimeError(f"{len(left)} request(s) had not finished {DRAIN_S:.0f} s after the last "
                                       f"arrival (seed {seed}, {rate:g} req/s): the engine is overloaded or stuck")
                if out.error:
                    raise RuntimeError(f"the real engine failed request {out.request_id}: {out.error}")
                left.discard(out.request_id)
            wall = clock() - start
            probe.stop()
            tracked.append(len(gc.get_objects()))
        finally:
            if cfg.gc_freeze:
                gc.unfreeze()
            manager.stop(block=True)
    del heap
    return probe, requests, trace_rows, wall, tracked, {**versions, "swap_pool_pinned": pinned}


def execute(cfg: RealConfig, seed: int, duration: float, rate: float, out: Path,
            workload: Workload = Workload(), rate_info: dict | None = None) -> Path:
    """One run: serve, then write the raw log atomically (nothing is written on failure)."""
    import numpy as np

    if not (math.isfinite(rate) and rate > 0 and math.isfinite(duration) and duration > 0):
        raise ValueError(f"rate and duration must be positive numbers, got rate={rate!r}, duration={duration!r}")
    started = time.time()
    ticks = cpu_ticks()
    probe, requests, trace_rows, wall, tracked, versions = serve(cfg, seed, duration, rate, workload)
    arrays = probe.arrays(requests, trace_rows)
    arrays["gc_tracked"] = np.array(tracked, dtype=np.int64)
    config = {"rung": cfg.name, "seed": seed, "duration": duration, "rate": rate, "engine": "transformers",
              **cfg.to_dict(), "thread_clocks": False, "workload": workload.to_dict()}
    prov = {**provenance(), **versions, "rate": rate_info or {"rate": rate, "source": "given"},
            "machine_cpu_s_during_run": cpu_time_during(ticks, cpu_ticks()), "started_unix": round(started, 3),
            "forward_split": "by token mix: re-prefill, prefill, decode rows in proportion to their tokens"}
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    return rawlog.write_atomic(Path(out), arrays, wall, config, prov)
