"""What a build ran on and with: machine, library versions, calibrated rate, protocol.

Book support for the "Reproducing" and "What is a decode-step stall" chapters. The
functions return plain dicts and pandas frames, so the notebooks only display and
glue them, and the tests can call them directly.
"""
from __future__ import annotations

import dataclasses
import json
import re
import shlex
from importlib import metadata
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parent.parent
REQUIREMENTS = REPO / "requirements.txt"

# Provenance fields shown in the machine table, in display order.
MACHINE_FIELDS = (("cpu_model", "CPU"), ("cores", "logical cores"), ("cores_usable", "cores usable"),
                  ("platform", "platform"), ("python", "Python"), ("numpy", "NumPy"),
                  ("blas", "BLAS"), ("tokenizers", "tokenizers"), ("git_commit", "git commit"))


# ------------------------------------------------------------------ versions
def requirement_pins(path: str | Path = REQUIREMENTS) -> dict[str, str]:
    """{package: pinned version} from a requirements file of `name==version` lines."""
    pins = {}
    for line in Path(path).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        m = re.fullmatch(r"([A-Za-z0-9_.\-\[\],]+)\s*==\s*([^\s;]+)", line)
        if m:
            pins[re.sub(r"\[.*\]", "", m.group(1))] = m.group(2)
        elif line:
            raise ValueError(f"{path}: {line!r} is not an exact pin (name==version)")
    return pins


def installed_version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def package_versions(path: str | Path = REQUIREMENTS) -> pd.DataFrame:
    """One row per pinned package: the pin, what is installed, and whether they agree."""
    rows = [{"package": name, "pinned": pin, "installed": installed_version(name) or "missing"}
            for name, pin in requirement_pins(path).items()]
    df = pd.DataFrame(rows, columns=["package", "pinned", "installed"])
    df["matches"] = df["pinned"] == df["installed"]
    return df


# ------------------------------------------------------------------ machine
def machine_table(prov: dict) -> pd.DataFrame:
    """A run's provenance as a two-column table (what, value), threads last."""
    rows = [(label, prov[key]) for key, label in MACHINE_FIELDS if key in prov]
    for var, value in sorted((prov.get("threads") or {}).items()):
        rows.append((var, "unset" if value is None else value))
    return pd.DataFrame(rows, columns=["what", "value"]).astype({"value": str})


def run_environments(provenances: list[dict]) -> pd.DataFrame:
    """Distinct machine environments among runs (one row each, with its run count).

    A book's numbers are comparable only if this has one row. Left out on purpose: the
    rate (the overload sidebar runs at a different rate by design) and the git commit
    (the run cache key already pins the engine's measuring code; a commit elsewhere in
    the repository changes nothing a run measures).
    """
    keys = [k for k, _ in MACHINE_FIELDS if k != "git_commit"]
    seen: dict[str, dict] = {}
    for prov in provenances:
        row = {k: prov.get(k) for k in keys}
        row["threads"] = json.dumps(prov.get("threads") or {}, sort_keys=True)
        key = json.dumps(row, sort_keys=True, default=str)
        seen.setdefault(key, {**row, "runs": 0})["runs"] += 1
    return pd.DataFrame(list(seen.values()))


# ------------------------------------------------------------------ calibration
def calibration_summary(rate_info: dict, calibration: dict | None) -> dict:
    """How the arrival rate of a set of runs was chosen, as flat numbers for glue.

    ``rate_info`` is a RunSpec's (or a raw log's provenance) rate record; ``calibration``
    the cached calibration it came from (engine.runs.calibrate.load_calibration), if any.
    """
    out = {"rate": float(rate_info["rate"]), "source": rate_info.get("source", "given"),
           "method": rate_info.get("method", "given")}
    if calibration:
        cap = calibration["capacity"]
        out.update(capacity_tokens_per_s=float(cap["tokens_per_s"]),
                   capacity_seconds=float(cap["seconds"]),
                   mean_output_tokens=float(calibration["mean_output_tokens"]),
                   target_utilization=float(calibration["target_utilization"]),
                   proposed_rate=float(calibration["proposed_rate"]),
                   n_checks=len(calibration.get("checks") or []),
                   check_duration_s=calibration.get("check_duration_s"))
    return out


def calibration_checks(calibration: dict | None) -> pd.DataFrame:
    """The checking runs of a 'checked' calibration (empty for a capacity-only one)."""
    cols = ["rate", "preemptions_per_min", "eager_steps_per_min", "ttft_p50_ms", "drains", "place"]
    checks = (calibration or {}).get("checks") or []
    return pd.DataFrame([{c: chk.get(c) for c in cols} for chk in checks], columns=cols).rename(columns={
        "rate": "rate, req/s", "preemptions_per_min": "preemptions / 60 s", "eager_steps_per_min":
        "eager steps / 60 s", "ttft_p50_ms": "TTFT p50, ms", "place": "against the band"})


# ------------------------------------------------------------------ protocol
def protocol(profile=None, seeds=None, duration=None, rate=None) -> dict:
    """The active protocol: the profile, overridden by whatever the chapter was given."""
    import engine
    from engine.runs import cache

    prof = engine.get_profile(profile)
    ladder = engine.profile_specs(prof, seeds=seeds, duration=duration, rate=rate)
    overload = engine.profile_specs(prof, overload=True, seeds=seeds, duration=duration, rate=rate)
    return {
        "profile": prof.name,
        "seeds": sorted({s.seed for s in ladder}),
        "duration_s": ladder[0].duration,
        "rungs": list(dict.fromkeys(s.rung for s in ladder)),
        "rate": ladder[0].rate,
        "rate_info": dict(ladder[0].rate_info),
        "calibration": prof.calibration,
        "overload_seeds": sorted({s.seed for s in overload}),
        "overload_factor": engine.OVERLOAD_FACTOR,
        "overload_rate": overload[0].rate,
        "runs": len(ladder) + len(overload),
        "minutes_2core": prof.minutes_2core,
        "cache_dir": str(cache.cache_dir()),
        "cache_env": cache.CACHE_ENV,
    }


def protocol_table(proto: dict) -> pd.DataFrame:
    rows = [("profile", proto["profile"]),
            ("seeds", ", ".join(map(str, proto["seeds"]))),
            ("seconds of arrivals per run", f"{proto['duration_s']:g}"),
            ("rungs", " → ".join(proto["rungs"])),
            ("arrival rate (req/s)", f"{proto['rate']:.3f}"),
            ("overload sidebar seeds", ", ".join(map(str, proto["overload_seeds"]))),
            ("overload rate (req/s)", f"{proto['overload_rate']:.3f} (× {proto['overload_factor']:.3f})"),
            ("runs in all", str(proto["runs"])),
            ("run cache", proto["cache_dir"])]
    return pd.DataFrame(rows, columns=["setting", "value"])


def papermill_command(chapter: str, out: str = "out.ipynb", **params) -> str:
    """The shell command that re-runs one chapter with other parameters (YAML via -y).

    ``-y`` keeps lists as lists; ``-p seeds [6, 7, 8]`` would pass a string.
    """
    yaml = "\n".join(f"{k}: {json.dumps(v)}" for k, v in params.items())
    return f"papermill book/{chapter}.ipynb {out} -y {shlex.quote(yaml)}"


# ------------------------------------------------------------------ the ladder's knobs
def ladder_knobs() -> pd.DataFrame:
    """One row per rung: the knob(s) it changes against the rung above, from -> to.

    Computed from engine.LADDER, so it cannot drift from what the runs used.
    """
    from engine import LADDER

    rows, prev = [], None
    for name, cfg in LADDER.items():
        if prev is None:
            rows.append({"rung": name, "knob": "(none: the article's defaults)", "from": "", "to": ""})
        else:
            for f in dataclasses.fields(cfg):
                if f.name != "name" and getattr(prev, f.name) != getattr(cfg, f.name):
                    rows.append({"rung": name, "knob": f.name, "from": _fmt(getattr(prev, f.name)),
                                 "to": _fmt(getattr(cfg, f.name))})
        prev = cfg
    return pd.DataFrame(rows, columns=["rung", "knob", "from", "to"])


def _fmt(v) -> str:
    if isinstance(v, tuple):
        return "{" + ", ".join(map(str, v)) + "}"
    return str(v)


# ------------------------------------------------------------------ the raw log
def raw_log_columns() -> pd.DataFrame:
    """What the engine records per run: each raw-log array and its columns."""
    from .rawlog import COLUMNS

    return pd.DataFrame([{"array": name, "columns": ", ".join(cols)} for name, cols in COLUMNS.items()])


def cached_paths(specs) -> list[Path]:
    """The raw logs of these runs that are already in the run cache."""
    return [s.path for s in specs if s.path.exists()]


CALIBRATION_ROWS = (("rate", "arrival rate used (req/s)", "{:.3f}"), ("source", "source", "{}"),
                    ("method", "method", "{}"),
                    ("capacity_tokens_per_s", "measured capacity (decode tokens/s)", "{:.0f}"),
                    ("capacity_seconds", "capacity measurement (s, saturated queue)", "{:g}"),
                    ("mean_output_tokens", "mean output tokens per request", "{:.0f}"),
                    ("target_utilization", "target utilization", "{:.0%}"),
                    ("proposed_rate", "proposed rate (req/s)", "{:.3f}"),
                    ("n_checks", "checking runs", "{}"),
                    ("check_duration_s", "seconds per checking run", "{}"))


def calibration_table(summary: dict) -> pd.DataFrame:
    """calibration_summary() as a readable two-column table."""
    rows = [(label, fmt.format(summary[key])) for key, label, fmt in CALIBRATION_ROWS
            if summary.get(key) is not None]
    return pd.DataFrame(rows, columns=["what", "value"])
