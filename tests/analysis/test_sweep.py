"""The load sweep: its run specs, its tidy frame and the computed findings, on synthetic
summaries (no runs)."""
import math

import numpy as np
import pandas as pd
import pytest

from analysis.core.schemes import LABELS
from analysis.across_runs import load_sweep
from engine.runs.sweep import LEVELS, SWEEP_RUNGS, sweep_specs


def test_sweep_specs_cover_levels_rungs_forwards_with_scaled_rates():
    specs = sweep_specs("article", rate=10.0, fast_scale=2.0)
    assert len(specs) == len(LEVELS) * 2 * 2 * 2                    # levels x rungs x forwards x seeds
    assert {s.rung for s in specs} == set(SWEEP_RUNGS) == {"baseline", "+admit watermark"}
    assert {s.config.forward for s in specs} == {"article", "fast"}
    for s in specs:
        scale = 1.0 if s.config.forward == "article" else 2.0
        assert s.rate == pytest.approx(10.0 * scale * s.rate_info["load"])
        assert s.group == "sweep" and "position" in s.schedule
    assert len({s.path for s in specs}) == len(specs)                 # every run its own cache entry
    assert min(LEVELS) <= 0.6 and max(LEVELS) >= 1.4 and len(LEVELS) >= 7
    near = [x for x in LEVELS if 0.8 <= x <= 1.25]
    assert len(near) >= 3                                              # dense near capacity
    with pytest.raises(ValueError, match="load levels must be positive"):
        sweep_specs("article", rate=10.0, fast_scale=2.0, levels=(0.5, -1.0))


def _summary(load, seed, fwd, rung, preempt_share, p999=100.0, ttft=50.0):
    shares = {lab: 0.0 for lab in LABELS}
    shares["preempt"] = preempt_share
    shares["kernel"] = 1.0 - preempt_share
    return {"duration": 20.0, "preemptions": 100 * load, "ttft_p50": ttft, "fwd_share_clean_median": 0.9 if fwd == "article" else 0.7,
            "itl_p50": 10.0, "itl_p99": 40.0, "itl_p999": p999, "itl_max": 1000.0, "tail_share": shares}


class Spec:
    def __init__(self, fwd, rung, load, seed):
        from engine import Config
        self.config = Config(forward=fwd)
        self.rung, self.seed, self.rate, self.duration = rung, seed, 10 * load, 20.0
        self.rate_info = {"load": load}


def _frame(shares_by_seed, fwd="article", rung="baseline", loads=(0.6, 0.8, 1.0, 1.2), **kw):
    specs, sums = [], []
    for seed, shares in shares_by_seed.items():
        for load, share in zip(loads, shares):
            specs.append(Spec(fwd, rung, load, seed))
            sums.append(_summary(load, seed, fwd, rung, share, **kw))
    return load_sweep.sweep_frame(specs, sums)


def test_frame_is_tidy():
    f = _frame({1: [0.1, 0.2, 0.6, 0.8]})
    assert len(f) == 4 and list(f["load"]) == [0.6, 0.8, 1.0, 1.2]
    assert f["preempt_per_min"].tolist() == pytest.approx([300 * x for x in (0.6, 0.8, 1.0, 1.2)])
    assert f.loc[0, "tail_preempt"] == 0.1 and f.loc[0, "fwd_share_clean"] == 0.9


def test_crossing_load_interpolates_and_spreads_over_seeds():
    f = _frame({1: [0.1, 0.3, 0.7, 0.9], 2: [0.1, 0.5, 0.6, 0.9]})
    res = load_sweep.crossing_load(f, "article")
    assert res["per_seed"][1] == pytest.approx(0.9) and res["per_seed"][2] == pytest.approx(0.8)
    assert res["n_crossed"] == 2 and res["median"] == pytest.approx(0.85)
    s = load_sweep.crossing_sentence(res)
    assert "first passed 50% at 0.85x the operating point (seeds: 0.80-0.90x), in all 2 seed(s)" in s


def test_crossing_load_not_within_the_sweep():
    f = _frame({1: [0.1, 0.2, 0.3, 0.4], 2: [0.1, 0.2, 0.3, 0.6]})
    res = load_sweep.crossing_load(f, "article")
    assert math.isnan(res["per_seed"][1]) and res["n_crossed"] == 1
    assert "in 1 of 2 seeds it did not within the sweep" in load_sweep.crossing_sentence(res)
    none = load_sweep.crossing_load(_frame({1: [0.1, 0.1, 0.1, 0.1]}), "article")
    assert none["n_crossed"] == 0
    assert load_sweep.crossing_sentence(none) == ("Preemption's share of tail time passed 50% in no seed within the "
                                             "sweep (0.60-1.20x the operating point).")
    lead = load_sweep.crossing_sentence(none, what="with the fast forward, preemption's share of baseline tail time")
    assert lead.startswith("With the fast forward, preemption's share of baseline tail time passed 50% in no seed")


def test_drain_limit():
    f = _frame({1: [0.1] * 4})
    assert math.isnan(load_sweep.drain_limit(f, "article"))
    slow = _frame({1: [0.1] * 4}, ttft=5000.0)
    assert load_sweep.drain_limit(slow, "article") == 0.6


def test_watermark_verdict_needs_enough_seeds():
    seeds = {s: [0.5] * 4 for s in range(1, 3)}
    base = _frame(seeds, p999=100.0)
    wm = _frame(seeds, rung="+admit watermark", p999=50.0)
    v = load_sweep.watermark_verdicts(pd.concat([base, wm], ignore_index=True), "article")
    assert set(v["verdict"]) == {"cannot be judged with 2 seeds"}       # not "no change": 2 seeds see nothing
    assert "every load's comparison cannot be judged with 2 seeds" in load_sweep.watermark_sentence(v)
    many = {s: [0.5] * 4 for s in range(1, 7)}
    rng = np.random.default_rng(0)
    b = _frame(many, p999=100.0)
    a = _frame(many, rung="+admit watermark", p999=50.0)
    a["itl_p999"] = a["itl_p999"] * rng.uniform(0.9, 1.1, len(a))
    v = load_sweep.watermark_verdicts(pd.concat([b, a], ignore_index=True), "article")
    assert (v["verdict"] == "established").all()
    assert "first earned a verdict (established) at 0.60x" in load_sweep.watermark_sentence(v)


def test_forward_comparison_and_sentence():
    a = _frame({1: [0.1, 0.2, 0.6, 0.8]})
    f = _frame({1: [0.05, 0.1, 0.3, 0.4]}, fwd="fast")
    both = pd.concat([a, f], ignore_index=True)
    s = load_sweep.forward_sentence(both)
    assert "90% of a clean gap with the article forward and 70% with the fast one" in s
    assert "preempt 60% -> 30%" in s
    assert "cannot be compared" in load_sweep.forward_sentence(a)
    table = load_sweep.forward_comparison(both)
    assert table.loc[1.0, ("tail_preempt", "fast")] == pytest.approx(0.3)


def test_operating_point_value_interpolates_per_seed_and_needs_the_span():
    f = _frame({1: [0.1, 0.2, 0.6, 0.8], 2: [0.1, 0.2, 0.6, 0.8]}, loads=(0.6, 0.9, 1.1, 1.2))
    # preempt_per_min = 300 x load: at 1.0 the interpolation gives 300 for each seed
    assert load_sweep.at_operating_point(f) == pytest.approx(300.0)
    assert math.isnan(load_sweep.at_operating_point(_frame({1: [0.1, 0.2]}, loads=(0.6, 0.8))))


def test_short_run_sentence_both_directions():
    low = load_sweep.short_run_sentence(150.0, [300.0, 320.0], 20, 60)
    assert "0.48x" in low and "read the rate low" in low and "higher loads" in low
    high = load_sweep.short_run_sentence(400.0, [300.0], 20, 60)
    assert "read the rate high" in high and "lower loads" in high
    same = load_sweep.short_run_sentence(310.0, [300.0], 20, 60)
    assert "within 15%" in same and "empty engine" not in same
    assert "could not" in load_sweep.short_run_sentence(math.nan, [300.0], 20, 60)
    assert "could not" in load_sweep.short_run_sentence(100.0, [], 20, 60)


def test_fast_capacity_is_measured_over_the_article_window(monkeypatch):
    """The scale is a ratio of two capacities: a fast record of another length is measured again."""
    import engine.runs.sweep as es
    records = {("checked", "article"): {"capacity": {"tokens_per_s": 1000.0, "seconds": 20.0}},
               ("capacity", "fast"): {"capacity": {"tokens_per_s": 900.0, "seconds": 10.0}}}
    calls = []

    def fake_calibrate(checks=True, force=False, progress=True, capacity_seconds=None, forward="article",
                       check_duration=60.0):
        calls.append((forward, capacity_seconds, force))
        records[("capacity", forward)] = {"capacity": {"tokens_per_s": 1500.0, "seconds": capacity_seconds}}
        return records[("capacity", forward)]
    monkeypatch.setattr(es, "load_calibration",
                        lambda method, forward, check_duration=None: records.get((method, forward)))
    monkeypatch.setattr(es, "calibrate", fake_calibrate)
    prof = es.get_profile("article")
    assert es.capacity_scale(prof, "fast") == pytest.approx(1.5)
    assert calls == [("fast", 20.0, True)]
    assert es.capacity_scale(prof, "fast") == pytest.approx(1.5) and len(calls) == 1   # now of equal length
