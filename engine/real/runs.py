"""Real-engine runs in the run cache: each under its own key (the engine's code, the
config, the trace, the library versions), each made in a fresh subprocess with one BLAS
and OpenMP thread, serially (a real engine's step is what is timed), with a progress bar."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ..runs import cache
from ..serve.config import slug
from ..serve.workload import Workload
from .config import RealConfig

REAL_DIR = Path(__file__).resolve().parent
WORKLOAD_FILES = [cache.MEASURED_DIR / n for n in ("workload.py", "text.py", "tokenizer.py", "rawlog.py")]


def code_version() -> str:
    """The probe's package and the book's engine files it reuses (trace, tokenizer, log writer)."""
    h = hashlib.sha256()
    for p in sorted(REAL_DIR.glob("*.py")) + WORKLOAD_FILES:
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def installed_versions() -> dict:
    from .internals import versions
    return {**cache.library_versions(), **versions()}


@dataclass(frozen=True)
class RealSpec:
    config: RealConfig
    seed: int
    duration: float
    rate: float
    workload: Workload = Workload()

    group: str = "real engine"

    @property
    def rung(self) -> str:
        return self.config.name

    @property
    def key(self) -> str:
        spec = {"code": code_version(), "config": self.config.to_dict(), "workload": self.workload.to_dict(),
                "seed": int(self.seed), "duration": float(self.duration), "rate": round(float(self.rate), 6),
                "libs": installed_versions()}
        return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]

    @property
    def path(self) -> Path:
        name = slug(self.config.name)
        return (cache.cache_dir() / "real_runs"
                / f"{name}__s{self.seed}__d{self.duration:g}__r{self.rate:.3f}__{self.key}.npz")

    def expected_seconds(self) -> float:
        return self.duration * 1.3 + 15.0          # start-up (torch import, model, warm-up) and the drain


def command(spec: RealSpec, out: Path) -> list[str]:
    if spec.workload != Workload():
        raise ValueError("real-engine runs take the book's default workload only")
    return [sys.executable, "-m", "engine.real", "--rung", spec.config.name, "--seed", str(spec.seed),
            "--duration", repr(float(spec.duration)), "--rate", repr(float(spec.rate)), "--out", str(out)]


def ensure_real_runs(specs: list[RealSpec], progress: bool = True) -> list[Path]:
    """Make the runs the cache lacks, one fresh process each; their paths, in order."""
    from tqdm.auto import tqdm

    todo = [s for s in specs if not s.path.exists()]
    if todo:
        cache.ensure_writable(todo[0].path.parent, "real-engine runs are cached there")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false",
           "PYTHONPATH": os.pathsep.join([str(cache.REPO), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    total = sum(s.expected_seconds() for s in todo)
    with tqdm(total=round(total), unit="s", desc=f"real-engine runs: {len(todo)} to make",
              disable=not progress or not todo) as bar:
        for s in todo:
            if s.config != _named(s.config.name):
                raise ValueError(f"real-engine config {s.config.name!r} is not one of the named rungs "
                                 f"(engine/real/config.py RUNGS) as defined; name it there to run it")
            done = subprocess.run(command(s, s.path), env=env, capture_output=True, text=True,
                                  timeout=s.expected_seconds() * 4 + 900)
            if done.returncode != 0:
                raise RuntimeError(f"real-engine run {s.config.name} seed {s.seed} failed "
                                   f"(exit {done.returncode}):\n{done.stderr[-3000:]}")
            bar.update(round(s.expected_seconds()))
    return [s.path for s in specs]


def _named(name: str) -> RealConfig:
    from .config import rung_config
    return rung_config(name)


def ladder_specs(rate: float, seeds, duration: float, rungs=None) -> list[RealSpec]:
    """Every rung for every seed, in the book's run order: blocked by seed (each seed's
    rungs before the next seed's), shuffled within each block by a generator fixed by the
    seed (engine/runs/order.py), so a drift of the machine cannot pass for a rung's effect."""
    from ..runs.order import block_permutation
    from .config import RUNGS, rung_config

    names = list(RUNGS if rungs is None else rungs)
    out = []
    for seed in seeds:
        block = [RealSpec(rung_config(n), int(seed), float(duration), round(float(rate), 4)) for n in names]
        out += [block[i] for i in block_permutation(len(block), int(seed))]
    return out
