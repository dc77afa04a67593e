"""Does our engine cost what the article's costs? Mechanism by mechanism, side by side.

The article's engine is not part of this project: its listing is cut out of the
article text (../shared/seed) at run time into a temporary folder and imported from
there. Both engines are timed in one process, alternating which goes first on every
repeat, so a drift of the machine cannot favour one side. Measured, each with our
"article" forward, our "fast" forward and the article's engine:

  decode on the captured (batched) path at batch 1, 8, 16, 32, 48, context 600
  decode on the eager (per-sequence) path at batch 33, 48, context 600
  prefill chunks of 256 and 2,048 tokens
  an eviction's copy-out and a readmission's copy-in at 600 and 2,048 tokens
  tokenizing a 300,000-character document
  the start-up full collection (gc.collect() with the 400,000-object start-up heap alive)

Run it in a fresh single-threaded process (`python -m engine fidelity`, or
benchmarks/bench_fidelity.py), never inside a notebook kernel. The two engines share one
process and so one allocator, and what a large block costs depends on that allocator's
history: glibc moves its mmap threshold up after each large free and trims the heap
when its top is free, so a KV copy of a few MB costs hundreds of page faults or none
depending on which side ran just before (readmission of 600 tokens: 72 faults a call on
one side, 0 on the other, in one run). The benchmark's process therefore runs with a
warm heap for both sides (MALLOC_ENV): every block below 32 MB comes from the heap and
the heap is never handed back, so after the warm-up round no copy and no per-row cast
touches a fresh page (the table's fault counts show it). Holding the threshold at its
128 KB start instead made every such block a fresh mapping: copies were fair, but each
float64 cast of the article forward paid for fresh pages, and decode read 5x slower in
some processes than in the engine's runs.
"""
from __future__ import annotations

import gc
import hashlib
import importlib.util
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from .runs.cache import REPO

# The article's text sits beside the repository; ITL_ARTICLE_TEXT names it elsewhere (a worktree).
SEED_TEXT = Path(os.environ.get("ITL_ARTICLE_TEXT") or REPO.parent / "shared" / "seed" / "000_6ff97997f1f5eff0.txt")
LISTING = ("engine.py — the demonstrator engine\n", "attribution.py — the exclusive gap partitioner")
CONTEXT = 600
DECODE_BATCHES = (1, 8, 16, 32, 48)
EAGER_BATCHES = (33, 48)
PREFILL_TOKENS = (256, 2048)
KV_TOKENS = (600, 2048)
DOC_CHARS = 300_000
KV_INNER = 10                              # copies per timing: one takes well under a millisecond
SIDES = ("article", "fast", "theirs")      # our two forwards, then the article's engine
MALLOC_ENV = {"MALLOC_MMAP_THRESHOLD_": str(32 << 20),       # glibc's largest: blocks from the heap
              "MALLOC_TRIM_THRESHOLD_": str(1 << 30)}         # and the heap kept: a warm allocator


def cut_listing(text: str, head: str, tail: str) -> str:
    """The article's listing that starts after the line `head` and ends before `tail`."""
    start = text.index(head) + len(head)
    return text[start:text.index(tail, start)]


def article_engine(seed_text: Path = SEED_TEXT, folder: Path | None = None):
    """The article's engine module, cut from its listing into a temporary folder; None
    when the article text is not there."""
    if not Path(seed_text).exists():
        return None
    folder = Path(folder or tempfile.mkdtemp(prefix="article-engine-"))
    path = folder / "article_engine.py"
    path.write_text(cut_listing(Path(seed_text).read_text(), *LISTING))
    spec = importlib.util.spec_from_file_location("article_engine", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["article_engine"] = mod                    # its dataclasses look themselves up
    spec.loader.exec_module(mod)
    return mod


# ---------------------------------------------------------------- one side's operations
def _filled(kv):
    """KV storage with every page written (fresh np.zeros pages are not yet mapped)."""
    for a in (kv if isinstance(kv, tuple) else (kv,)):
        a.fill(1.0)
    return kv


def _evict(preempt, swapped: list, r) -> None:
    """One eviction's copy-out, then the request leaves the engine's swapped list (the
    closure keeps it, so nothing is freed inside the timing). Left on the list, every
    timed eviction stayed alive to the end of the benchmark, the process grew by
    gigabytes over the rounds, and readmissions slowed by up to 4x on one side or another
    with the same page-fault count (2,048 tokens, the article's engine: 10.3 ms in the
    full benchmark, 2.7 ms with the list cleared; the cause in the kernel not pinned down)."""
    preempt(r)
    swapped.remove(r)


class Ours:
    """Our engine's code paths, with one forward."""

    def __init__(self, forward: str):
        from .serve.config import Config
        from .serve.loop import Engine
        from .serve.model import make_model
        self.model = make_model(forward)
        self.engine = Engine(Config(forward=forward), self.model, [])

    def kvs(self, batch, context):
        cap = 2 * max(context + 1, 256)                     # what the KV pool would hold
        return [_filled(self.model.new_kv(cap)) for _ in range(batch)]

    def decode(self, kvs, context, eager=False):
        fn = self.model.decode_eager if eager else self.model.decode_batched
        return lambda: fn([1] * len(kvs), kvs, [context] * len(kvs))

    def prefill(self, n):
        kv = self.model.new_kv(2 * n)
        ids = list(range(n))
        return lambda: self.model.prefill_chunk(ids, kv, 0)

    def request(self, n, evicted: bool):
        from .serve.workload import Request
        r = Request(rid=0, arrival=0.0, text="", max_new=1, prompt=[1] * n, computed=n)
        self.engine.kv.free_blocks = 10 ** 9
        if evicted:
            r.host_kv = self.model.take_prefix(_filled(self.model.new_kv(n)), n)
            r.evictions = [[0.0, None]]
        else:
            self.engine.kv.grow(r, n)
            _filled(r.kv)                                   # a live cache holds data, not zero pages
            self.engine.scheduler.running.append(r)
        return r

    def copy_out(self, n):
        r = self.request(n, evicted=False)
        sch = self.engine.scheduler
        return lambda: _evict(sch.preempt, sch.swapped, r)

    def copy_in(self, n):
        r = self.request(n, evicted=True)
        return lambda: self.engine.scheduler.readmit(r)

    @staticmethod
    def document():
        from .serve.text import make_text
        from .serve.tokenizer import get_tokenizer, tokenize
        get_tokenizer()
        text = make_text(np.random.default_rng(1), DOC_CHARS)
        return lambda: tokenize(text)

    @staticmethod
    def heap():
        from .serve.workload import startup_heap
        return startup_heap()


class Theirs:
    """The article engine's code paths, called as its engine calls them."""

    def __init__(self, mod):
        self.m = mod
        self.model = mod.Model()
        self.engine = mod.Engine(mod.Config(), self.model, [])
        gc.callbacks.remove(self.engine._gc_cb)             # its engine is never run here

    def _kv(self, cap):
        shape = (self.m.L, cap, self.m.D)
        return np.zeros(shape, np.float32), np.zeros(shape, np.float32)

    def kvs(self, batch, context):
        cap = min(self.m.Config().max_model_len + 1024, max(context + 1, 256) * 2)
        return [_filled(self._kv(cap)) for _ in range(batch)]

    def decode(self, kvs, context, eager=False):
        fn = self.model.forward_eager if eager else self.model.forward
        rows = [(k, v, context + 1) for k, v in kvs]
        return lambda: fn([1] * len(kvs), rows, [context] * len(kvs))

    def prefill(self, n):
        k, v = self._kv(2 * n)
        ids = list(range(n))
        return lambda: self.model.forward_prefill(ids, k, v, 0)

    def copy_out(self, n):
        r = self.m.Request(0, 0.0, "", 1)
        r.prompt, r.computed = [1] * n, n
        r.K, r.V = _filled(self._kv(min(self.m.Config().max_model_len + 1024, max(n, 256) * 2)))
        self.engine.running.append(r)
        return lambda: _evict(self.engine._preempt, self.engine.swapped, r)

    def copy_in(self, n):
        # its readmission is inline in Engine.step: a fresh K and V of twice the prefix,
        # the host copies written back (the same data movement, timed here on its own)
        kh, vh = (a.copy() for a in _filled(self._kv(n)))   # host copies, as an eviction leaves them
        L, D = self.m.L, self.m.D

        kept = []                                           # its request keeps them, as r.K and r.V

        def readmit():
            k = np.zeros((L, kh.shape[1] * 2, D), np.float32)
            v = np.zeros_like(k)
            k[:, :n] = kh
            v[:, :n] = vh
            kept.append((k, v))
        return readmit

    def document(self):
        import random
        self.m.get_tokenizer()
        text = self.m.make_text(random.Random(1), DOC_CHARS)
        return lambda: self.m.tokenize(text)

    def heap(self):
        return self.m.startup_heap()


# ---------------------------------------------------------------- timing
def _ms(fn) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1e3


def _minor_faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def _ms_each(fns) -> tuple[float, float]:
    """Mean ms and mean minor page faults of calls too short to time one by one (each
    prepared beforehand). The faults say whether a KV copy paid for fresh pages, which
    depends on the allocator's history (see MALLOC_ENV), not only on the engine."""
    f0, t = _minor_faults(), time.perf_counter()
    for fn in fns:
        fn()
    return (time.perf_counter() - t) * 1e3 / len(fns), (_minor_faults() - f0) / len(fns)


def _full_collection(side) -> float:
    heap = side.heap()
    gc.collect()                                            # settle what building it left
    ms = _ms(gc.collect)
    del heap
    gc.collect()
    return ms


def measurements(side) -> dict:
    """name -> a zero-argument callable that returns one timing in ms (setup outside it)."""
    out = {}
    decode_kvs = side.kvs(max(DECODE_BATCHES + EAGER_BATCHES), CONTEXT)
    for b in DECODE_BATCHES:
        fn = side.decode(decode_kvs[:b], CONTEXT)
        out[f"decode captured, batch {b}"] = lambda fn=fn: _ms(fn)
    for b in EAGER_BATCHES:
        fn = side.decode(decode_kvs[:b], CONTEXT, eager=True)
        out[f"decode eager, batch {b}"] = lambda fn=fn: _ms(fn)
    for n in PREFILL_TOKENS:
        fn = side.prefill(n)
        out[f"prefill chunk, {n} tokens"] = lambda fn=fn: _ms(fn)
    for n in KV_TOKENS:
        out[f"eviction copy-out, {n} tokens"] = lambda n=n: _ms_each([side.copy_out(n) for _ in range(KV_INNER)])
        out[f"readmission copy-in, {n} tokens"] = lambda n=n: _ms_each([side.copy_in(n) for _ in range(KV_INNER)])
    doc = side.document()
    out[f"tokenize a {DOC_CHARS:,}-character document"] = lambda: _ms(doc)
    out["start-up full collection"] = lambda: _full_collection(side)
    return out


def compare(repeats: int = 15, seed_text: Path = SEED_TEXT, progress: bool = True) -> dict:
    """Median ms per measurement and side over `repeats` rounds; within a round the sides
    take turns going first. Returns {"rows": [...], "repeats", "article_engine": bool}."""
    mod = article_engine(seed_text)
    sides = {"article": Ours("article"), "fast": Ours("fast")}
    if mod is not None:
        sides["theirs"] = Theirs(mod)
    ops = {name: measurements(side) for name, side in sides.items()}
    names = list(ops["article"])
    for name in names:                                      # warm every path once
        for side in sides:
            ops[side][name]()
    times = {(n, s): [] for n in names for s in sides}
    faults = {(n, s): [] for n in names for s in sides}
    order = list(sides)
    for r in range(repeats):
        if progress:
            print(f"fidelity: round {r + 1}/{repeats}", file=sys.stderr)
        for name in names:
            turn = order[r % len(order):] + order[:r % len(order)]
            for side in turn:
                got = ops[side][name]()
                ms, flt = got if isinstance(got, tuple) else (got, None)
                times[(name, side)].append(ms)
                if flt is not None:
                    faults[(name, side)].append(flt)
    rows = []
    for name in names:
        row = {"measurement": name}
        for side in sides:
            row[f"{side}_ms"] = statistics.median(times[(name, side)])
            if faults[(name, side)]:
                row[f"{side}_faults"] = statistics.median(faults[(name, side)])
        if "theirs" in sides:
            row["article_ratio"] = row["article_ms"] / row["theirs_ms"]
            row["fast_ratio"] = row["fast_ms"] / row["theirs_ms"]
        rows.append(row)
    return {"rows": rows, "repeats": repeats, "article_engine": mod is not None,
            "numpy": np.__version__}


def result_problem(data) -> str | None:
    """Why a stored fidelity result cannot be used (None if it can)."""
    if not isinstance(data, dict):
        return "not a JSON object"
    rows = data.get("rows")
    if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) for r in rows) \
            or not isinstance(data.get("repeats"), int) or not isinstance(data.get("article_engine"), bool):
        return "fields missing or mistyped"
    if not all(isinstance(r.get("measurement"), str) and isinstance(r.get("article_ms"), (int, float))
               and isinstance(r.get("fast_ms"), (int, float)) for r in rows):
        return "a row lacks its measurement or times"
    return None


def _load_result(path: Path) -> dict | None:
    """The stored result at `path`, or None; a damaged one is reported, removed and redone."""
    from .runs import cache
    return cache.read_json_entry(path, result_problem, "fidelity result")


def cached_compare(repeats: int = 15) -> dict:
    """compare() in a fresh process, cached per machine, measured code and repeat count
    (a warm rebuild of the book reuses it). It measures under the cache's measuring lock,
    like every run: nothing else measures in this cache meanwhile."""
    import json

    from .runs import cache
    from .runs.child import engine_child_json
    seen = "seed" if Path(SEED_TEXT).exists() else "noseed"
    bench = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:8]   # what is timed, and how
    path = (cache.cache_dir() / "fidelity"
            / f"{cache.machine_key()}-{cache.code_version()}-{bench}-r{repeats}-{seen}.json")
    if (res := _load_result(path)) is not None:
        return res
    cache.ensure_writable(path.parent, why="the fidelity benchmark is not cached and must be stored there")
    cache.sweep_temp_files(path.parent)
    with cache.measuring(f"fidelity benchmark ({repeats} rounds)"):
        if (res := _load_result(path)) is not None:     # measured while we waited
            return res
        res = engine_child_json("fidelity", "--json", "--repeats", str(repeats), what="fidelity benchmark",
                                env=MALLOC_ENV)
        cache.write_atomic_text(path, json.dumps(res))
    return res


def format_table(result: dict) -> str:
    have = result["article_engine"]
    head = f"{'measurement':<42} {'ours, article':>13} {'ours, fast':>11}"
    head += f" {'article':>9} {'ratio':>7} {'fast ratio':>10}" if have else ""
    lines = [head, "-" * len(head)]
    for r in result["rows"]:
        line = f"{r['measurement']:<42} {r['article_ms']:>10.2f} ms {r['fast_ms']:>8.2f} ms"
        if have:
            line += f" {r['theirs_ms']:>6.2f} ms {r['article_ratio']:>7.2f} {r['fast_ratio']:>10.2f}"
        lines.append(line)
    lines.append(f"medians of {result['repeats']} alternating rounds; ratio = ours / the article's"
                 if have else "the article text was not found: our side alone")
    counted = [r for r in result["rows"] if "article_faults" in r]
    if counted:
        lines.append("")
        lines.append(f"{'minor page faults per call':<42} {'ours, article':>13} {'ours, fast':>11}"
                     + (f" {'article':>9}" if have else ""))
        for r in counted:
            lines.append(f"{r['measurement']:<42} {r['article_faults']:>13.0f} {r['fast_faults']:>11.0f}"
                         + (f" {r['theirs_faults']:>9.0f}" if have else ""))
    return "\n".join(lines)


def within(result: dict, low: float = 0.85, high: float = 1.15) -> list[str]:
    """The measurements whose article-forward ratio falls outside [low, high]."""
    return [r["measurement"] for r in result["rows"]
            if "article_ratio" in r and not low <= r["article_ratio"] <= high]
