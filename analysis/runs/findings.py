"""The reproduction report: each headline finding of the article next to this build's
number, with a stated criterion for whether the finding held here.

A criterion is a rule about runs (never about pooled gaps), written down before it is
applied, so "held" is computed, not judged. A finding about a mechanism is testable
only where the mechanism fired in as many runs as its criterion needs (no preemption in
a 3 s smoke run leaves "preemption holds most of the tail" untested, not failed); the
table then says so, with the count. The verdict words are verdicts.py's, computed here
once: the summary, the report and the takeaways read them from this table.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd

from ..core.schemes import CAUSES
from . import article as A
from .criteria import CLEAN_FORWARD_MIN, COLLAPSE, FALLS, MAJORITY, P50_FLAT, TAIL_FORWARD_MAX, pct
from .overload import overload_findings
from .rungs import BUDGET_256, COMPACT_HISTORY, FIRST, GC_FREEZE, GRAPHS_48, LAST, TOKENIZE_OFF_LOOP
from .select import rung_rows as _rung
from .tables import summaries_frame
from .text import ms as _ms, pct as _pct, span as _span
from .verdicts import UNTESTABLE, finding_predicate, finding_text, finding_word, fired_reason


@dataclass(frozen=True)
class Finding:
    key: str
    claim: str               # the article's finding, in short
    criterion: str           # the rule applied to this build's runs
    compute: Callable        # frame -> (here: str, held: bool | None, value: float);
                             # held None: the runs never produced the events the claim is about
    needs: tuple = (FIRST,)  # rungs whose runs the claim is about
    idle: str = ""           # why held is None when compute says so: the mechanism that never fired
    fired: tuple | None = None  # (rung, frame -> bool per run, the mechanism in words, how many
                                #  runs the criterion needs: "any" or "majority")


def _need(rule: str, n: int) -> int:
    return 1 if rule == "any" else n // 2 + 1


def _gate(f: Finding, frame) -> str:
    """'' when the finding's mechanism fired in enough runs, else why not, with the count."""
    if f.fired is None:
        return ""
    rung, did, what, rule = f.fired
    rows = _rung(frame, rung)
    k, n = int(did(rows).sum()), len(rows)
    need = _need(rule, n)
    where = "baseline" if rung == FIRST else f"{rung}"
    return "" if k >= need else fired_reason(what, k, n, need, where)


def _preempted(rows):
    return rows["preemptions"] > 0


def _eager(rows):
    return rows["eager_steps"] > 0


def _median(frame, rung, col) -> float:
    sub = _rung(frame, rung)[col]
    return float(sub.median()) if len(sub) else float("nan")


def _largest_gen2(frame, rung) -> list[float]:
    return [max(p) if len(p) else 0.0 for p in _rung(frame, rung)["gen2_serving_ms"]]


def _fwd_clean(f):
    v = _rung(f, FIRST)["fwd_share_clean_median"]
    return _span(v), bool(len(v) and v.min() >= CLEAN_FORWARD_MIN), float(v.median())


def _fwd_tail(f):
    v = _rung(f, FIRST)["fwd_share_tail_median"]
    return _span(v), bool(len(v) and v.max() <= TAIL_FORWARD_MAX), float(v.median())


def _preempt_majority(f):
    v = _rung(f, FIRST)["tail_share_preempt"]
    k = int((v > MAJORITY).sum())
    return (f"{k} of {len(v)} runs ({_span(v)})", k > len(v) / 2, float(k))


def _prefill_count(f):
    b = _rung(f, FIRST)
    counts = b[[f"tail_count_{c}" for c in CAUSES]].to_numpy()
    top = counts.argmax(axis=1) == CAUSES.index("prefill")
    k = int(top.sum())
    return (f"prefill led by count in {k} of {len(b)} runs", bool(len(b) and k == len(b)), float(k))


def _leaders(b):
    """Per run: the cause with the most tail gaps and the cause with the most tail time
    (None where no cause reached the tail)."""
    counts = b[[f"tail_count_{c}" for c in CAUSES]].to_numpy()
    times = b[[f"tail_share_{c}" for c in CAUSES]].to_numpy()
    by_count = [CAUSES[i] if row.max() > 0 else None for i, row in zip(counts.argmax(axis=1), counts)]
    by_time = [CAUSES[i] if row.max() > 0 else None for i, row in zip(times.argmax(axis=1), times)]
    return by_count, by_time


def _in_tail(rows):
    return rows[[f"tail_share_{c}" for c in CAUSES]].gt(0).sum(axis=1) >= 2


def _count_time(f):
    by_count, by_time = _leaders(_rung(f, FIRST))
    k = sum(a is not None and b is not None and a != b for a, b in zip(by_count, by_time))
    n = len(by_count)
    pairs = sorted({f"{a} by count, {b} by time" for a, b in zip(by_count, by_time)
                    if a is not None and b is not None and a != b})
    here = f"leaders differ in {k} of {n} runs" + (f" ({'; '.join(pairs)})" if pairs else "")
    return here, bool(n and k > n / 2), float(k)


def _no_fallback(f) -> bool:
    """No baseline step ran off the captured path: the graph findings have nothing to judge."""
    return not (_rung(f, FIRST)["eager_steps"] > 0).any()


def _graph_tail(f):
    v = _rung(f, FIRST)["tail_share_graph"]
    if _no_fallback(f):
        return _span(v), None, float(v.median())
    return _span(v), bool(len(v) and v.max() < 0.01), float(v.median())


def _graph_body(f):
    b = _rung(f, FIRST)
    tail, body = b["tail_share_graph"].median(), b["all_share_graph"].median()
    if not (body > 0 or tail > 0):
        here = "no gap time at all, tail or not"
    else:
        here = f"{_share(body)} of all gap time vs {_share(tail)} of tail time"
    return here, None if _no_fallback(f) else bool(body >= tail), float(body)


def _share(x) -> str:
    """A share, with enough digits that a small one does not print as 0.0%."""
    return _pct(x) if x == 0 or abs(x) >= 0.001 else f"{100 * x:.1g}%"


def _end_to_end(metric, factor):
    def compute(f):
        a, b = _median(f, FIRST, metric), _median(f, LAST, metric)
        return f"{_ms(a)} -> {_ms(b)}", bool(b < factor * a), b / a
    return compute


def _p50_flat(f):
    a, b = _median(f, FIRST, "itl_p50"), _median(f, LAST, "itl_p50")
    return f"{_ms(a)} -> {_ms(b)}", bool(P50_FLAT[0] <= b / a <= P50_FLAT[1]), b / a


def _gc_freeze(f):
    a, b = _largest_gen2(f, FIRST), _largest_gen2(f, GC_FREEZE)
    ma, mb = (float(np.median(x)) if x else float("nan") for x in (a, b))
    here = f"largest serving gen-2 pause {_span(a, _ms)} -> {_span(b, _ms)}"
    if not ma > 0:
        return here, None, float("nan")        # no full collection to shorten
    return here, bool(mb < COLLAPSE * ma), mb / ma


def _compact(f):
    a, b = _rung(f, GC_FREEZE)["gc_counts_0"], _rung(f, COMPACT_HISTORY)
    gen2_runs = int(sum(len(p) > 0 for p in b["gen2_serving_ms"]))
    here = (f"gen-0 collections {_span(a, lambda x: f'{x:.0f}')} -> "
            f"{_span(b['gc_counts_0'], lambda x: f'{x:.0f}')}; runs with a serving gen-2 pause: {gen2_runs}")
    held = bool(len(b) and b["gc_counts_0"].median() * FALLS < a.median() and gen2_runs == 0)
    return here, held, float(b["gc_counts_0"].median())


def _graphs48(f):
    a, b = _rung(f, COMPACT_HISTORY)["eager_steps"], _rung(f, GRAPHS_48)["eager_steps"]
    here = f"eager steps {_span(a, lambda x: f'{x:.0f}')} -> {_span(b, lambda x: f'{x:.0f}')}"
    if not (len(a) and a.max() > 0):
        return here, None, float("nan")        # nothing ran eager before the fix
    return here, bool(len(b) and b.max() == 0), float(b.max()) if len(b) else float("nan")


def _budget(f):
    a, b = _median(f, GRAPHS_48, "itl_p99"), _median(f, BUDGET_256, "itl_p99")
    return f"median p99 {_ms(a)} -> {_ms(b)}", bool(b < a), b / a


def _tok_off(f):
    a, v = _rung(f, BUDGET_256)["tail_share_tok"], _rung(f, TOKENIZE_OFF_LOOP)["tail_share_tok"]
    here = f"tokenizer tail share {_span(a)} -> {_span(v)}"
    if not (len(a) and a.max() > 0):
        return here, None, float("nan")        # the tokenizer never reached the tail before
    return here, bool(len(v) and v.max() < 0.001), float(v.max())


def _watermark_preempt(f):
    a, b = _rung(f, TOKENIZE_OFF_LOOP)["preemptions"], _rung(f, LAST)["preemptions"]
    num = lambda x: f"{x:.0f}"
    here = f"preemptions per run {_span(a, num)} -> {_span(b, num)}"
    if not a.median() > 0:
        return here, None, float("nan")        # nothing to prevent
    return here, bool(len(b) and b.median() * FALLS <= a.median()), float(b.median())


def _watermark_ttft(f):
    a = _rung(f, TOKENIZE_OFF_LOOP).set_index("seed")["ttft_p50"]
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


FINDINGS = [   # what the article measured for each: article.MEASURED[key]
    Finding("fwd_clean", "a typical gap is almost all forward pass",
            f"every baseline run's median forward share of clean gaps >= {pct(CLEAN_FORWARD_MIN)}",
            _fwd_clean),
    Finding("fwd_tail", "a tail gap is mostly not forward pass",
            f"every baseline run's median forward share of tail gaps <= {pct(TAIL_FORWARD_MAX)}",
            _fwd_tail),
    Finding("preempt_majority", "preemption holds most baseline tail time",
            f"more than half the baseline runs have preempt > {pct(MAJORITY)} of tail time",
            _preempt_majority, fired=(FIRST, _preempted, "preemption", "majority")),
    Finding("prefill_count", "by count, prefill is the primary cause of more tail gaps than any other cause",
            "prefill has the most tail gaps of any cause in every baseline run",
            _prefill_count),
    Finding("count_time", "count and time disagree: the cause behind the most tail gaps is not the one "
            "holding the most tail time",
            "in more than half the baseline runs the cause with the most tail gaps differs from the "
            "cause with the most tail time",
            _count_time, fired=(FIRST, _in_tail, "more than one cause in the tail", "majority")),
    Finding("graph_tail", "graph misses hold next to none of the tail time",
            "graph < 1% of tail time in every baseline run",
            _graph_tail, idle="no baseline decode step ran off the captured path",
            fired=(FIRST, _eager, "a decode step off the captured path", "any")),
    Finding("graph_body", "graph misses are a body effect, not a tail one",
            "median graph share of all time >= of tail time",
            _graph_body, idle="no baseline decode step ran off the captured path",
            fired=(FIRST, _eager, "a decode step off the captured path", "any")),
    Finding("p99_end", "the ladder lowers p99",
            "last rung's median p99 below the baseline's",
            _end_to_end("itl_p99", 1.0), needs=(FIRST, LAST)),
    Finding("p999_end", "the ladder collapses p99.9",
            "last rung's median p99.9 below half the baseline's",
            _end_to_end("itl_p999", COLLAPSE), needs=(FIRST, LAST)),
    Finding("max_end", "the ladder collapses the worst gap",
            "last rung's median max below half the baseline's",
            _end_to_end("itl_max", COLLAPSE), needs=(FIRST, LAST)),
    Finding("p50_flat", "the median ITL barely moves",
            f"ratio of median p50s between {P50_FLAT[0]:g} and {P50_FLAT[1]:g}",
            _p50_flat, needs=(FIRST, LAST)),
    Finding("gc_freeze", "gc.freeze shortens full collections while serving",
            "median largest serving gen-2 pause at least halves",
            _gc_freeze, needs=(FIRST, GC_FREEZE),
            idle="no full (gen-2) collection ran while serving at baseline",
            fired=(FIRST, lambda r: r["gen2_serving_ms"].map(len) > 0, "a full (gen-2) collection while serving",
                   "any")),
    Finding("compact", "compact history nearly ends collection",
            f"median gen-0 count falls {FALLS}x and no run has a serving gen-2 pause",
            _compact, needs=(GC_FREEZE, COMPACT_HISTORY)),
    Finding("graphs48", "capturing up to 48 removes eager steps",
            "no eager step in any run of the rung",
            _graphs48, needs=(COMPACT_HISTORY, GRAPHS_48),
            idle="no step ran off the captured path on the rung before",
            fired=(COMPACT_HISTORY, _eager, "a decode step off the captured path", "any")),
    Finding("budget", "a 256-token budget lowers p99",
            "median p99 lower than the rung above",
            _budget, needs=(GRAPHS_48, BUDGET_256)),
    Finding("tok_off", "off-loop tokenization removes tokenizer tail time",
            "tokenizer < 0.1% of tail time in every run",
            _tok_off, needs=(BUDGET_256, TOKENIZE_OFF_LOOP),
            idle="the tokenizer never reached the tail on the rung before",
            fired=(BUDGET_256, lambda r: r["tail_share_tok"] > 0, "tokenizer time in the tail", "any")),
    Finding("watermark_preempt", "the admission watermark nearly ends preemption",
            f"median preemptions fall at least {FALLS}x from a non-zero level",
            _watermark_preempt, needs=(TOKENIZE_OFF_LOOP, LAST),
            idle="no request was preempted on the rung before",
            fired=(TOKENIZE_OFF_LOOP, _preempted, "preemption", "majority")),
    # the watermark holds requests back only under the KV pressure that preempts: with no
    # preemption on the rung before, it had nothing to hold back and no cost to show
    Finding("watermark_ttft", "the watermark's cost is time to first token",
            "TTFT p50 rose in every paired run",
            _watermark_ttft, needs=(TOKENIZE_OFF_LOOP, LAST),
            fired=(TOKENIZE_OFF_LOOP, _preempted, "preemption", "majority")),
    Finding("reconcile", "every gap's parts sum to the gap",
            "largest |gap - sum of parts| < 1e-9 ms",
            _reconcile, needs=()),
    Finding("skipped", "explicit evictions explain every skipped step",
            "no gap skips a step without a recorded eviction",
            _skipped, needs=()),
]


def _missing(needs, present) -> str:
    gone = [r for r in needs if r not in present]
    return f"the rung{'s' * (len(gone) > 1)} {', '.join(gone)} {'are' if len(gone) > 1 else 'is'} not in this build"


def findings(ladder_summaries, overload_summaries=None) -> pd.DataFrame:
    """One row per finding: claim, the article's number, this build's, criterion, held,
    and (where held is None) the reason it could not be tested."""
    frame = summaries_frame(ladder_summaries)
    rows = []
    present = set(frame["rung"].astype(str)) if len(frame) else set()
    for f in FINDINGS:
        reason = ""
        if not set(f.needs) <= present:
            here, held, value = "rung(s) not in this build", None, float("nan")
            reason = _missing(f.needs, present)
        else:
            here, held, value = f.compute(frame)
            reason = _gate(f, frame)
            if reason:
                held = None
            elif held is None:
                reason = f.idle or "its runs never produced the events it is about"
        rows.append({"key": f.key, "claim": f.claim, "article": A.MEASURED[f.key], "this build": here,
                     "criterion": f.criterion, "held": held, "value": value, "reason": reason})
    if overload_summaries:
        rows += overload_findings(summaries_frame(overload_summaries))
    table = pd.DataFrame(rows).set_index("key")
    table["held"] = pd.Series([r["held"] for r in rows], index=table.index, dtype=object)  # True/False/None
    # the verdict, once, for every page that states it
    table["verdict"] = [finding_word(r["held"]) for r in rows]
    table["verdict text"] = [finding_text(r["held"], r["reason"]) for r in rows]
    return table


def _is_none(held) -> bool:
    return held is None or (isinstance(held, float) and np.isnan(held))


def verdict_word(held, reason: str = "") -> str:
    """'held', 'did not hold' or 'was not testable (<reason>)': the predicate of a
    sentence whose subject is the finding ("This finding ...")."""
    return finding_predicate(held, reason)


def verdict(found: pd.DataFrame, key: str) -> str:
    """The verdict of one row of findings(), as the predicate of a sentence about it."""
    reason = found.loc[key, "reason"] if "reason" in found.columns else ""
    return verdict_word(found.loc[key, "held"], reason if isinstance(reason, str) else "")


def verdicts(found: pd.DataFrame) -> pd.Series:
    """Every row's verdict as the table states it: 'held', 'did not hold', 'not testable
    (<reason>)'."""
    if "verdict text" in found.columns:
        return found["verdict text"].astype(object)
    reasons = found["reason"] if "reason" in found.columns else pd.Series("", index=found.index)
    return pd.Series([finding_text(h, r if isinstance(r, str) else "") for h, r in zip(found["held"], reasons)],
                     index=found.index, dtype=object)


def _words(found: pd.DataFrame) -> list[str]:
    if "verdict" in found.columns:
        return list(found["verdict"])
    return [finding_word(None if _is_none(h) else bool(h)) for h in found["held"]]


def verdict_counts(found: pd.DataFrame) -> dict:
    """How many findings held, did not, and could not be tested: one count for every
    chapter that reports them (the summary and the report)."""
    words = _words(found)
    return {"n_findings": len(words), "n_held": words.count("held"), "n_not": words.count("did not hold"),
            "n_untestable": words.count(UNTESTABLE)}


def failed_sentence(found: pd.DataFrame) -> str:
    """The findings that did not hold, named by their claims; and the untestable ones,
    named with why."""
    words = _words(found)
    failed = [found.loc[k, "claim"] for k, w in zip(found.index, words) if w == "did not hold"]
    untested = [f'"{found.loc[k, "claim"]}" ({found.loc[k, "reason"]})' for k, w in zip(found.index, words)
                if w == UNTESTABLE and "reason" in found.columns and found.loc[k, "reason"]]
    tail = (" Not testable here: " + "; ".join(untested) + ".") if untested else ""
    if not failed:
        return ("None did not hold: every finding that could be tested held." if words.count("held")
                else "None could be tested in these runs.") + tail
    return "The ones that did not: " + "; ".join(f'"{c}"' for c in failed) + "." + tail
