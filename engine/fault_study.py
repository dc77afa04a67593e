"""A diagnostic run: each engine's baseline run with its decode forward wrapped to record,
per call, the batch it ran, its wall time and the minor page faults it took (getrusage).

Not a book run (the wrapper adds two getrusage calls a step); it answers one question:
do decode steps pay for fresh pages in a run under the default allocator, and does
either engine pay more? Each side runs in a fresh process, as runs are made:

    python -m engine.fault_study {ours,theirs} SEED DURATION RATE OUT.json

`theirs` needs the article's engine.py and run.py in the working directory (see
engine/fidelity_runs.py, run_fault_study).
"""
from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path


def _wrap(cls, batched: str, eager: str, rows_of, records: list) -> None:
    """Record (path, rows, ms, faults) of each outer call of cls.batched / cls.eager."""
    depth = [0]

    def make(name, path):
        inner = getattr(cls, name)

        def call(self, tokens, *args):
            if depth[0]:
                return inner(self, tokens, *args)
            depth[0] += 1
            f, t = resource.getrusage(resource.RUSAGE_SELF).ru_minflt, time.perf_counter()
            try:
                return inner(self, tokens, *args)
            finally:
                ms = (time.perf_counter() - t) * 1e3
                records.append((path, len(tokens), ms, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f))
                depth[0] -= 1
        setattr(cls, name, call)
    make(batched, "captured")
    make(eager, "eager")


def study(side: str, seed: int, duration: float, rate: float) -> list:
    records: list = []
    if side == "theirs":
        sys.path.insert(0, str(Path.cwd()))
        import engine as article                      # the article's engine.py, cut beside run.py
        _wrap(article.Model, "forward", "forward_eager", len, records)
        import run
        run.run("baseline", seed, duration)
    else:
        import tempfile
        from .serve.config import LADDER
        from .serve.experiment import execute
        from .serve.model_article import ArticleModel
        _wrap(ArticleModel, "decode_batched", "decode_eager", len, records)
        with tempfile.TemporaryDirectory() as d:
            execute(LADDER["baseline"], seed, duration, rate, Path(d) / "run.npz")
    return records


if __name__ == "__main__":
    side, seed, duration, rate, out = sys.argv[1:6]
    Path(out).write_text(json.dumps(study(side, int(seed), float(duration), float(rate))))
