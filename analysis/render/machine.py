"""What a build ran on: the machine each run recorded, the distinct environments among
runs, and the pinned library versions against what is installed."""
from __future__ import annotations

import gc
import json
import platform
import re
from importlib import metadata
from pathlib import Path

import pandas as pd
from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion

from ..across_runs import article as A

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
    df["matches"] = [satisfies(i, p) for p, i in zip(df["pinned"], df["installed"])]
    return df


def satisfies(installed: str, pin: str) -> bool:
    """Whether an installed version meets the pin `==pin` as pip reads it (PEP 440: a local
    build such as torch's 2.13.0+cpu meets ==2.13.0)."""
    try:
        return SpecifierSet(f"=={pin}").contains(installed, prereleases=True)
    except InvalidVersion:
        return installed == pin


# ------------------------------------------------------------------ machine
def gc_threshold_of(prov: dict) -> str:
    """The collector thresholds the runs' interpreter used. The raw log does not record them;
    the engine never changes them, so they are its interpreter's defaults, read here from
    the interpreter building the book when it is the same version as the runs' (else unknown)."""
    if "gc_threshold" in prov:
        return str(tuple(prov["gc_threshold"]))
    if prov.get("python") == platform.python_version():
        return f"{gc.get_threshold()} (this interpreter's default; not in the raw log)"
    return f"not recorded (the runs used Python {prov.get('python', '?')}, this page {platform.python_version()})"


def machine_table(prov: dict, article: dict | None = None) -> pd.DataFrame:
    """A run's provenance as a table (what, this build, the article), the collector's
    thresholds after the interpreter, threads last: the interpreter and its collector are
    part of the system the book reproduces (the GC rungs measure them)."""
    article = A.ENVIRONMENT if article is None else article
    rows = []
    for key, label in MACHINE_FIELDS:
        if key in prov:
            rows.append((label, prov[key], article.get(key, "-")))
        if key == "python":
            rows.append(("gc.get_threshold()", gc_threshold_of(prov), article.get("gc_threshold", "-")))
    for var, value in sorted((prov.get("threads") or {}).items()):
        rows.append((var, "unset" if value is None else value, article.get(var, "-")))
    return pd.DataFrame(rows, columns=["what", "this build", "the article"]).astype(
        {"this build": str, "the article": str})


def interpreter_sentence(prov: dict) -> str:
    """Whether this build ran the article's interpreter, and what differs if not."""
    here, art = prov.get("python", "?"), A.ENVIRONMENT["python"]
    same_minor = here.split(".")[:2] == art.split(".")[:2]
    if same_minor:
        return (f"The runs used Python {here}, the article's minor version ({art}), so the collector's "
                f"thresholds are the article's.")
    return (f"The runs used Python {here}; the article ran {art}. The collector differs between them "
            f"where the book measures: its thresholds here are {gc_threshold_of(prov)}, against "
            f"{A.GC_THRESHOLD_313} on 3.13, so garbage collection's share of the gaps, and the GC rungs' "
            f"effect, need not carry over.")


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
