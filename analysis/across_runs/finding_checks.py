"""The rules the article's findings are judged by (findings.FINDINGS), one function per
finding: a frame of run summaries -> (this build's figure, held: bool | None, value), and
the predicates that say whether a finding's mechanism fired in a run."""
from __future__ import annotations

import numpy as np

from ..core.schemes import CAUSES
from .criteria import (CLEAN_FORWARD_MIN, COLLAPSE, FALLS, GRAPH_TAIL_MAX, MAJORITY, P50_FLAT, RECONCILE_MAX_MS,
                       TAIL_FORWARD_MAX, TOK_TAIL_MAX)
from .rungs import BUDGET_256, COMPACT_HISTORY, FIRST, GC_FREEZE, GRAPHS_48, LAST, TOKENIZE_OFF_LOOP
from .select import rung_median, rung_rows as _rung
from .wording import ms as _ms, share_pct, span as _span


def _preempted(rows):
    return rows["preemptions"] > 0


def _eager(rows):
    return rows["eager_steps"] > 0


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
    return _span(v), bool(len(v) and v.max() < GRAPH_TAIL_MAX), float(v.median())


def _graph_body(f):
    b = _rung(f, FIRST)
    tail, body = b["tail_share_graph"].median(), b["all_share_graph"].median()
    if not (body > 0 or tail > 0):
        here = "no gap time at all, tail or not"
    else:
        here = f"{share_pct(body)} of all gap time vs {share_pct(tail)} of tail time"
    return here, None if _no_fallback(f) else bool(body >= tail), float(body)


def _end_to_end(metric, factor):
    def compute(f):
        a, b = rung_median(f, FIRST, metric), rung_median(f, LAST, metric)
        return f"{_ms(a)} -> {_ms(b)}", bool(b < factor * a), b / a
    return compute


def _p50_flat(f):
    a, b = rung_median(f, FIRST, "itl_p50"), rung_median(f, LAST, "itl_p50")
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
    a, b = rung_median(f, GRAPHS_48, "itl_p99"), rung_median(f, BUDGET_256, "itl_p99")
    return f"median p99 {_ms(a)} -> {_ms(b)}", bool(b < a), b / a


def _tok_off(f):
    a, v = _rung(f, BUDGET_256)["tail_share_tok"], _rung(f, TOKENIZE_OFF_LOOP)["tail_share_tok"]
    here = f"tokenizer tail share {_span(a)} -> {_span(v)}"
    if not (len(a) and a.max() > 0):
        return here, None, float("nan")        # the tokenizer never reached the tail before
    return here, bool(len(v) and v.max() < TOK_TAIL_MAX), float(v.max())


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
    return f"{worst:.1e} ms over {len(f)} runs", bool(worst < RECONCILE_MAX_MS), worst


def _skipped(f):
    n = int(f["skipped_steps_without_eviction"].sum())
    return f"{n} gaps", n == 0, float(n)
