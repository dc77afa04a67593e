"""What each rung of the ladder did: the median run, what each fix acts on, pairs of
runs by seed, and this build's ladder next to the article's."""
from __future__ import annotations

import pandas as pd

from . import article as A
from .paired import step_name, verdict_phrase, verdict_row
from .verdicts import could_detect, paired_reason, unjudged
from .rungs import (ADMIT_WATERMARK, BASELINE, BUDGET_256, COMPACT_HISTORY, GC_FREEZE, GRAPHS_48,
                    TOKENIZE_OFF_LOOP)
from .select import runs_of
from .tables import LABEL_NAMES, METRIC_NAMES, ladder_table, median_range_cells, tail_share_table
from .wording import median_range, ms


def median_run(summaries, rung: str, metric: str = "itl_p99") -> dict:
    """The run of a rung whose metric is the median of its runs (the lower middle for an
    even count), as the article picks the run it draws a histogram for."""
    runs = sorted(runs_of(summaries, rung), key=lambda s: (s[metric], s["seed"]))
    if not runs:
        raise ValueError(f"no runs of rung {rung!r}")
    return runs[(len(runs) - 1) // 2]


# rung -> what its fix acts on: (row name, function of a run's summary, format)
RUNG_EFFECTS = {
    GC_FREEZE: [("largest gen-2 pause while serving (ms)",
                 lambda s: max(s["gen2_serving_ms"], default=0.0), "{:.0f}"),
                ("gen-2 pause at startup (ms)", lambda s: max(s["gen2_startup_ms"], default=0.0), "{:.0f}"),
                ("p99.9 (ms)", lambda s: s["itl_p999"], "{:.0f}")],
    COMPACT_HISTORY: [("gen-0 collections", lambda s: s["gc_counts"]["0"], "{:.0f}"),
                      ("gen-2 pauses while serving", lambda s: len(s["gen2_serving_ms"]), "{:.0f}"),
                      ("GC share of tail time (%)", lambda s: 100 * s["tail_share"]["gc"], "{:.1f}")],
    GRAPHS_48: [("eager decode steps", lambda s: s["eager_steps"], "{:.0f}"),
                ("graph share of all gap time (%)", lambda s: 100 * s["all_share"]["graph"], "{:.2f}")],
    BUDGET_256: [("p99 (ms)", lambda s: s["itl_p99"], "{:.1f}"),
                 ("prefill share of tail time (%)", lambda s: 100 * s["tail_share"]["prefill"], "{:.1f}"),
                 ("TTFT p50 (ms)", lambda s: s["ttft_p50"], "{:.0f}")],
    TOKENIZE_OFF_LOOP: [("tokenizer share of tail time (%)", lambda s: 100 * s["tail_share"]["tok"], "{:.1f}"),
                        ("p99 (ms)", lambda s: s["itl_p99"], "{:.1f}"),
                        ("p99.9 (ms)", lambda s: s["itl_p999"], "{:.0f}")],
    ADMIT_WATERMARK: [("preemptions", lambda s: s["preemptions"], "{:.0f}"),
                      ("max ITL (ms)", lambda s: s["itl_max"], "{:.0f}"),
                      ("TTFT p50 (ms)", lambda s: s["ttft_p50"], "{:.0f}")],
}


# the step of the ladder each fix's sentence is about, and the metric it moves
STEP_TARGETS = {
    "gc_freeze": (BASELINE, GC_FREEZE, "itl_p999"),
    "compact": (GC_FREEZE, COMPACT_HISTORY, "itl_p999"),
    "graphs48": (COMPACT_HISTORY, GRAPHS_48, "itl_p99"),
    "budget": (GRAPHS_48, BUDGET_256, "itl_p99"),
    "tok_off": (BUDGET_256, TOKENIZE_OFF_LOOP, "itl_p99"),
    "watermark_max": (TOKENIZE_OFF_LOOP, ADMIT_WATERMARK, "itl_max"),
    "watermark_ttft_v": (TOKENIZE_OFF_LOOP, ADMIT_WATERMARK, "ttft_p50"),
}


def step_phrases(verdicts: pd.DataFrame, targets: dict = STEP_TARGETS) -> dict[str, str]:
    """{key: what the step did to its metric, in words} for each of ``targets``."""
    return {key: verdict_phrase(verdict_row(verdicts, step_name(a, b), metric))
            for key, (a, b, metric) in targets.items()}


def rung_effects(summaries, order=None) -> pd.DataFrame:
    """For each rung, what its fix acts on, in the rung above and in the rung itself:
    median [min-max] across runs."""
    order = list(order or dict.fromkeys(s["rung"] for s in summaries))
    by_rung = {r: runs_of(summaries, r) for r in order}
    rows = []
    for above, rung in zip(order, order[1:]):
        for name, get, fmt in RUNG_EFFECTS.get(rung, []):
            rows.append({"rung": rung, "measure": name,
                         "rung above": median_range([get(s) for s in by_rung[above]], fmt),
                         "this rung": median_range([get(s) for s in by_rung[rung]], fmt)})
    return pd.DataFrame(rows).set_index(["rung", "measure"])


def paired_by_seed(summaries, before: str, after: str, metric: str) -> pd.DataFrame:
    """One row per seed run on both rungs: the metric before and after, and their ratio."""
    a = {s["seed"]: s[metric] for s in runs_of(summaries, before)}
    b = {s["seed"]: s[metric] for s in runs_of(summaries, after)}
    seeds = sorted(set(a) & set(b))
    out = pd.DataFrame({"run": seeds, before: [a[k] for k in seeds], after: [b[k] for k in seeds]})
    out["ratio"] = out[after] / out[before]
    return out.set_index("run")


# ---------------------------------------------------------------- side by side with the article
def ladder_side_by_side(summaries) -> pd.DataFrame:
    """Median [min-max] per rung and metric: the article's and this build's."""
    ours = median_range_cells(ladder_table(summaries, order=[r for r in A.LADDER
                                                             if any(s["rung"] == r for s in summaries)]))
    rows = []
    for rung, metrics in A.LADDER.items():
        for metric, (med, lo, hi) in metrics.items():
            d = 1 if metric in ("itl_p50", "itl_p99") else 0
            name = METRIC_NAMES[metric]
            rows.append({"rung": rung, "metric": name, "article": f"{med:.{d}f} [{lo:.{d}f}-{hi:.{d}f}]",
                         "this build": ours.loc[rung, name] if rung in ours.index else "-"})
    out = pd.DataFrame(rows).pivot(index="rung", columns="metric").reindex(list(A.LADDER)).swaplevel(axis=1)
    names = [METRIC_NAMES[m] for m in next(iter(A.LADDER.values()))]
    return out[[(m, who) for m in names for who in ("article", "this build")]]


def tail_share_side_by_side(summaries) -> pd.DataFrame:
    """Median tail-time share per rung and label: the article's next to this build's."""
    ours = tail_share_table(summaries, order=[r for r in A.TAIL_SHARE if any(s["rung"] == r for s in summaries)])
    rows = []
    for rung, shares in A.TAIL_SHARE.items():
        row = {"rung": rung}
        for lab, v in shares.items():
            name = LABEL_NAMES.get(lab, lab)          # "fwd", as every other table names it
            row[(name, "article")] = f"{100 * v:.1f}%"
            row[(name, "here")] = f"{100 * ours.loc[rung, lab]:.1f}%" if rung in ours.index else "-"
        rows.append(row)
    out = pd.DataFrame(rows).set_index("rung")
    out.columns = pd.MultiIndex.from_tuples(out.columns)
    return out


# ---------------------------------------------------------------- sentences the ladder computes
def ttft_cost_sentence(verdicts: pd.DataFrame, before: str, after: str) -> str:
    """Whether a step's cost landed on the time to first token: in how many paired seeds
    TTFT p50 rose, the medians, and the run-level verdict."""
    try:
        row = verdict_row(verdicts, step_name(before, after), "ttft_p50")
    except KeyError:
        row = None
    ratios = list((row["seed_ratios"] or {}).values()) if row is not None else []
    n = len(ratios)
    if n == 0:
        return "No seed ran both rungs, so the cost in time to first token is not measured here."
    k = sum(r > 1 for r in ratios)
    facts = (f"TTFT p50 rose in {k} of {n} paired seed(s) (median {ms(row['median_before'])} -> "
             f"{ms(row['median_after'])})")
    judged = f"; on run-level evidence the step {verdict_phrase(row)}"
    if n < 2:
        return f"{facts}: one seed cannot show whether the cost landed on the time to first token."
    if not could_detect(row):          # no sentence concludes "no cost" (or a cost) from a blind test
        return (f"{facts}: whether the cost landed on the time to first token {unjudged(n)} "
                f"({row['why'] or paired_reason(row)}).")
    if k == n:
        return f"{facts}: the cost landed on the time to first token{judged}."
    if k == 0:
        return f"{facts}: no cost in time to first token showed up here{judged}."
    return f"{facts}: no consistent cost in time to first token{judged}."


def tail_evidence_sentence(summaries, duration: float, rungs=(BASELINE, ADMIT_WATERMARK)) -> str:
    """How many gaps a run's p99.9 and max rest on, from the runs' gap counts."""
    gaps = [s["gaps"] for s in summaries if s["rung"] in rungs]
    if not gaps:
        return "No runs of the end rungs were found, so how many gaps the tail rests on is not known."
    n = float(pd.Series(gaps).median()) * 0.001
    return (f"At {duration:g} s of arrivals a run's p99.9 rests on about {n:,.0f} gap(s) (the "
            f"slowest 0.1%, median over the end rungs' runs) and its max on a single one.")


def tok_worker_sentence(cores: int | None, article_cores: int = 2) -> str:
    """What moving the tokenizer to a worker process can buy on this machine's cores."""
    if not cores:
        return "This machine's core count was not recorded, so whether the worker competes with the engine is not known."
    if cores <= article_cores:
        return (f"On this machine's {cores} usable core(s), as on the article's {article_cores}-core VM, "
                f"the worker competes with the engine for CPU, so the work is moved rather than removed.")
    return (f"This machine has {cores} usable cores, more than the article's {article_cores}, so the worker "
            f"can run beside the engine instead of taking CPU from it.")


def seeds_needed_sentence(projected: float, floor: int) -> str:
    """How many paired seeds an "established" verdict on the end-to-end p99.9 would need,
    from the spread of this build's per-seed changes (no projection without a spread)."""
    if projected == projected and projected > 0:
        return (f"From the spread of this build's per-seed changes, an \"established\" verdict on that "
                f"comparison would need about {projected:.0f} paired seeds (never fewer than {floor}).")
    return (f"This build's per-seed changes have no spread to project from (one seed, or runs that did "
            f"not differ), so how many seeds an \"established\" verdict would need cannot be said here "
            f"(never fewer than {floor}).")
