"""The ladder compared rung against rung, paired by seed: the verdict of every step and
metric, its prose, and how the verdict depends on the number of seeds (the test and
the verdict rule are signflip.py's)."""
from __future__ import annotations

import itertools
import math
from statistics import NormalDist
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from .hosts import refuse_mixed_cpus
from .signflip import ALPHA, VERDICTS, min_p, seeds_needed, sign_flip, verdict
from .tables import METRIC_NAMES
from .verdicts import NO_CHANGE, UNJUDGED, interval_text, paired_reason, paired_word

METRICS = ("itl_p50", "itl_p99", "itl_p999", "itl_max", "ttft_p50")
END_TO_END = "end to end"


def _as_series(x, what: str) -> pd.Series | np.ndarray:
    if isinstance(x, pd.Series):
        s = x.astype(float)
    elif isinstance(x, Mapping):
        s = pd.Series(x, dtype=float)
    else:
        return np.asarray(x, float).ravel()
    if s.index.has_duplicates:
        dup = sorted(set(s.index[s.index.duplicated()]), key=str)
        raise ValueError(f"{what}: more than one run for seed(s) {dup}; pick one run per seed")
    return s


def _align(before, after, metric) -> tuple[pd.Series, pd.Series, str]:
    """Pair values by seed (Series/Mapping index) or by position (arrays); drop and
    note seeds without a usable value on both sides; refuse values <= 0."""
    b, a = _as_series(before, "before"), _as_series(after, "after")
    notes = []
    if isinstance(b, pd.Series) != isinstance(a, pd.Series):
        raise ValueError("pass both before and after indexed by seed (Series/dict), or both as arrays")
    if isinstance(b, np.ndarray):
        if len(b) != len(a):
            raise ValueError(f"before has {len(b)} runs and after {len(a)}: arrays cannot be aligned "
                             "by seed; pass Series indexed by seed")
        b, a = pd.Series(b), pd.Series(a)
    only_b = [s for s in b.index if s not in a.index]
    only_a = [s for s in a.index if s not in b.index]
    if only_b or only_a:
        sides = [f"{where} only {seeds}" for where, seeds in (("before", only_b), ("after", only_a)) if seeds]
        notes.append("dropped unpaired seeds: " + ", ".join(sides))
    common = [s for s in b.index if s in a.index]
    b, a = b.loc[common], a.loc[common]
    missing = (b.isna() | a.isna()).to_numpy()
    if missing.any():
        notes.append(f"dropped seeds with a missing value: {list(b.index[missing])}")
        b, a = b[~missing], a[~missing]
    bad = ~((b > 0) & (b < math.inf) & (a > 0) & (a < math.inf)).to_numpy()
    if bad.any():
        raise ValueError(f"{metric or 'metric'}: values must be positive and finite to take log "
                         f"ratios; seed(s) {list(b.index[bad])} have before={b[bad].tolist()} "
                         f"after={a[bad].tolist()}")
    return b, a, "; ".join(notes)


def paired_change(before, after, metric: str | None = None, alpha: float = ALPHA,
                  seed: int = 0) -> dict:
    """Compare one metric between two rungs over seeds present in both.

    ``before``/``after``: Series or dicts indexed by seed (aligned by seed), or equal-
    length arrays (aligned by position).  Returns a dict: n, seeds, median_before,
    median_after, ratio (of medians), paired_ratio, lo, hi, level, p, verdict (the
    test's outcome), judged (the book's word for it, verdicts.paired_word: a comparison
    without the power to detect a change "cannot be judged", never "no change") and
    why (the reason when it cannot), direction, agree ("5/5": seeds moving in
    ``direction``), seed_ratios, method, note."""
    b, a, note = _align(before, after, metric)
    n = len(b)
    d = np.log(a.to_numpy()) - np.log(b.to_numpy())
    test = sign_flip(d, alpha=alpha, seed=seed)
    mean = float(d.mean()) if n else math.nan
    direction = "down" if mean < 0 else "up" if mean > 0 else "none"
    moved = int(np.count_nonzero(d < 0 if mean < 0 else d > 0)) if n else 0
    out = {
        "metric": metric, "n": n, "seeds": list(b.index),
        "median_before": float(b.median()) if n else math.nan,
        "median_after": float(a.median()) if n else math.nan,
        "ratio": float(a.median() / b.median()) if n else math.nan,
        "paired_ratio": math.exp(mean) if n else math.nan,
        "lo": math.exp(test["lo"]) if n >= 2 else math.nan,
        "hi": math.exp(test["hi"]) if n >= 2 else math.nan,
        "level": test["level"], "p": test["p"], "verdict": verdict(test["p"], n, alpha),
        "direction": direction, "agree": f"{moved}/{n}",
        "seed_ratios": dict(zip(b.index, (a / b).tolist())),
        "method": test["method"], "note": note,
    }
    return {**out, "judged": paired_word(out), "why": paired_reason(out)}


def _frame(summaries) -> pd.DataFrame:
    """The runs as a frame, refused (one ValueError) if a pair of them spans two CPU models."""
    frame = summaries if isinstance(summaries, pd.DataFrame) else pd.DataFrame(list(summaries))
    for col in ("rung", "seed"):
        if col not in frame.columns:
            raise ValueError(f"summaries need a '{col}' column (one row per run)")
    refuse_mixed_cpus(frame)
    return frame


def _rung_values(frame: pd.DataFrame, rung: str, metric: str) -> pd.Series:
    if metric not in frame.columns:
        raise ValueError(f"no metric '{metric}' in the summaries")
    rows = frame[frame["rung"].astype(str) == rung]
    return pd.Series(rows[metric].to_numpy(float), index=rows["seed"].to_list())


def step_name(before: str, after: str) -> str:
    """How a step of the ladder is named in the verdicts: 'before -> after'."""
    return f"{before} -> {after}"


def verdict_row(verdicts: pd.DataFrame, step: str, metric: str) -> pd.Series:
    """The ladder_verdicts row of one step and metric."""
    rows = verdicts[(verdicts["step"] == step) & (verdicts["metric"] == metric)]
    if not len(rows):
        raise KeyError(f"no verdict for step {step!r} and metric {metric!r}")
    return rows.iloc[0]


def _steps(rungs: Sequence[str]) -> list[tuple[str, str, str]]:
    steps = [(step_name(a, b), a, b) for a, b in zip(rungs, rungs[1:])]
    return steps + [(END_TO_END, rungs[0], rungs[-1])] if len(rungs) >= 2 else steps


def ladder_verdicts(summaries: Iterable[dict] | pd.DataFrame, metrics: Sequence[str] = METRICS,
                    rungs: Sequence[str] | None = None, alpha: float = ALPHA) -> pd.DataFrame:
    """One row per (step, metric): every adjacent step of the ladder, then the "end to
    end" step (first rung vs last), each compared by ``paired_change``."""
    frame = _frame(summaries)
    rungs = list(rungs) if rungs is not None else list(dict.fromkeys(frame["rung"].astype(str)))
    rows = []
    for step, a, b in _steps(rungs):
        for metric in metrics:
            res = paired_change(_rung_values(frame, a, metric), _rung_values(frame, b, metric),
                                metric=metric, alpha=alpha)
            rows.append({"step": step, "before": a, "after": b, **res})
    cols = ["step", "before", "after", "metric", "n", "median_before", "median_after", "ratio",
            "paired_ratio", "lo", "hi", "level", "p", "verdict", "judged", "why", "direction", "agree",
            "seed_ratios", "method", "note", "seeds"]
    return pd.DataFrame(rows, columns=cols)


def verdict_phrase(row, detail: bool = False) -> str:
    """Prose for one verdict row in the book's vocabulary (verdicts.py), e.g. "moved p99
    down (suggestive)", "showed no detectable change in p99.9 ([0.91-1.08], 94%
    interval)", "could not judge p99.9 (cannot be judged with 2 seeds: the smallest
    p-value 2 seeds can reach is 0.5)".

    ``detail`` adds the seeds that agree, the medians and p, so chapters can
    compute their sentences from the verdicts instead of restating numbers by hand."""
    name = METRIC_NAMES.get(row["metric"], row["metric"])
    word = row["judged"] if "judged" in row and isinstance(row["judged"], str) else paired_word(row)
    facts = (f"{row['agree']} seeds {row['direction']}, median {row['median_before']:.3g} -> "
             f"{row['median_after']:.3g}, p = {row['p']:.2g}")
    if word.startswith(UNJUDGED):
        why = row["why"] if "why" in row and isinstance(row["why"], str) else paired_reason(row)
        more = f"; {facts}" if detail and row["n"] >= 2 else ""
        return f"could not judge {name} ({word}: {why}{more})"
    if word == NO_CHANGE:      # not "did not move": no change was detected by a test that could have
        ci = interval_text(row["lo"], row["hi"], row["level"])
        return f"showed no detectable change in {name} ({ci}" + (f"; {facts})" if detail else ")")
    return f"moved {name} {row['direction']} ({word}" + (f": {facts})" if detail else ")")


def seed_subsample_intervals(summaries, metric: str = "itl_p999",
                             step: tuple[str, str] | None = None, sizes: Iterable[int] | None = None,
                             alpha: float = ALPHA, project_to: int = 12, max_subsets: int = 200,
                             seed: int = 0, by: str | None = None) -> pd.DataFrame:
    """How the interval and the verdict depend on the number of seeds, for one step.

    For each size m, every m-subset of the paired seeds (or ``max_subsets`` random
    ones) is analysed as if only those seeds had run: median/min/max interval width
    (hi/lo, a fold factor), its coverage ``level``, and the share of subsets reaching
    each verdict.  ``width_normal`` is the 95% normal-approximation width
    ``exp(2 * 1.96 * sd / sqrt(m))`` from all seeds' sd, extended to ``project_to``
    seeds (rows with ``projected`` True): the ~1/sqrt(n) trend.  ``p_floor`` shows when
    "established" becomes attainable.  ``seeds_needed`` is in ``.attrs``.  With ``by``
    (e.g. "duration") the view is repeated per group, e.g. for longer runs."""
    frame = _frame(summaries)
    if by is not None:
        parts = [seed_subsample_intervals(g, metric, step, sizes, alpha, project_to, max_subsets, seed)
                 .assign(**{by: key}) for key, g in frame.groupby(by, sort=True)]
        return pd.concat(parts, ignore_index=True)
    rungs = list(dict.fromkeys(frame["rung"].astype(str)))
    a, b = step or (rungs[0], rungs[-1])
    before, after, _ = _align(_rung_values(frame, a, metric), _rung_values(frame, b, metric), metric)
    d = np.log(after.to_numpy()) - np.log(before.to_numpy())
    n = len(d)
    sd = float(d.std(ddof=1)) if n > 1 else math.nan
    z = NormalDist().inv_cdf(1 - alpha / 2)
    rng = np.random.default_rng(seed)
    rows = []
    for m in sorted(set(sizes if sizes is not None else range(2, n + 1)) | set(range(n + 1, project_to + 1))):
        row = {"seeds": m, "projected": m > n, "p_floor": min_p(m),
               "width_normal": math.exp(2 * z * sd / math.sqrt(m)) if sd == sd else math.nan}
        if 2 <= m <= n:
            if math.comb(n, m) <= max_subsets:
                subsets = list(itertools.combinations(range(n), m))
            else:
                subsets = list({tuple(sorted(rng.choice(n, m, replace=False))) for _ in range(max_subsets)})
            tests = [sign_flip(d[list(s)], alpha, seed) for s in subsets]
            widths = np.exp([t["hi"] - t["lo"] for t in tests])
            verdicts = [verdict(t["p"], m, alpha) for t in tests]
            row.update(subsets=len(subsets), level=tests[0]["level"], width_median=float(np.median(widths)),
                       width_min=float(widths.min()), width_max=float(widths.max()),
                       p_median=float(np.median([t["p"] for t in tests])),
                       **{f"share_{v.replace(' ', '_')}": verdicts.count(v) / len(verdicts)
                          for v in VERDICTS[:3]})
        rows.append(row)
    out = pd.DataFrame(rows)
    out.insert(0, "step", step_name(a, b))
    out.insert(1, "metric", metric)
    out.attrs["seeds_needed"] = seeds_needed(d, alpha) if n > 1 else None
    return out


def verdict_cells(verdicts: pd.DataFrame) -> pd.DataFrame:
    """ladder_verdicts as a step x metric table of 'ratio [lo-hi, coverage] verdict'
    strings (ratio of medians; the interval is the paired one with its exact coverage,
    left out when unbounded; the verdict in the book's vocabulary)."""
    def cell(r):
        word = r["judged"] if isinstance(r.get("judged"), str) else paired_word(r)
        if r["n"] < 2:
            return word
        ci = (f" [{r['lo']:.2f}-{r['hi']:.2f}, {r['level']:.0%}]"
              if np.isfinite(r["lo"]) and np.isfinite(r["hi"]) else "")
        return f"{r['ratio']:.2f}x{ci} {word}"
    out = verdicts.assign(cell=verdicts.apply(cell, axis=1),
                          metric=verdicts["metric"].map(lambda m: METRIC_NAMES.get(m, m)))
    table = out.pivot(index="step", columns="metric", values="cell")
    return table.reindex(index=list(dict.fromkeys(verdicts["step"])),
                         columns=list(dict.fromkeys(out["metric"])))




def chance_rate(n: int, suggestive: float = 0.10) -> float:
    """Probability that a step that changed nothing still gets a verdict above "no change"
    with n paired seeds: two-sided p-values come in steps of 2/2**n, each as likely."""
    if n < 2:
        return 0.0
    return 2 * math.floor(suggestive * 2 ** (n - 1) + 1e-9) / 2 ** n


def chance_sentence(verdicts: pd.DataFrame) -> str:
    """How many chance "suggestive" (or better) verdicts the ladder's comparisons expect."""
    judged = verdicts[verdicts["verdict"] != "insufficient runs"]
    m = len(judged)
    if m == 0:
        return "No comparison had two paired seeds, so none was judged."
    n = int(judged["n"].min())
    rate = chance_rate(n)
    if rate == 0:
        return (f"With {n} paired seed(s) none of the {m} comparisons can detect a change, by chance "
                f"or otherwise: the smallest p-value they can reach is {min_p(n):.2g}, so every cell "
                f"reads \"{UNJUDGED} with {n} seed(s)\" whatever its ratio.")
    return (f"Across these {m} comparisons, about {m * rate:.1f} chance verdicts of a change "
            f"are expected with {n} paired seeds even if no fix did anything, so the end-to-end row "
            f"carries the most weight.")
