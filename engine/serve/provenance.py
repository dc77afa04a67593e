"""Where and with what a run was measured: machine, interpreter, libraries, code."""
from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "TOKENIZERS_PARALLELISM",
               "OPENBLAS_CORETYPE")


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def blas_info() -> str:
    import numpy as np
    try:
        deps = np.show_config(mode="dicts")["Build Dependencies"]
        blas = deps.get("blas", {})
        return f"{blas.get('name', '?')} {blas.get('version', '?')}".strip()
    except Exception:            # older numpy: no dict mode
        return "unknown"


def git_commit() -> str:
    try:
        out = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True,
                             text=True, timeout=10)
        commit = out.stdout.strip() or "unknown"
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--", "engine"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return commit + ("+dirty-engine" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def machine_fingerprint() -> dict:
    """What identifies 'this machine' for the per-machine calibration cache."""
    return {"cpu": cpu_model(), "cores": os.cpu_count(), "python": platform.python_version(),
            "machine": platform.machine()}


def provenance() -> dict:
    import numpy as np
    import tokenizers
    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:
        affinity = os.cpu_count()
    return {
        "cpu_model": cpu_model(), "cores": os.cpu_count(), "cores_usable": affinity,
        "platform": platform.platform(), "python": sys.version.split()[0],
        "numpy": np.__version__, "blas": blas_info(), "tokenizers": tokenizers.__version__,
        "git_commit": git_commit(),
        "threads": {k: os.environ.get(k) for k in THREAD_VARS},
    }


CPU_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


def cpu_ticks() -> dict | None:
    """The machine's CPU time by kind from /proc/stat, in seconds (None off Linux).
    `steal` is time the hypervisor ran something else while a virtual CPU wanted to run."""
    try:
        with open("/proc/stat") as f:
            values = f.readline().split()[1:1 + len(CPU_FIELDS)]
    except OSError:
        return None
    hz = os.sysconf("SC_CLK_TCK")
    return {k: int(v) / hz for k, v in zip(CPU_FIELDS, values)}


def cpu_time_during(before: dict | None, after: dict | None) -> dict | None:
    """CPU seconds by kind between two cpu_ticks() readings, summed over all CPUs."""
    if before is None or after is None:
        return None
    return {k: round(after[k] - before[k], 3) for k in before}
