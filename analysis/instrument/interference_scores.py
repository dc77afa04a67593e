"""What measuring runs side by side does to the anatomy: the same runs alone and beside
k-1 others (engine/runs/interference.py), paired by seed.

Each row compares one measure between the two arms: the ITL percentiles as a paired
ratio (beside / alone), each cause's share of tail time and preemptions per 60 s as a
paired difference (beside - alone; a share or a count may be zero). The verdict is the
ladder's sign-flip rule in the book's one vocabulary (analysis/across_runs/verdicts.py: with
fewer seeds than can reach p <= 0.10 it is "cannot be judged", never "no change"); separately,
a change is *beyond the
seed spread* when it is larger than the difference between the alone arm's seeds (the
noise any comparison of these runs already carries): then the parallel build's runs are
not interchangeable with runs measured alone.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..engine_link import ensure_runs, interference_capacity, interference_specs
from ..across_runs.signflip import SUGGESTIVE, min_seeds, sign_flip, verdict
from ..across_runs.verdicts import difference_word, paired_word, power_floor, seeds_text
from ..across_runs.summaries import run_summaries
from ..across_runs.tables import LABEL_NAMES, METRIC_NAMES

RATIO_METRICS = ("itl_p50", "itl_p99", "itl_p999", "itl_max")
CAPACITY = "capacity (decode tokens/s)"


def _by_seed(summaries, value) -> pd.Series:
    rows = {int(s["seed"]): float(value(s)) for s in summaries}
    return pd.Series(rows, dtype=float).sort_index()


def _row(name: str, kind: str, alone: pd.Series, beside: pd.Series) -> dict:
    seeds = [s for s in alone.index if s in beside.index]
    a, b = alone.loc[seeds].to_numpy(), beside.loc[seeds].to_numpy()
    n = len(seeds)
    if kind == "ratio":
        ok = (a > 0) & (b > 0)
        d = np.log(b[ok]) - np.log(a[ok])
        change = math.exp(d.mean()) if len(d) else math.nan
        spread = math.log(a.max() / a.min()) if n > 1 and a.min() > 0 else math.nan
        size = abs(d.mean()) if len(d) else math.nan
    else:
        d = b - a
        change = float(d.mean()) if n else math.nan
        spread = float(a.max() - a.min()) if n > 1 else math.nan
        size = abs(change)
    test = sign_flip(d) if len(d) else {"p": math.nan, "lo": math.nan, "hi": math.nan}
    lo, hi = (math.exp(test["lo"]), math.exp(test["hi"])) if kind == "ratio" and n >= 2 else (test["lo"], test["hi"])
    beyond = (None if not math.isfinite(spread) or not math.isfinite(size)
              else bool(size > spread))
    raw = verdict(test["p"], n) if n else "insufficient runs"
    word = (paired_word({"n": n, "verdict": raw, "lo": lo, "hi": hi}) if kind == "ratio"
            else difference_word(n, raw))
    return {"measure": name, "kind": kind, "n": n, "alone": float(np.median(a)) if n else math.nan,
            "beside": float(np.median(b)) if n else math.nan, "change": change, "lo": lo, "hi": hi,
            "p": test["p"], "verdict": word,
            "seed_spread": math.exp(spread) if kind == "ratio" and math.isfinite(spread) else spread,
            "beyond_spread": beyond}


def interference_table(alone, beside) -> pd.DataFrame:
    """One row per measure: ITL p50/p99/p99.9/max (ratios), each cause's share of tail time
    and preemptions per 60 s (differences), paired by seed; see the module docstring."""
    alone, beside = list(alone), list(beside)
    rows = [_row(METRIC_NAMES.get(m, m), "ratio", _by_seed(alone, lambda s, m=m: s[m]),
                 _by_seed(beside, lambda s, m=m: s[m])) for m in RATIO_METRICS]
    labels = list(dict.fromkeys(k for s in alone + beside for k in s["tail_share"]))
    for lab in labels:
        rows.append(_row(f"{LABEL_NAMES.get(lab, lab)} share of tail time", "difference",
                         _by_seed(alone, lambda s, lab=lab: s["tail_share"].get(lab, 0.0)),
                         _by_seed(beside, lambda s, lab=lab: s["tail_share"].get(lab, 0.0))))
    per60 = lambda s: 60.0 * s["preemptions"] / s["duration"]          # noqa: E731
    rows.append(_row("preemptions per 60 s", "difference", _by_seed(alone, per60), _by_seed(beside, per60)))
    return pd.DataFrame(rows)


def capacity_row(capacity: dict) -> dict:
    """Capacity alone and at k: beyond the spread when alone lies outside the range of the
    k workers measured side by side (one capacity measurement alone, k beside)."""
    if not capacity:
        return {}
    each = capacity["beside_each"]
    beyond = None if len(each) < 2 else bool(not (min(each) <= capacity["alone"] <= max(each)))
    return {"measure": CAPACITY, "kind": "ratio", "n": len(each), "alone": capacity["alone"],
            "beside": capacity["beside"], "change": capacity["ratio"], "lo": min(each) / capacity["alone"],
            "hi": max(each) / capacity["alone"], "p": math.nan, "verdict": "one measurement alone",
            "seed_spread": math.nan, "beyond_spread": beyond}


def display_table(table: pd.DataFrame) -> pd.DataFrame:
    """The table as the chapter shows it: ratios as 'x', differences in points (shares) or
    per 60 s, the interval, the verdict and whether the change is beyond the seed spread."""
    def fmt(r, v):                           # a difference: points of share, or a count per 60 s
        if not math.isfinite(v):
            return ""
        return f"{100 * v:+.1f} pt" if "share" in r["measure"] else f"{v:+.1f}"

    def value(r, v):
        if not math.isfinite(v):
            return ""
        return f"{100 * v:.1f}%" if "share" in r["measure"] else f"{v:.3g}"

    out = []
    for _, r in table.iterrows():
        ratio = r["kind"] == "ratio"
        change = (f"{r['change']:.2f}x" if ratio else fmt(r, r["change"])) if math.isfinite(r["change"]) else ""
        ci = ""
        if math.isfinite(r["lo"]) and math.isfinite(r["hi"]):
            ci = f"{r['lo']:.2f}-{r['hi']:.2f}" if ratio else f"{fmt(r, r['lo'])} to {fmt(r, r['hi'])}"
        beyond = {True: "yes", False: "no", None: "cannot tell"}[flag(r["beyond_spread"])]
        out.append({"measure": r["measure"], "alone": value(r, r["alone"]), "beside": value(r, r["beside"]),
                    "change": change, "interval": ci, "verdict": r["verdict"], "beyond seed spread": beyond})
    return pd.DataFrame(out).set_index("measure")


def flag(value) -> bool | None:
    """A beyond_spread cell as True, False or None (cannot tell), whatever dtype the frame
    gave it (a column of only flags becomes numpy bools, one with None stays objects)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return bool(value)


def moved(table: pd.DataFrame) -> list[str]:
    """The measures whose change is beyond the seed spread."""
    return [r["measure"] for _, r in table.iterrows() if flag(r["beyond_spread"]) is True]


def interference_sentence(table: pd.DataFrame, k: int | None) -> str:
    """What the control found, in plain words (a caution where the anatomy moved)."""
    if k is None or table.empty:
        return ("This machine has fewer than two physical cores to pin runs to, so no run here can be "
                "measured beside another and the control was not run.")
    n = int(table.loc[table["measure"] != CAPACITY, "n"].max())
    who = f"{k - 1} other run{'s' if k > 2 else ''}"
    if n < 2:
        return (f"With one seed per arm there is no seed spread to judge against, so whether measuring beside "
                f"{who} moves the anatomy cannot be told from this build.")
    hit = moved(table)
    floor = power_floor(n)
    if not hit and floor:                    # the spread check alone cannot clear the runs
        return (f"Measured beside {who} at a time, no measure of the anatomy moved beyond the spread between "
                f"the {seeds_text(n)} measured alone, but the paired test cannot judge these changes ({floor}): "
                f"this build cannot say that runs of a parallel build read as runs measured alone would. "
                f"A paired test needs at least {min_seeds(SUGGESTIVE)} seeds per arm to reach a verdict.")
    if not hit:
        return (f"Measured beside {who} at a time, no measure of the anatomy moved beyond the spread between "
                f"the {n} seeds measured alone: on this machine runs of a parallel build at this level read as "
                f"runs measured alone would, within the noise the book's comparisons already carry.")
    return (f"Caution: measured beside {who} at a time, {', '.join(hit)} moved beyond the spread between the "
            f"{n} seeds measured alone. On this machine the runs of a parallel build at this level are not "
            f"interchangeable with runs measured alone: compare them only with runs measured at the same "
            f"level (the run cache keeps the two apart), and prefer a serial build for numbers set against "
            f"the article's.")


def control(profile=None) -> dict:
    """The control of this build's profile: {"k", "seeds", "duration", "table" (with the
    capacity row), "sentence"}. Runs or capacities missing from the cache are made first."""
    arms = interference_specs(profile)
    k = arms["k"]
    if k is None:
        return {"k": None, "seeds": 0, "duration": math.nan, "table": pd.DataFrame(),
                "sentence": interference_sentence(pd.DataFrame(), None)}
    ensure_runs(arms["alone"] + arms["beside"])
    table = interference_table(run_summaries(arms["alone"]), run_summaries(arms["beside"]))
    cap = capacity_row(interference_capacity(k))
    if cap:
        table = pd.concat([table, pd.DataFrame([cap])], ignore_index=True)
    sentence = interference_sentence(table, k)
    return {"k": k, "seeds": len(arms["alone"]), "duration": arms["alone"][0].duration, "table": table,
            "sentence": sentence}
