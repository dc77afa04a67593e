"""Forward-pass microbenchmark: decode ms by batch size, captured (batched) vs eager."""
from __future__ import annotations

import statistics
import time

from .serve.model import make_model

BATCHES = (1, 2, 4, 8, 16, 24, 32, 33, 40, 48)
CONTEXT = 600


def forward_ms(batches=BATCHES, context: int = CONTEXT, repeats: int = 30, seed: int = 0,
               forward: str = "article") -> list[dict]:
    """Median ms of one decode forward per batch size, both paths, at a fixed context length."""
    model = make_model(forward, seed)
    kvs = [model.new_kv(context + 2) for _ in range(max(batches))]
    rows = []
    for b in batches:
        row = {"batch": b}
        for path, fn in (("batched_ms", model.decode_batched), ("eager_ms", model.decode_eager)):
            args = ([1] * b, kvs[:b], [context] * b)
            fn(*args)                                   # warm
            times = []
            for _ in range(repeats):
                t = time.perf_counter()
                fn(*args)
                times.append((time.perf_counter() - t) * 1e3)
            row[path] = statistics.median(times)
        rows.append(row)
    return rows


def forward_ms_subprocess(context: int = CONTEXT, forward: str = "article") -> list[dict]:
    """forward_ms() in a fresh single-threaded process, like every run (not in a notebook kernel)."""
    from .runs.child import engine_child_json
    return engine_child_json("microbench", "--json", "--context", str(context), "--forward", forward,
                             what="microbenchmark")
