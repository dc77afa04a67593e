"""One decode forward, timed in a fresh process under the default allocator: ours (the
article forward) or the article engine's, over KV caches whose pages were written or not.

Why it exists: `python -m engine microbench` builds its caches with new_kv and never
fills them, so K (np.zeros: fresh pages the kernel maps, on first read, to its one
shared zero page) is read from a single physical page, always in cache, while in a run
every position a decode reads was written by a prefill or an earlier decode. The probe
times both kinds of cache, for both engines, with the page faults per call, so a
disagreement between a microbenchmark and a run can be told apart from a difference
between the engines.

    python -m engine.decode_probe {ours,theirs} {blank,written} [--context 600] [--repeats 30]

prints one JSON line: [{"path", "batch", "ms", "faults"}, ...].
"""
from __future__ import annotations

import argparse
import json
import resource
import statistics
import time

import numpy as np

CAPTURED = (1, 8, 16, 32)
EAGER = (33, 48)


def _faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def forwards(side: str):
    """(new K/V pair of a capacity, batched forward, eager forward), with each engine's
    own argument conventions."""
    if side == "ours":
        from .serve.model import make_model
        m = make_model("article")
        return m.new_kv, m.decode_batched, m.decode_eager
    from .fidelity import article_engine
    mod = article_engine()
    if mod is None:
        raise SystemExit("the article's text was not found (set ITL_ARTICLE_TEXT)")
    m = mod.Model()

    def new_kv(cap):                     # as its Engine._alloc allocates them
        k = np.zeros((mod.L, cap, mod.D), np.float32)
        return k, np.zeros_like(k)

    def wrap(fn):
        return lambda toks, kvs, pos: fn(toks, [(k, v, p + 1) for (k, v), p in zip(kvs, pos)], pos)
    return new_kv, wrap(m.forward), wrap(m.forward_eager)


def probe(side: str, written: bool, context: int = 600, repeats: int = 30) -> list[dict]:
    new_kv, batched, eager = forwards(side)
    rng = np.random.default_rng(0)
    kvs = [new_kv(context + 2) for _ in range(max(CAPTURED + EAGER))]
    if written:                          # what a prefill leaves: every page written with data
        for k, v in kvs:
            k[:] = rng.standard_normal(k.shape, dtype=np.float32)
            v[:] = rng.standard_normal(v.shape, dtype=np.float32)
    rows = []
    for path, fn, sizes in (("captured", batched, CAPTURED), ("eager", eager, EAGER)):
        for b in sizes:
            args = ([1] * b, kvs[:b], [context] * b)
            fn(*args)                                    # warm
            ms, flt = [], []
            for _ in range(repeats):
                f, t = _faults(), time.perf_counter()
                fn(*args)
                ms.append((time.perf_counter() - t) * 1e3)
                flt.append(_faults() - f)
            rows.append({"path": path, "batch": b, "ms": statistics.median(ms), "faults": statistics.median(flt)})
    return rows


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("side", choices=("ours", "theirs"))
    p.add_argument("cache", choices=("blank", "written"))
    p.add_argument("--context", type=int, default=600)
    p.add_argument("--repeats", type=int, default=30)
    a = p.parse_args()
    print(json.dumps(probe(a.side, a.cache == "written", a.context, a.repeats)))
