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

import pandas as pd

from . import article as A
from .criteria import (CLEAN_FORWARD_MIN, COLLAPSE, FALLS, GRAPH_TAIL_MAX, MAJORITY, P50_FLAT, RECONCILE_MAX_MS,
                       TAIL_FORWARD_MAX, TOK_TAIL_MAX, fraction_words)
from .finding_checks import (_budget, _compact, _count_time, _eager, _end_to_end, _fwd_clean, _fwd_tail,
                             _gc_freeze, _graph_body, _graph_tail, _graphs48, _in_tail, _p50_flat,
                             _preempt_majority, _preempted, _prefill_count, _reconcile, _skipped,
                             _tok_off, _watermark_preempt, _watermark_ttft)
from .finding_verdicts import (_is_none, failed_sentence, verdict, verdict_counts,  # noqa: F401 (the API)
                               verdict_word, verdicts)
from .overload_findings import overload_findings
from .rungs import BUDGET_256, COMPACT_HISTORY, FIRST, GC_FREEZE, GRAPHS_48, LAST, TOKENIZE_OFF_LOOP
from .select import rung_rows as _rung
from .tables import summaries_frame
from .verdicts import finding_text, finding_word, fired_reason
from .wording import exact_pct, sci

HALF, HALVES = fraction_words(COLLAPSE)


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


FINDINGS = [   # what the article measured for each: article.MEASURED[key]
    Finding("fwd_clean", "a typical gap is almost all forward pass",
            f"every baseline run's median forward share of clean gaps >= {exact_pct(CLEAN_FORWARD_MIN)}",
            _fwd_clean),
    Finding("fwd_tail", "a tail gap is mostly not forward pass",
            f"every baseline run's median forward share of tail gaps <= {exact_pct(TAIL_FORWARD_MAX)}",
            _fwd_tail),
    Finding("preempt_majority", "preemption holds most baseline tail time",
            f"more than half the baseline runs have preempt > {exact_pct(MAJORITY)} of tail time",
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
            f"graph < {exact_pct(GRAPH_TAIL_MAX)} of tail time in every baseline run",
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
            f"last rung's median p99.9 below {HALF} the baseline's",
            _end_to_end("itl_p999", COLLAPSE), needs=(FIRST, LAST)),
    Finding("max_end", "the ladder collapses the worst gap",
            f"last rung's median max below {HALF} the baseline's",
            _end_to_end("itl_max", COLLAPSE), needs=(FIRST, LAST)),
    Finding("p50_flat", "the median ITL barely moves",
            f"ratio of median p50s between {P50_FLAT[0]:g} and {P50_FLAT[1]:g}",
            _p50_flat, needs=(FIRST, LAST)),
    Finding("gc_freeze", "gc.freeze shortens full collections while serving",
            f"median largest serving gen-2 pause at least {HALVES}",
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
            f"tokenizer < {exact_pct(TOK_TAIL_MAX)} of tail time in every run",
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
            f"largest |gap - sum of parts| < {sci(RECONCILE_MAX_MS)} ms",
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
