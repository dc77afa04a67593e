"""Per-run summary: every number the article's analysis script reports for a run.

The keys, their order and their types follow that script's JSON output, so the
golden files in tests/data/golden compare key by key.  Conventions worth knowing:
percentiles are numpy's default (linear); the tail is every gap at or above the
run's p99; shares are label time over total gap time (tail or all); a gap's
forward-pass share is kernel / gap; GC pauses that end by the first step's start
happened at startup, the rest while serving.
"""
from __future__ import annotations

import numpy as np
import numpy.ma  # noqa: F401  (np.percentile's first call imports it: np.unique asks if its input is masked)

from .columns import GC, REQ, STEP
from .schemes import CLEAN, GRAPH_EAGER, Scheme, get_scheme
from .runlog import RunLog
from .gaps import CONTEXT_PREFIX, Gaps, as_log, partition_gaps

# ITL histogram bins (ms), lo <= gap < hi; the last bin is open-ended in practice.
HIST_BINS = [0, 5, 10, 15, 20, 30, 50, 80, 120, 200, 400, 800, 1e9]
GC_GENERATIONS = (0, 1, 2)


def summarize(log_or_path, scheme: str | Scheme = "article", gaps=None) -> dict:
    """The run's summary (JSON-able).  ``gaps``: partition_run's frame (or
    partition_gaps' arrays), if already made."""
    sch = get_scheme(scheme)
    log = as_log(log_or_path)
    g = _columns(partition_gaps(log, sch) if gaps is None else gaps, sch)
    gap, parts, code, names = g["gap_ms"], g["parts"], g["code"], g["names"]
    if not len(gap):
        raise ValueError(f"{log.path}: no inter-token gaps to summarize")
    labels, causes = list(sch.labels), list(sch.causes)
    clean = code == names.index(CLEAN)
    forward_share = g["forward"] / gap
    ttft = (log.requests[:, REQ.first_token] - log.requests[:, REQ.arrival]) * 1e3
    all_share = _shares(parts, gap.sum(), labels)
    context = {lab: float(np.sum(g["context"][lab])) for lab in labels}
    # float rounding only (~1e-12 ms): residual is defined as what the rest leaves
    reconcile = _max_abs_error(parts.sum(axis=1), gap)
    skipped = int(np.count_nonzero((g["step1"] > g["step0"] + 1) & (g["n_evictions"] == 0)))
    engine, hist = engine_counts(log), cause_histogram(gap, code, names, causes)
    p50, p90, p99, p999 = np.percentile(gap, [50, 90, 99, 99.9])
    tail = gap >= p99
    cfg = log.config
    return {
        "rung": log.rung,
        "seed": cfg.get("seed"),
        "duration": cfg.get("duration"),
        "requests": int(len(log.requests)),
        "tokens": int(len(log.emissions)),
        "gaps": int(len(gap)),
        "tok_per_s": len(log.emissions) / log.wall,
        "itl_p50": float(p50), "itl_p90": float(p90),
        "itl_p99": float(p99), "itl_p999": float(p999),
        "itl_max": float(gap.max()),
        "ttft_p50": _percentile(ttft, 50), "ttft_p99": _percentile(ttft, 99),
        "tail_share": _shares(parts[tail], gap[tail].sum(), labels),
        "all_share": all_share,
        "tail_count": _count_by(code[tail], names, causes + [CLEAN]),
        "fwd_share_clean_median": _median(forward_share[clean]),
        "fwd_share_tail_median": _median(forward_share[tail]),
        "evicted_context_ms": context,
        "reconcile_max_err_ms": reconcile,
        "skipped_steps_without_eviction": skipped,
        **engine,
        "hist": hist,
    }


def _columns(gaps, sch: Scheme) -> dict:
    """What the summary reads, from partition_gaps' arrays or partition_run's frame
    (the same arrays, in the same memory layout, so every reduction rounds alike)."""
    labels = list(sch.labels)
    if isinstance(gaps, Gaps):
        return {"gap_ms": gaps.row("gap_ms"), "parts": gaps.parts(), "code": gaps.cause,
                "names": gaps.cause_names(), "forward": gaps.row(sch.forward),
                "context": {lab: gaps.row(CONTEXT_PREFIX + lab) for lab in labels},
                "step0": gaps.step0, "step1": gaps.step1, "n_evictions": gaps.n_evictions}
    return {"gap_ms": gaps["gap_ms"].to_numpy(), "parts": gaps[labels].to_numpy(),
            "code": gaps["cause"].cat.codes.to_numpy(), "names": list(gaps["cause"].cat.categories),
            "forward": gaps[sch.forward].to_numpy(),
            "context": {lab: gaps[CONTEXT_PREFIX + lab].to_numpy() for lab in labels},
            "step0": gaps["step0"].to_numpy(), "step1": gaps["step1"].to_numpy(),
            "n_evictions": gaps["n_evictions"].to_numpy()}


def engine_counts(log: RunLog) -> dict:
    """Preemptions, eager steps, largest decode batch and the GC record."""
    st, gcs = log.steps, log.gcs
    first_t0 = st[0, STEP.t0] if len(st) else np.inf
    startup = gcs[:, GC.t1] <= first_t0  # e.g. the gc.collect() before gc.freeze()
    gen2 = gcs[:, GC.generation] == 2
    pause_ms = (gcs[:, GC.t1] - gcs[:, GC.t0]) * 1e3
    return {
        "preemptions": int(st[:, STEP.preempted].sum()),
        "eager_steps": int(np.count_nonzero(st[:, STEP.graph] == GRAPH_EAGER)),
        "max_decode_B": int(st[:, STEP.n_decode].max()) if len(st) else 0,
        "gen2_serving_ms": [round(float(x), 1) for x in pause_ms[gen2 & ~startup]],
        "gen2_startup_ms": [round(float(x), 1) for x in pause_ms[gen2 & startup]],
        "gc_counts": {g: int(np.count_nonzero(gcs[:, GC.generation] == g)) for g in GC_GENERATIONS},
    }


def cause_histogram(gap_ms, code, names, causes, bins=HIST_BINS) -> list[dict]:
    """Gap counts per ITL bin (lo <= gap < hi), split by primary cause.
    ``code`` indexes ``names`` (the cause categories)."""
    # one count over (bin, cause) pairs, each gap's key made in place: key = (bin +
    # 1) * causes + cause, so that a gap below the first bin (bin -1) or past the
    # last lands in a row that is not read
    key = np.searchsorted(np.asarray(bins, dtype=float), gap_ms, side="right")
    n_bins, n_names = len(bins) - 1, len(names)
    key *= n_names
    key += code
    counts = np.bincount(key, minlength=(n_bins + 2) * n_names).reshape(-1, n_names)[1:n_bins + 1]
    keys = list(causes) + [CLEAN]
    return [{"lo": lo, "hi": hi, "n": int(counts[b].sum()),
             **{k: int(counts[b, names.index(k)]) for k in keys}}
            for b, (lo, hi) in enumerate(zip(bins[:-1], bins[1:]))]


def _max_abs_error(got, want) -> float:
    """max |got - want|, computed in ``got``'s memory (a fresh array costs page faults)."""
    np.subtract(got, want, out=got)
    return float(np.abs(got, out=got).max())


def _count_by(code, names, keys) -> dict:
    counts = np.bincount(code.astype(np.intp), minlength=len(names))
    return {k: int(counts[names.index(k)]) for k in keys}


def _shares(parts, total, labels) -> dict:
    sums = parts.sum(axis=0)
    return {lab: float(sums[j] / total) for j, lab in enumerate(labels)}


def _percentile(x, q) -> float:
    return float(np.percentile(x, q)) if len(x) else float("nan")


def _median(x) -> float:
    """Median of ``x``, a scratch copy (a boolean selection) that it may reorder."""
    return float(np.median(x, overwrite_input=True)) if len(x) else float("nan")
