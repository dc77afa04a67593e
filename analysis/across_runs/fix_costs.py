"""Where a fix's price lands (book/causes): the article found that the fixes which hold
work back (a smaller token budget, the admission watermark) make the first token later.
Checked here seed by seed on TTFT p50, against the rung above each fix."""
from __future__ import annotations

from .per_cause import CAUSE_FIX
from .paired import paired_change
from .select import rung_above, runs_of
from .wording import ms

HOLD_BACK = ("prefill", "preempt")   # the causes whose fix delays work: budget, watermark


def ttft_change(summaries, order, cause: str) -> dict | None:
    """Median TTFT p50 (ms) above and at the fix's rung, and in how many paired seeds it
    rose; None when either rung has no runs."""
    rung = CAUSE_FIX[cause][2]
    order = list(order)
    if rung not in order or order.index(rung) == 0:
        return None
    above = rung_above(order, rung)
    b = {s["seed"]: s["ttft_p50"] for s in runs_of(summaries, above)}
    a = {s["seed"]: s["ttft_p50"] for s in runs_of(summaries, rung)}
    ch = paired_change(b, a, "ttft_p50")        # the ladder's pairing by seed
    if not ch["n"]:
        return None
    return {"fix": CAUSE_FIX[cause][1], "before": ch["median_before"], "after": ch["median_after"],
            "rose": sum(r > 1 for r in ch["seed_ratios"].values()), "n": ch["n"], "judged": ch["judged"]}


def ttft_cost_sentence(summaries, order) -> str:
    """Whether the fixes that hold work back made the first token later in every paired run."""
    changes = {c: ttft_change(summaries, order, c) for c in HOLD_BACK}
    have = {c: v for c, v in changes.items() if v}
    if not have:
        return "Neither the token budget nor the watermark ran beside the rung above it, so their cost cannot be read."
    parts = [f"the {v['fix']} moved TTFT p50 {ms(v['before'])} -> {ms(v['after'])} (it rose in "
             f"{v['rose']} of {v['n']} paired run(s); paired verdict: {v['judged']})" for v in have.values()]
    later = [v for v in have.values() if v["rose"] == v["n"]]
    if len(have) < len(HOLD_BACK):
        missing = ", ".join(CAUSE_FIX[c][1] for c in HOLD_BACK if c not in have)
        verdict = ("it made the first token later in every run" if later else
                   "it did not make the first token later in every run") + f" (the {missing} rung is not in this build)"
    elif len(later) == len(have):
        verdict = "both made the first token later in every run, as in the article"
    elif not later:
        verdict = "neither made the first token later in every run, unlike the article"
    else:
        verdict = f"only the {later[0]['fix']} made the first token later in every run, unlike the article"
    return f"Where the price of holding work back lands: {'; '.join(parts)}; {verdict}."
