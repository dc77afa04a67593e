"""Read-only copies of a folder tree, read-only even for root."""
import ctypes
import os
import shutil
import stat
from pathlib import Path


def read_only(src: Path, dest: Path) -> Path:
    """A copy of a folder tree with every write bit cleared."""
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns(".measuring.lock"))
    for p in [dest, *dest.rglob("*")]:
        p.chmod(p.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    return dest


def read_only_preexec() -> None:
    """In a child about to exec: make permission bits bind even for root, by dropping
    CAP_DAC_OVERRIDE and CAP_FOWNER from the bounding set (a no-op for other users)."""
    if os.geteuid() == 0:
        libc = ctypes.CDLL(None, use_errno=True)
        for cap in (1, 3):                      # CAP_DAC_OVERRIDE, CAP_FOWNER
            if libc.prctl(24, cap, 0, 0, 0) != 0:    # PR_CAPBSET_DROP
                raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")
