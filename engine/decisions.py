"""What the engine decides, recorded under a deterministic clock.

The engine's choices (whom to admit, evict or swap in, how many prompt tokens to
prefill, which captured size a decode pads to) depend on time only through when
requests arrive and how long work takes. Here the clock is a counter that moves only
when work is done, by a fixed cost per unit of work, and the forward pass is a stand-in
whose output depends on the KV cache's content (so a lost or misplaced KV position
changes the tokens). The same trace then always gets the same decisions, and a change
to the engine's structure can be checked to leave them untouched:

  per step     decode rows, prefill tokens, captured size or eager, evictions, readmissions
  per request  tokens emitted, a checksum of those tokens, evictions, first/last emitting step
  injections   kind, step, victim

`python -m engine.decisions --write tests/data/decisions` rewrites the records; the
tests compare against them (tests/engine/test_engine_decisions.py).
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import math
import os
import sys
import time
import zlib
from pathlib import Path

import numpy as np

from .controls import BURST, CONTROLS
from .serve.config import LADDER, Config
from .serve.workload import Workload, make_trace

# fake costs, seconds: a decode forward, per padded row, per position attended
DECODE_S, ROW_S, POSITION_S = 2e-3, 0.25e-3, 0.5e-6
PREFILL_TOKEN_S, CHUNK_S = 30e-6, 0.2e-3
COPY_TOKEN_S = 1e-6              # an eviction's copy-out or a readmission's copy-in, per position
TOKENIZE_CHAR_S = 1e-6
READ_S = 1e-9                    # a clock read: time must creep where nothing else moves it ...
BUSY_READ_S = 10e-6              # ... and a busy-wait (the pause control) must end
VOCAB = 4096

# two small traces that make every mechanism fire under the fake costs: arrivals faster than
# it serves (eager steps, evictions, inline tokenization of every arrival), and a burst of
# long prompts and outputs at t = 0 (a saturated queue, evictions mid-prefill and after);
# the burst controls on their own workload (held decode would wait forever on the long one)
TRACES = {"poisson": dict(seed=3, duration=4.0, rate=14.0, workload=Workload()),
          "burst": dict(seed=5, duration=1.0, rate=1.0,
                        workload=Workload(burst=48, prompt_log_mu=7.8, out_mean=350)),
          "control burst": dict(seed=5, duration=1.0, rate=1.0, workload=BURST)}


class FakeClock:
    """Work moves time by its cost; a read moves it by a hair that the next piece of work
    absorbs, so how many reads a step makes cannot shift when later steps start."""

    def __init__(self):
        self.work = 0.0
        self.reads = 0.0

    def now(self) -> float:
        return self.work + self.reads

    def read(self, step: float = READ_S) -> float:
        t = self.work + self.reads
        self.reads += step
        return t

    def advance(self, dt: float) -> None:
        self.work = max(self.work + dt, self.now())
        self.reads = 0.0

    def sleep(self, dt: float) -> None:
        self.advance(max(dt, 0.0))


class FakeModel:
    """The forward pass's interface with the KV cache as token ids per position: decode
    writes its input token and reads a hash of everything the row attends over."""

    def __init__(self, clk: FakeClock):
        self.clk = clk

    @staticmethod
    def new_kv(capacity: int):
        return np.zeros(capacity, np.int64)

    @staticmethod
    def capacity(kv) -> int:
        return len(kv)

    def take_prefix(self, kv, n: int):
        self.clk.advance(COPY_TOKEN_S * n)
        return kv[:n].copy()

    def put_prefix(self, kv, prefix, n: int) -> None:
        self.clk.advance(COPY_TOKEN_S * n)
        kv[:n] = prefix[:n]

    def _rows(self, tokens, kvs, positions):
        out = []
        for t, kv, p in zip(tokens, kvs, positions):
            kv[p] = t
            seen = kv[:p + 1]
            out.append(int((seen * (np.arange(p + 1) % 7 + 1)).sum() + p) % VOCAB)
        return np.array(out, dtype=np.int64)

    def decode_batched(self, tokens, kvs, positions):
        self.clk.advance(DECODE_S + ROW_S * len(tokens) + POSITION_S * sum(positions))
        return self._rows(tokens, kvs, positions)

    def decode_eager(self, tokens, kvs, positions):
        self.clk.advance(len(tokens) * (DECODE_S / 4 + ROW_S) + POSITION_S * sum(positions))
        return self._rows(tokens, kvs, positions)

    def prefill_chunk(self, tokens, kv, start: int) -> None:
        self.clk.advance(CHUNK_S + PREFILL_TOKEN_S * len(tokens))
        kv[start:start + len(tokens)] = np.asarray(tokens, dtype=np.int64) % VOCAB


class FakeFuture:
    def __init__(self, clk, ready_at, value):
        self.clk, self.ready_at, self.value = clk, ready_at, value

    def done(self) -> bool:
        return self.clk.now() >= self.ready_at

    def result(self):
        return self.value


class FakeExecutor:
    """One off-loop tokenizer worker: each job finishes its cost after the previous one."""

    def __init__(self, clk):
        self.clk, self.free_at = clk, 0.0

    def submit(self, fn, text, *args):
        self.free_at = max(self.free_at, self.clk.now()) + TOKENIZE_CHAR_S * len(text)
        return FakeFuture(self.clk, self.free_at, fn(text, *args))

    def shutdown(self, *a, **k) -> None:
        pass


class FakeHog:
    class proc:
        @staticmethod
        def is_alive() -> bool:
            return False

    def __init__(self, cpu=0):
        self.ms = None

    def go(self, ms: float) -> None:
        self.ms = ms

    def result(self):
        return math.nan, math.nan, (self.ms or 0.0) / 1e3


@contextlib.contextmanager
def deterministic(clk: FakeClock):
    """Every engine.serve module's clock, sleep, inline tokenizer, worker pool and CPU hog
    replaced while the block runs (restored after)."""
    from .serve import tokenizer
    saved = []

    def swap(obj, name, value):
        saved.append((obj, name, getattr(obj, name)))
        setattr(obj, name, value)

    def timed_tokenize(text):
        clk.advance(TOKENIZE_CHAR_S * len(text))
        return tokenizer.tokenize(text)

    for mod_name, mod in list(sys.modules.items()):
        if not mod_name.startswith("engine.serve.") or mod is None:
            continue
        if getattr(mod, "clock", None) is time.perf_counter:
            busy = mod_name.endswith(".injections")
            swap(mod, "clock", (lambda: clk.read(BUSY_READ_S)) if busy else clk.read)
        if mod is not tokenizer and getattr(mod, "tokenize", None) is tokenizer.tokenize:
            swap(mod, "tokenize", timed_tokenize)
        if hasattr(mod, "ProcessPoolExecutor"):
            swap(mod, "ProcessPoolExecutor", lambda *a, **k: FakeExecutor(clk))
        if hasattr(mod, "Hog"):
            swap(mod, "Hog", FakeHog)
    swap(time, "sleep", clk.sleep)
    swap(os, "sched_setaffinity", lambda *a: None)
    try:
        yield
    finally:
        for obj, name, value in reversed(saved):
            setattr(obj, name, value)


def _engine_modules() -> None:
    """Import every engine.serve module the engine uses, so each one's clock is patched."""
    import importlib
    import pkgutil

    from . import serve
    for info in pkgutil.iter_modules(serve.__path__):
        importlib.import_module(f"engine.serve.{info.name}")


def run(cfg: Config, trace_name: str):
    """Serve a fixed trace under the fake clock; the engine afterwards."""
    from .serve.loop import Engine
    _engine_modules()
    t = TRACES[trace_name]
    trace = make_trace(t["seed"], t["duration"], t["rate"], t["workload"])
    clk = FakeClock()
    with deterministic(clk):
        eng = Engine(cfg, FakeModel(clk), trace)
        eng.run()
    return eng


def record(eng) -> dict:
    """The decisions of a finished run, as small JSON-ready lists."""
    steps = [list(map(int, s[2:7])) for s in eng.steps]
    reqs = sorted(eng.done, key=lambda r: r.rid)
    return {
        "steps": {"n_decode": [s[0] for s in steps], "n_prefill_tok": [s[1] for s in steps],
                  "graph": [s[2] for s in steps], "evicted": [s[3] for s in steps],
                  "readmitted": [s[4] for s in steps]},
        "requests": {"rid": [r.rid for r in reqs], "emitted": [len(r.out) for r in reqs],
                     "tokens_crc": [zlib.crc32(np.asarray(r.out, np.int64).tobytes()) for r in reqs],
                     "evictions": [len(r.evictions) for r in reqs],
                     "first_step": [r.emit_step[0] if r.emit_step else -1 for r in reqs],
                     "last_step": [r.emit_step[-1] if r.emit_step else -1 for r in reqs]},
        "injections": [[int(row[0]), int(row[1]), int(row[5])] for row in eng.injected],
    }


def cases() -> dict[str, tuple[Config, str]]:
    """name -> (config, trace): every rung on both traces, and every control on its own workload."""
    out = {}
    for rung, cfg in LADDER.items():
        for trace in ("poisson", "burst"):
            out[f"{_slug(rung)}--{trace}"] = (cfg, trace)
    for c in CONTROLS:
        out[_slug(c.config.name)] = (c.config, "control burst" if c.workload == BURST else "poisson")
    for rung in ("baseline", "+budget 256", "+admit watermark"):   # KV recomputed, not swapped
        for trace in ("poisson", "burst"):
            out[f"recompute-{_slug(rung)}--{trace}"] = (
                dataclasses.replace(LADDER[rung], preempt_mode="recompute"), trace)
    injected = next(c.config for c in CONTROLS if c.config.injections and c.config.injections[0].kind == "gc")
    out["recompute-control-injected"] = (dataclasses.replace(injected, preempt_mode="recompute"),
                                         "control burst")
    return out


def _slug(name: str) -> str:
    from .serve.config import slug
    return slug(name)


def write(folder: Path, names=None) -> list[Path]:
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, (cfg, trace) in cases().items():
        if names and name not in names:
            continue
        data = {"config": cfg.to_dict(), "trace": trace, **record(run(cfg, trace))}
        path = folder / f"{name}.json"
        tmp = path.with_name(f".tmp-{path.name}")
        tmp.write_text(json.dumps(data, separators=(",", ":")) + "\n")
        os.replace(tmp, path)
        paths.append(path)
    return paths


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m engine.decisions", description=__doc__.splitlines()[0])
    p.add_argument("--write", type=Path, required=True, help="folder for the JSON records")
    p.add_argument("names", nargs="*", help="only these cases (default: all)")
    a = p.parse_args(argv)
    for path in write(a.write, a.names):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
