"""Is a cached calibration still this machine's? Re-measure before measuring runs on it.

A calibration record is keyed on what identifies a machine (CPU model, cores, interpreter,
engine code), not on how fast it runs today, and a cloud VM's speed moves from one day to
the next. On the cliff a few percent of speed decides the regime: on 2026-12-06 a rebuild
on a record made the evening before ran its batch-32 forward 1.5-1.8 times slower than
the record's checks had, and its baseline queues no longer drained. Runs already in the
cache are not the problem (each was measured with the machine it had); new runs at an old
rate are, above all beside cached runs of the same ladder.

So before a build measures runs on a record older than FRESH_S, it measures capacity
again as the record did (same window, forward and concurrency). If capacity moved by more
than TOLERANCE, every calibration record of this machine and code is retired (moved, not
deleted, into calibration/retired/) and the profile calibrates anew, starting from the
capacity just measured; the new record names the one it replaces and why. A chapter's
kernel that makes runs (a reader re-running one with other seeds) confirms the same way
(made_on_confirmed).

Within one build the record is checked once. The build plans its runs on the record it
confirmed or made at its start, and its pages read that record; a probe later in the same
build can only orphan runs already made. On 2026-12-07 a quick build from an empty cache made
its record at 05:04 and its 80 runs in 61 min; at 06:10 its real-engine step probed the
record (by then more than FRESH_S old), read 1.57 times its capacity, and retired the record
with the 18 real-engine runs the build had just made, so every page would have planned its
ladder at a new rate. So the book's build marks its start (begin_build, BUILD_ENV, inherited
by the chapters' kernels), and a record made or kept since then is trusted to its end.

The real engine's runs are retired with its record. Its search starts from a fixed rate and
walks rates by its checks' verdicts alone, so on a changed machine it would walk the same
rates, find its old checks in the run cache and write the old record again (a quick build of
2026-12-07, after a 1.36x change, did so from 15 cached checks in 69 s), and its page would
set runs of the old machine beside this book's engine's runs of the new one.
"""
from __future__ import annotations

import json
import math
import os
import sys
import time
from pathlib import Path

from . import cache
from .calibrate import CREATED_FORMAT

# Capacity moved by more than this fraction: the record no longer describes the machine.
# Four back-to-back probes at k=2 on 2026-12-06 read 2,802-3,279 tokens/s, a spread of
# 1.17 (benchmarks/bench_freshness.py), so 10% would remake a sound record one time in
# three; 25% stays clear of that noise and still catches the 1.5x slowdown behind this guard.
TOLERANCE = 0.25
FRESH_S = 3600.0             # a record younger than this was measured by this very build
# Records this process found unchanged, with when: outside a build (a reader's kernel, the
# command line) one probe (32 s) serves every confirmation within FRESH_S.
_KEPT: dict = {}
BUILD_ENV = "ITL_BUILD_STARTED"      # when the book's build began (epoch seconds), set by begin_build
TRUSTED_ENV = "ITL_BUILD_TRUSTS"     # the `created` of the record this build kept


def begin_build(now: float | None = None) -> None:
    """Mark the start of a book build in this process's environment, which the chapters'
    kernels inherit: from here on a record made or kept is trusted to the build's end."""
    os.environ[BUILD_ENV] = f"{time.time() if now is None else now:.0f}"
    os.environ.pop(TRUSTED_ENV, None)


def _build_started() -> float | None:
    raw = os.environ.get(BUILD_ENV)
    if not raw:
        return None
    try:
        return float(raw)
    except ValueError:
        raise ValueError(f"{BUILD_ENV} must be the epoch seconds a book build began (set by "
                         f"engine.runs.freshness.begin_build), got {raw!r}; unset it outside a build") from None


def trusted_by_build(record: dict, now: float | None = None) -> bool:
    """Whether a build in progress made this record or already kept it: its runs stand on it."""
    started = _build_started()
    if started is None:
        return False
    now = time.time() if now is None else now
    made_since = now - record_age_s(record, now) >= started - 1.0     # `created` is whole seconds
    return made_since or (bool(record.get("created")) and os.environ.get(TRUSTED_ENV) == record["created"])


def record_age_s(record: dict, now: float | None = None) -> float:
    """Seconds since the record was made (its `created`, local time); inf if unreadable."""
    try:
        made = time.mktime(time.strptime(record["created"], CREATED_FORMAT))
    except (KeyError, TypeError, ValueError):
        return math.inf
    return (time.time() if now is None else now) - made


def moved(then: float, now: float, tolerance: float = TOLERANCE) -> bool:
    """Whether a capacity of `now` tokens/s is more than `tolerance` away from `then`
    (in ratio, either way)."""
    if not (then > 0 and now > 0):
        raise ValueError(f"capacities must be positive tokens/s, got {then!r} then and {now!r} now")
    return abs(math.log(now / then)) > math.log1p(tolerance)


def probe(record: dict, measure=None) -> dict:
    """Capacity measured now as `record`'s was (its window, forward and concurrency), with
    the record's, their ratio and whether it moved past TOLERANCE."""
    from .calibrate import measure_capacity
    measure = measure or measure_capacity
    cap = record["capacity"]
    now = measure(float(cap["seconds"]), record.get("forward", "article"), int(record.get("concurrency", 1)))
    then_tps, now_tps = float(cap["tokens_per_s"]), float(now["tokens_per_s"])
    return {"capacity": now, "tokens_per_s_then": then_tps, "tokens_per_s_now": now_tps,
            "ratio": now_tps / then_tps, "moved": moved(then_tps, now_tps), "tolerance": TOLERANCE,
            "record_created": record.get("created"), "record_rate": record.get("rate"),
            "measured": time.strftime(CREATED_FORMAT)}


def retire_records() -> list[Path]:
    """Move every calibration record of this machine and engine code into
    calibration/retired/ (the real engine's records of this machine too); returns where
    they went."""
    from .calibrate import calibration_dir
    mine = [p for p in calibration_dir().glob(f"*-{cache.code_version()}.json") if _this_machine(p)]
    return _retire(mine + _real_records(), why="a calibration this machine no longer matches is kept there")


def retire_real_runs() -> list[Path]:
    """Move every cached real-engine run into real_runs/retired/; returns where they went."""
    d = cache.cache_dir() / "real_runs"
    return _retire(sorted(d.glob("*.npz")) if d.is_dir() else [],
                   why="real-engine runs of a machine that has since changed are kept there")


def _retire(paths, why: str) -> list[Path]:
    """Move each path into a `retired/` folder beside it, renamed atomically with the time
    it was retired (moved, never deleted); returns where they went."""
    stamp = time.strftime("%Y%m%dT%H%M%S")
    moved_to = []
    for p in paths:
        dest = p.parent / "retired" / f"{stamp}-{p.name}"
        cache.ensure_writable(dest.parent, why=why)
        p.replace(dest)
        moved_to.append(dest)
    return moved_to


def _this_machine(p: Path) -> bool:
    """A record measured on this machine, under this interpreter or another one."""
    from ..serve.provenance import machine_fingerprint
    try:
        made_on = json.loads(p.read_text()).get("machine") or {}
    except (OSError, ValueError, AttributeError):
        return False
    here = machine_fingerprint()
    return {k: v for k, v in made_on.items() if k != "python"} == {k: v for k, v in here.items() if k != "python"}


def _real_records() -> list[Path]:
    """The real engine's records that belong to this machine (its record paths name a hash
    of the machine, its libraries and code, and the check length)."""
    from ..real.operating import _record_path
    d = cache.cache_dir() / "real_calibration"
    out = []
    for p in d.glob("checked__d*__*.json") if d.is_dir() else []:
        try:
            duration = float(p.name.split("__")[1][1:])
        except (IndexError, ValueError):
            continue
        if _record_path(duration) == p:
            out.append(p)
    return out


def confirm(prof, forward: str = "article", progress: bool = True, measure=None) -> dict | None:
    """Before runs of profile `prof` are measured: the probe of its ladder's cached record
    (None when there is none, it is a capacity proposal, it is younger than FRESH_S, the
    build in progress made or kept it, or this process found it unchanged less than FRESH_S ago).
    When capacity moved, the records are retired and the ladder's is made again (from the
    probe's capacity, with `replaces` saying why); the probe's summary (without the capacity
    measurement itself) says so under `remade`."""
    from .calibrate import load_calibration
    record = load_calibration(prof.calibration, forward, prof.check_duration)
    if record is None or record.get("method") != "checked" or record_age_s(record) < FRESH_S:
        return None
    if trusted_by_build(record):
        return None
    key = (str(cache.cache_dir()), forward, prof.check_duration, record.get("created"))
    if time.time() - _KEPT.get(key, -math.inf) < FRESH_S:
        return None
    # the measuring lock (re-entrant) over probe, retiring and calibrating again: no other
    # process measures meanwhile, nor reads a half-retired set of records
    with cache.measuring("calibration freshness probe"):
        found = _confirm(prof, forward, progress, record, measure)
    if not found["remade"]:
        _KEPT[key] = time.time()
        if _build_started() is not None:
            os.environ[TRUSTED_ENV] = record["created"]
    return found


def planned_on_confirmed(prof, plan, has_missing, progress: bool = True):
    """`plan()` (the runs a caller is about to make), on a confirmed calibration: when
    `has_missing(planned)` says some are still to be measured, the profile's record is
    confirmed first, and if that remade it, the runs are planned again at its new rates."""
    planned = plan()
    if has_missing(planned):
        found = confirm(prof, progress=progress)
        if found and found["remade"]:
            planned = plan()
    return planned


def confirmed_specs(prof, plan, rate=None, progress: bool = True):
    """`plan()` (run specs, or a tuple of lists of them) on a confirmed calibration: when no
    `rate` was given (the plan reads the profile's record) and some run in it is still to be
    measured, the record is confirmed first, as a build does at its start, and the runs are
    planned again if that made it anew. A reader's kernel that re-runs a chapter with other
    seeds on a day-old record thus probes the machine before measuring beside the cached
    runs; inside a build the record it confirmed is trusted; with every run cached, or a
    rate given, nothing is probed."""
    from . import cache
    if rate is not None:
        return plan()
    return planned_on_confirmed(prof, plan, lambda p: not all(cache.is_cached(s.path) for s in specs_in(p)), progress)


def made_on_confirmed(prof, plan, rate=None, progress: bool = True):
    """confirmed_specs, with every run of the plan made (each once); returns the plan."""
    from .execute import ensure_runs
    planned = confirmed_specs(prof, plan, rate, progress)
    ensure_runs(specs_in(planned), progress=progress)
    return planned


def specs_in(planned) -> list:
    """The run specs of a plan (a list of them, or a tuple of such lists), flattened in
    order, each run once: parts may share runs (the preemption page's swap runs are the
    ladder's own), and a run listed twice must not be measured twice."""
    flat = [s for part in planned for s in specs_in(part)] if isinstance(planned, tuple) else planned
    once: dict = {}
    for s in flat:
        once.setdefault(s.path, s)
    return list(once.values())


def _confirm(prof, forward: str, progress: bool, record: dict, measure) -> dict:
    from .calibrate import calibrate
    found = probe(record, measure)
    capacity = found.pop("capacity")           # the new record starts from it; the summary need not carry it
    say = (f"calibration check: capacity {found['tokens_per_s_now']:.0f} tokens/s now against "
           f"{found['tokens_per_s_then']:.0f} when the record of {found['record_created']} was made "
           f"({found['ratio']:.3f}x, trusted within {TOLERANCE:.0%})")
    if not found["moved"]:
        if progress:
            print(f"{say}: record kept", file=sys.stderr, flush=True)
        return {**found, "remade": False}
    retired, real_runs = retire_records(), retire_real_runs()
    if progress:
        print(f"{say}: this machine has changed; {len(retired)} calibration record(s) retired to "
              f"{retired[0].parent if retired else '-'} and {len(real_runs)} real-engine run(s) to "
              f"{real_runs[0].parent if real_runs else '-'}, calibrating again", file=sys.stderr, flush=True)
    calibrate(checks=True, forward=forward, check_duration=prof.check_duration, progress=progress,
              capacity=capacity, replaces={**found, "retired": [p.name for p in retired],
                                           "retired_real_runs": len(real_runs)})
    return {**found, "remade": True, "retired": [str(p) for p in retired],
            "retired_real_runs": [str(p) for p in real_runs]}


def replacement_sentence(record: dict | None) -> str:
    """What the book says of the record's freshness: remade, and why, or how it is kept fresh."""
    if not record or record.get("method") != "checked":
        return ""
    r = record.get("replaces")
    if r:
        return (f"This calibration replaced one made on {r['record_created']} (rate {r['record_rate']:.3f} req/s): "
                f"when this build began, the machine's capacity read {r['tokens_per_s_now']:.0f} tokens/s against "
                f"that record's {r['tokens_per_s_then']:.0f} ({r['ratio']:.2f} times), more than the "
                f"{r['tolerance']:.0%} a record is trusted within, so it was retired and the rate searched again.")
    return (f"The calibration record was made on {record.get('created')}; a build that has runs to measure "
            f"on a record more than {FRESH_S / 3600:g} h old first measures capacity again, once, at its start, "
            f"and searches the rate again if it moved by more than {TOLERANCE:.0%}.")
