"""The one way this project starts a child process of the engine (`python -m engine ...`).

Runs, capacity measurements and microbenchmarks each get a fresh interpreter with
single-threaded BLAS and tokenizer and this repository importable, so no caller's heap
or thread pool leaks into what they measure.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

from . import cache
from .cache import REPO


def child_env() -> dict:
    env = dict(os.environ)
    env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               TOKENIZERS_PARALLELISM="false")
    if env.get(cache.CACHE_ENV):         # the child runs in the repository: a relative folder would move
        env[cache.CACHE_ENV] = str(cache.cache_dir())
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + [p for p in [env.get("PYTHONPATH")] if p])
    if cache.holds_lock():              # the child measures on our behalf: it must not wait for us
        env[cache.HELD_ENV] = str(cache.lock_path())
    else:
        env.pop(cache.HELD_ENV, None)
    return env


class ChildFailed(RuntimeError):
    """A child process of the engine failed, or ran past its time and was killed."""


def _die_with_parent() -> None:
    """In a worker's engine child about to exec: die when the worker dies, so a killed
    worker never leaves a run measuring on a core whose lock is gone."""
    import ctypes
    import signal
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)    # PR_SET_PDEATHSIG


def engine_child(*args: str, what: str, timeout: float | None = None, env: dict | None = None) -> str:
    """Run `python -m engine <args>` in a fresh process (with `env` added to its
    environment); its stdout, or a ChildFailed naming `what` failed with the end of its
    stderr. A child still running after `timeout` seconds is killed (ChildFailed, one line)."""
    in_worker = bool(os.environ.get("ITL_WORKER")) and sys.platform.startswith("linux")
    try:
        proc = subprocess.run([sys.executable, "-m", "engine", *args], env={**child_env(), **(env or {})},
                              cwd=REPO, capture_output=True, text=True, timeout=timeout,
                              preexec_fn=_die_with_parent if in_worker else None)
    except subprocess.TimeoutExpired:
        raise ChildFailed(f"{what} was still running after {timeout:.0f} s, far past what it should take, "
                          f"and was killed; nothing was kept") from None
    if proc.returncode != 0:
        raise ChildFailed(f"{what} failed (exit {proc.returncode}):\n{proc.stderr.strip()[-2000:]}")
    return proc.stdout


def engine_child_json(*args: str, what: str, timeout: float | None = None, env: dict | None = None):
    """engine_child, parsing the last line of stdout as JSON."""
    return json.loads(engine_child(*args, what=what, timeout=timeout, env=env).strip().splitlines()[-1])
