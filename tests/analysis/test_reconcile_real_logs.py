"""On real logs (the article engine's golden logs, and fresh runs of this engine), no
label over-attributes: every label of every gap is non-negative, and the residual
never exceeds the time no instrument covered, computed here from the segments, GC
pauses and evictions alone (not from the partition), in both schemes (the refined one
on this engine's runs: the golden logs lack the extra arrays it reads).

The parts summing to the gap cannot fail (the residual is what the other labels
leave); these can: a label that claimed time twice, or time it does not own, pushes
the residual below what is really uncovered, or another label below zero.
"""
import numpy as np
import pytest

import analysis
from analysis.core.columns import EVICT, GC, SEG
from analysis.core.schemes import get_scheme
from tests.support.paths import GOLDEN_LOGS

TOL_MS = 1e-6          # float rounding of sums of seconds over a 60 s run, in ms


def _merged(starts, ends) -> tuple[np.ndarray, np.ndarray]:
    """The union of intervals as sorted disjoint [start, end) pieces."""
    order = np.argsort(starts, kind="stable")
    s, e = np.asarray(starts, float)[order], np.asarray(ends, float)[order]
    out_s, out_e = [], []
    for a, b in zip(s, e):
        if out_e and a <= out_e[-1]:
            out_e[-1] = max(out_e[-1], b)
        else:
            out_s.append(a)
            out_e.append(b)
    return np.array(out_s), np.array(out_e)


def _covered_before(s, e, t) -> np.ndarray:
    """Seconds of the disjoint sorted pieces [s, e) that lie before each time t."""
    whole = np.concatenate([[0.0], np.cumsum(e - s)])
    k = np.searchsorted(s, t, side="right")
    part = np.where(k > 0, np.clip(t - s[np.maximum(k - 1, 0)], 0.0, (e - s)[np.maximum(k - 1, 0)]), 0.0)
    return whole[np.maximum(k - 1, 0)] * (k > 0) + part


def uncovered_ms(log, gaps) -> np.ndarray:
    """Per gap: ms inside it covered by no segment, no GC pause and no eviction of its
    own request."""
    segs, gcs = log.segs, log.gcs
    s, e = _merged(np.concatenate([segs[:, SEG.t0], gcs[:, GC.t0]]),
                   np.concatenate([segs[:, SEG.t1], gcs[:, GC.t1]]))
    t0, t1 = gaps["t0"].to_numpy(), gaps["t1"].to_numpy()
    out = (t1 - t0) - (_covered_before(s, e, t1) - _covered_before(s, e, t0))
    ev = log.evictions
    for i in np.flatnonzero(np.isin(gaps["request"].to_numpy(), ev[:, EVICT.request])):
        mine = ev[ev[:, EVICT.request] == gaps["request"].iat[i]]
        back = np.where(np.isnan(mine[:, EVICT.readmitted]), np.inf, mine[:, EVICT.readmitted])
        a, b = np.clip(mine[:, EVICT.evicted], t0[i], t1[i]), np.clip(back, t0[i], t1[i])
        if not (b > a).any():
            continue
        # the gap minus its evictions, each piece less what the instruments covered in it
        es, ee = _merged(a[b > a], b[b > a])
        edges = np.concatenate([[t0[i]], ee]), np.concatenate([es, [t1[i]]])
        lo, hi = edges[0][edges[1] > edges[0]], edges[1][edges[1] > edges[0]]
        out[i] = ((hi - lo) - (_covered_before(s, e, hi) - _covered_before(s, e, lo))).sum()
    return out * 1e3


def assert_no_label_over_attributes(log, scheme: str) -> None:
    check_partition(log, analysis.partition_run(log, scheme=scheme), scheme)


def check_partition(log, gaps, scheme: str) -> None:
    labels = list(get_scheme(scheme).labels)
    parts = gaps[labels].to_numpy()
    worst = np.unravel_index(np.argmin(parts), parts.shape)
    assert parts.min() >= -TOL_MS, f"{scheme}: label {labels[worst[1]]} is {parts.min()} ms in gap {worst[0]}"
    free = uncovered_ms(log, gaps)
    over = gaps["residual"].to_numpy() - free
    assert over.max() <= TOL_MS, f"{scheme}: residual exceeds the uncovered time by {over.max()} ms " \
                                 f"in gap {int(np.argmax(over))}"
    assert (free >= -TOL_MS).all() and len(gaps) > 0


@pytest.mark.parametrize("path", GOLDEN_LOGS, ids=lambda p: p.stem)
def test_no_label_over_attributes_on_the_golden_logs(path):
    log = analysis.load(path)
    assert_no_label_over_attributes(log, "article")
    gaps = analysis.partition_run(log)
    # the article's scheme leaves exactly the uncovered time as residual
    np.testing.assert_allclose(gaps["residual"].to_numpy(), uncovered_ms(log, gaps), atol=TOL_MS)


@pytest.mark.parametrize("scheme", ["article", "refined"])
@pytest.mark.parametrize("which", ["smoke_log", "pressured_log"])
def test_no_label_over_attributes_on_a_fresh_run(which, scheme, request):
    log = analysis.load(request.getfixturevalue(which))
    if which == "pressured_log":
        assert len(log.evictions) and len(log.gcs)          # the checks see evictions and GC pauses
    assert_no_label_over_attributes(log, scheme)


@pytest.mark.parametrize("damage", ["kernel to residual", "negative gc"])
def test_the_check_catches_a_label_that_over_or_under_attributes(damage):
    """The check fails on a partition that still sums to every gap but moved time."""
    log = analysis.load(GOLDEN_LOGS[0])
    gaps = analysis.partition_run(log)
    check_partition(log, gaps, "article")
    busy = int(np.argmax(gaps["kernel"].to_numpy()))
    bad = gaps.copy()
    if damage == "kernel to residual":
        bad.loc[bad.index[busy], ["kernel", "residual"]] += [-0.5, 0.5]
    else:
        bad.loc[bad.index[busy], ["gc", "kernel"]] += [-0.5, 0.5]
    with pytest.raises(AssertionError, match="residual exceeds" if damage == "kernel to residual" else "label gc"):
        check_partition(log, bad, "article")
