"""The article's operating point: what its baseline runs looked like, with sources.

All figures are from "Anatomy of a Decode-Step Stall" (corrected version, 8 Oct 2026),
five baseline runs (seeds 1-5) of 60 s at 6.5 req/s on a 2-core VM. Calibration
(engine/runs/calibrate.py) searches this machine's rate until the baseline's signature
lands in REGIME; the book sets this build's baseline runs beside ARTICLE_BASELINE.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

RATE = 6.5                     # req/s ("Why 6.5 req/s")
DURATION_S = 60.0
SEEDS = (1, 2, 3, 4, 5)
OVERLOAD_RATE = 10.0           # its first rerun, past capacity (the overload sidebar)
TYPICAL_PREEMPTIONS = (142, 318)   # "44 preemptions instead of 142-318": the four runs without the light trace
LIGHT_TRACE_PREEMPTIONS = 44       # run 2 drew a light trace

# Per baseline run, (min, max) unless noted; None where the article does not say.
ARTICLE_BASELINE = {
    "rate": (RATE, RATE),
    "requests": (385, 422),                  # "Each run: 385-422 requests"
    "gaps": (112_000, 116_000),              # "... and 112,000-116,000 inter-token gaps"
    "preemptions": (LIGHT_TRACE_PREEMPTIONS, TYPICAL_PREEMPTIONS[1]),
    "preemptions_typical": TYPICAL_PREEMPTIONS,
    "eager_steps": (207, 1087),              # "207-1,087 at baseline" (fallback steps)
    "gen2_serving_ms": (137, 242),           # "Generation-2 pauses during serving ... 137-242 ms"
    "ttft_p50_overloaded_s": (2.0, 17.0),    # the overload sidebar: "TTFT p50 of 2-17 seconds"
    "forward_ms_batch32": 12.8,              # its microbenchmark on the reported runs' VM
    "itl_p50_ms": (10.5, 16.0),              # fix ladder, baseline p50: "13.7 [10.5-16.0]"
    "itl_p50_median_ms": 13.7,
}


@dataclass(frozen=True)
class Band:
    """The target of calibration: the median over check seeds of the baseline's
    preemptions per 60 s of arrivals inside [low, high], with queues that drain."""
    low: float = float(TYPICAL_PREEMPTIONS[0])     # the article's four ordinary baseline runs, per 60 s
    high: float = float(TYPICAL_PREEMPTIONS[1])
    max_ttft_p50_s: float = ARTICLE_BASELINE["ttft_p50_overloaded_s"][0]  # its overloaded runs never drained
    source: str = (f"article baseline, {len(SEEDS)} x {DURATION_S:g} s at {RATE:g} req/s: "
                   f"{TYPICAL_PREEMPTIONS[0]}-{TYPICAL_PREEMPTIONS[1]} preemptions per run "
                   f"(one light trace: {LIGHT_TRACE_PREEMPTIONS}); overloaded runs ({OVERLOAD_RATE:g} req/s) had "
                   "TTFT p50 of {:g}-{:g} s".format(*ARTICLE_BASELINE["ttft_p50_overloaded_s"]))

    def drains(self, ttft_p50_ms: float) -> bool:
        """Whether a median time to first token (ms) is that of a queue that drains."""
        return bool(ttft_p50_ms <= self.max_ttft_p50_s * 1e3)

    def place(self, per_min: float, drains: bool) -> str:
        """'in band', 'below' or 'above' (a queue that does not drain counts as above)."""
        if not drains or per_min > self.high:
            return "above"
        return "below" if per_min < self.low else "in band"


BAND = Band()


@dataclass(frozen=True)
class Regime:
    """The article's regime as a baseline signature (engine/runs/regime.py computes it),
    judged in two stages. Onto the cliff: how full a typical step is, the median gap over
    the batch-32 forward pass, which jumps as the load crosses the cliff and then
    saturates (the article: 13.7 / 12.8 = 1.07, against its microbenchmark; here against
    each run's own forward pass, engine/runs/regime.IN_RUN), within [low, high] times the
    article's ratio, with queues that drain. Along it: the KV pool's pressure, preemptions per 60 s
    in the article's band, which keeps climbing with load. A signature below the first
    stage is below whatever its preemptions say; only one on the cliff is placed by them."""
    fullness: float = ARTICLE_BASELINE["itl_p50_median_ms"] / ARTICLE_BASELINE["forward_ms_batch32"]
    fullness_low: float = 0.8                # done-when of the regime target: 0.8-1.25 of the article's
    fullness_high: float = 1.25              # ratio, about the article's own seed spread (10.5-16.0 ms)
    band: Band = BAND
    source: str = ("article fix ladder: baseline ITL p50 {:g} ms (runs {:.1f}-{:.1f}) against its batch-32 "
                   "forward pass of {:g} ms; eager steps {:,}-{:,} per run; preemptions as in Band").format(
        ARTICLE_BASELINE["itl_p50_median_ms"], *ARTICLE_BASELINE["itl_p50_ms"],
        ARTICLE_BASELINE["forward_ms_batch32"], *ARTICLE_BASELINE["eager_steps"])

    @property
    def fullness_range(self) -> tuple[float, float]:
        return self.fullness * self.fullness_low, self.fullness * self.fullness_high

    def stage(self, sig: dict) -> tuple[str, str]:
        """(place, the statistic that decided it): 'below', 'in band' or 'above'."""
        lo, hi = self.fullness_range
        drains = self.band.drains(sig["ttft_p50_ms"])
        if not drains:
            return "above", "drain"
        f = sig["fullness"]
        if not math.isfinite(f):
            raise ValueError("a regime signature needs its fullness (the median gap over a measured "
                             "batch-32 forward pass); this one has none")
        if f < lo:
            return "below", "fullness"
        if f > hi:
            return "above", "fullness"
        return self.band.place(sig["preemptions_per_min"], drains), "preemptions"

    def place(self, sig: dict) -> str:
        return self.stage(sig)[0]


REGIME = Regime()
