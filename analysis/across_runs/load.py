"""Offered load, computed one way for every page: the decode tokens per second the
arrivals ask for (rate x the workload's mean output tokens per request) over the
capacity this build measured (its calibration's decode tokens per second with the
queue never empty). The operating point (reproducing) and the overload sidebar both
read it from here, so the two pages cannot give one rate two loads."""
from __future__ import annotations

import math

from ..engine_link import Workload


def mean_output_tokens() -> float:
    """The workload's mean output tokens per request (what calibration divides by)."""
    return float(Workload().mean_output_tokens())


def offered_load(rate: float, capacity_tokens_per_s: float | None,
                 mean_out: float | None = None) -> float:
    """rate x mean output tokens / measured capacity; NaN when the capacity is unknown
    (a rate given by hand, with no calibration behind it)."""
    if not capacity_tokens_per_s or not rate == rate:
        return math.nan
    if not capacity_tokens_per_s > 0:
        raise ValueError(f"capacity_tokens_per_s must be positive, got {capacity_tokens_per_s}")
    return float(rate) * float(mean_out if mean_out else mean_output_tokens()) / float(capacity_tokens_per_s)
