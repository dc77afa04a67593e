"""The takeaways page: per cause, where it sat in this build, how it is seen, the fix,
what the fix did and what it cost here; and the article's quick-reference card with this
build's numbers beside the article's.

Nothing is judged anew: the verdicts are paired_change's (the ladder chapter's rule),
the causes' instruments and fixes are causes.CAUSE_FIX, the article's figures come from
article.py. The knobs a rung changes are passed in (instrument.knobs.ladder_knobs(), a
layer above this one), so a test can hand in its own.
"""
from __future__ import annotations

import pandas as pd

from ..core.schemes import CAUSES
from . import article as A
from . import findings as F
from .per_cause import CAUSE_FIX, GONE_SHARE, band_text, cause_bands
from .headline import count_time_split
from .paired import paired_change, verdict_phrase
from .rungs import FIRST, LAST
from .select import rung_median, runs_of
from .tables import METRIC_NAMES
from .wording import median_range, ms, span
from .verdicts import MOVED, UNJUDGED, unjudged
from .takeaway_base import (ARTICLE_COST, COSTS, EFFECTS, FIX_RUNGS, HEADLINE, LABEL,  # noqa: F401
                            MISSING, NAMES, _by_seed, fix_effects, fix_step)


def _knob_text(knobs, rungs) -> str:
    if knobs is None:
        return "-"
    rows = knobs[knobs["rung"].isin(rungs)]
    return "; ".join(f"{r['knob']} {r['from']} -> {r['to']}" for _, r in rows.iterrows()) or "-"


def _shares(values) -> str:
    return median_range([100 * v for v in values], "{:.1f}%")


def cause_frame(runs, knobs=None) -> pd.DataFrame:
    """One row per cause: its baseline share of tail time and of tail gaps (per run, and
    as 'median [min-max]'), where it sat, how it is seen, the fix and its knobs, its share
    after the fix (``gone``: under causes.GONE_SHARE in every run there; None if that rung
    did not run), what the fix did to the cause's headline percentile and what it cost,
    with the article's counterparts."""
    base = runs_of(runs, FIRST)
    bands = cause_bands(runs, FIRST) if base else None
    effects = fix_effects(runs).set_index(["cause", "key"]).sort_index()
    rows = []
    for cause in CAUSES:
        seen, fix, _ = CAUSE_FIX[cause]
        before, after = fix_step(cause)
        tail = [s["tail_share"][cause] for s in base]
        count = [s["tail_count"][cause] / max(sum(s["tail_count"].values()), 1) for s in base]
        later = [s["tail_share"][cause] for s in runs_of(runs, after)]
        art = [r[cause] for r in A.BASELINE_RUNS]
        head = HEADLINE[cause]
        e = effects.loc[(cause, head)]
        rows.append({
            "cause": cause, "name": NAMES[cause], "seen": seen, "fix": fix, "before": before, "after": after,
            "rungs": ", ".join(FIX_RUNGS[cause]), "knob": _knob_text(knobs, FIX_RUNGS[cause]),
            "base_runs": len(base), "fired": bool(base) and max(tail) > 0,     # in the tail at all
            "above": bool(base) and max(tail) >= GONE_SHARE,                    # enough to be removed
            "where": band_text(bands.loc[cause]) if bands is not None else "-",
            "tail": _shares(tail), "count": _shares(count), "after_share": _shares(later),
            "gone": all(v < GONE_SHARE for v in later) if later else None,
            "art_tail": _shares(art), "art_after": _shares([A.TAIL_SHARE[after][cause]]),
            "headline": head, "head_phrase": e["phrase"], "head_verdict": e["judged"],
            "head_before": e["median_before"], "head_after": e["median_after"],
            "art_head_before": A.LADDER[before][head][0], "art_head_after": A.LADDER[after][head][0],
            "ttft_phrase": effects.loc[(cause, "ttft_p50"), "phrase"],
            "ttft_before": effects.loc[(cause, "ttft_p50"), "median_before"],
            "ttft_after": effects.loc[(cause, "ttft_p50"), "median_after"],
            "throughput_phrase": effects.loc[(cause, "tok_per_s"), "phrase"],
        })
    frame = pd.DataFrame(rows)
    frame["gone"] = pd.Series([r["gone"] for r in rows], dtype=object)      # True/False/None
    return frame


# ---------------------------------------------------------------- tables
def _cell(row) -> str:
    """A paired change as 'ratio of medians, verdict'; '-' when a rung did not run."""
    if row["verdict"] == MISSING:
        return "-"
    ratio = f"{row['ratio']:.2f}x, " if row["ratio"] == row["ratio"] else ""
    return ratio + row["judged"]


def where_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Where each cause sat in the baseline runs, here and in the article, and its instrument."""
    return pd.DataFrame({
        "cause": frame["name"], "where it sat (ITL band)": frame["where"],
        "share of tail time": frame["tail"], "article: share of tail time": frame["art_tail"],
        "share of tail gaps": frame["count"], "how it is seen": frame["seen"]})


def fix_table(frame: pd.DataFrame, effects: pd.DataFrame) -> pd.DataFrame:
    """Each cause's fix: its rung(s) and knobs, the cause's share of tail time once fixed
    (here and in the article), and the paired change in each percentile and cost."""
    cells = effects.assign(cell=effects.apply(_cell, axis=1)).pivot(index="cause", columns="key", values="cell")
    out = pd.DataFrame({
        "cause": frame["name"], "fix": frame["fix"], "rung(s)": frame["rungs"], "knob": frame["knob"],
        "tail share once fixed": frame["after_share"], "article: once fixed": frame["art_after"]})
    for key in EFFECTS + COSTS:
        out[METRIC_NAMES.get(key, LABEL.get(key, key))] = cells.loc[frame["cause"], key].to_numpy()
    return out


def card_measured(runs) -> pd.DataFrame:
    """The card's measured half: the ends of the ladder, the forward pass's share of a
    typical and a tail gap, each cause's share of baseline tail time, which cause leads by
    count and by time, and the reconciliation error: the article's figure beside this build's."""
    rows = []
    for rung, where in ((FIRST, "baseline"), (LAST, "all fixes")):
        for key, fmt in (("itl_p50", "{:.1f}"), ("itl_p99", "{:.1f}"), ("itl_p999", "{:.0f}")):
            med, lo, hi = (fmt.format(x) for x in A.LADDER[rung][key])
            rows.append(("ITL, median [min-max] over runs", f"{METRIC_NAMES[key]}, {where} (ms)",
                         f"{med} [{lo}-{hi}]", median_range([s[key] for s in runs_of(runs, rung)], fmt)))
    base = runs_of(runs, FIRST)
    for which, art in (("clean", A.FWD_SHARE_CLEAN), ("tail", A.FWD_SHARE_TAIL)):
        rows.append(("forward pass, share of a gap", f"{'typical' if which == 'clean' else 'tail'} gap",
                     span(art), span([s[f"fwd_share_{which}_median"] for s in base])))
    for cause in CAUSES:
        rows.append(("baseline tail time, min-max over runs", NAMES[cause],
                     span([r[cause] for r in A.BASELINE_RUNS]), span([s["tail_share"][cause] for s in base])))
    split = count_time_split(base)
    art_time = [max(CAUSES, key=lambda c: r[c]) for r in A.BASELINE_RUNS]
    rows.append(("which cause leads the baseline tail", "by count of tail gaps",
                 "prefill in " + A.MEASURED["prefill_count"], leaders(split["most tail gaps"])))
    rows.append(("which cause leads the baseline tail", "by tail time", leaders(art_time),
                 leaders(split["most tail time"])))
    rows.append(("the partition", "largest |gap - sum of parts|", f"{A.RECONCILE_MAX_ERR_MS:.1e} ms",
                 f"{max(s['reconcile_max_err_ms'] for s in runs):.1e} ms" if runs else "-"))
    return pd.DataFrame(rows, columns=["section", "quantity", "article", "this build"])


def leaders(names) -> str:
    """'preempt in 4 of 5 runs, prefill in 1' from one leader per run ('-' for none)."""
    names = [n for n in names if isinstance(n, str)]      # a run with no cause in its tail: NaN/None
    if not names:
        return "-"
    counts = pd.Series(names).value_counts()
    first = f"{counts.index[0]} in {counts.iloc[0]} of {len(names)} run(s)"
    return ", ".join([first] + [f"{c} in {k}" for c, k in counts.iloc[1:].items()])


def card_fixes(frame: pd.DataFrame) -> pd.DataFrame:
    """The card's fixes: symptom -> likely cause -> knob, and what the fix did to the cause's
    headline percentile (medians over runs), in the article and here."""
    rows = []
    for _, r in frame.iterrows():
        name = METRIC_NAMES[r["headline"]]
        art = f"{name} {ms(r['art_head_before'])} -> {ms(r['art_head_after'])}; tail share -> {r['art_after']}"
        art += f"; {ARTICLE_COST[r['cause']]}" if r["cause"] in ARTICLE_COST else ""
        here = (f"{name} {ms(r['head_before'])} -> {ms(r['head_after'])} ({r['head_verdict']}); "
                f"tail share -> {r['after_share']}" if r["head_verdict"] != MISSING else MISSING)
        symptom = (f"tail gaps {r['where']}, with {r['seen']}" if r["where"] != "-"
                   else f"never a gap's primary cause here; seen as {r['seen']}")
        rows.append({"symptom (this build)": symptom, "likely cause": r["name"], "knob": r["knob"],
                     "article": art, "this build": here})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- sentences
def cause_takeaway(row) -> str:
    """One cause's takeaway: its place in the baseline tail (article beside it), what its fix
    left of it, what the fix did to the cause's headline percentile and what it cost."""
    name, art = row["name"], row["art_tail"]
    if not row["base_runs"]:
        head = f"This build has no baseline runs, so how much of the tail {name} held is unknown here (article: {art})"
    elif not row["fired"]:
        head = f"In this build {name} never reached the baseline tail (article: {art} of tail time)"
    else:
        head = f"In this build {name} held {row['tail']} of baseline tail time (article: {art})"
    fix = f"its fix, {row['fix']} ({row['rungs']}),"
    if row["gone"] is None:
        return f"{head}; {fix} is not in this build's ladder, so what it does here is unknown."
    if row["base_runs"] and not row["fired"]:
        left = f"so {fix} had none of it to remove"
    else:
        verb = ("took it to" if row["above"] else "left it at") if row["gone"] else "left"
        left = f"{fix} {verb} {row['after_share']} of tail time (article: {row['art_after']})"
    if row["head_verdict"] == MISSING:
        return f"{head}; {left}. Its effect on the percentiles {row['head_phrase']}."
    metric = METRIC_NAMES[row["headline"]]
    medians = (f"median {ms(row['head_before'])} -> {ms(row['head_after'])} (article: "
               f"{ms(row['art_head_before'])} -> {ms(row['art_head_after'])})")
    ttft = (f"median {ms(row['ttft_before'])} -> {ms(row['ttft_after'])}"
            if row["ttft_before"] == row["ttft_before"] else "not measured")
    if row["head_verdict"] in (unjudged(0), unjudged(1)):
        return (f"{head}; {left}. With fewer than 2 seeds run on both sides of the fix, neither its "
                f"effect on {metric}, {medians}, nor its cost in TTFT p50, {ttft}, can be judged.")
    return (f"{head}; {left}. On paired runs the fix {row['head_phrase']}, {medians}; as for its "
            f"cost, it {row['ttft_phrase']}, {ttft}, and {row['throughput_phrase']}.")


def costs_sentence(effects: pd.DataFrame) -> str:
    """Which fixes had a cost the paired runs detect (TTFT p50 up or throughput down), and
    for which the paired runs could not have detected one: "no cost" is said only of
    comparisons with the power to see one (verdicts.py)."""
    cost = effects[(effects["role"] == "cost") & (effects["verdict"] != MISSING)]
    if not len(cost):
        return "No fix ran beside the rung above it, so no fix's cost can be read here."
    blind = cost[cost["judged"].str.startswith(UNJUDGED)]
    paid = cost[cost["judged"].isin(MOVED) &
                (((cost["key"] == "ttft_p50") & (cost["direction"] == "up")) |
                 ((cost["key"] == "tok_per_s") & (cost["direction"] == "down")))]
    if len(blind) == len(cost):
        n = int(cost["n"].min())
        return (f"No fix's cost can be judged here: with {n} paired seed(s) no comparison could have "
                f"detected a cost ({blind['why'].iloc[0]}), so these runs say nothing either way about "
                f"what the fixes cost in TTFT or throughput.")
    parts = []
    if len(paid):
        parts.append("Fixes that cost something here, by the paired runs: "
                     + "; ".join(f"{NAMES[r['cause']]}'s fix {r['phrase']}" for _, r in paid.iterrows()) + ".")
    else:
        parts.append("No fix had a cost the paired runs detect among the comparisons that could have "
                     "detected one.")
    if len(blind):
        names = sorted({NAMES[c] for c in blind["cause"]})
        parts.append(f"For {', '.join(names)}, the paired runs could not have detected a cost "
                     f"({blind['judged'].iloc[0]}).")
    return " ".join(parts)


def cost_finding_sentence(found: pd.DataFrame, key: str = "watermark_ttft") -> str:
    """The article's finding about a fix's price, with the verdict the findings table gave
    it (the same words as the summary's and the report's)."""
    if key not in found.index:
        return ""
    return f'The article\'s finding "{found.loc[key, "claim"]}" {F.verdict(found, key)} here.'


def removed_sentence(frame: pd.DataFrame) -> str:
    """How many causes that held at least GONE_SHARE of tail time in a baseline run their own
    fix took below it, here and by the article's median shares."""
    share = f"{100 * GONE_SHARE:.1f}%"
    art = [c for c in CAUSES if A.TAIL_SHARE[fix_step(c)[1]][c] < GONE_SHARE]
    art_text = f"by its median shares, the article's fixes did that for {len(art)} of {len(CAUSES)}"
    ran = frame[frame["gone"].map(lambda g: g is not None).astype(bool) & frame["above"].astype(bool)]
    if not len(ran):
        return (f"No cause both held {share} of tail time in a baseline run and had its fix run here, "
                f"so no removal can be checked ({art_text}).")
    gone = list(ran.loc[ran["gone"].astype(bool), "name"])
    which = f"causes that held at least {share} of tail time in a baseline run, and whose fix ran,"
    if not gone:
        return (f"None of the {len(ran)} {which} fell below it in every run of "
                f"its fix's rung ({art_text}).")
    return (f"{len(gone)} of the {len(ran)} {which} fell below it in every run "
            f"of that rung ({', '.join(gone)}; {art_text}).")


def ends_sentence(runs, metric: str = "itl_p999") -> str:
    """The ladder end to end on one percentile: medians here and in the article, and the
    paired verdict over the seeds run on both ends."""
    name = METRIC_NAMES[metric]
    a0, a1 = A.LADDER[FIRST][metric][0], A.LADDER[LAST][metric][0]
    art = f"article: {ms(a0)} -> {ms(a1)}"
    h0, h1 = rung_median(runs, FIRST, metric), rung_median(runs, LAST, metric)
    if h0 != h0 or h1 != h1:
        return f"This build lacks an end of the ladder, so its end-to-end median {name} is not known ({art})."
    res = paired_change(_by_seed(runs, FIRST, metric), _by_seed(runs, LAST, metric), metric=metric)
    moved = f"fell {h0 / h1:.1f}-fold" if h1 < h0 else "did not fall"
    judged = f"on paired runs the ladder {verdict_phrase(res)}"
    return f"From the first rung to the last, the median {name} {moved} here, {ms(h0)} -> {ms(h1)} ({art}); {judged}."
