"""Offered load: how many decode tokens per second a set of seeds' traces ask for.

The calibration places the regime with checks on held-out seeds (engine/runs/calibrate.py),
and the ladder then runs other seeds. At one arrival rate two seed sets can ask for
different amounts of work: the output length of each request is drawn per seed, so over
60 s three seeds' traces can ask for 6% fewer decode tokens than five others' (measured
on 2026-12-05: seeds 101-103 at 10.44 req/s asked for 0.93 of the workload's expectation,
seeds 1-5 for 0.99). On a cliff where 10% of load separates a light regime from queues
that do not drain, that is the difference between the two. So the rate the checks found
is carried to other seeds by what the traces ask of the decoder, not by requests per
second: a run protocol (its seeds and length) runs at the rate where its seeds ask for as
many decode tokens per second, on average over the seeds, as the checks' seeds did at the
rate the checks found. This reads the traces only (no run), and keeps each seed's own
variation: one rate serves all the protocol's seeds.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..serve.workload import Workload, arrival_times, request_contents

_BLOCK = 256          # output lengths are drawn (with their texts) in blocks of requests, then cached
MATCH_ITERATIONS = 6  # the arrival count is a step function of the rate: a few fixed-point steps settle it


@lru_cache(maxsize=512)
def _output_lengths(seed: int, blocks: int, wl: Workload) -> np.ndarray:
    return np.array([m for _, m, _ in request_contents(seed, blocks * _BLOCK, wl)], dtype=np.int64)


def output_lengths(seed: int, n: int, wl: Workload = Workload()) -> np.ndarray:
    """The output lengths of a seed's first n requests (the same at every rate)."""
    return _output_lengths(int(seed), -(-int(n) // _BLOCK) or 1, wl)[:int(n)]


def decode_demand(seeds, duration: float, rate: float, wl: Workload = Workload()) -> float:
    """Decode tokens per second the seeds' traces ask for over [0, duration), averaged over
    the seeds."""
    seeds = list(seeds)
    if not seeds or not duration > 0 or not rate > 0:
        raise ValueError(f"decode demand needs seeds, a positive duration and rate; got "
                         f"seeds={seeds!r}, duration={duration!r}, rate={rate!r}")
    asked = [output_lengths(s, len(arrival_times(s, duration, rate, wl)), wl).sum() for s in seeds]
    return float(np.mean(asked)) / float(duration)


def demand_ratio(seeds, duration: float, rate: float, wl: Workload = Workload()) -> float:
    """decode_demand over what the rate asks on average (rate x mean output tokens)."""
    return decode_demand(seeds, duration, rate, wl) / (float(rate) * wl.mean_output_tokens())


def matched_rate(rate: float, from_seeds, from_duration: float, to_seeds, to_duration: float,
                 wl: Workload = Workload()) -> float:
    """The rate at which `to_seeds` over `to_duration` ask for as many decode tokens per
    second as `from_seeds` over `from_duration` did at `rate` (the closest of a few
    fixed-point steps; exact when the two protocols are the same)."""
    if list(from_seeds) == list(to_seeds) and float(from_duration) == float(to_duration):
        return float(rate)
    want = decode_demand(from_seeds, from_duration, rate, wl)
    r, best = float(rate), None
    for _ in range(MATCH_ITERATIONS):
        got = decode_demand(to_seeds, to_duration, r, wl)
        miss = abs(got / want - 1)
        if best is None or miss < best[0]:
            best = (miss, r)
        if miss == 0:
            break
        r *= want / got
    return best[1]
