"""What a build ran with: the protocol (profile, seeds, run length, rungs, rate), how the
arrival rate was calibrated, and the command that re-runs a chapter."""
from __future__ import annotations

import json
import shlex
from pathlib import Path

import pandas as pd

from ..engine_link import CACHE_ENV, OVERLOAD_FACTOR, cache_dir, get_profile, profile_specs


# ------------------------------------------------------------------ protocol
def protocol(profile=None, seeds=None, duration=None, rate=None) -> dict:
    """The active protocol: the profile, overridden by whatever the chapter was given."""
    prof = get_profile(profile)
    ladder = profile_specs(prof, seeds=seeds, duration=duration, rate=rate)
    overload = profile_specs(prof, overload=True, seeds=seeds, duration=duration, rate=rate)
    return {
        "profile": prof.name,
        "seeds": sorted({s.seed for s in ladder}),
        "duration_s": ladder[0].duration,
        "rungs": list(dict.fromkeys(s.rung for s in ladder)),
        "rate": ladder[0].rate,
        "rate_info": dict(ladder[0].rate_info),
        "calibration": prof.calibration,
        "overload_seeds": sorted({s.seed for s in overload}),
        "overload_factor": OVERLOAD_FACTOR,
        "overload_rate": overload[0].rate,
        "runs": len(ladder) + len(overload),
        "minutes_2core": prof.minutes_2core,
        "cache_dir": str(cache_dir()),
        "cache_env": CACHE_ENV,
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
                    ("forward_ms_b32", "batch-32 forward pass (ms, microbenchmark)", "{:.2f}"),
                    ("check_start_rate", "first check (req/s)", "{:.3f}"),
                    ("n_checks", "checking runs", "{}"),
                    ("check_duration_s", "seconds per checking run", "{}"),
                    ("check_rate", "rate the checks chose (req/s, check seeds)", "{:.3f}"),
                    ("check_demand", "decode tokens the check seeds asked for (x expected)", "{:.3f}"),
                    ("demand_at_check_rate", "... these runs' seeds at that rate (x expected)", "{:.3f}"),
                    ("demand", "... these runs' seeds at the rate used (x expected)", "{:.3f}"),
                    ("seconds_taken", "time to calibrate (s)", "{:.0f}"))


def calibration_table(summary: dict) -> pd.DataFrame:
    """calibration_summary() as a readable two-column table."""
    rows = [(label, fmt.format(summary[key])) for key, label, fmt in CALIBRATION_ROWS
            if summary.get(key) is not None]
    return pd.DataFrame(rows, columns=["what", "value"])


# ------------------------------------------------------------------ calibration
def calibration_summary(rate_info: dict, calibration: dict | None) -> dict:
    """How the arrival rate of a set of runs was chosen, as flat numbers for glue.

    ``rate_info`` is a RunSpec's (or a raw log's provenance) rate record; ``calibration``
    the cached calibration it came from (engine.runs.calibrate.load_calibration), if any.
    """
    out = {"rate": float(rate_info["rate"]), "source": rate_info.get("source", "given"),
           "method": rate_info.get("method", "given")}
    # a checked rate carried to these runs' seeds by decode demand (engine/runs/calibrate.run_rate)
    out.update({k: float(rate_info[k]) for k in ("check_rate", "check_demand", "demand_at_check_rate", "demand")
                if k in rate_info})
    if calibration:
        cap = calibration["capacity"]
        out.update(capacity_tokens_per_s=float(cap["tokens_per_s"]),
                   capacity_seconds=float(cap["seconds"]),
                   mean_output_tokens=float(calibration["mean_output_tokens"]),
                   target_utilization=float(calibration["target_utilization"]),
                   proposed_rate=float(calibration["proposed_rate"]),
                   forward_ms_b32=cap.get("forward_ms_b32"),
                   check_start_rate=(calibration["checks"][0]["rate"] if calibration.get("checks") else None),
                   n_checks=len(calibration.get("checks") or []),
                   check_duration_s=calibration.get("check_duration_s"),
                   seconds_taken=calibration.get("seconds_taken"))
    return out


def calibration_checks(calibration: dict | None) -> pd.DataFrame:
    """The checking runs of a 'checked' calibration (empty for a capacity-only one)."""
    cols = ["rate", "fullness", "preemptions_per_min", "eager_steps_per_min", "ttft_p50_ms", "drains", "place",
            "decided_by"]
    checks = (calibration or {}).get("checks") or []
    frame = pd.DataFrame([{c: chk.get(c) for c in cols} for chk in checks], columns=cols)
    # shown as read: the rate to the search's step, fullness to two places, counts and ms whole
    digits = {"rate": 3, "fullness": 2, "preemptions_per_min": 0, "eager_steps_per_min": 0, "ttft_p50_ms": 0}
    for col, n in digits.items():
        values = pd.to_numeric(frame[col]).round(n)
        frame[col] = values.astype("Int64") if n == 0 else values
    return frame.rename(columns={
        "rate": "rate, req/s", "fullness": "gap / batch-32 forward", "preemptions_per_min": "preemptions / 60 s",
        "eager_steps_per_min": "eager steps / 60 s", "ttft_p50_ms": "TTFT p50, ms",
        "place": "against the regime", "decided_by": "decided by"})
