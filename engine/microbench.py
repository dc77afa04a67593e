"""Forward-pass microbenchmark: decode ms by batch size, captured (batched) vs eager."""
from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time

from .model import Model

BATCHES = (1, 2, 4, 8, 16, 24, 32, 33, 40, 48)


def forward_ms(batches=BATCHES, context: int = 500, repeats: int = 30, seed: int = 0) -> list[dict]:
    """Median ms of one decode forward per batch size, both paths, at a fixed context length."""
    model = Model(seed)
    kvs = [Model.new_kv(context + 2) for _ in range(max(batches))]
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


def forward_ms_subprocess() -> list[dict]:
    """forward_ms() in a fresh single-threaded process, like every run (not in a notebook kernel)."""
    from .runner import REPO, child_env
    proc = subprocess.run([sys.executable, "-m", "engine", "microbench", "--json"], env=child_env(),
                          cwd=REPO, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"microbenchmark failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout)
