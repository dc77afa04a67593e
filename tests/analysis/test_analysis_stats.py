"""The paired statistics (paired.py, signflip.py) on synthetic runs whose answer is known
(fast: pure numpy, no engine runs)."""
import io
import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.across_runs import paired, signflip
from analysis.across_runs.paired import (END_TO_END, METRICS, ladder_verdicts, paired_change, seed_subsample_intervals,
                                  verdict_phrase)
from analysis.across_runs.signflip import ALPHA, SUGGESTIVE, min_p, min_seeds, seeds_needed, sign_flip

RUNGS = ["baseline", "+gc.freeze", "+compact history", "+graphs to 48", "+budget 256",
         "+tokenize off-loop", "+admit watermark"]
TRIALS = 2000


def margin(rate, trials=TRIALS):
    """Three binomial standard errors: a test at its nominal rate fails ~0.1% of the time."""
    return 3 * math.sqrt(rate * (1 - rate) / trials)


def paired_runs(rng, n, shift=1.0, noise=0.3, seed_sd=0.8, scale=50.0):
    """n seeds: a shared per-seed level (the seed sets the traffic) times independent
    run noise on each side; ``after`` is multiplied by ``shift``."""
    level = scale * rng.lognormal(0, seed_sd, n)
    return level * rng.lognormal(0, noise, n), shift * level * rng.lognormal(0, noise, n)


def brute_p(d):
    """Two-sided sign-flip p-value by listing every sign pattern (the definition)."""
    d = np.asarray(d, float)
    obs = abs(d.sum())
    flips = [abs(np.dot(s, d)) >= obs - 1e-12 for s in itertools.product([1, -1], repeat=len(d))]
    return sum(flips) / len(flips)


# --- exact p-values and intervals on hand-computed cases --------------------------------

def test_exact_p_values_by_hand():
    assert sign_flip(np.log([2.0, 3.0, 4.0]))["p"] == 2 / 8          # 3 seeds, all up
    assert sign_flip([-0.1, -0.5, -0.2, -0.3])["p"] == 2 / 16        # 4 seeds, all down
    assert sign_flip([0.3, 0.1, 0.2, 0.4, 0.9])["p"] == 2 / 32       # 5 seeds, all up: the floor
    # d = (1, 2, -0.5): |sums| over the 8 patterns are 3.5, 2.5, 1.5, 0.5 twice each;
    # |sum| >= 2.5 for 4 of 8
    assert sign_flip([1.0, 2.0, -0.5])["p"] == 4 / 8
    assert sign_flip([1.0, -1.0])["p"] == 1.0
    assert sign_flip([0.0, 0.0, 0.0])["p"] == 1.0


def test_p_floor_and_seeds_needed_for_established():
    assert min_p(5) == 1 / 16 > ALPHA          # 5 seeds can never reach 0.05 two-sided
    assert min_p(6) == 1 / 32 <= ALPHA
    assert min_seeds(ALPHA) == 6
    assert min_seeds(0.01) == 8


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7, 9])
def test_p_matches_enumeration_and_interval_inverts_the_test(n):
    rng = np.random.default_rng(n)
    d = rng.normal(0.3, 0.5, n)
    res = sign_flip(d)
    assert res["p"] == pytest.approx(brute_p(d))
    # the interval is exactly the set of centres the test does not reject
    accept = res["level"] >= 1 - ALPHA
    for delta in np.linspace(d.min() - 1, d.max() + 1, 301):
        inside = res["lo"] <= delta <= res["hi"]
        if accept:
            assert (brute_p(d - delta) > ALPHA) == inside or np.isclose([res["lo"], res["hi"]], delta).any()
    if n <= 5:  # too few seeds for 95%: the range of the per-seed ratios, at 1 - 2/2**n
        assert (res["lo"], res["hi"]) == (d.min(), d.max())
        assert res["level"] == 1 - 2 / 2 ** n
    else:
        assert 1 - ALPHA <= res["level"] < 1


def test_monte_carlo_beyond_16_seeds_is_seeded_and_sensible():
    rng = np.random.default_rng(0)
    d = rng.normal(-1.0, 0.3, 20)
    a, b = sign_flip(d, seed=3), sign_flip(d, seed=3)
    assert a == b and a["method"] == "monte carlo"
    assert a["p"] < 1e-3 and a["hi"] < 0


def test_monte_carlo_agrees_with_enumeration(monkeypatch):
    d = np.random.default_rng(1).normal(0.2, 0.5, 10)
    exact = sign_flip(d)
    monkeypatch.setattr(signflip, "EXACT_MAX_SEEDS", 8)
    signflip._signs.cache_clear()
    try:
        mc = sign_flip(d, seed=1)
    finally:
        signflip._signs.cache_clear()
    assert mc["method"] == "monte carlo" and exact["method"] == "exact"
    assert mc["p"] == pytest.approx(exact["p"], abs=0.01)
    assert (mc["lo"], mc["hi"]) == pytest.approx((exact["lo"], exact["hi"]), abs=0.03)


# --- false positives and a known large effect -------------------------------------------

@pytest.mark.parametrize("n", [5, 8])
def test_identical_distributions_false_positive_rate(n):
    """Both rungs drawn from the same lognormal, paired by seed, independent run noise."""
    rng = np.random.default_rng(100 + n)
    verdicts = [paired_change(*paired_runs(rng, n))["verdict"] for _ in range(TRIALS)]
    established = verdicts.count("established") / TRIALS
    flagged = 1 - verdicts.count("no change") / TRIALS
    print(f"\nn={n}: established {established:.2%}, not 'no change' {flagged:.2%} over {TRIALS} trials")
    assert established <= ALPHA + margin(ALPHA)
    nominal = min_p(n) if ALPHA < min_p(n) <= SUGGESTIVE else SUGGESTIVE  # 1/16 with 5 seeds
    assert flagged <= nominal + margin(nominal)
    if n == 5:
        assert established == 0  # unattainable, whatever the data


def test_large_shift_five_seeds_is_suggestive_by_construction_eight_seeds_established():
    rng = np.random.default_rng(7)
    before, after = paired_runs(rng, 5, shift=0.3, noise=0.05)
    res = paired_change(before, after, metric="itl_p999")
    # the strongest result 5 paired seeds can give: every seed moved, p at the floor
    assert res["agree"] == "5/5" and res["direction"] == "down"
    assert res["p"] == min_p(5) > ALPHA
    assert res["verdict"] == "suggestive"
    assert res["lo"] < res["paired_ratio"] < res["hi"] < 1 and res["paired_ratio"] == pytest.approx(0.3, rel=0.1)
    before, after = paired_runs(rng, 8, shift=0.3, noise=0.05)
    res = paired_change(before, after, metric="itl_p999")
    assert res["verdict"] == "established" and res["p"] == 2 / 2 ** 8
    assert res["hi"] < 1 and res["level"] >= 0.95


def test_verdict_is_the_p_rule_and_matches_the_interval():
    rng = np.random.default_rng(11)
    for _ in range(300):
        n = int(rng.integers(6, 11))
        res = paired_change(*paired_runs(rng, n, shift=float(rng.choice([1.0, 0.8, 0.5]))))
        expect = "established" if res["p"] <= ALPHA else "suggestive" if res["p"] <= SUGGESTIVE else "no change"
        assert res["verdict"] == expect
        assert (res["verdict"] == "established") == (not res["lo"] <= 1 <= res["hi"])


# --- alignment, missing pairs, errors ---------------------------------------------------

def test_aligned_by_seed_not_by_position():
    before = pd.Series({1: 10.0, 2: 20.0, 3: 40.0})
    after = pd.Series({3: 20.0, 1: 5.0, 2: 10.0})  # every seed halved, listed in another order
    res = paired_change(before, after)
    assert res["seed_ratios"] == {1: 0.5, 2: 0.5, 3: 0.5}
    assert res["ratio"] == 0.5 and res["note"] == ""
    assert paired_change({1: 10.0, 2: 20.0}, {2: 10.0, 1: 5.0})["seed_ratios"] == {1: 0.5, 2: 0.5}


def test_unpaired_and_missing_seeds_are_dropped_with_a_note():
    before = pd.Series({1: 10.0, 2: 20.0, 3: 40.0, 4: 8.0})
    after = pd.Series({1: 5.0, 2: 10.0, 3: np.nan, 5: 1.0})
    res = paired_change(before, after)
    assert res["seeds"] == [1, 2] and res["n"] == 2
    assert "before only [4]" in res["note"] and "after only [5]" in res["note"]
    assert "missing value: [3]" in res["note"]


def test_fewer_than_two_pairs_is_insufficient_not_an_error():
    res = paired_change(pd.Series({1: 10.0, 2: 3.0}), pd.Series({1: 5.0, 3: 1.0}))
    assert res["verdict"] == "insufficient runs" and res["n"] == 1 and math.isnan(res["p"])
    assert paired_change([], [])["verdict"] == "insufficient runs"
    assert verdict_phrase({**res, "metric": "itl_p99"}).startswith("could not judge p99")


def test_errors_for_non_positive_values_and_unalignable_input():
    with pytest.raises(ValueError, match="positive.*seed\\(s\\) \\[2\\]"):
        paired_change(pd.Series({1: 1.0, 2: 0.0}), pd.Series({1: 1.0, 2: 2.0}), metric="itl_p99")
    with pytest.raises(ValueError, match="positive"):
        paired_change([1.0, 2.0], [1.0, -2.0])
    with pytest.raises(ValueError, match="aligned by seed"):
        paired_change([1.0, 2.0, 3.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="more than one run"):
        paired_change(pd.Series([1.0, 2.0], index=[1, 1]), pd.Series([1.0, 2.0], index=[1, 2]))
    with pytest.raises(ValueError, match="both"):
        paired_change(pd.Series({1: 1.0, 2: 2.0}), [1.0, 2.0])


# --- the ladder ---------------------------------------------------------------------------

def synthetic_ladder(seeds=range(1, 6), rng=None):
    """Tail metrics fall 40% per rung, p50 stays, TTFT rises 5x at the last rung."""
    rng = rng or np.random.default_rng(5)
    rows = []
    for seed in seeds:
        level = rng.lognormal(0, 0.5)
        for i, rung in enumerate(RUNGS):
            noise = lambda sd: rng.lognormal(0, sd)  # noqa: E731
            rows.append({"rung": rung, "seed": seed, "duration": 60.0,
                         "itl_p50": 13 * level * noise(0.05), "itl_p99": 47 * level * 0.9 ** i * noise(0.05),
                         "itl_p999": 950 * level * 0.6 ** i * noise(0.05),
                         "itl_max": 9000 * level * 0.6 ** i * noise(0.05),
                         "ttft_p50": 200 * level * (5 if i == 6 else 1) * noise(0.05)})
    return rows


def test_ladder_verdicts_has_every_step_and_end_to_end_for_every_metric():
    table = ladder_verdicts(synthetic_ladder())
    steps = [f"{a} -> {b}" for a, b in zip(RUNGS, RUNGS[1:])] + [END_TO_END]
    assert list(dict.fromkeys(table["step"])) == steps
    assert len(table) == len(steps) * len(METRICS)
    assert set(table.groupby("step")["metric"].apply(tuple)) == {METRICS}
    e2e = table[table["step"] == END_TO_END].set_index("metric")
    assert (e2e["before"] == "baseline").all() and (e2e["after"] == "+admit watermark").all()
    assert e2e.loc["itl_p999", "verdict"] == "suggestive" and e2e.loc["itl_p999", "direction"] == "down"
    assert e2e.loc["itl_p999", "ratio"] == pytest.approx(0.6 ** 6, rel=0.15)
    assert e2e.loc["ttft_p50", "direction"] == "up"
    assert (table["n"] == 5).all() and (table["note"] == "").all()
    assert verdict_phrase(e2e.loc["itl_p999"].to_dict() | {"metric": "itl_p999"}) == "moved p99.9 down (suggestive)"


def test_ladder_with_more_seeds_establishes_and_notes_a_missing_run():
    rows = synthetic_ladder(seeds=range(1, 9))
    rows = [r for r in rows if not (r["rung"] == "+budget 256" and r["seed"] == 8)]
    table = ladder_verdicts(rows, metrics=("itl_p999",))
    e2e = table[table["step"] == END_TO_END].iloc[0]
    assert e2e["verdict"] == "established" and e2e["n"] == 8
    touched = table[table["note"] != ""]
    assert set(touched["step"]) == {"+graphs to 48 -> +budget 256", "+budget 256 -> +tokenize off-loop"}
    assert (touched["n"] == 7).all()


def test_ladder_respects_given_rungs_and_refuses_duplicate_runs():
    table = ladder_verdicts(synthetic_ladder(), rungs=["baseline", "+admit watermark"])
    assert list(dict.fromkeys(table["step"])) == ["baseline -> +admit watermark", END_TO_END]
    rows = synthetic_ladder()
    with pytest.raises(ValueError, match="more than one run"):
        ladder_verdicts(rows + [dict(rows[0])])


def test_verdict_phrases():
    base = {"metric": "itl_p99", "agree": "5/5", "direction": "down", "median_before": 47.0,
            "median_after": 27.8, "p": 0.0625, "n": 6, "lo": 0.9, "hi": 1.1, "level": 0.96875}
    assert verdict_phrase(base | {"verdict": "established"}) == "moved p99 down (established)"
    assert verdict_phrase(base | {"verdict": "no change", "metric": "itl_p999"}) == (
        "showed no detectable change in p99.9 ([0.90-1.10], 97% interval)")
    assert verdict_phrase(base | {"verdict": "suggestive"}, detail=True) == \
        "moved p99 down (suggestive: 5/5 seeds down, median 47 -> 27.8, p = 0.062)"


def test_no_change_is_said_only_by_a_comparison_that_could_have_detected_one():
    base = {"metric": "itl_max", "agree": "2/2", "direction": "down", "median_before": 305.0,
            "median_after": 13.3, "p": 0.5, "n": 2, "lo": 0.04, "hi": 0.05, "level": 0.5, "verdict": "no change"}
    # two seeds: the smallest p is 0.5, so "no detectable change in max (305 -> 13.3)" was a test
    # that could not have detected one
    s = verdict_phrase(base)
    assert "no detectable change" not in s
    assert s == "could not judge max (cannot be judged with 2 seeds: the smallest p-value 2 seeds can reach is 0.5)"
    wide = base | {"n": 6, "p": 0.2, "lo": 0.3, "hi": 1.4, "level": 0.96875}
    assert verdict_phrase(wide).startswith("could not judge max (cannot be judged with 6 seeds: its interval "
                                           "[0.30-1.40], 97% interval admits a halving or a doubling")


# --- sample-size view ---------------------------------------------------------------------

def test_seed_subsample_intervals():
    rows = synthetic_ladder()
    view = seed_subsample_intervals(rows, metric="itl_p999", project_to=10)
    assert list(view["seeds"]) == list(range(2, 11))
    seen = view[~view["projected"]]
    assert list(seen["subsets"]) == [math.comb(5, m) for m in range(2, 6)]
    assert list(seen["level"]) == [1 - 2 / 2 ** m for m in range(2, 6)]
    shares = seen[["share_established", "share_suggestive", "share_no_change"]].sum(axis=1)
    assert np.allclose(shares, 1) and (seen["share_established"] == 0).all()
    assert seen["share_suggestive"].iloc[-1] == 1.0  # all 5 seeds agree
    assert view["width_normal"].is_monotonic_decreasing
    need = view.attrs["seeds_needed"]
    assert need["min_seeds"] == 6 and need["projected_seeds"] >= 6
    both = seed_subsample_intervals(rows + [r | {"duration": 120.0} for r in rows], by="duration")
    assert set(both["duration"]) == {60.0, 120.0}


def test_seeds_needed_grows_with_noise():
    small = seeds_needed(np.log([0.5, 0.55, 0.45, 0.5, 0.52]))
    noisy = seeds_needed(np.log([0.5, 1.5, 0.3, 0.9, 0.6]))
    assert small["projected_seeds"] == 6 < noisy["projected_seeds"]


def test_seed_interval_figure_renders():
    from analysis.render.figures_stats import seed_interval_figure
    fig = seed_interval_figure(seed_subsample_intervals(synthetic_ladder()))
    fig.savefig(io.BytesIO(), format="png")
    assert fig.axes[0].get_yscale() == "log"
    from analysis.render.axes import problems
    assert problems(fig) == []


# --- properties -------------------------------------------------------------------------

positive = st.floats(min_value=1e-2, max_value=1e4, allow_nan=False, allow_infinity=False)
pairs = st.integers(min_value=2, max_value=9).flatmap(
    lambda n: st.tuples(st.lists(positive, min_size=n, max_size=n), st.lists(positive, min_size=n, max_size=n)))


@settings(max_examples=150, deadline=None)
@given(pairs, st.floats(min_value=1e-3, max_value=1e3))
def test_symmetries(pair, c):
    before, after = pair
    fwd, back = paired_change(before, after), paired_change(after, before)
    assert back["p"] == fwd["p"]
    assert back["verdict"] == fwd["verdict"]
    assert fwd["ratio"] == pytest.approx(1 / back["ratio"], rel=1e-12)
    assert fwd["paired_ratio"] == pytest.approx(1 / back["paired_ratio"], rel=1e-9)
    assert (fwd["lo"], fwd["hi"]) == pytest.approx((1 / back["hi"], 1 / back["lo"]), rel=1e-9)
    scaled = paired_change(np.multiply(before, c), np.multiply(after, c))
    assert scaled["p"] == fwd["p"]
    assert scaled["ratio"] == pytest.approx(fwd["ratio"], rel=1e-9)


def test_verdict_cells_table_has_every_step_and_metric():
    rng = np.random.default_rng(3)
    rungs = ["a", "b", "c"]
    runs = [{"rung": r, "seed": s, **{m: float(rng.lognormal(3, 0.1)) * (0.3 if r == "c" else 1.0)
                                      for m in paired.METRICS}}
            for r in rungs for s in range(1, 9)]
    table = paired.verdict_cells(paired.ladder_verdicts(runs))
    assert list(table.index) == ["a -> b", "b -> c", "end to end"]
    assert list(table.columns) == ["p50", "p99", "p99.9", "max", "TTFT p50"]
    assert table.loc["end to end", "p99"].endswith("established")
    assert table.loc["end to end", "p99"].startswith("0.3")


@pytest.mark.parametrize("n, best", [(1, "insufficient runs"), (3, "no change"), (4, "no change"),
                                     (5, "suggestive"), (6, "established")])
def test_strongest_verdict_follows_the_p_value_floor(n, best):
    assert signflip.strongest_verdict(n) == best
