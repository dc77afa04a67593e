"""The causes one by one: which led the tail by count and by time, where each sat in
the ITL histogram, what is left unexplained, and each cause's own fix and its cost."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.columns import SEG, STEP
from ..core.schemes import CAUSES, CLEAN, SEGMENT_KINDS
from .rungs import (ADMIT_WATERMARK, BUDGET_256, COMPACT_HISTORY, FIRST, GC_FREEZE, GRAPHS_48,
                    TOKENIZE_OFF_LOOP)
from .select import rung_above, rung_rows, runs_of
from .tables import summaries_frame
from .wording import median_range


def count_vs_time(summaries, rung: str = FIRST) -> pd.DataFrame:
    """Per run: which cause led the tail by count of gaps and which by time."""
    frame = rung_rows(summaries_frame(summaries), rung)
    counts = frame[[f"tail_count_{c}" for c in CAUSES]].to_numpy()
    shares = frame[[f"tail_share_{c}" for c in CAUSES]].to_numpy()
    out = pd.DataFrame({
        "run": frame["seed"].to_numpy(),
        "tail gaps": frame[[f"tail_count_{c}" for c in CAUSES + ["clean"]]].sum(axis=1).to_numpy(),
        "leader by count": [CAUSES[i] for i in counts.argmax(axis=1)],
        "its gaps": counts.max(axis=1),
        "leader by time": [CAUSES[i] for i in shares.argmax(axis=1)],
        "its share of tail time": shares.max(axis=1),
    })
    out["disagree"] = out["leader by count"] != out["leader by time"]
    return out.set_index("run")


BAND_COVERAGE = 0.9      # share of a cause's gaps (by count) its band holds, tails split evenly


def cause_bands(summaries, rung: str = FIRST, coverage: float = BAND_COVERAGE) -> pd.DataFrame:
    """Where each cause sat: pooled over a rung's runs, the range of histogram bins that
    holds the central `coverage` of the gaps whose primary cause it is (by count)."""
    runs = runs_of(summaries, rung)
    if not runs:
        raise ValueError(f"no runs of rung {rung!r}")
    bins = [(r["lo"], r["hi"]) for r in runs[0]["hist"]]
    rows = []
    for cause in CAUSES:
        counts = np.array([sum(s["hist"][i][cause] for s in runs) for i in range(len(bins))], float)
        total = counts.sum()
        if total == 0:
            rows.append({"cause": cause, "gaps": 0, "from ms": np.nan, "to ms": np.nan})
            continue
        cdf = np.cumsum(counts) / total
        tail = (1 - coverage) / 2
        first = int(np.searchsorted(cdf, tail, side="right"))
        last = int(np.searchsorted(cdf, 1 - tail, side="left"))
        rows.append({"cause": cause, "gaps": int(total), "from ms": bins[first][0],
                     "to ms": bins[min(last, len(bins) - 1)][1]})
    return pd.DataFrame(rows).set_index("cause")


def band_text(row) -> str:
    """'15-120 ms' for a cause_bands row ('above 800 ms' for the open bin, '-' if absent)."""
    if not row["gaps"]:
        return "-"
    hi = row["to ms"]
    return f"above {row['from ms']:g} ms" if hi >= 1e9 and row["from ms"] >= 800 else \
        (f"{row['from ms']:g} ms up" if hi >= 1e9 else f"{row['from ms']:g}-{hi:g} ms")


# ---------------------------------------------------------------- what is left unexplained
def unexplained_tail(gaps: pd.DataFrame, log, slow_factor: float = 5.0) -> dict:
    """The tail gaps no cause explains (primary cause 'clean'), and decode steps that ran
    at least `slow_factor` times slower than the captured-path fit predicts for their size."""
    gap = gaps["gap_ms"].to_numpy()
    p99 = float(np.percentile(gap, 99))
    tail = gaps[gap >= p99]
    clean = tail[tail["cause"].astype(str) == CLEAN]
    fit = gaps.attrs.get("baseline")
    steps, segs = log.steps, log.segs
    dec = segs[segs[:, SEG.kind] == SEGMENT_KINDS.index("decode")]
    idx = dec[:, SEG.step].astype(int)
    size = steps[idx, STEP.graph]
    captured = size > 0
    slow = 0
    if fit is not None and captured.any():
        predicted = fit[0] * size[captured] + fit[1]
        actual = (dec[captured, SEG.t1] - dec[captured, SEG.t0]) * 1e3
        slow = int((actual >= slow_factor * np.maximum(predicted, 1e-6)).sum())
    return {"p99_ms": p99, "tail_gaps": int(len(tail)), "clean_tail_gaps": int(len(clean)),
            "clean_tail_sentence": clean_tail_sentence(clean),
            "clean_tail_mean_ms": float(clean["gap_ms"].mean()) if len(clean) else float("nan"),
            "clean_tail_forward_mean_ms": float(clean["kernel"].mean()) if len(clean) else float("nan"),
            "residual_share_of_tail": float(tail["residual"].sum() / tail["gap_ms"].sum()),
            "captured_steps": int(captured.sum()), "slow_captured_steps": slow, "slow_factor": slow_factor}


def clean_tail_sentence(clean: pd.DataFrame) -> str:
    """What the unexplained tail gaps average, or, with none, that there is nothing to average."""
    if not len(clean):
        return "None is left unexplained, so there is no average to give."
    return (f"They average {clean['gap_ms'].mean():.1f} ms, of which {clean['kernel'].mean():.1f} ms "
            f"is forward pass.")


# ---------------------------------------------------------------- each cause, its own fix
GONE_SHARE = 0.005   # a cause is gone when under 0.5% of tail time in every run after its fix

CAUSE_FIX = {   # cause -> (how it is seen, the fix, the rung that applies it)
    "prefill": ("prefill segments in the step", "smaller token budget", BUDGET_256),
    "graph": ("padded size or eager, per step", "capture sizes up to max_num_seqs", GRAPHS_48),
    "preempt": ("explicit eviction and readmission events", "admission watermark", ADMIT_WATERMARK),
    "gc": ("gc.callbacks start/stop", "gc.freeze() and no per-token objects", COMPACT_HISTORY),
    "tok": ("tok segments on the loop", "tokenize in another process", TOKENIZE_OFF_LOOP),
}


def _median_from_above(summaries, rung: str, metric: str) -> tuple[float, float]:
    """Median of a metric in the rung above `rung` and in `rung` itself."""
    above = rung_above(dict.fromkeys(s["rung"] for s in summaries), rung)
    return tuple(float(np.median([s[metric] for s in runs_of(summaries, r)])) for r in (above, rung))


def fix_cost(summaries, cause: str) -> str:
    """What the fix for a cause cost in this build, from the runs themselves."""
    rung = CAUSE_FIX[cause][2]
    if cause in ("prefill", "preempt"):
        a, b = _median_from_above(summaries, rung, "ttft_p50")
        return f"TTFT p50 {a:.0f} -> {b:.0f} ms"
    if cause == "gc":
        pauses = [max(s["gen2_startup_ms"], default=0.0) for s in runs_of(summaries, GC_FREEZE)]
        return f"one start-up collection of {median_range(pauses)} ms"
    if cause == "tok":
        a, b = _median_from_above(summaries, rung, "itl_p99")
        return f"a worker process on the same cores; p99 {a:.1f} -> {b:.1f} ms"
    return "captured graphs for more sizes (memory and start-up on a GPU; nothing to pay here)"


def cause_table(summaries) -> pd.DataFrame:
    """The article's closing table, with this build's numbers: where each cause sat at
    baseline, its share of tail time there and after its fix, and what the fix cost."""
    bands = cause_bands(summaries, FIRST)
    base = runs_of(summaries, FIRST)
    rows = []
    for cause, (seen, fix, rung) in CAUSE_FIX.items():
        after = runs_of(summaries, rung)
        rows.append({
            "cause": cause, "where it sat (baseline)": band_text(bands.loc[cause]),
            "tail share, baseline": median_range([100 * s["tail_share"][cause] for s in base], "{:.1f}%"),
            "how it is seen": seen, "fix": fix, "rung": rung,
            "tail share after the fix": median_range([100 * s["tail_share"][cause] for s in after], "{:.1f}%"),
            "what the fix cost here": fix_cost(summaries, cause) if after else "-",
        })
    return pd.DataFrame(rows).set_index("cause")


def causes_gone(summaries, share: float = GONE_SHARE) -> list[str]:
    """The causes whose fix took them out of the tail: below ``share`` of tail time in
    every run of the rung that applies the fix (CAUSE_FIX order)."""
    return [cause for cause, (_, _, rung) in CAUSE_FIX.items()
            if all(s["tail_share"][cause] < share for s in runs_of(summaries, rung))]
