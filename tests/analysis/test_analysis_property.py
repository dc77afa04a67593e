"""Property test: on random valid timelines both partition paths equal a brute-force
oracle that shares no code with them.

The oracle cuts the gap at every boundary it knows of (segments, GC pauses,
evictions, the gap itself) and labels each piece on its own by looking at its
midpoint.  Times are drawn on a 1 ms grid so boundaries often coincide, which is
where interval code usually breaks.
"""
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis import LABELS, Partitioner, partition_run
from analysis.core.synthetic import runlog_from_steps

UNIT = 1e-3  # one grid step = 1 ms, in seconds
KINDS = ("tok", "swap", "prefill", "decode")


@st.composite
def timelines(draw):
    cursor = draw(st.integers(0, 5))
    steps = []
    for _ in range(draw(st.integers(1, 5))):
        t0 = cursor
        segs = []
        for kind in draw(st.lists(st.sampled_from(KINDS), max_size=4)):
            cursor += draw(st.integers(0, 3))
            length = draw(st.integers(0, 12))
            segs.append((kind, cursor * UNIT, (cursor + length) * UNIT))
            cursor += length
        cursor += draw(st.integers(0, 3))
        graph = draw(st.sampled_from([None, "eager", 1, 2, 4, 8]))
        steps.append({"t0": t0 * UNIT, "t1": cursor * UNIT, "seg": tuple(segs),
                      "graph": graph, "n_decode": draw(st.integers(0, 40))})
        cursor += draw(st.integers(0, 4))
    horizon = cursor + 5

    def disjoint(max_n):
        out, c = [], draw(st.integers(-3, horizon))
        for _ in range(draw(st.integers(0, max_n))):
            c += draw(st.integers(0, 8))
            length = draw(st.integers(0, 15))
            out.append((c * UNIT, (c + length) * UNIT))
            c += length
        return out

    gcs = disjoint(4)
    evictions = disjoint(3)
    if evictions and draw(st.booleans()):
        evictions[-1] = (evictions[-1][0], None)  # never readmitted
    a, b = sorted(draw(st.integers(0, horizon)) for _ in range(2))
    baseline = (draw(st.sampled_from([0.0, 0.5, 2.0])), draw(st.sampled_from([0.0, 1.0, 6.0])))
    return steps, gcs, evictions, a * UNIT, b * UNIT, baseline


def oracle(steps, gcs, evictions, t0, t1, baseline):
    """Expected (parts, context), by cutting [t0, t1] into elementary pieces."""
    plain = {"tok": "tok", "swap": "preempt", "prefill": "prefill"}
    away = [(a, math.inf if b is None else b) for a, b in evictions]

    def inside(x, spans):
        return any(a <= x < b for a, b in spans)

    def gc_free(a, b):
        cuts = sorted({a, b} | {x for g in gcs for x in g if a < x < b})
        return sum(y - x for x, y in zip(cuts, cuts[1:]) if not inside((x + y) / 2, gcs))

    def excess(s):
        if s["graph"] != "eager":
            return 0.0
        full = sum(gc_free(a, b) for k, a, b in s["seg"] if k == "decode") * 1e3
        if full <= 0:
            return 0.0
        base = baseline[0] * s["n_decode"] + baseline[1]
        return min(1.0, max(0.0, full - base) / full)

    def engine(x):  # {label: weight} of what the engine did at instant x
        if inside(x, gcs):
            return {"gc": 1.0}
        for s in steps:
            for k, a, b in s["seg"]:
                if a <= x < b:
                    if k == "decode":
                        f = excess(s)
                        return {"graph": f, "kernel": 1.0 - f}
                    return {plain[k]: 1.0}
        return {"residual": 1.0}

    marks = {t0, t1}
    for s in steps:
        for _, a, b in s["seg"]:
            marks |= {a, b}
    for a, b in gcs + away:
        marks |= {a, b}
    cuts = sorted(x for x in marks if t0 <= x <= t1)
    parts = dict.fromkeys(LABELS, 0.0)
    context = dict.fromkeys(LABELS, 0.0)
    for x, y in zip(cuts, cuts[1:]):
        mid, ms = (x + y) / 2, (y - x) * 1e3
        target = parts
        if inside(mid, away):
            parts["preempt"] += ms
            target = context
        for lab, w in engine(mid).items():
            target[lab] += w * ms
    return parts, context


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(timelines())
def test_both_paths_equal_the_oracle(case):
    steps, gcs, evictions, t0, t1, baseline = case
    want_parts, want_ctx = oracle(steps, gcs, evictions, t0, t1, baseline)

    parts, ctx = Partitioner(steps, gcs, baseline=baseline).gap(t0, t1, evictions)
    gap_ms = (t1 - t0) * 1e3
    assert math.fsum(parts.values()) == pytest.approx(gap_ms, abs=1e-9)
    for lab in LABELS:
        assert parts[lab] >= -1e-9, lab
        assert parts[lab] == pytest.approx(want_parts[lab], abs=1e-9), lab
        assert ctx[lab] == pytest.approx(want_ctx[lab], abs=1e-9), lab

    log = runlog_from_steps(steps, gcs, emissions=[(3, t0), (3, t1)],
                            evictions=[(3, a, b) for a, b in evictions])
    row = partition_run(log, baseline=baseline).iloc[0]
    assert row["gap_ms"] == pytest.approx(gap_ms, abs=1e-12)
    for lab in LABELS:
        assert row[lab] == pytest.approx(want_parts[lab], abs=1e-9), lab
        assert row["ctx_" + lab] == pytest.approx(want_ctx[lab], abs=1e-9), lab


@settings(max_examples=100, deadline=None)
@given(timelines())
def test_fitted_baseline_is_the_same_on_both_paths(case):
    steps, gcs, _, t0, t1, _ = case
    p = Partitioner(steps, gcs)
    log = runlog_from_steps(steps, gcs, emissions=[(0, t0), (0, t1)])
    fitted = partition_run(log).attrs["baseline"]
    if p.baseline is None:
        assert fitted is None
    else:
        assert fitted == pytest.approx((p.baseline.slope, p.baseline.intercept), rel=1e-9, abs=1e-9)
