"""What a build ran on: the machine each run recorded, the distinct environments among
runs, and the pinned library versions against what is installed."""
from __future__ import annotations

import json
import re
from importlib import metadata
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[2]
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
