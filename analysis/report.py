"""The reproduction report: each headline finding of the article next to this build's
number, with a stated criterion for whether the finding held here.

A criterion is a rule about runs (never about pooled gaps), written down before it is
applied, so "held" is computed, not judged. With few or short runs a finding can fail
for lack of events (no preemption in a 3 s smoke run); the table then says so.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd

from . import article as A
from .labels import CAUSES
from .tables import summaries_frame

FIRST, LAST = "baseline", "+admit watermark"


@dataclass(frozen=True)
class Finding:
    key: str
    claim: str               # the article's finding, in short
    article: str             # what the article measured
    criterion: str           # the rule applied to this build's runs
    compute: Callable        # frame -> (here: str, held: bool | None, value: float);
                             # held None: the runs never produced the events the claim is about
    needs: tuple = (FIRST,)  # rungs whose runs the claim is about


def _rung(frame: pd.DataFrame, rung: str) -> pd.DataFrame:
    return frame[frame["rung"].astype(str) == rung].sort_values("seed")


def _pct(x) -> str:
    return f"{100 * x:.1f}%"


def _span(values, fmt=_pct) -> str:
    values = list(values)
    if not values:
        return "no runs"
    lo, hi = min(values), max(values)
    return fmt(lo) if lo == hi else f"{fmt(lo)}-{fmt(hi)}"


def _ms(x) -> str:
    return f"{x:.1f} ms" if x < 100 else f"{x:.0f} ms"


def _median(frame, rung, col) -> float:
    sub = _rung(frame, rung)[col]
    return float(sub.median()) if len(sub) else float("nan")


def _largest_gen2(frame, rung) -> list[float]:
    return [max(p) if len(p) else 0.0 for p in _rung(frame, rung)["gen2_serving_ms"]]


def _fwd_clean(f):
    v = _rung(f, FIRST)["fwd_share_clean_median"]
    return _span(v), bool(len(v) and v.min() >= 0.90), float(v.median())


def _fwd_tail(f):
    v = _rung(f, FIRST)["fwd_share_tail_median"]
    return _span(v), bool(len(v) and v.max() <= 0.50), float(v.median())


def _preempt_majority(f):
    v = _rung(f, FIRST)["tail_share_preempt"]
    k = int((v > 0.5).sum())
    return (f"{k} of {len(v)} runs ({_span(v)})", k > len(v) / 2, float(k))


def _prefill_count(f):
    b = _rung(f, FIRST)
    counts = b[[f"tail_count_{c}" for c in CAUSES]].to_numpy()
    top = counts.argmax(axis=1) == CAUSES.index("prefill")
    k = int(top.sum())
    return (f"prefill led by count in {k} of {len(b)} runs", bool(len(b) and k == len(b)), float(k))


def _graph_tail(f):
    v = _rung(f, FIRST)["tail_share_graph"]
    return _span(v), bool(len(v) and v.max() < 0.01), float(v.median())


def _graph_body(f):
    b = _rung(f, FIRST)
    tail, body = b["tail_share_graph"].median(), b["all_share_graph"].median()
    return (f"{_pct(body)} of all gap time vs {_pct(tail)} of tail time", bool(body >= tail), float(body))


def _end_to_end(metric, factor):
    def compute(f):
        a, b = _median(f, FIRST, metric), _median(f, LAST, metric)
        return f"{_ms(a)} -> {_ms(b)}", bool(b < factor * a), b / a
    return compute


def _p50_flat(f):
    a, b = _median(f, FIRST, "itl_p50"), _median(f, LAST, "itl_p50")
    return f"{_ms(a)} -> {_ms(b)}", bool(0.8 <= b / a <= 1.25), b / a


def _gc_freeze(f):
    a, b = _largest_gen2(f, FIRST), _largest_gen2(f, "+gc.freeze")
    ma, mb = (float(np.median(x)) if x else float("nan") for x in (a, b))
    here = f"largest serving gen-2 pause {_span(a, _ms)} -> {_span(b, _ms)}"
    if not ma > 0:
        return here, None, float("nan")        # no full collection to shorten
    return here, bool(mb < 0.5 * ma), mb / ma


def _compact(f):
    a, b = _rung(f, "+gc.freeze")["gc_counts_0"], _rung(f, "+compact history")
    gen2_runs = int(sum(len(p) > 0 for p in b["gen2_serving_ms"]))
    here = (f"gen-0 collections {_span(a, lambda x: f'{x:.0f}')} -> "
            f"{_span(b['gc_counts_0'], lambda x: f'{x:.0f}')}; runs with a serving gen-2 pause: {gen2_runs}")
    held = bool(len(b) and b["gc_counts_0"].median() * 5 < a.median() and gen2_runs == 0)
    return here, held, float(b["gc_counts_0"].median())


def _graphs48(f):
    a, b = _rung(f, "+compact history")["eager_steps"], _rung(f, "+graphs to 48")["eager_steps"]
    here = f"eager steps {_span(a, lambda x: f'{x:.0f}')} -> {_span(b, lambda x: f'{x:.0f}')}"
    if not (len(a) and a.max() > 0):
        return here, None, float("nan")        # nothing ran eager before the fix
    return here, bool(len(b) and b.max() == 0), float(b.max()) if len(b) else float("nan")


def _budget(f):
    a, b = _median(f, "+graphs to 48", "itl_p99"), _median(f, "+budget 256", "itl_p99")
    return f"median p99 {_ms(a)} -> {_ms(b)}", bool(b < a), b / a


def _tok_off(f):
    a, v = _rung(f, "+budget 256")["tail_share_tok"], _rung(f, "+tokenize off-loop")["tail_share_tok"]
    here = f"tokenizer tail share {_span(a)} -> {_span(v)}"
    if not (len(a) and a.max() > 0):
        return here, None, float("nan")        # the tokenizer never reached the tail before
    return here, bool(len(v) and v.max() < 0.001), float(v.max())


def _watermark_preempt(f):
    a, b = _rung(f, "+tokenize off-loop")["preemptions"], _rung(f, LAST)["preemptions"]
    num = lambda x: f"{x:.0f}"
    here = f"preemptions per run {_span(a, num)} -> {_span(b, num)}"
    if not a.median() > 0:
        return here, None, float("nan")        # nothing to prevent
    return here, bool(len(b) and b.median() * 5 <= a.median()), float(b.median())


def _watermark_ttft(f):
    a = _rung(f, "+tokenize off-loop").set_index("seed")["ttft_p50"]
    b = _rung(f, LAST).set_index("seed")["ttft_p50"]
    seeds = a.index.intersection(b.index)
    k = int((b[seeds] > a[seeds]).sum())
    return f"TTFT p50 rose in {k} of {len(seeds)} runs", bool(len(seeds) and k == len(seeds)), float(k)


def _reconcile(f):
    worst = float(f["reconcile_max_err_ms"].max())
    return f"{worst:.1e} ms over {len(f)} runs", bool(worst < 1e-9), worst


def _skipped(f):
    n = int(f["skipped_steps_without_eviction"].sum())
    return f"{n} gaps", n == 0, float(n)


FINDINGS = [
    Finding("fwd_clean", "a typical gap is almost all forward pass", "98% in every baseline run",
            "every baseline run's median forward share of clean gaps >= 90%", _fwd_clean),
    Finding("fwd_tail", "a tail gap is mostly not forward pass", "9-29% across baseline runs",
            "every baseline run's median forward share of tail gaps <= 50%", _fwd_tail),
    Finding("preempt_majority", "preemption holds most baseline tail time", "4 of 5 runs (57-93%)",
            "more than half the baseline runs have preempt > 50% of tail time", _preempt_majority),
    Finding("prefill_count", "by count, prefill is the most common primary cause of a tail gap",
            "every run (649-880 of ~1,150 tail gaps)",
            "prefill has the most tail gaps of any cause in every baseline run", _prefill_count),
    Finding("graph_tail", "graph misses own almost none of the tail", "0.1-0.7% of tail time",
            "graph < 1% of tail time in every baseline run", _graph_tail),
    Finding("graph_body", "graph misses are a body effect, not a tail one",
            "1.7% of all gap time (median)", "median graph share of all time >= of tail time", _graph_body),
    Finding("p99_end", "the ladder lowers p99", "median 47.0 -> 27.8 ms",
            "last rung's median p99 below the baseline's", _end_to_end("itl_p99", 1.0), needs=(FIRST, LAST)),
    Finding("p999_end", "the ladder collapses p99.9", "median 950 -> 50 ms",
            "last rung's median p99.9 below half the baseline's", _end_to_end("itl_p999", 0.5), needs=(FIRST, LAST)),
    Finding("max_end", "the ladder collapses the worst gap", "median 9,466 -> 108 ms",
            "last rung's median max below half the baseline's", _end_to_end("itl_max", 0.5), needs=(FIRST, LAST)),
    Finding("p50_flat", "the median ITL barely moves", "median 13.7 -> 12.0 ms",
            "ratio of median p50s between 0.8 and 1.25", _p50_flat, needs=(FIRST, LAST)),
    Finding("gc_freeze", "gc.freeze shortens full collections while serving", "137-242 -> 30-90 ms",
            "median largest serving gen-2 pause at least halves", _gc_freeze, needs=(FIRST, "+gc.freeze")),
    Finding("compact", "compact history nearly ends collection", "gen-0 ~380-400 -> 20-44; no gen-2",
            "median gen-0 count falls 5x and no run has a serving gen-2 pause", _compact, needs=("+gc.freeze", "+compact history")),
    Finding("graphs48", "capturing up to 48 removes eager steps", "0-983 -> 0 per run",
            "no eager step in any run of the rung", _graphs48, needs=("+compact history", "+graphs to 48")),
    Finding("budget", "a 256-token budget lowers p99", "median 37.3 -> 29.5 ms",
            "median p99 lower than the rung above", _budget, needs=("+graphs to 48", "+budget 256")),
    Finding("tok_off", "off-loop tokenization removes tokenizer tail time", "share -> 0",
            "tokenizer < 0.1% of tail time in every run", _tok_off, needs=("+budget 256", "+tokenize off-loop")),
    Finding("watermark_preempt", "the admission watermark nearly ends preemption", "23-346 -> 0-7 per run",
            "median preemptions fall at least 5x from a non-zero level", _watermark_preempt, needs=("+tokenize off-loop", LAST)),
    Finding("watermark_ttft", "the watermark's cost is time to first token", "TTFT p50 rose in 5 of 5 runs",
            "TTFT p50 rose in every paired run", _watermark_ttft, needs=("+tokenize off-loop", LAST)),
    Finding("reconcile", "every gap's parts sum to the gap", "largest error 5.7e-14 ms",
            "largest |gap - sum of parts| < 1e-9 ms", _reconcile, needs=()),
    Finding("skipped", "explicit evictions explain every skipped step", "0 unexplained gaps",
            "no gap skips a step without a recorded eviction", _skipped, needs=()),
]


def overload_findings(frame: pd.DataFrame) -> list[dict]:
    b = _rung(frame, FIRST)["tail_share_preempt"]
    before, after = _median(frame, "+tokenize off-loop", "itl_p999"), _median(frame, LAST, "itl_p999")
    return [
        {"key": "overload_preempt", "claim": "under overload, preemption holds the baseline tail",
         "article": "67-96% of tail time", "criterion": "every overloaded baseline run has preempt > 50%",
         "this build": _span(b), "held": bool(len(b) and b.min() > 0.5), "value": float(b.median())},
        {"key": "overload_watermark", "claim": "under overload, only the watermark changes the tail",
         "article": "median p99.9 1,022 -> 56 ms", "criterion": "watermark rung's median p99.9 below half the rung above",
         "this build": f"{_ms(before)} -> {_ms(after)}", "held": bool(after < 0.5 * before),
         "value": after / before},
    ]


def findings(ladder_summaries, overload_summaries=None) -> pd.DataFrame:
    """One row per finding: claim, the article's number, this build's, criterion, held."""
    frame = summaries_frame(ladder_summaries)
    rows = []
    present = set(frame["rung"].astype(str)) if len(frame) else set()
    for f in FINDINGS:
        if not set(f.needs) <= present:
            here, held, value = "rung(s) not in this build", None, float("nan")
        else:
            here, held, value = f.compute(frame)
        rows.append({"key": f.key, "claim": f.claim, "article": f.article, "this build": here,
                     "criterion": f.criterion, "held": held, "value": value})
    if overload_summaries:
        rows += overload_findings(summaries_frame(overload_summaries))
    table = pd.DataFrame(rows).set_index("key")
    table["held"] = pd.Series([r["held"] for r in rows], index=table.index, dtype=object)  # True/False/None
    return table


def verdict_word(held) -> str:
    if held is None or (isinstance(held, float) and np.isnan(held)):
        return "not testable here (the mechanism never fired)"
    return "held" if held else "did not hold"


def median_run(summaries, rung: str, metric: str = "itl_p99") -> dict:
    """The run of a rung whose metric is the median of its runs (the lower middle for an
    even count), as the article picks the run it draws a histogram for."""
    runs = sorted((s for s in summaries if s["rung"] == rung), key=lambda s: (s[metric], s["seed"]))
    if not runs:
        raise ValueError(f"no runs of rung {rung!r}")
    return runs[(len(runs) - 1) // 2]


def count_vs_time(summaries, rung: str = FIRST) -> pd.DataFrame:
    """Per run: which cause led the tail by count of gaps and which by time."""
    frame = _rung(summaries_frame(summaries), rung)
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


def cause_bands(summaries, rung: str = FIRST, coverage: float = 0.9) -> pd.DataFrame:
    """Where each cause sat: pooled over a rung's runs, the range of histogram bins that
    holds the central `coverage` of the gaps whose primary cause it is (by count)."""
    runs = [s for s in summaries if s["rung"] == rung]
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


# ---------------------------------------------------------------- what each rung did
def _cell(values, fmt="{:.0f}") -> str:
    v = pd.Series(values, dtype=float).dropna()
    if not len(v):
        return "-"
    med, lo, hi = (fmt.format(x) for x in (v.median(), v.min(), v.max()))
    return med if lo == hi else f"{med} [{lo}-{hi}]"


# rung -> what its fix acts on: (row name, function of a run's summary, format)
RUNG_EFFECTS = {
    "+gc.freeze": [("largest gen-2 pause while serving (ms)",
                    lambda s: max(s["gen2_serving_ms"], default=0.0), "{:.0f}"),
                   ("gen-2 pause at startup (ms)", lambda s: max(s["gen2_startup_ms"], default=0.0), "{:.0f}"),
                   ("p99.9 (ms)", lambda s: s["itl_p999"], "{:.0f}")],
    "+compact history": [("gen-0 collections", lambda s: s["gc_counts"]["0"], "{:.0f}"),
                         ("gen-2 pauses while serving", lambda s: len(s["gen2_serving_ms"]), "{:.0f}"),
                         ("GC share of tail time (%)", lambda s: 100 * s["tail_share"]["gc"], "{:.1f}")],
    "+graphs to 48": [("eager decode steps", lambda s: s["eager_steps"], "{:.0f}"),
                      ("graph share of all gap time (%)", lambda s: 100 * s["all_share"]["graph"], "{:.2f}")],
    "+budget 256": [("p99 (ms)", lambda s: s["itl_p99"], "{:.1f}"),
                    ("prefill share of tail time (%)", lambda s: 100 * s["tail_share"]["prefill"], "{:.1f}"),
                    ("TTFT p50 (ms)", lambda s: s["ttft_p50"], "{:.0f}")],
    "+tokenize off-loop": [("tokenizer share of tail time (%)", lambda s: 100 * s["tail_share"]["tok"], "{:.1f}"),
                           ("p99 (ms)", lambda s: s["itl_p99"], "{:.1f}"),
                           ("p99.9 (ms)", lambda s: s["itl_p999"], "{:.0f}")],
    "+admit watermark": [("preemptions", lambda s: s["preemptions"], "{:.0f}"),
                         ("max ITL (ms)", lambda s: s["itl_max"], "{:.0f}"),
                         ("TTFT p50 (ms)", lambda s: s["ttft_p50"], "{:.0f}")],
}


def rung_effects(summaries, order=None) -> pd.DataFrame:
    """For each rung, what its fix acts on, in the rung above and in the rung itself:
    median [min-max] across runs."""
    order = list(order or dict.fromkeys(s["rung"] for s in summaries))
    by_rung = {r: [s for s in summaries if s["rung"] == r] for r in order}
    rows = []
    for above, rung in zip(order, order[1:]):
        for name, get, fmt in RUNG_EFFECTS.get(rung, []):
            rows.append({"rung": rung, "measure": name,
                         "rung above": _cell([get(s) for s in by_rung[above]], fmt),
                         "this rung": _cell([get(s) for s in by_rung[rung]], fmt)})
    return pd.DataFrame(rows).set_index(["rung", "measure"])


def paired_by_seed(summaries, before: str, after: str, metric: str) -> pd.DataFrame:
    """One row per seed run on both rungs: the metric before and after, and their ratio."""
    a = {s["seed"]: s[metric] for s in summaries if s["rung"] == before}
    b = {s["seed"]: s[metric] for s in summaries if s["rung"] == after}
    seeds = sorted(set(a) & set(b))
    out = pd.DataFrame({"run": seeds, before: [a[k] for k in seeds], after: [b[k] for k in seeds]})
    out["ratio"] = out[after] / out[before]
    return out.set_index("run")


# ---------------------------------------------------------------- what is left unexplained
def unexplained_tail(gaps: pd.DataFrame, log, slow_factor: float = 5.0) -> dict:
    """The tail gaps no cause explains (primary cause 'clean'), and decode steps that ran
    at least `slow_factor` times slower than the captured-path fit predicts for their size."""
    from .labels import CLEAN
    gap = gaps["gap_ms"].to_numpy()
    p99 = float(np.percentile(gap, 99))
    tail = gaps[gap >= p99]
    clean = tail[tail["cause"].astype(str) == CLEAN]
    fit = gaps.attrs.get("baseline")
    steps, segs = log.steps, log.segs
    dec = segs[segs[:, 1] == 3]
    idx = dec[:, 0].astype(int)
    size = steps[idx, 4]
    captured = size > 0
    slow = 0
    if fit is not None and captured.any():
        predicted = fit[0] * size[captured] + fit[1]
        actual = (dec[captured, 3] - dec[captured, 2]) * 1e3
        slow = int((actual >= slow_factor * np.maximum(predicted, 1e-6)).sum())
    return {"p99_ms": p99, "tail_gaps": int(len(tail)), "clean_tail_gaps": int(len(clean)),
            "clean_tail_mean_ms": float(clean["gap_ms"].mean()) if len(clean) else float("nan"),
            "clean_tail_forward_mean_ms": float(clean["kernel"].mean()) if len(clean) else float("nan"),
            "residual_share_of_tail": float(tail["residual"].sum() / tail["gap_ms"].sum()),
            "captured_steps": int(captured.sum()), "slow_captured_steps": slow, "slow_factor": slow_factor}


# ---------------------------------------------------------------- each cause, its own fix
CAUSE_FIX = {   # cause -> (how it is seen, the fix, the rung that applies it)
    "prefill": ("prefill segments in the step", "smaller token budget", "+budget 256"),
    "graph": ("padded size or eager, per step", "capture sizes up to max_num_seqs", "+graphs to 48"),
    "preempt": ("explicit eviction and readmission events", "admission watermark", "+admit watermark"),
    "gc": ("gc.callbacks start/stop", "gc.freeze() and no per-token objects", "+compact history"),
    "tok": ("tok segments on the loop", "tokenize in another process", "+tokenize off-loop"),
}


def _rung_runs(summaries, rung):
    return [s for s in summaries if s["rung"] == rung]


def _median_from_above(summaries, rung: str, metric: str) -> tuple[float, float]:
    """Median of a metric in the rung above `rung` and in `rung` itself."""
    order = list(dict.fromkeys(s["rung"] for s in summaries))
    above = order[order.index(rung) - 1]
    return tuple(float(np.median([s[metric] for s in _rung_runs(summaries, r)])) for r in (above, rung))


def fix_cost(summaries, cause: str) -> str:
    """What the fix for a cause cost in this build, from the runs themselves."""
    rung = CAUSE_FIX[cause][2]
    if cause in ("prefill", "preempt"):
        a, b = _median_from_above(summaries, rung, "ttft_p50")
        return f"TTFT p50 {a:.0f} -> {b:.0f} ms"
    if cause == "gc":
        pauses = [max(s["gen2_startup_ms"], default=0.0) for s in _rung_runs(summaries, "+gc.freeze")]
        return f"one start-up collection of {_cell(pauses)} ms"
    if cause == "tok":
        a, b = _median_from_above(summaries, rung, "itl_p99")
        return f"a worker process on the same cores; p99 {a:.1f} -> {b:.1f} ms"
    return "captured graphs for more sizes (memory and start-up on a GPU; nothing to pay here)"


def cause_table(summaries) -> pd.DataFrame:
    """The article's closing table, with this build's numbers: where each cause sat at
    baseline, its share of tail time there and after its fix, and what the fix cost."""
    bands = cause_bands(summaries, FIRST)
    base = _rung_runs(summaries, FIRST)
    rows = []
    for cause, (seen, fix, rung) in CAUSE_FIX.items():
        after = _rung_runs(summaries, rung)
        rows.append({
            "cause": cause, "where it sat (baseline)": band_text(bands.loc[cause]),
            "tail share, baseline": _cell([100 * s["tail_share"][cause] for s in base], "{:.1f}%"),
            "how it is seen": seen, "fix": fix, "rung": rung,
            "tail share after the fix": _cell([100 * s["tail_share"][cause] for s in after], "{:.1f}%"),
            "what the fix cost here": fix_cost(summaries, cause) if after else "-",
        })
    return pd.DataFrame(rows).set_index("cause")


# ---------------------------------------------------------------- side by side with the article
def ladder_side_by_side(summaries) -> pd.DataFrame:
    """Median [min-max] per rung and metric: the article's and this build's."""
    from .tables import METRIC_NAMES, ladder_table, median_range_cells
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
    from .tables import tail_share_table
    ours = tail_share_table(summaries, order=[r for r in A.TAIL_SHARE if any(s["rung"] == r for s in summaries)])
    rows = []
    for rung, shares in A.TAIL_SHARE.items():
        row = {"rung": rung}
        for lab, v in shares.items():
            row[(lab, "article")] = f"{100 * v:.1f}%"
            row[(lab, "here")] = f"{100 * ours.loc[rung, lab]:.1f}%" if rung in ours.index else "-"
        rows.append(row)
    out = pd.DataFrame(rows).set_index("rung")
    out.columns = pd.MultiIndex.from_tuples(out.columns)
    return out
