"""What the takeaways page compares, fixed once: each cause's name, the rungs that fix it,
the percentile it mostly lives at, what a fix should lower and where it pays; and the
paired change across each fix (the ladder chapter's rule)."""
from __future__ import annotations

import math

import pandas as pd

from ..core.schemes import CAUSES
from ..engine_link import RUNGS
from . import article as A
from .per_cause import CAUSE_FIX
from .paired import paired_change, verdict_phrase
from .rungs import COMPACT_HISTORY, GC_FREEZE
from .select import rung_above, runs_of
from .wording import label_names

NAMES = label_names("cause")
# The rungs that fix a cause, first to last: GC took two (freeze the heap, then compact history).
FIX_RUNGS = {**{c: (rung,) for c, (_, _, rung) in CAUSE_FIX.items()}, "gc": (GC_FREEZE, COMPACT_HISTORY)}
# The percentile each stall mostly lives at in the article (graph misses: the p90-p99 body).
HEADLINE = {"prefill": "itl_p99", "preempt": "itl_max", "graph": "itl_p99", "gc": "itl_p999",
            "tok": "itl_p99"}
EFFECTS = ("itl_p99", "itl_p999", "itl_max")     # what a fix should lower
COSTS = ("ttft_p50", "tok_per_s")                # where a fix's price lands
LABEL = {"tok_per_s": "throughput"}              # paired_change's label for the verdict prose
MISSING = "rung not in this build"
ARTICLE_COST = {"preempt": A.MEASURED["watermark_ttft"]}   # the only fix cost article.py holds


def fix_step(cause: str) -> tuple[str, str]:
    """(the rung above the fix, the rung that completes it) for a cause."""
    rungs = FIX_RUNGS[cause]
    return rung_above(RUNGS, rungs[0]), rungs[-1]


def _by_seed(runs, rung: str, key: str) -> pd.Series:
    return pd.Series({r["seed"]: float(r[key]) for r in runs_of(runs, rung)}, dtype=float)


def fix_effects(runs) -> pd.DataFrame:
    """One row per (cause, metric): the paired change from the rung above a cause's fix to
    the rung that completes it (paired_change's fields), with its phrase. ``role`` says
    whether the metric is what the fix should lower ("effect") or where it pays ("cost")."""
    present, rows = {r["rung"] for r in runs}, []
    for cause in CAUSES:
        before, after = fix_step(cause)
        missing = [r for r in (before, after) if r not in present]
        for key in EFFECTS + COSTS:
            label = LABEL.get(key, key)
            if missing:
                res = {"metric": label, "n": 0, "verdict": MISSING, "judged": MISSING, "why": "",
                       "median_before": math.nan,
                       "median_after": math.nan, "ratio": math.nan, "direction": "none", "agree": "0/0"}
                phrase = f"could not be measured ({', '.join(missing)}: {MISSING})"
            else:
                res = paired_change(_by_seed(runs, before, key), _by_seed(runs, after, key), metric=label)
                phrase = verdict_phrase(res)
            rows.append({"cause": cause, "key": key, "role": "cost" if key in COSTS else "effect",
                         "before": before, "after": after, **res, "phrase": phrase})
    return pd.DataFrame(rows)
