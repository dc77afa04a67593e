"""Paired, run-level comparison of two rungs: is a change established, suggestive, or not seen?

Method (quotable).  A run is the unit of evidence, and the same seed serves the same
requests on every rung, so each seed gives one *pair* of runs.  For a metric (ITL p99,
say) and a step from rung A to rung B we take each seed's log ratio
``d = log(metric_B / metric_A)`` and test "the fix changed nothing" with an exact
two-sided sign-flip permutation test on the mean of ``d``: under that hypothesis the
two runs of a seed are interchangeable, so each ``d`` is as likely to have either
sign, and all ``2**n`` sign patterns are enumerated (n <= 16 seeds; beyond that a
seeded Monte Carlo sample of them).  The interval for the ratio is the exact
inversion of the same test (Hartigan's subset means): ``exp`` of the k-th smallest
and k-th largest of the ``2**n - 1`` subset means of ``d``, with
``k = floor(alpha * 2**(n-1))``, which covers the typical per-seed ratio with
probability ``1 - 2k/2**n >= 95%`` whenever the per-seed log ratios are symmetric
about it.  Because test and interval are one procedure, "p <= 0.05" and "the 95%
interval excludes 1" never disagree.

The catch, stated plainly: n paired seeds have only ``2**n`` equally likely sign
patterns, so the smallest two-sided p-value is ``2/2**n``: 1/16 = 0.0625 with 5
seeds.  With 5 seeds nothing can reach p <= 0.05, and a 95% interval would be
unbounded; we then report the widest-coverage interval the seeds allow, the range of
the per-seed ratios, whose exact coverage is ``1 - 2/2**n`` (93.75% with 5 seeds),
and say so in the ``level`` column.

Verdict rule (one rule, applied to every step and metric; two-sided, no direction
declared in advance):

* **established**: p <= 0.05.  Needs at least 6 paired seeds (floor 2/64 = 0.031).
* **suggestive**: 0.05 < p <= 0.10.  With 5 seeds this means exactly "every seed moved
  the same way" (p = 1/16), the strongest evidence five paired runs can give.
* **no change**: p > 0.10.  This means no change was *detected*, not that there was
  none; the interval shows how large a change could hide.
* **insufficient runs**: fewer than 2 seeds present on both rungs.

If a fix does nothing, a comparison is called established at most 5% of the time and
anything but "no change" at most 10% (6.25% with 5 seeds).  Those are per comparison:
the ladder makes 35 (7 steps x 5 metrics), so about two chance "suggestive" verdicts
are expected at 5 seeds even if no fix did anything; read the end-to-end rows as the
primary comparisons.  The ``ratio`` column is the ratio of the medians across paired
runs (the article's numbers); ``paired_ratio`` (the geometric mean of the per-seed
ratios) is the estimate the test and interval are about; the two can differ.
``direction`` is the sign of the mean log ratio.

Limits: seeds are assumed independent, and the two runs of a seed interchangeable
under no effect (systematic drift between the times the rungs ran would break this);
the interval assumes symmetric per-seed log ratios (the test does not).  An unpaired
rank test could reach p = 2/252 with 5 + 5 runs, but only by treating all ten runs
as interchangeable, which ignores that the seed sets the traffic (one baseline seed
drew far lighter traffic than the rest); pairing is the design, and its price is the
floor above.
"""
from __future__ import annotations

import itertools
import math
from functools import lru_cache
from statistics import NormalDist
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from .tables import METRIC_NAMES

ALPHA = 0.05          # established
SUGGESTIVE = 0.10     # suggestive
EXACT_MAX_SEEDS = 16  # enumerate all 2**n sign patterns up to here
MC_DRAWS = 2 ** 15    # random sign patterns beyond (each also used negated)
METRICS = ("itl_p50", "itl_p99", "itl_p999", "itl_max", "ttft_p50")
VERDICTS = ("established", "suggestive", "no change", "insufficient runs")
END_TO_END = "end to end"


def min_p(n: int) -> float:
    """Smallest two-sided p-value a sign-flip test on n pairs can reach: 2 / 2**n."""
    return 2.0 / 2 ** n


def min_seeds(alpha: float = ALPHA) -> int:
    """Fewest paired seeds whose attainable p-value is <= alpha (6 for 0.05)."""
    n = 1
    while min_p(n) > alpha:
        n += 1
    return n


@lru_cache(maxsize=32)
def _signs(n: int, seed: int) -> np.ndarray:
    """Sign patterns, identity first: all 2**n (exact) or a symmetric random sample."""
    if n <= EXACT_MAX_SEEDS:
        return 1 - 2 * ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1).astype(np.int8)
    draws = np.random.default_rng(seed).choice(np.array([-1, 1], np.int8), size=(MC_DRAWS, n))
    return np.vstack([np.ones((1, n), np.int8), -np.ones((1, n), np.int8), draws, -draws])


def sign_flip(log_ratios, alpha: float = ALPHA, seed: int = 0) -> dict:
    """Two-sided sign-flip test of mean(log_ratios) = 0 and its inverted interval.

    Returns p, lo and hi (log units), level (the interval's exact coverage) and method.
    A sign pattern's statistic beats the observed one (one-sided) exactly when the
    mean of ``d`` over the flipped seeds is <= the hypothesised centre, which is why
    the interval's ends are order statistics of the subset means."""
    d = np.asarray(log_ratios, float)
    n = len(d)
    if n < 2:
        return {"p": math.nan, "lo": math.nan, "hi": math.nan, "level": math.nan, "method": None}
    signs = _signs(n, seed)
    total = len(signs)
    stats = signs @ d
    tol = 1e-9 * max(np.abs(d).sum(), 1e-300)
    p = float(np.count_nonzero(np.abs(stats) >= abs(d.sum()) - tol)) / total
    flipped = signs < 0
    size = flipped.sum(axis=1)  # 0 for the identity, whose subset is empty
    means = np.sort((flipped @ d)[size > 0] / size[size > 0])
    k = max(int(alpha * total / 2 + 1e-9), 1)  # k = 1 when too few seeds for 1 - alpha
    return {"p": min(p, 1.0), "lo": float(means[k - 1]), "hi": float(means[-k]),
            "level": 1 - 2 * k / total, "method": "exact" if n <= EXACT_MAX_SEEDS else "monte carlo"}


def verdict(p: float, n: int, alpha: float = ALPHA, suggestive: float = SUGGESTIVE) -> str:
    """The module's verdict rule (see the module docstring)."""
    if n < 2 or p != p:
        return "insufficient runs"
    return "established" if p <= alpha else "suggestive" if p <= suggestive else "no change"


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
    median_after, ratio (of medians), paired_ratio, lo, hi, level, p, verdict,
    direction, agree ("5/5": seeds moving in ``direction``), seed_ratios, method, note."""
    b, a, note = _align(before, after, metric)
    n = len(b)
    d = np.log(a.to_numpy()) - np.log(b.to_numpy())
    test = sign_flip(d, alpha=alpha, seed=seed)
    mean = float(d.mean()) if n else math.nan
    direction = "down" if mean < 0 else "up" if mean > 0 else "none"
    moved = int(np.count_nonzero(d < 0 if mean < 0 else d > 0)) if n else 0
    return {
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


def _frame(summaries) -> pd.DataFrame:
    frame = summaries if isinstance(summaries, pd.DataFrame) else pd.DataFrame(list(summaries))
    for col in ("rung", "seed"):
        if col not in frame.columns:
            raise ValueError(f"summaries need a '{col}' column (one row per run)")
    return frame


def _rung_values(frame: pd.DataFrame, rung: str, metric: str) -> pd.Series:
    if metric not in frame.columns:
        raise ValueError(f"no metric '{metric}' in the summaries")
    rows = frame[frame["rung"].astype(str) == rung]
    return pd.Series(rows[metric].to_numpy(float), index=rows["seed"].to_list())


def _steps(rungs: Sequence[str]) -> list[tuple[str, str, str]]:
    steps = [(f"{a} -> {b}", a, b) for a, b in zip(rungs, rungs[1:])]
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
            "paired_ratio", "lo", "hi", "level", "p", "verdict", "direction", "agree",
            "seed_ratios", "method", "note", "seeds"]
    return pd.DataFrame(rows, columns=cols)


def verdict_phrase(row, detail: bool = False) -> str:
    """Prose for one verdict row, e.g. "moved p99 down (suggestive)", "did not move p99.9".

    ``detail`` adds the seeds that agree, the medians and p, so chapters can
    compute their sentences from the verdicts instead of restating numbers by hand."""
    name = METRIC_NAMES.get(row["metric"], row["metric"])
    v = row["verdict"]
    if v == "insufficient runs":
        return f"could not judge {name} (fewer than 2 paired runs)"
    facts = (f"{row['agree']} seeds {row['direction']}, median {row['median_before']:.3g} -> "
             f"{row['median_after']:.3g}, p = {row['p']:.2g}")
    if v == "no change":
        return f"did not move {name}" + (f" (no change detected: {facts})" if detail else "")
    return f"moved {name} {row['direction']} ({v}" + (f": {facts})" if detail else ")")


def seeds_needed(log_ratios, alpha: float = ALPHA, power: float = 0.8) -> dict:
    """Rough projection of how many paired seeds an "established" verdict needs.

    At least ``min_seeds(alpha)`` (the permutation floor), and by the normal
    approximation ``((z_{1-alpha/2} + z_power) * sd / |mean|)**2`` for the observed mean
    and sd of the per-seed log ratios.  Plug-in estimates from a handful of seeds are
    themselves uncertain: read the result as an order of magnitude."""
    d = np.asarray(log_ratios, float)
    mean, sd = float(d.mean()), float(d.std(ddof=1)) if len(d) > 1 else math.nan
    z = NormalDist().inv_cdf(1 - alpha / 2) + NormalDist().inv_cdf(power)
    if sd != sd or mean == 0:
        normal = math.inf if mean == 0 else math.nan
    else:
        normal = max(math.ceil((z * sd / abs(mean)) ** 2), 1) if sd > 0 else 1
    floor = min_seeds(alpha)
    return {"min_seeds": floor, "projected_seeds": max(floor, normal) if normal == normal else math.nan,
            "mean_log_ratio": mean, "sd_log_ratio": sd, "power": power}


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
    out.insert(0, "step", f"{a} -> {b}")
    out.insert(1, "metric", metric)
    out.attrs["seeds_needed"] = seeds_needed(d, alpha) if n > 1 else None
    return out


def verdict_cells(verdicts: pd.DataFrame) -> pd.DataFrame:
    """ladder_verdicts as a step x metric table of 'ratio [lo-hi] verdict' strings
    (ratio of medians; the interval is the paired one, '' when it is unbounded)."""
    def cell(r):
        if r["verdict"] == "insufficient runs":
            return "insufficient runs"
        ci = f" [{r['lo']:.2f}-{r['hi']:.2f}]" if np.isfinite(r["lo"]) and np.isfinite(r["hi"]) else ""
        return f"{r['ratio']:.2f}x{ci} {r['verdict']}"
    out = verdicts.assign(cell=verdicts.apply(cell, axis=1),
                          metric=verdicts["metric"].map(lambda m: METRIC_NAMES.get(m, m)))
    table = out.pivot(index="step", columns="metric", values="cell")
    return table.reindex(index=list(dict.fromkeys(verdicts["step"])),
                         columns=list(dict.fromkeys(out["metric"])))


def strongest_verdict(n: int, alpha: float = ALPHA, suggestive: float = SUGGESTIVE) -> str:
    """The strongest verdict n paired seeds can reach at all (their p-value floor decides)."""
    if n < 2:
        return "insufficient runs"
    return verdict(min_p(n), n, alpha, suggestive)
