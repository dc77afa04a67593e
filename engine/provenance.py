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
