"""The real engine's runs, read by the book's method: where its tail time goes beside this
book's engine and the article, how well the forward pass's split by token mix holds, and
its short ladder of fixes with paired verdicts. Pure functions of run summaries and raw
logs (the page, analysis/chapters/real_engine.py, makes the runs)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..core.columns import SEG
from ..core.runlog import load
from ..core.schemes import CAUSES
from . import article as A
from .paired import paired_change
from .rungs import BASELINE

DECODE, PREFILL = 3, 2          # segment codes (engine/serve/segments.py)
LADDER_METRICS = ("itl_p50", "itl_p99", "itl_p999", "itl_max", "ttft_p50")


def _shares(runs: list[dict], labels: list) -> pd.Series:
    """Median share of tail time (%) per label over ``runs`` (NaN with no runs); a label
    missing from a run's shares held none of its tail time."""
    frame = pd.DataFrame([s["tail_share"] for s in runs], columns=labels, dtype=float).fillna(0.0)
    return 100 * frame.median()


def tail_table(real: list[dict], ours: list[dict], labels) -> pd.DataFrame:
    """Median share of tail time (%) per label: the real engine's baseline runs, this book's
    engine's baseline runs and the article's baseline."""
    labels = list(labels)
    table = pd.DataFrame({"real engine": _shares(real, labels), "this book's engine": _shares(ours, labels),
                          "article": [100 * A.TAIL_SHARE[BASELINE].get(lab, math.nan) for lab in labels]},
                         index=pd.Index(labels, name="label"))
    return table


def leading_cause(table: pd.DataFrame, column: str) -> tuple[str, float]:
    """The cause (not the forward pass or the residual) holding the most tail time."""
    causes = table.loc[[c for c in CAUSES if c in table.index], column]
    return str(causes.idxmax()), float(causes.max())


def split_check(paths) -> dict:
    """The forward split's check. A step that mixes prefill and decode is one forward pass,
    split by token mix; a line fitted to the pure-decode steps (forward ms against decode
    rows) predicts what the decode rows alone would have cost. Returns, over the mixed
    steps, the median of (decode part as split) / (line's prediction), the count of
    mixed and pure-decode steps, and the line."""
    xs, ys, split_dec, mixed_rows = [], [], [], []
    for p in paths:
        log = load(p)
        mix, segs = log.extras["step_mix"], log.segs
        dur = segs[:, SEG.t1] - segs[:, SEG.t0]
        dec = np.zeros(len(log.steps))
        pre = np.zeros(len(log.steps))
        np.add.at(dec, segs[segs[:, SEG.kind] == DECODE, SEG.step].astype(int), dur[segs[:, SEG.kind] == DECODE])
        np.add.at(pre, segs[segs[:, SEG.kind] == PREFILL, SEG.step].astype(int), dur[segs[:, SEG.kind] == PREFILL])
        pure = (mix[:, 0] + mix[:, 1] == 0) & (mix[:, 2] > 0)
        both = (mix[:, 0] + mix[:, 1] > 0) & (mix[:, 2] > 0)
        xs += mix[pure, 2].tolist()
        ys += (dec[pure] * 1e3).tolist()
        split_dec += (dec[both] * 1e3).tolist()
        mixed_rows += mix[both, 2].tolist()
    out = {"pure": len(xs), "mixed": len(split_dec), "ratio": math.nan, "slope_ms": math.nan,
           "intercept_ms": math.nan}
    if len(xs) >= 2 and len(set(xs)) >= 2:
        slope, intercept = np.polyfit(np.asarray(xs, float), np.asarray(ys, float), 1)
        out.update(slope_ms=float(slope), intercept_ms=float(intercept))
        if split_dec:
            pred = intercept + slope * np.asarray(mixed_rows, float)
            ok = pred > 0
            out["ratio"] = float(np.median(np.asarray(split_dec)[ok] / pred[ok])) if ok.any() else math.nan
    return out


def gc_threads(paths) -> dict:
    """Cyclic-GC pauses by thread over runs: the engine loop's own (``gcs``, charged to gaps)
    and the other threads' (``gcs_other_thread``: the request thread's, not charged, though
    a pause there holds the interpreter lock). Counts and the longest pause, ms."""
    out = {"loop_n": 0, "loop_max_ms": 0.0, "other_n": 0, "other_max_ms": 0.0}
    for p in paths:
        log = load(p)
        for key, arr in (("loop", log.gcs), ("other", log.extras.get("gcs_other_thread", np.zeros((0, 3))))):
            arr = np.asarray(arr, float).reshape(-1, 3)
            out[f"{key}_n"] += len(arr)
            if len(arr):
                out[f"{key}_max_ms"] = max(out[f"{key}_max_ms"], float((arr[:, 1] - arr[:, 0]).max() * 1e3))
    return out


def gc_sentence(found: dict, runs: int) -> str:
    """Where the collector ran, in words."""
    loop = (f"{found['loop_n']} collector pause(s) in the engine's loop thread (the longest "
            f"{found['loop_max_ms']:.1f} ms)")
    if not found["other_n"]:
        return f"Over the {runs} baseline run(s): {loop}, and none in any other thread."
    return (f"Over the {runs} baseline run(s): {loop}, and {found['other_n']} in the request thread (the longest "
            f"{found['other_max_ms']:.1f} ms). The analysis charges only the loop's; a pause in the request "
            f"thread holds the interpreter lock, so the loop may have waited on it inside whatever segment it "
            f"had open.")


SPLIT_OK = (0.8, 1.25)          # the split holds when decode's split part is within this of its own cost


def split_sentence(check: dict) -> str:
    """What split_check found, in words: whether the token-mix split charged a mixed step's
    decode rows what they cost alone, and which way it errs if not."""
    r = check["ratio"]
    if not math.isfinite(r):
        return ("No step mixed prefill with decode rows beside enough pure-decode steps to fit the line, so "
                "the split went unchecked in this build.")
    if SPLIT_OK[0] <= r <= SPLIT_OK[1]:
        return (f"The split holds: in the median mixed step, decode was charged {r:.2f} times what the same rows "
                f"cost alone.")
    way = ("under-charges the decode rows, and so over-charges prefill" if r < 1
           else "over-charges the decode rows, and so under-charges prefill")
    return (f"The split does not hold: in the median mixed step, decode was charged {r:.2f} times what the same "
            f"rows cost alone (outside {SPLIT_OK[0]}-{SPLIT_OK[1]}). Counting tokens {way}: a prompt token in a "
            f"batched prefill costs less than a decode row. So, in the gaps that mixed steps end, the prefill "
            f"share above is too large and the forward pass's (kernel) share too small.")


def ladder_pairs(summaries: list[dict], baseline: str = "baseline") -> pd.DataFrame:
    """Each rung against the baseline, paired by seed, per metric: medians, the paired
    ratio and the book's verdict word (2-4 seeds read "cannot be judged")."""
    frame = pd.DataFrame(summaries)
    base = frame[frame["rung"] == baseline].set_index("seed")
    rows = []
    for rung, g in frame[frame["rung"] != baseline].groupby("rung", sort=False):
        g = g.set_index("seed")
        for m in LADDER_METRICS:
            ch = paired_change(base[m], g[m], m)
            rows.append({"rung": rung, "metric": m, "baseline": ch["median_before"], "rung value": ch["median_after"],
                         "ratio": ch["paired_ratio"], "n": ch["n"], "verdict": ch["judged"]})
    return pd.DataFrame(rows, columns=["rung", "metric", "baseline", "rung value", "ratio", "n", "verdict"])


def transfer_sentence(table: pd.DataFrame) -> str:
    """What carried over from the article's engine to the real one, by the leading cause."""
    real, real_share = leading_cause(table, "real engine")
    art, art_share = leading_cause(table, "article")
    ours, ours_share = leading_cause(table, "this book's engine")
    same = "the same cause as" if real == art else "not the cause that led in"
    return (f"On the real engine the largest cause of tail time was {real} ({real_share:.0f}% of tail time), "
            f"{same} the article's baseline ({art}, {art_share:.0f}%); on this book's engine in this build it "
            f"was {ours} ({ours_share:.0f}%).")


def fix_sentence(pairs: pd.DataFrame, metrics=("itl_p99", "itl_p999")) -> str:
    """Each knob's paired effect on the tail against the baseline, in words: the median of
    the per-seed ratios (rung over baseline) and the book's verdict, metric by metric."""
    if pairs.empty:
        return "No rung but the baseline ran, so no fix was compared."
    names = {"itl_p50": "p50", "itl_p99": "p99", "itl_p999": "p99.9", "itl_max": "the worst gap",
             "ttft_p50": "TTFT p50"}
    parts = []
    for rung, g in pairs.groupby("rung", sort=False):
        g = g.set_index("metric")
        said = [f"{names.get(m, m)} {g.loc[m, 'ratio']:.2f}x ({g.loc[m, 'verdict']})" for m in metrics if m in g.index]
        parts.append(f"{rung}: " + ", ".join(said))
    return "Against the baseline, seed by seed (the median of the per-seed ratios): " + "; ".join(parts) + "."

