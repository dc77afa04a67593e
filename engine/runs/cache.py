"""The run cache: one immutable raw log per (engine code, config, workload, seed,
duration, rate, library versions), named by a hash of all of them.

A change to any file of the measured package (engine/serve, hashed whole, so a module
added there is in the key without anyone listing it), any knob or any library version
gives a new key, so a stale log is never reused; edits to this package (engine/runs)
never change a key. Entries appear only by atomic rename, so a killed run leaves
nothing behind but a temp file, which is ignored and later swept.

An entry is trusted only once it is read back whole (`raw_log_problem`: every member of
the .npz passes its CRC and the contract arrays are there); a damaged one is reported
with a warning naming it, removed and measured again. Only one process measures in a
cache folder at a time (`measuring`: an flock held by the measuring process, released
by the kernel if it dies), so a run is never measured under another's contention, and
a second build waits for the first, then reuses what it made. A warm cache is only
read, so it may live on a read-only folder.
"""
from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import platform
import shutil
import stat
import sys
import time
import warnings
import zipfile
import zlib
from pathlib import Path

from ..serve.config import Config, slug
from ..serve.provenance import machine_fingerprint
from ..serve.workload import Workload

REPO = Path(__file__).resolve().parents[2]
MEASURED_DIR = Path(__file__).resolve().parents[1] / "serve"   # every file here is in the key
CACHE_ENV = "ITL_CACHE_DIR"


def cache_dir() -> Path:
    """The cache folder, always absolute: a relative ITL_CACHE_DIR is taken from the
    working directory of the process that reads it (children get it made absolute)."""
    return Path(os.path.abspath(os.environ.get(CACHE_ENV) or REPO / ".cache"))


def runs_dir() -> Path:
    return cache_dir() / "runs"


def measured_files(folder: Path = MEASURED_DIR) -> list[Path]:
    """Every Python file of the measured package, recursively, in a stable order."""
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def code_version(folder: Path = MEASURED_DIR) -> str:
    """A hash of the measured package's files (names and bytes)."""
    h = hashlib.sha256()
    for p in measured_files(folder):
        h.update(p.relative_to(folder).as_posix().encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def library_versions() -> dict:
    import numpy
    import tokenizers
    return {"python": platform.python_version(), "numpy": numpy.__version__,
            "tokenizers": tokenizers.__version__}


def run_key(cfg: Config, seed: int, duration: float, rate: float, workload: Workload = Workload(),
            concurrency: int = 1, libs: dict | None = None) -> str:
    """The hash of everything that makes a run what it is. A run measured beside k-1 others
    (concurrency k > 1) is another measurement than one measured alone: k is in its key.
    A run alone keeps the key it had before concurrency was recorded, so caches made then
    stay valid, and no run alone shares a key with a run beside others. `libs`: the
    library versions of another interpreter (as its runs' provenance records them), to find
    the runs it made; None: this one's."""
    spec = {"code": code_version(), "config": cfg.to_dict(), "workload": workload.to_dict(),
            "seed": int(seed), "duration": float(duration), "rate": round(float(rate), 6),
            "libs": library_versions() if libs is None else libs}
    if concurrency != 1:
        spec["concurrency"] = int(concurrency)
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]


MAX_SLUG = 120       # a rung name's file-name form; the rest of the name is under 100 bytes


def run_path(cfg: Config, seed: int, duration: float, rate: float, workload: Workload = Workload(),
             concurrency: int = 1, libs: dict | None = None) -> Path:
    key = run_key(cfg, seed, duration, rate, workload, concurrency, libs)
    if len(slug(cfg.name)) > MAX_SLUG:          # the file name must fit the filesystem's 255 bytes
        raise ValueError(f"config name {cfg.name[:40]!r}... is too long: its file-name form may have at most "
                         f"{MAX_SLUG} characters, this one has {len(slug(cfg.name))}")
    k = f"__k{concurrency}" if concurrency != 1 else ""
    return runs_dir() / f"{slug(cfg.name)}__s{seed}__d{duration:g}__r{rate:.3f}{k}__{key}.npz"


class CacheWarning(UserWarning):
    """A cache entry could not be used as found (it is redone) or kept (it is recomputed)."""


def ensure_writable(folder: Path, why: str = "") -> Path:
    """Create the folder and prove we can write there; a clear error otherwise, naming
    the folder, why it must be written (`why`) and what the OS said."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".probe-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as e:
        because = f" but {why}" if why else ""
        raise PermissionError(f"cache folder {folder} is not writable ({e.strerror or e}){because}; "
                              f"set {CACHE_ENV} to a writable folder") from None
    return folder


# ---------------------------------------------------------------- verified entries
RAW_LOG_MEMBERS = ("steps", "segs", "gcs", "emissions", "evictions", "requests", "trace", "wall", "config")
_verified: dict = {}        # (path, inode, size, mtime_ns, ctime_ns) of logs read back whole in this process
# A log that passed the full check is stamped in an extended attribute with its size and a
# hash of its bytes, so the chapters' kernels of a warm build do not each decompress every
# log again (~60 ms per 60 s log; hashing the file costs ~1 ms per MB). The hash, not the
# mtime, vouches for the bytes: a file overwritten in place with its mtime put back voids
# the stamp.
VERIFIED_XATTR = "user.itl_verified"


def _stamp(path: Path, st) -> bytes:
    h = hashlib.blake2b(digest_size=16)
    with open(path, "rb", buffering=0) as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return f"{st.st_size}:{h.hexdigest()}".encode()


def raw_log_problem(path: Path) -> str | None:
    """Why the raw log at `path` cannot be used (None if it reads back whole): every
    member's CRC is checked (once per file version: see VERIFIED_XATTR), so a truncated,
    overwritten or bit-flipped file is caught."""
    try:
        st = path.lstat()
    except (FileNotFoundError, NotADirectoryError):
        return "missing"
    except OSError as e:
        return f"not readable ({e.strerror or e})"
    if not stat.S_ISREG(st.st_mode):            # never follow a link out of the cache
        return "not a regular file" + (" (a symbolic link)" if stat.S_ISLNK(st.st_mode) else "")
    # ctime moves on every write (and no one can set it back), so this process trusts
    # what it checked until the file is touched
    key = (str(path), st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    if key in _verified:
        return None
    with contextlib.suppress(OSError):
        stamp = os.getxattr(path, VERIFIED_XATTR, follow_symlinks=False)
        if stamp.startswith(f"{st.st_size}:".encode()) and stamp == _stamp(path, st):
            _verified[key] = True
            return None
    try:
        with zipfile.ZipFile(path) as z:
            names = {n.removesuffix(".npy") for n in z.namelist()}
            if lost := [m for m in RAW_LOG_MEMBERS if m not in names]:
                return f"arrays missing: {', '.join(lost)}"
            if (bad := z.testzip()) is not None:
                return f"member {bad} fails its CRC check"
    # zlib.error: a deflated member overwritten in place fails to decompress before its CRC is read
    except (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError) as e:
        return f"not a readable .npz ({e})"
    with contextlib.suppress(OSError):          # best effort: read-only folders, filesystems without xattrs
        os.setxattr(path, VERIFIED_XATTR, _stamp(path, st), follow_symlinks=False)
        st = path.lstat()                       # the stamp itself moved ctime
    _verified[(str(path), st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)] = True
    return None


def discard_corrupt(path: Path, problem: str, what: str = "cached raw log") -> None:
    """Warn, naming the file, and remove it so the work is redone (left in place on a
    read-only folder: the caller then needs a writable one anyway)."""
    warnings.warn(f"{what} {path} is unusable ({problem}); it will be redone", CacheWarning, stacklevel=3)
    try:
        path.unlink()
    except OSError:
        pass


def read_json_entry(path: Path, problem_of, what: str):
    """A JSON cache entry (a calibration record, a fidelity result), or None if absent; one
    that does not parse, or that `problem_of(data)` finds a problem with, is reported
    (naming it), removed and so redone."""
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        discard_corrupt(path, f"not readable JSON: {e}", what)
        return None
    if (problem := problem_of(data)) is not None:
        discard_corrupt(path, problem, what)
        return None
    return data


def is_cached(path: Path) -> bool:
    """True if a usable raw log is at `path`; a damaged one is reported and removed."""
    problem = raw_log_problem(path)
    if problem is None:
        return True
    if problem != "missing":
        discard_corrupt(path, problem)
    return False


# ---------------------------------------------------------------- free space
def ensure_space(folder: Path, need_bytes: int, what: str) -> None:
    """Refuse to start work whose output cannot fit: one line naming the folder, what it
    must hold and how much is free (an OSError with ENOSPC, as a full disk gives)."""
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return                                  # cannot tell: the write itself will say
    if free < need_bytes:
        raise OSError(errno.ENOSPC, f"{folder} has {free / 2**20:.1f} MiB free but {what} needs about "
                                    f"{need_bytes / 2**20:.1f} MiB; nothing was measured: free space "
                                    f"there or set {CACHE_ENV} to another folder")


# ---------------------------------------------------------------- temp files
TEMP_PATTERNS = (".tmp-*", ".probe-*")


def _writer_alive(name: str) -> bool:
    """Temp files are named .tmp-<pid>-... or .probe-<pid>: is that process still running?"""
    try:
        pid = int(name.split("-")[1])
    except (IndexError, ValueError):
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def temp_folders() -> list[Path]:
    """Where temp files are written: raw logs, run summaries, calibration records, the
    fidelity benchmark's results."""
    return [runs_dir(), cache_dir() / "summaries", cache_dir() / "calibration", cache_dir() / "fidelity"]


def sweep_temp_files(folders=None, older_than_s: float = 3600.0) -> int:
    """Remove temp files left by killed writers (raw logs, summaries, calibration
    records): those whose writing process is gone, and any older than `older_than_s`.
    On a cluster's shared folder a process id names a process of another host, so there
    only age counts. Best effort: a read-only folder is left as it is."""
    by_pid = os.environ.get("ITL_EXECUTOR") != "slurm"
    n = 0
    for folder in ([Path(folders)] if isinstance(folders, (str, Path)) else folders or temp_folders()):
        for pattern in TEMP_PATTERNS:
            for p in Path(folder).glob(pattern):
                try:
                    if (by_pid and not _writer_alive(p.name)) or time.time() - p.stat().st_mtime > older_than_s:
                        p.unlink()
                        n += 1
                except OSError:
                    pass
    return n


def machine_key(python: str | None = None) -> str:
    """A short hash of what identifies this machine (for per-machine measurements:
    calibration, the fidelity benchmark); `python`: this machine under another interpreter
    version (the fingerprint names it), None: under this one."""
    fingerprint = machine_fingerprint() if python is None else {**machine_fingerprint(), "python": python}
    return hashlib.sha256(json.dumps(fingerprint, sort_keys=True).encode()).hexdigest()[:12]


def write_atomic_text(path: Path, text: str) -> Path:
    """Write text to a temp file beside `path`, fsync, rename; on any failure (a full
    disk: ENOSPC) nothing is left behind and the error names the file."""
    tmp = path.with_name(f".tmp-{os.getpid()}-{path.name}")
    try:
        with open(tmp, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as e:
        raise OSError(e.errno, f"could not write {path} ({e.strerror or e})") from None
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


# ---------------------------------------------------------------- one measuring process per cache
LOCK_NAME = ".measuring.lock"
HELD_ENV = "ITL_MEASURING_LOCK"     # set in the children of the holder: they measure on its behalf
# A parallel build's worker measures under a lock of its own core instead (engine/runs/workers.py):
# the build's driver holds the folder's lock, each worker its core's.
LOCK_NAME_ENV = "ITL_LOCK_NAME"
WORKER_LOCKS = ".measuring-*.lock"
_held = {"depth": 0, "fd": None}


def lock_path() -> Path:
    return cache_dir() / (os.environ.get(LOCK_NAME_ENV) or LOCK_NAME)


def sweep_worker_locks() -> int:
    """Remove the per-core lock files that no process holds (left by a killed or finished
    parallel build). One that is held stays."""
    n = 0
    for p in cache_dir().glob(WORKER_LOCKS):
        try:
            fd = os.open(p, os.O_RDWR)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            p.unlink()             # a waiter that opened it re-checks the inode (measuring)
            n += 1
        except OSError:
            pass
        finally:
            os.close(fd)
    return n


def holds_lock() -> bool:
    return _held["depth"] > 0 or os.environ.get(HELD_ENV) == str(lock_path())


def _say_waiting(holder: str) -> None:
    print(f"engine: waiting for {holder} to finish measuring in {cache_dir()} "
          f"(one process measures in a cache folder at a time)", file=sys.stderr, flush=True)


def _same_file(fd: int, path: Path) -> bool:
    try:
        st = os.stat(path)
    except OSError:
        return False
    own = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (own.st_dev, own.st_ino)


def set_measuring(what: str) -> None:
    """Say what the holder is measuring now (a waiting process shows it)."""
    fd = _held["fd"]
    if fd is not None:
        text = f"pid {os.getpid()} ({what}, since {time.strftime('%H:%M:%S')})".encode()
        os.ftruncate(fd, 0)
        os.pwrite(fd, text, 0)


@contextlib.contextmanager
def measuring(what: str, on_wait=_say_waiting, poll_s: float = 0.5):
    """Hold this cache folder's measuring lock (re-entrant, and held on behalf of the
    children this process starts). While another process holds it, call
    on_wait(description of what it measures) whenever that changes, and wait. The
    caller re-checks the cache after entering: the other process may have made it."""
    if holds_lock():
        _held["depth"] += 1
        try:
            yield
        finally:
            _held["depth"] -= 1
        return
    ensure_writable(cache_dir(), why="missing work must be measured and stored there")
    fd = os.open(lock_path(), os.O_RDWR | os.O_CREAT, 0o666)
    try:
        shown = None
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                if _same_file(fd, lock_path()):
                    break
                # the file was swept (sweep_worker_locks) between our open and our lock: open it anew
                fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)
                fd = os.open(lock_path(), os.O_RDWR | os.O_CREAT, 0o666)
                continue
            except OSError as e:
                if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise
            holder = os.pread(fd, 512, 0).decode(errors="replace").strip() or "another process"
            if holder != shown:
                on_wait(holder)
                shown = holder
            time.sleep(poll_s)
        _held.update(depth=1, fd=fd)
        try:
            set_measuring(what)
            yield
        finally:
            _held.update(depth=0, fd=None)
            os.ftruncate(fd, 0)
            if os.environ.get(LOCK_NAME_ENV):       # a core's lock: gone when its worker is done with it
                with contextlib.suppress(OSError):
                    os.unlink(lock_path())
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
