"""The article's reported numbers, for side-by-side comparison with this build.

Transcribed from "Anatomy of a Decode-Step Stall" (corrected version, 8 Oct 2026):
5 runs x 60 s per rung at 6.5 req/s on a 2-core VM (Python 3.13, forward pass at
batch 32: 12.8 ms). Medians with [min, max] across the five runs, in ms unless noted.
"""
from __future__ import annotations

from ..core.schemes import CAUSES
from ..engine_link import target as _target
from .wording import pct_range
from .rungs import (ADMIT_WATERMARK, BASELINE, BUDGET_256, COMPACT_HISTORY, GC_FREEZE, GRAPHS_48,
                    TOKENIZE_OFF_LOOP)

# The operating point (rate, runs, the baseline signature) is kept once, in
# engine/runs/target.py, which calibration aims at; these names read it from there.
RATE = _target.RATE                     # req/s, after recalibrating from 10 on a slower VM
OVERLOAD_RATE = _target.OVERLOAD_RATE
FORWARD_MS_BATCH32 = _target.ARTICLE_BASELINE["forward_ms_batch32"]   # (v1's VM: 5.6)
SEEDS = _target.SEEDS
DURATION_S = _target.DURATION_S

# The environment the article printed under "Reproducing This" (its collector thresholds
# are not printed: (2000, 10, 10) is CPython 3.13's default, which its 3.13.16 ran with
# unless it changed them, and it says of no such change).
ENVIRONMENT = {"cpu_model": "Intel Xeon @ 2.80 GHz (cloud VM)", "cores": "2", "python": "3.13.16",
               "gc_threshold": "(2000, 10, 10) (CPython 3.13's default; not printed)",
               "numpy": "2.5.3", "blas": "OpenBLAS 0.3.34", "tokenizers": "0.23.2",
               "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
GC_THRESHOLD_313 = (2000, 10, 10)

# Fix ladder: metric -> (median, min, max)
LADDER = {
    BASELINE:          {"itl_p50": (13.7, 10.5, 16.0), "itl_p99": (47.0, 30.9, 62.8),
                        "itl_p999": (950, 149, 7395), "itl_max": (9466, 895, 12764)},
    GC_FREEZE:         {"itl_p50": (14.3, 7.9, 14.7), "itl_p99": (49.0, 27.0, 60.7),
                        "itl_p999": (581, 112, 953), "itl_max": (3805, 368, 6100)},
    COMPACT_HISTORY:   {"itl_p50": (11.3, 6.0, 14.7), "itl_p99": (40.4, 21.6, 49.2),
                        "itl_p999": (258, 56, 827), "itl_max": (2268, 451, 5165)},
    GRAPHS_48:         {"itl_p50": (12.3, 10.6, 14.0), "itl_p99": (37.3, 31.9, 50.6),
                        "itl_p999": (234, 122, 447), "itl_max": (2971, 1295, 3824)},
    BUDGET_256:        {"itl_p50": (12.6, 9.4, 14.8), "itl_p99": (29.5, 25.2, 32.7),
                        "itl_p999": (149, 54, 542), "itl_max": (1933, 612, 2646)},
    TOKENIZE_OFF_LOOP: {"itl_p50": (12.5, 10.8, 15.5), "itl_p99": (29.6, 26.3, 39.0),
                        "itl_p999": (133, 53, 967), "itl_max": (2698, 889, 4210)},
    ADMIT_WATERMARK:   {"itl_p50": (12.0, 10.4, 14.1), "itl_p99": (27.8, 24.2, 32.5),
                        "itl_p999": (50, 31, 70), "itl_max": (108, 39, 651)},
}

# Median tail-time share per rung (fractions), labels in the article scheme.
TAIL_SHARE = {
    BASELINE:          {"prefill": .124, "preempt": .771, "graph": .002, "gc": .021, "tok": .036, "kernel": .028, "residual": .002},
    GC_FREEZE:         {"prefill": .140, "preempt": .706, "graph": .001, "gc": .016, "tok": .057, "kernel": .057, "residual": .002},
    COMPACT_HISTORY:   {"prefill": .231, "preempt": .590, "graph": .002, "gc": .000, "tok": .074, "kernel": .083, "residual": .003},
    GRAPHS_48:         {"prefill": .305, "preempt": .490, "graph": .000, "gc": .000, "tok": .066, "kernel": .098, "residual": .005},
    BUDGET_256:        {"prefill": .120, "preempt": .560, "graph": .000, "gc": .000, "tok": .089, "kernel": .257, "residual": .003},
    TOKENIZE_OFF_LOOP: {"prefill": .085, "preempt": .632, "graph": .000, "gc": .000, "tok": .000, "kernel": .274, "residual": .008},
    ADMIT_WATERMARK:   {"prefill": .347, "preempt": .002, "graph": .000, "gc": .000, "tok": .000, "kernel": .632, "residual": .019},
}

# Baseline, per run (seeds 1-5): p99 (ms) and where tail time went (fractions).
BASELINE_RUNS = [
    {"seed": 1, "itl_p99": 30.9, "prefill": .230, "preempt": .572, "graph": .004, "gc": .044, "tok": .036, "kernel": .110, "residual": .004},
    {"seed": 2, "itl_p99": 34.1, "prefill": .452, "preempt": .122, "graph": .007, "gc": .076, "tok": .099, "kernel": .236, "residual": .008},
    {"seed": 3, "itl_p99": 50.3, "prefill": .035, "preempt": .932, "graph": .002, "gc": .008, "tok": .012, "kernel": .010, "residual": .000},
    {"seed": 4, "itl_p99": 47.0, "prefill": .053, "preempt": .900, "graph": .001, "gc": .016, "tok": .010, "kernel": .019, "residual": .001},
    {"seed": 5, "itl_p99": 62.8, "prefill": .124, "preempt": .771, "graph": .002, "gc": .021, "tok": .053, "kernel": .028, "residual": .002},
]
FWD_SHARE_CLEAN = (0.98, 0.98)            # min, max of the per-run median, baseline
FWD_SHARE_TAIL = (0.09, 0.29)
GRAPH_ALL_TIME_SHARE = (0.017, 0.013, 0.041)   # median, min, max of all gap time
PREEMPTIONS_BASELINE = _target.ARTICLE_BASELINE["preemptions"]   # per run, range (run 2 drew 44)
TAIL_TOKENS_BY_PREFILL = (649, 880)       # tail tokens whose primary cause was prefill, of ~1,150
TAIL_TOKENS_PER_RUN = 1150                # about, per baseline run
GEN2_SERVING_MS = {BASELINE: _target.ARTICLE_BASELINE["gen2_serving_ms"], GC_FREEZE: (30, 90)}
GEN2_STARTUP_MS_FROZEN = (107, 167)
GEN0_COUNTS = {GC_FREEZE: (380, 400), COMPACT_HISTORY: (20, 44)}
EAGER_STEPS = {BASELINE: _target.ARTICLE_BASELINE["eager_steps"], COMPACT_HISTORY: (0, 983), GRAPHS_48: (0, 0)}
PREEMPTIONS = {TOKENIZE_OFF_LOOP: (23, 346), ADMIT_WATERMARK: (0, 7)}
RECONCILE_MAX_ERR_MS = 5.7e-14
SKIPPED_WITHOUT_EVICTION = 0              # gaps that skip a step with no recorded eviction
TTFT_P50_ROSE = (5, 5)                    # watermark: runs whose TTFT p50 rose, of paired runs
OVERLOAD = {"baseline_preempt_tail_share": (0.67, 0.96), "middle_rungs_p999_ms": (593, 3177),
            "p999_before_watermark_ms": 1022, "p999_after_watermark_ms": 56,
            "ttft_p50_s": (2, 17)}

# Not in the article: this project's reference measurement of the article's own engine with
# an unbounded KV pool (zero evictions), share of all gap time its tags charged to preempt.
UNBOUNDED_POOL_PREEMPT_SHARE = 0.005


# ---------------------------------------------------------------- the same, as the report quotes it
def protocol_text() -> str:
    """The article's protocol in words, e.g. '5 runs of 60 s at 6.5 req/s per rung'."""
    return f"{len(SEEDS)} runs of {DURATION_S:g} s at {RATE:g} req/s per rung"


def _median_step(metric, before, after, digits) -> str:
    a, b = LADDER[before][metric][0], LADDER[after][metric][0]
    return f"median {a:,.{digits}f} -> {b:,.{digits}f} ms"


_PREEMPT = [r["preempt"] for r in BASELINE_RUNS]
_MAJORITY = [p for p in _PREEMPT if p > 0.5]
_GRAPH = [r["graph"] for r in BASELINE_RUNS]
# by count prefill led the tail in every baseline run; by time, each run's largest cause
_TIME_LEADERS = [max(CAUSES, key=r.get) for r in BASELINE_RUNS]
_DIFFER = [t for t in _TIME_LEADERS if t != "prefill"]

# finding key -> what the article measured, in the words of the report's table
MEASURED = {
    "fwd_clean": f"{100 * FWD_SHARE_CLEAN[0]:.0f}% in every baseline run",
    "fwd_tail": f"{pct_range(*FWD_SHARE_TAIL)} across baseline runs",
    "preempt_majority": f"{len(_MAJORITY)} of {len(_PREEMPT)} runs ({pct_range(min(_MAJORITY), max(_MAJORITY))})",
    "prefill_count": f"every run ({TAIL_TOKENS_BY_PREFILL[0]}-{TAIL_TOKENS_BY_PREFILL[1]} of "
                     f"~{TAIL_TOKENS_PER_RUN:,} tail gaps)",
    "count_time": (f"leaders differ in {len(_DIFFER)} of {len(BASELINE_RUNS)} runs "
                   f"(prefill by count, {', '.join(sorted(set(_DIFFER)))} by time)"),
    "graph_tail": f"{pct_range(min(_GRAPH), max(_GRAPH), 1)} of tail time",
    "graph_body": f"{100 * GRAPH_ALL_TIME_SHARE[0]:.1f}% of all gap time (median)",
    "p99_end": _median_step("itl_p99", BASELINE, ADMIT_WATERMARK, 1),
    "p999_end": _median_step("itl_p999", BASELINE, ADMIT_WATERMARK, 0),
    "max_end": _median_step("itl_max", BASELINE, ADMIT_WATERMARK, 0),
    "p50_flat": _median_step("itl_p50", BASELINE, ADMIT_WATERMARK, 1),
    "gc_freeze": "{}-{} -> {}-{} ms".format(*GEN2_SERVING_MS[BASELINE], *GEN2_SERVING_MS[GC_FREEZE]),
    "compact": "gen-0 ~{}-{} -> {}-{}; no gen-2".format(*GEN0_COUNTS[GC_FREEZE], *GEN0_COUNTS[COMPACT_HISTORY]),
    "graphs48": "{}-{} -> {} per run".format(*EAGER_STEPS[COMPACT_HISTORY], EAGER_STEPS[GRAPHS_48][1]),
    "budget": _median_step("itl_p99", GRAPHS_48, BUDGET_256, 1),
    "tok_off": f"share -> {TAIL_SHARE[TOKENIZE_OFF_LOOP]['tok']:.0f}",
    "watermark_preempt": "{}-{} -> {}-{} per run".format(*PREEMPTIONS[TOKENIZE_OFF_LOOP], *PREEMPTIONS[ADMIT_WATERMARK]),
    "watermark_ttft": "TTFT p50 rose in {} of {} runs".format(*TTFT_P50_ROSE),
    "reconcile": f"largest error {RECONCILE_MAX_ERR_MS:.1e} ms",
    "skipped": f"{SKIPPED_WITHOUT_EVICTION} unexplained gaps",
    "overload_preempt": f"{pct_range(*OVERLOAD['baseline_preempt_tail_share'])} of tail time",
    "overload_watermark": f"median p99.9 {OVERLOAD['p999_before_watermark_ms']:,} -> "
                          f"{OVERLOAD['p999_after_watermark_ms']:,} ms",
}
