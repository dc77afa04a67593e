"""Did a fix act on the causes it does not target? (book/causes)

The article reads its composition table as "each fix drives its own column to zero;
the other columns shift only because shares are relative". Shares cannot show that:
they sum to 100%, so they move together. Time can. For each fix, this module compares
every cause's tail time (ms of tail gaps charged to it, per minute of arrivals) on the
fix's rung and the rung above it, paired by seed, against the seed-to-seed spread.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.schemes import CAUSES
from .per_cause import CAUSE_FIX
from .select import rung_above
from .verdicts import NO_CHANGE, power_floor, unjudged
from .summaries import run_gaps

FLOOR = 0.01        # a change below 1% of the rung above's tail time is no change
SHARE_SHIFT = 0.05  # a share "shifted" when its median moved by 5 points or more


def tail_time(gaps: pd.DataFrame, duration: float) -> dict:
    """ms of tail time (gaps at or above the run's p99) charged to each cause, per minute
    of arrivals; 'total' is all tail time."""
    gap = gaps["gap_ms"].to_numpy()
    tail = gaps[gap >= np.percentile(gap, 99)]
    per_min = 60.0 / float(duration)
    return {**{c: float(tail[c].sum()) * per_min for c in CAUSES},
            "total": float(tail["gap_ms"].sum()) * per_min}


def tail_times(runs, gaps_of=run_gaps) -> pd.DataFrame:
    """One row per run: rung, seed, each cause's tail time and the total (ms per minute).
    gaps_of(path) gives a run's gaps (partition_run's frame)."""
    rows = [{"rung": r["rung"], "seed": r["seed"], **tail_time(gaps_of(r["path"]), r["duration"])}
            for r in runs]
    return pd.DataFrame(rows, columns=["rung", "seed", *CAUSES, "total"])


def judge(moved, n: int, before: float, threshold: float, total: float) -> str:
    """The verdict in the book's vocabulary: 'moved', 'no change detected', or 'cannot be
    judged with n seeds' when the comparison could not have detected a change: too few
    seeds for any paired test (verdicts.power_floor), a threshold (the spread) so wide
    that the cause's whole time vanishing would not pass it, or one as wide as half the
    tail."""
    if moved:
        return "moved"
    if moved is None or power_floor(n) or 0 < before <= threshold or threshold >= 0.5 * total:
        return unjudged(n)
    return NO_CHANGE


def fix_effects(times: pd.DataFrame, order, shares: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per fix (CAUSE_FIX) and per cause: median tail time on the rung above and on the
    fix's rung (paired seeds), the seed-to-seed spread, and whether the time moved: the
    median paired change exceeds both the spread (the larger of the two rungs' max-min)
    and FLOOR of the tail, with every seed changing the same way. None with one seed,
    where there is no spread to judge against. `shares` (rung, seed, tail_share_<cause>)
    adds each cause's median share before and after."""
    rows = []
    order = list(order)
    for target, (_, _, rung) in CAUSE_FIX.items():
        if rung not in order or order.index(rung) == 0:
            continue
        above = rung_above(order, rung)
        b = times[times["rung"] == above].set_index("seed")
        a = times[times["rung"] == rung].set_index("seed")
        seeds = b.index.intersection(a.index)
        if not len(seeds):
            continue
        for cause in CAUSES:
            before, after = b.loc[seeds, cause], a.loc[seeds, cause]
            change = after - before
            spread = max(np.ptp(before), np.ptp(after))
            floor = FLOOR * float(b.loc[seeds, "total"].median())
            same_way = bool((change > 0).all() or (change < 0).all())
            moved = (None if len(seeds) < 2 else
                     bool(same_way and abs(change.median()) > max(spread, floor)))
            row = {"fix": rung, "targets": target, "cause": cause, "before": float(before.median()),
                   "after": float(after.median()), "spread": float(spread), "seeds": len(seeds),
                   "moved": moved, "judged": judge(moved, len(seeds), float(before.median()), max(spread, floor),
                                     float(b.loc[seeds, "total"].median())), "every_seed": ("down" if (change < 0).all() else "up" if (change > 0).all()
                                                  else None) if len(seeds) > 1 else None}
            if shares is not None:
                col = f"tail_share_{cause}"
                row["share before"] = float(shares.loc[shares["rung"].astype(str) == above, col].median())
                row["share after"] = float(shares.loc[shares["rung"].astype(str) == rung, col].median())
            rows.append(row)
    out = pd.DataFrame(rows)
    if len(out):                                   # in ladder order
        out = out.sort_values("fix", key=lambda f: f.map(order.index), kind="stable").reset_index(drop=True)
        out["moved"] = out["moved"].astype(object)
    return out


def _others(effects: pd.DataFrame) -> pd.DataFrame:
    return effects[effects["cause"] != effects["targets"]] if len(effects) else effects


def others_sentence(effects: pd.DataFrame) -> str:
    """Whether each fix left the causes it does not target alone, by tail time."""
    others = _others(effects)
    if not len(others):
        return ("No fix ran beside the rung above it, so whether a fix acts on other causes cannot be "
                "told from these runs.")
    if others["moved"].isna().all():
        return ("With one seed per rung there is no seed-to-seed spread to judge a change against, so "
                "whether each fix left the other causes alone cannot be told from these runs.")
    moved = others[others["moved"] == True]  # noqa: E712
    blind = others[others["judged"].str.startswith("cannot")] if "judged" in others else others.iloc[:0]
    if not len(moved) and len(blind):
        n = int(others["seeds"].min())
        why = power_floor(n) or "the seed-to-seed spread is as large as the tail time itself"
        target = effects[(effects["cause"] == effects["targets"]) & effects["judged"].str.startswith("cannot")]
        example = (f"; even a fix's own target reads within spread, e.g. {target.iloc[0]['cause']} at "
                   f"{target.iloc[0]['fix']}, {target.iloc[0]['before']:.1f} -> {target.iloc[0]['after']:.1f} ms "
                   f"per minute" if len(target) else "")
        return (f"No fix moved the other causes beyond the seed-to-seed spread, but these runs could "
                f"not have shown it if one had: {len(blind)} of the {len(others)} comparisons "
                f"{unjudged(n)} ({why}{example}). Whether a fix acts on the causes it does not target "
                f"is not answered here.")
    if not len(moved):
        return ("Each fix left the tail time of the causes it does not target within the seed-to-seed "
                "spread, in comparisons that could have detected a change: here, as in the article, a "
                "fix did nothing measurable for the others.")
    what = "; ".join(f"{r.fix} also moved {r.cause} ({r.before:.0f} -> {r.after:.0f} ms per minute)"
                     for r in moved.itertuples())
    return (f"Not every fix left the other causes alone, unlike the article's reading: {what}, "
            f"beyond the seed-to-seed spread.")


def relative_sentence(effects: pd.DataFrame, shift: float = SHARE_SHIFT) -> str:
    """Whether the other causes' shares shifted only because shares are relative (their
    share moved by `shift` or more while their tail time stayed within the spread)."""
    others = _others(effects)
    if not len(others) or "share before" not in others:
        return "Without a fix and the rung above it, the shares' shifts cannot be read."
    shifted = others[(others["share after"] - others["share before"]).abs() >= shift]
    if not len(shifted):
        return (f"No other cause's median share of tail time shifted by {shift:.0%} or more at any fix, "
                f"so there is no shift to explain.")
    if shifted["moved"].isna().all():
        return (f"{len(shifted)} other-cause share(s) shifted by {shift:.0%} or more at a fix; with one "
                f"seed per rung, whether their tail time moved too cannot be told.")
    relative = shifted[shifted["moved"] == False]  # noqa: E712
    real = shifted[shifted["moved"] == True]  # noqa: E712
    head = (f"Of the {len(shifted)} other-cause share(s) that shifted by {shift:.0%} or more at a fix, "
            f"{len(relative)} kept their tail time within the seed-to-seed spread: their shares moved only "
            f"because every share is a fraction of the same whole")
    if not len(real):
        return head + "."
    return head + ("; " + ", ".join(f"{r.cause} at {r.fix}" for r in real.itertuples())
                   + " moved in time as well.")


def effects_cells(effects: pd.DataFrame) -> pd.DataFrame:
    """fix_effects for reading: one row per (fix, cause), ms per minute rounded, the
    verdict as 'moved', 'within spread' (with 'every seed down/up' when they agreed) or
    '' (one seed)."""
    cols = {"before": "rung above, ms/min", "after": "fix's rung, ms/min", "spread": "seed spread, ms/min",
            "moved": "moved?"}
    if not len(effects):
        return pd.DataFrame(columns=["fix", "cause", *cols.values()])
    word = {True: "moved", False: "within spread", None: ""}
    judged = effects["judged"] if "judged" in effects else [""] * len(effects)
    # a change within the spread that every seed made the same way says so: a fix whose
    # target fell in every seed reads "within spread" only because one seed's level was
    # far from another's
    every = effects["every_seed"] if "every_seed" in effects else [None] * len(effects)
    out = effects.assign(moved=[(word[m] + (f" (every seed {d})" if m is False and isinstance(d, str) else "")
                                 + (f"; {j}" if j.startswith("cannot") else "")).lstrip("; ")
                                for m, d, j in zip(effects["moved"], every, judged)],
                         cause=[c + (" (its target)" if c == t else "")
                                for c, t in zip(effects["cause"], effects["targets"])])
    out = out[["fix", "cause", "before", "after", "spread", "moved"]].round({"before": 0, "after": 0, "spread": 0})
    return out.rename(columns=cols).set_index(["fix", "cause"])
