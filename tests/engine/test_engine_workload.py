"""The workload is deterministic in the seed, and its contents do not depend on the rate."""
import numpy as np

from engine.serve.workload import Workload, arrival_times, make_trace


def _fingerprint(trace):
    return [(r.rid, round(r.arrival, 12), r.text, r.max_new, r.is_document) for r in trace]


def test_same_seed_same_trace():
    assert _fingerprint(make_trace(3, 20, 8.0)) == _fingerprint(make_trace(3, 20, 8.0))


def test_different_seeds_differ():
    assert _fingerprint(make_trace(3, 20, 8.0)) != _fingerprint(make_trace(4, 20, 8.0))


def test_contents_do_not_depend_on_rate():
    slow, fast = make_trace(2, 30, 6.0), make_trace(2, 30, 9.0)
    n = min(len(slow), len(fast))
    assert n > 100
    assert [(r.text, r.max_new, r.is_document) for r in slow[:n]] == \
           [(r.text, r.max_new, r.is_document) for r in fast[:n]]
    assert [r.arrival for r in slow[:n]] != [r.arrival for r in fast[:n]]


def test_workload_shape_matches_the_article():
    wl = Workload()
    trace = make_trace(1, 600, 8.0, wl)           # long enough for the averages to settle
    chars = np.array([len(r.text) for r in trace if not r.is_document])
    out = np.array([r.max_new for r in trace])
    docs = [r for r in trace if r.is_document]
    assert 800 < np.median(chars) < 1200           # prompts of about 1,000 characters
    assert 250 < out.mean() < 330 and out.max() <= 1000 and out.min() >= 16
    assert 0.003 < len(docs) / len(trace) < 0.02   # ~1% paste a document
    assert all(150_000 <= len(r.text) <= 400_000 for r in docs)
    assert abs(out.mean() - wl.mean_output_tokens()) < 15
    assert abs(len(trace) / 600 - 8.0) < 0.6       # mean rate over whole swell cycles


def test_arrivals_swell_and_ebb_on_a_15s_cycle():
    t = arrival_times(5, 15 * 40, 10.0)
    phase = (t % 15.0) / 15.0
    peak = ((phase > 0.15) & (phase < 0.35)).sum()  # sin near +1
    trough = ((phase > 0.65) & (phase < 0.85)).sum()  # sin near -1
    assert peak > 2.5 * trough
