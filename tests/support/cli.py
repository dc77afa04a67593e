"""The engine's command line, run in a child process on a given cache folder."""
import os
import subprocess
import sys

from .paths import REPO

# a config with every mechanism firing: a small KV pool (evictions) and few captured
# sizes (eager steps), besides GC, tokenization and prefill
PRESSURED = '{"name": "pressured", "kv_blocks": 250, "capture_sizes": [1, 2, 4, 8]}'


def engine_cli(*args, cache_dir, timeout=300, check=True):
    env = {**os.environ, "ITL_CACHE_DIR": str(cache_dir), "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-m", "engine", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"engine {args} failed ({proc.returncode}):\n{proc.stderr}")
    return proc
