"""The whole-run path's building blocks, each against a plain reference that shares
no code with it: index ranges, pairing tokens into gaps, the sparse rate timeline,
the disjointness check and the cause histogram."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.core import contract
from analysis.core.pairs import gap_pairs
from analysis.core.ranges import concat_ranges
from analysis.core.run_summary import HIST_BINS, cause_histogram
from analysis.core.timeline import RateTimeline, _merged_pieces, _near, _owned_pieces

# ------------------------------------------------------------------ ranges
@given(st.lists(st.tuples(st.integers(0, 30), st.integers(-3, 8)), max_size=12))
def test_concat_ranges(spans):
    lo = np.array([a for a, _ in spans], dtype=np.intp)
    hi = np.array([a + n for a, n in spans], dtype=np.intp)
    positions, which = concat_ranges(lo, hi)
    assert positions.tolist() == [x for a, n in spans for x in range(a, a + n)]
    assert which.tolist() == [i for i, (a, n) in enumerate(spans) for _ in range(max(n, 0))]


# ------------------------------------------------------------------ gap pairing
@given(st.lists(st.integers(0, 6), max_size=40), st.booleans())
def test_gap_pairs_follow_first_appearance_then_file_order(requests, pass_order):
    emissions = np.zeros((len(requests), 3))
    emissions[:, 0] = requests
    rows = np.argsort(emissions[:, 0], kind="stable")
    by_request = contract.ByRequest(rows, emissions[rows, 0]) if pass_order else None
    order, rank, starts, rids, rank_of, rank_start = gap_pairs(emissions, by_request)
    seen = list(dict.fromkeys(requests))                    # by first appearance
    rows = [i for r in seen for i, q in enumerate(requests) if q == r]
    assert order.tolist() == rows
    assert rank.tolist() == [seen.index(requests[i]) for i in rows]
    assert starts.tolist() == [k for k in range(len(rows) - 1) if requests[rows[k]] == requests[rows[k + 1]]]
    assert rids.tolist() == sorted(seen)
    assert rank_of.tolist() == [seen.index(r) for r in sorted(seen)]
    assert rank_start.tolist() == [rows.index(next(i for i, q in enumerate(requests) if q == r)) for r in seen]


# ------------------------------------------------------------------ rate timeline
@st.composite
def layers(draw):
    """Up to three layers of disjoint intervals on a 1 ms grid (shared boundaries,
    empty intervals), in any order within a layer, each with random label rates."""
    out = []
    for _ in range(draw(st.integers(1, 3))):
        cursor, spans = draw(st.integers(0, 5)), []
        for _ in range(draw(st.integers(0, 6))):
            cursor += draw(st.integers(0, 3))
            length = draw(st.integers(0, 6))
            spans.append((cursor, cursor + length))
            cursor += length
        order = draw(st.permutations(range(len(spans))))
        spans = [spans[i] for i in order]
        rates = np.array(draw(st.lists(st.lists(st.sampled_from([0.0, 0.25, 1.0]), min_size=len(spans),
                                                max_size=len(spans)), min_size=3, max_size=3))).reshape(3, -1)
        out.append((np.array([a for a, _ in spans], dtype=float) * 1e-3,
                    np.array([b for _, b in spans], dtype=float) * 1e-3, rates))
    return out


def brute_integral(layers, t):
    """ms per label up to t: cut at every boundary, rate of each piece by its midpoint."""
    cuts = sorted({x for s, e, _ in layers for x in (*s, *e) if x < t} | {t})
    total = np.zeros(3)
    for a, b in zip(cuts, cuts[1:]):
        mid, rate = (a + b) / 2, np.zeros(3)
        for s, e, r in layers:                  # a later layer overrides
            for i in range(len(s)):
                if s[i] <= mid < e[i]:
                    rate = r[:, i]
        total += rate * (b - a) * 1e3
    return total


@settings(max_examples=150, deadline=None)
@given(layers(), st.lists(st.integers(-2, 60), min_size=1, max_size=6))
def test_sparse_timeline_integral_equals_brute_force(lays, times):
    tl = RateTimeline.from_intervals(lays, 3)
    t = np.array(times, dtype=float) * 1e-3
    got = tl.integral(t)
    for j, x in enumerate(t):
        assert got[:, j] == pytest.approx(brute_integral(lays, x), abs=1e-9)


@st.composite
def segments_and_pauses(draw):
    """An engine-like timeline: many sorted segments on a 1 ms grid (shared boundaries,
    empty ones) and one or two layers of a few pauses, in any order and priority,
    that may overlap segments, sit inside one, or only touch a boundary."""
    cursor, segs = 0, []
    for _ in range(draw(st.integers(0, 40))):
        cursor += draw(st.integers(0, 2))
        length = draw(st.integers(0, 4))
        segs.append((cursor, cursor + length))
        cursor += length
    big = (np.array([a for a, _ in segs], dtype=float), np.array([b for _, b in segs], dtype=float))
    out = []
    for _ in range(draw(st.integers(1, 2))):
        starts = draw(st.lists(st.integers(0, cursor + 2), max_size=4, unique=True))
        spans = [(a, a + draw(st.integers(0, 3))) for a in sorted(starts)]
        spans = [sp for k, sp in enumerate(spans) if not k or sp[0] >= spans[k - 1][1]]   # disjoint
        spans = draw(st.permutations(spans))
        out.append((np.array([a for a, _ in spans], dtype=float), np.array([b for _, b in spans], dtype=float)))
    out.insert(draw(st.integers(0, len(out))), big)
    first = np.cumsum([0] + [len(a) for a, _ in out[:-1]])
    return [(a * 1e-3, b * 1e-3, int(c)) for (a, b), c in zip(out, first)]


@settings(max_examples=300, deadline=None)
@given(segments_and_pauses())
def test_pieces_of_intervals_alone_are_the_merge_of_every_boundary(lays):
    """Taking the intervals no other layer comes near as pieces by themselves cuts the
    same pieces, with the same float boundaries and owners, as merging every boundary."""
    got = _owned_pieces(lays)
    want = _merged_pieces([(a, b, np.arange(len(a)) + c) for a, b, c in lays])
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.tolist() == w.tolist()


def test_segments_far_from_pauses_skip_the_merge():
    """Of many sorted segments, only those a pause overlaps, holds a boundary of, or
    surrounds are near; touching a boundary is not; unsorted segments are not split."""
    s = np.arange(10.0) * 2
    e = s + 1                                      # [0, 1), [2, 3), ..., [18, 19)
    # overlaps 2 and 3; surrounds 4; an empty one inside 5; touches 6 and 7; empty at 8's start
    pauses = (np.array([4.5, 7.5, 10.5, 13.0, 16.0]), np.array([6.5, 9.5, 10.5, 14.0, 16.0]), 0)
    near = _near(s, e, [pauses])
    assert np.flatnonzero(near).tolist() == [2, 3, 4, 5]
    assert _near(s[::-1], e[::-1], [pauses]) is None
    everywhere = (s + 0.5, s + 0.6, 0)
    assert _near(s, e, [everywhere]) is None       # most are near: the whole merge is as quick


# ------------------------------------------------------------------ disjointness
@given(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 4)), max_size=8))
def test_disjoint_check_reports_the_row_a_full_sort_finds(spans):
    a = np.array([s for s, _ in spans], dtype=float)
    b = np.array([s + n for s, n in spans], dtype=float)
    o = np.lexsort((b, a))
    clash = [o[k + 1] for k in range(len(o) - 1) if a[o[k + 1]] < b[o[k]]]
    found = []
    contract._check_disjoint(a, b, found.append)
    assert found == clash[:1]


# ------------------------------------------------------------------ histogram
@given(st.lists(st.tuples(st.floats(-5, 2e9, allow_nan=False), st.integers(0, 5)), max_size=60))
def test_cause_histogram_counts_each_gap_in_its_bin_and_cause(gaps):
    causes, names = ["a", "b", "c", "d", "e"], ["a", "b", "c", "d", "e", "clean"]
    gap = np.array([g for g, _ in gaps], dtype=float)
    code = np.array([c for _, c in gaps], dtype=np.int8)
    got = cause_histogram(gap, code, names, causes)
    for row, lo, hi in zip(got, HIST_BINS[:-1], HIST_BINS[1:]):
        inside = [(g, c) for g, c in gaps if lo <= g < hi]
        assert row["n"] == len(inside)
        assert {k: row[k] for k in names} == {k: sum(names[c] == k for _, c in inside) for k in names}
