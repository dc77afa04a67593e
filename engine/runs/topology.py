"""Which cores this process may use, grouped by physical core, and where it runs.

Two SMT siblings share one core's execution units, so two runs on siblings would
disturb each other's timings far more than two runs on separate cores: a worker gets a
whole physical core and measures on its first logical CPU, and its sibling stays idle.
The grouping is read from the kernel (/sys/devices/system/cpu/cpu*/topology); where it
cannot be read, every logical CPU counts as its own core.
"""
from __future__ import annotations

import os
import socket
from pathlib import Path

SYS_CPU = Path("/sys/devices/system/cpu")


def allowed_cpus() -> list[int]:
    """The logical CPUs this process may run on, sorted."""
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:                           # not Linux
        return list(range(os.cpu_count() or 1))


def _core_of(cpu: int, root: Path) -> tuple:
    """(package, core) of a logical CPU; (None, cpu) when the kernel does not say."""
    topo = root / f"cpu{cpu}" / "topology"
    try:
        return (int((topo / "physical_package_id").read_text()), int((topo / "core_id").read_text()))
    except (OSError, ValueError):
        return (None, cpu)


def physical_cores(cpus=None, root: Path = SYS_CPU) -> list[tuple[int, ...]]:
    """The allowed logical CPUs grouped by physical core (siblings together), each group
    sorted, groups in the order of their first CPU."""
    groups: dict[tuple, list[int]] = {}
    for cpu in sorted(cpus if cpus is not None else allowed_cpus()):
        groups.setdefault(_core_of(cpu, root), []).append(cpu)
    return sorted((tuple(g) for g in groups.values()), key=lambda g: g[0])


def measuring_cpus(cpus=None, root: Path = SYS_CPU) -> list[int]:
    """One logical CPU per physical core: the CPUs workers may be pinned to."""
    return [g[0] for g in physical_cores(cpus, root)]


def cpus_allowed_list(pid: int | str = "self") -> str:
    """The kernel's Cpus_allowed_list of a process (e.g. '3' or '0-1'), as /proc reads it."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Cpus_allowed_list:"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ",".join(map(str, allowed_cpus()))


def host() -> str:
    return socket.gethostname()
