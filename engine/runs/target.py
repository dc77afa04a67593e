"""The article's operating point: what its baseline runs looked like, with sources.

All figures are from "Anatomy of a Decode-Step Stall" (corrected version, 8 Oct 2026),
five baseline runs (seeds 1-5) of 60 s at 6.5 req/s on a 2-core VM. Calibration
(engine/runs/calibrate.py) searches this machine's rate until the baseline's signature
lands in BAND; the book sets this build's baseline runs beside ARTICLE_BASELINE.
"""
from __future__ import annotations

from dataclasses import dataclass

RATE = 6.5                     # req/s ("Why 6.5 req/s")
DURATION_S = 60.0
SEEDS = (1, 2, 3, 4, 5)
OVERLOAD_RATE = 10.0           # its first rerun, past capacity (the overload sidebar)

# Per baseline run, (min, max) unless noted; None where the article does not say.
ARTICLE_BASELINE = {
    "rate": (RATE, RATE),
    "requests": (385, 422),                  # "Each run: 385-422 requests"
    "gaps": (112_000, 116_000),              # "... and 112,000-116,000 inter-token gaps"
    "preemptions": (44, 318),                # "44 preemptions instead of 142-318" (run 2 drew 44)
    "preemptions_typical": (142, 318),       # the four runs that did not draw the light trace
    "eager_steps": (207, 1087),              # "207-1,087 at baseline" (fallback steps)
    "gen2_serving_ms": (137, 242),           # "Generation-2 pauses during serving ... 137-242 ms"
    "ttft_p50_overloaded_s": (2.0, 17.0),    # the overload sidebar: "TTFT p50 of 2-17 seconds"
    "forward_ms_batch32": 12.8,              # its microbenchmark on the reported runs' VM
}


@dataclass(frozen=True)
class Band:
    """The target of calibration: the median over check seeds of the baseline's
    preemptions per 60 s of arrivals inside [low, high], with queues that drain."""
    low: float = 142.0          # the article's four ordinary baseline runs: 142-318 per 60 s
    high: float = 318.0
    max_ttft_p50_s: float = 2.0 # its overloaded runs had TTFT p50 >= 2 s and never drained
    source: str = ("article baseline, 5 x 60 s at 6.5 req/s: 142-318 preemptions per run "
                   "(one light trace: 44); overloaded runs (10 req/s) had TTFT p50 of 2-17 s")

    def place(self, per_min: float, drains: bool) -> str:
        """'in band', 'below' or 'above' (a queue that does not drain counts as above)."""
        if not drains or per_min > self.high:
            return "above"
        return "below" if per_min < self.low else "in band"


BAND = Band()
