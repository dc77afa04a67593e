"""The stall page (book/stall), computed: one run's summary, the article's hypothesis
checked on it, one tail gap picked, partitioned and drawn with what the engine did around
it, and the table of stall kinds; the notebook only displays them."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.columns import EMIT, GC, SEG, STEP
from ..core.gaps import as_log, partition_run
from ..core.runlog import RunLog, load
from ..core.schemes import ARTICLE, CLEAN, SEGMENT_KINDS, get_scheme
from ..core.run_summary import summarize
from ..engine_link import get_profile, made_on_confirmed, profile_specs
from ..across_runs.rungs import FIRST
from ..across_runs.wording import label_names
from ..render import hypothesis, stall_kinds
from ..render.figures import COLOURS
from ..render.page_view import PageView

LABEL_NAMES = label_names("part")
FACT_KEYS = ("gap_ms", "cause", "request", "steps_spanned", "kernel_ms", "parts_sum_ms")   # glued as stall_<key>


def page(profile=None, seeds=None, duration=None, rate=None, rung=None, quantile=99.0) -> PageView:
    """Everything book/stall shows, from the first seed of ``rung`` (the ladder's first if None);
    the example is a gap at or above the run's ``quantile`` percentile. The run is made if missing."""
    rung = rung or FIRST
    prof = get_profile(profile)
    spec = made_on_confirmed(prof, lambda: profile_specs(prof, rungs=[rung], seeds=seeds, duration=duration,
                                                         rate=rate)[:1], rate)[0]
    log = load(spec.path)
    gaps = partition_run(log)
    summary = summarize(log, gaps=gaps)
    stall = pick_stall(gaps, quantile)
    out = PageView()
    out.numbers = {**summary_numbers(summary), **stall_numbers(stall_facts(stall), quantile)}
    out.tables["partition"] = (partition_frame(stall)
                               .style.format({"ms": "{:.2f}", "share of gap": "{:.1%}"}).hide(axis="index"))
    out.tables["kinds"] = stall_kinds.stall_table().style.hide(axis="index")
    out.figures["anatomy"] = lambda: draw_stall(log, stall)
    return out


def summary_numbers(summary: dict) -> dict:
    """The run's figures the page states, the hypothesis' verdict on them, and the article's
    primary-cause rule."""
    return {"stall_rung": summary["rung"], "stall_seed": summary["seed"],
            "fwd_clean": summary["fwd_share_clean_median"], "fwd_tail": summary["fwd_share_tail_median"],
            "hypothesis_verdict": hypothesis.verdict(summary["fwd_share_clean_median"],
                                                     summary["fwd_share_tail_median"]),
            "run_p50": summary["itl_p50"], "run_p99": summary["itl_p99"], "n_gaps": summary["gaps"],
            "primary_floor_ms": ARTICLE.floor_ms, "primary_fraction": ARTICLE.min_fraction,
            "cause_order": ", ".join(ARTICLE.causes)}


def stall_numbers(facts: dict, quantile: float) -> dict:
    """The picked gap's facts as the page glues them (stall_<fact>), with the percentile it was picked at."""
    return {**{f"stall_{key}": facts[key] for key in FACT_KEYS}, "stall_quantile": quantile}


# ---------------------------------------------------------------- one stall, up close
def pick_stall(gaps: pd.DataFrame, quantile: float = 99.0) -> pd.Series:
    """A representative stall: the smallest gap at or above the run's ``quantile``
    percentile that has a primary cause and no eviction (so the engine's own activity
    explains it); the largest gap if no gap qualifies."""
    if not len(gaps):
        raise ValueError("no gaps to pick a stall from")
    cut = np.percentile(gaps["gap_ms"].to_numpy(), quantile)
    ok = gaps[(gaps["gap_ms"] >= cut) & (gaps["cause"] != CLEAN) & (gaps["n_evictions"] == 0)]
    pick = ok.nsmallest(1, "gap_ms") if len(ok) else gaps.nlargest(1, "gap_ms")
    return pick.iloc[0]


def stall_facts(gap: pd.Series, scheme="article") -> dict:
    """The picked gap as flat numbers (ms) for glue: the gap, its cause, every part."""
    sch = get_scheme(scheme)
    facts = {"gap_ms": float(gap["gap_ms"]), "cause": str(gap["cause"]),
             "request": int(gap["request"]), "token": int(gap["token"]),
             "steps_spanned": int(gap["step1"] - gap["step0"])}
    for lab in sch.labels:
        facts[f"{lab}_ms"] = float(gap[lab])
    facts["parts_sum_ms"] = float(sum(gap[lab] for lab in sch.labels))
    return facts


def partition_frame(gap: pd.Series, scheme="article") -> pd.DataFrame:
    """The picked gap's partition as a table: label, ms, share of the gap."""
    sch = get_scheme(scheme)
    ms = [float(gap[lab]) for lab in sch.labels]
    df = pd.DataFrame({"label": [LABEL_NAMES.get(lab, lab) for lab in sch.labels], "ms": ms})
    df["share of gap"] = df["ms"] / float(gap["gap_ms"])
    total = pd.DataFrame({"label": ["sum of parts"], "ms": [sum(ms)], "share of gap": [sum(ms) / float(gap["gap_ms"])]})
    return pd.concat([df, total], ignore_index=True)


def window(log: RunLog, t0: float, t1: float, pad: float) -> dict:
    """Segments, GC pauses and step starts overlapping [t0 - pad, t1 + pad] (seconds)."""
    a, b = t0 - pad, t1 + pad
    segs = log.segs[(log.segs[:, SEG.t1] > a) & (log.segs[:, SEG.t0] < b)]
    gcs = log.gcs[(log.gcs[:, GC.t1] > a) & (log.gcs[:, GC.t0] < b)]
    steps = log.steps[(log.steps[:, STEP.t1] > a) & (log.steps[:, STEP.t0] < b)]
    return {"a": a, "b": b, "segs": segs, "gcs": gcs, "step_t0": steps[:, STEP.t0]}


def draw_stall(log_or_path, gap: pd.Series | None = None, scheme="article", pad_fraction: float = 0.3):
    """Figure: the engine around one gap (top) and the gap's exclusive partition (bottom)."""
    import matplotlib.pyplot as plt

    sch = get_scheme(scheme)
    log = as_log(log_or_path)
    if gap is None:
        gap = pick_stall(partition_run(log, sch))
    t0, t1 = float(gap["t0"]), float(gap["t1"])
    w = window(log, t0, t1, pad=pad_fraction * (t1 - t0))
    ms = lambda t: (np.asarray(t, dtype=float) - t0) * 1e3  # noqa: E731  (ms since the gap opened)

    fig, (ax, axp) = plt.subplots(2, 1, figsize=(9, 4.4), height_ratios=[3, 1.2], layout="constrained")
    ax.axvspan(0, ms(t1), color="#F2E6A6", alpha=0.6, lw=0)
    rows = {"engine segments": 2, "GC pauses": 1, f"request {int(gap['request'])} tokens": 0}
    for _, kind, a, b in w["segs"]:
        lab = sch.segment_label[SEGMENT_KINDS[int(kind)]]
        ax.broken_barh([(ms(a), ms(b) - ms(a))], (1.6, 0.8), color=COLOURS.get(lab, "#999"), lw=0)
    for a, b, _ in w["gcs"]:
        ax.broken_barh([(ms(a), ms(b) - ms(a))], (0.6, 0.8), color=COLOURS["gc"], lw=0)
    ax.vlines(ms(w["step_t0"]), 1.55, 2.45, color="white", lw=0.6)
    em = log.emissions[log.emissions[:, EMIT.request] == gap["request"], EMIT.t]
    em = em[(em >= w["a"]) & (em <= w["b"])]
    ax.vlines(ms(em), -0.4, 0.4, color="black", lw=1.2)
    ax.annotate("", xy=(ms(t1), 0.5), xytext=(0, 0.5),
                arrowprops=dict(arrowstyle="<->", color="black", lw=0.8))
    ax.text(ms(t1) / 2, 0.05, f"gap {gap['gap_ms']:.1f} ms", ha="center", va="bottom", fontsize=9,
            bbox=dict(facecolor="white", edgecolor="none", pad=1))
    ax.set_yticks(list(rows.values()), list(rows.keys()))
    ax.set_ylim(-0.6, 2.6)
    ax.set_xlim(ms(w["a"]), ms(w["b"]))
    ax.set_xlabel("ms since the request's previous token")
    ax.set_ylabel("what ran")
    ax.set_title(f"{log.rung}, seed {log.seed}: one gap at or above p99 (primary cause: {gap['cause']})",
                 fontsize=10)

    left = 0.0
    for lab in sch.labels:
        v = float(gap[lab])
        if v > 0:
            axp.barh(0, v, left=left, color=COLOURS.get(lab, "#999"), label=LABEL_NAMES.get(lab, lab))
            left += v
    axp.set_xlim(ms(w["a"]), ms(w["b"]))
    axp.set_yticks([])
    axp.set_xlabel("the same gap, partitioned (ms)")
    axp.legend(ncols=4, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.55), frameon=False)
    return fig
