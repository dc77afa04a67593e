"""The sign-flip test and the verdict rule: is a change between two rungs established,
suggestive, or not seen?  (Applied to the ladder by paired.py.)

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

import math
from functools import lru_cache
from statistics import NormalDist

import numpy as np

ALPHA = 0.05          # established
SUGGESTIVE = 0.10     # suggestive
EXACT_MAX_SEEDS = 16  # enumerate all 2**n sign patterns up to here
MC_DRAWS = 2 ** 15    # random sign patterns beyond (each also used negated)
VERDICTS = ("established", "suggestive", "no change", "insufficient runs")


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


def strongest_verdict(n: int, alpha: float = ALPHA, suggestive: float = SUGGESTIVE) -> str:
    """The strongest verdict n paired seeds can reach at all (their p-value floor decides)."""
    if n < 2:
        return "insufficient runs"
    return verdict(min_p(n), n, alpha, suggestive)
