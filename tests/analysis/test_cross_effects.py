"""Did a fix act on the causes it does not target? Tail time by cause, paired by seed
against the seed-to-seed spread (analysis/across_runs/cross_effects.py), and where the fixes
that hold work back put their price (analysis/across_runs/fix_costs.py)."""
import numpy as np
import pandas as pd
import pytest

from analysis.core.schemes import CAUSES
from analysis.across_runs import cross_effects as X
from analysis.across_runs import fix_costs

ORDER = ["baseline", "+gc.freeze", "+compact history", "+graphs to 48", "+budget 256",
         "+tokenize off-loop", "+admit watermark"]


def test_tail_time_counts_only_gaps_at_or_above_p99_per_minute():
    n = 1000
    gaps = pd.DataFrame({"gap_ms": np.r_[np.full(n - 10, 10.0), np.full(10, 100.0)]})
    for c in CAUSES:
        gaps[c] = 0.0
    gaps.loc[gaps["gap_ms"] == 100.0, "preempt"] = 60.0
    gaps.loc[gaps["gap_ms"] == 10.0, "prefill"] = 5.0        # body time: not counted
    t = X.tail_time(gaps, duration=30.0)
    assert t["preempt"] == pytest.approx(10 * 60.0 * 2) and t["prefill"] == 0.0
    assert t["total"] == pytest.approx(10 * 100.0 * 2)


def _times(values):
    """values: {(rung, seed): {cause: ms}} -> a tail_times frame (total = 1000)."""
    rows = [{"rung": r, "seed": s, **{c: v.get(c, 0.0) for c in CAUSES}, "total": 1000.0}
            for (r, s), v in values.items()]
    return pd.DataFrame(rows)


def _watermark(prefill_after, seeds=(1, 2, 3)):
    vals = {}
    for i, s in enumerate(seeds):
        vals[("+tokenize off-loop", s)] = {"preempt": 600.0 + 10 * i, "prefill": 100.0 + 2 * i}
        vals[("+admit watermark", s)] = {"preempt": 1.0, "prefill": prefill_after + 2 * i}
    return _times(vals)


def test_a_fix_that_leaves_the_others_within_the_spread():
    eff = X.fix_effects(_watermark(101.0, seeds=(1, 2, 3, 4, 5)), ORDER)
    row = eff[(eff["fix"] == "+admit watermark") & (eff["cause"] == "prefill")].iloc[0]
    assert row["moved"] is False
    target = eff[(eff["fix"] == "+admit watermark") & (eff["cause"] == "preempt")].iloc[0]
    assert target["moved"] is True
    assert row["judged"] == "no change detected" and target["judged"] == "moved"
    s = X.others_sentence(eff)
    assert s.startswith("Each fix left the tail time of the causes it does not target within")


def test_a_comparison_that_could_not_see_its_own_target_drop_concludes_nothing():
    # two seeds, one of which had almost no GC time: the target's 99.96% drop reads "within
    # spread", so "a fix did nothing measurable for the others" would rest on a blind test
    vals = {("+gc.freeze", 1): {"gc": 2622.0, "prefill": 100.0}, ("+gc.freeze", 2): {"gc": 0.5, "prefill": 90.0},
            ("+compact history", 1): {"gc": 1.0, "prefill": 101.0},
            ("+compact history", 2): {"gc": 0.4, "prefill": 91.0}}
    eff = X.fix_effects(_times(vals), ORDER)
    gc = eff[eff["cause"] == "gc"].iloc[0]
    assert gc["moved"] is False and gc["judged"] == "cannot be judged with 2 seeds"
    s = X.others_sentence(eff)
    assert "did nothing measurable" not in s and "could not have shown it" in s
    assert "gc at +compact history, 1311.2 -> 0.7 ms per minute" in s
    assert "cannot be judged with 2 seeds" in X.effects_cells(eff).loc[("+compact history", "gc (its target)"),
                                                                        "moved?"]


def test_a_fix_that_moves_another_cause_is_named():
    eff = X.fix_effects(_watermark(300.0), ORDER)
    s = X.others_sentence(eff)
    assert s.startswith("Not every fix left the other causes alone")
    assert "+admit watermark also moved prefill (102 -> 302 ms per minute)" in s


def test_one_seed_cannot_be_judged_and_no_pairs_are_said():
    eff = X.fix_effects(_watermark(300.0, seeds=(1,)), ORDER)
    assert eff["moved"].isna().all()
    assert "no seed-to-seed spread" in X.others_sentence(eff)
    assert X.others_sentence(pd.DataFrame()).startswith("No fix ran beside the rung above it")


def _shares(before, after, seeds=(1, 2, 3)):
    rows = []
    for s in seeds:
        rows.append({"rung": "+tokenize off-loop", "seed": s, **{f"tail_share_{c}": before.get(c, 0.0) for c in CAUSES}})
        rows.append({"rung": "+admit watermark", "seed": s, **{f"tail_share_{c}": after.get(c, 0.0) for c in CAUSES}})
    return pd.DataFrame(rows)


def test_shares_that_shift_only_because_they_are_relative():
    shares = _shares({"preempt": 0.8, "prefill": 0.1}, {"preempt": 0.0, "prefill": 0.6})
    eff = X.fix_effects(_watermark(101.0), ORDER, shares=shares)
    s = X.relative_sentence(eff)
    assert s.startswith("Of the 1 other-cause share(s) that shifted by 5% or more at a fix, 1 kept")
    assert "moved in time as well" not in s
    moved = X.relative_sentence(X.fix_effects(_watermark(300.0), ORDER, shares=shares))
    assert "0 kept" in moved and "prefill at +admit watermark moved in time as well" in moved
    still = _shares({"preempt": 0.8, "prefill": 0.1}, {"preempt": 0.78, "prefill": 0.12})
    assert X.relative_sentence(X.fix_effects(_watermark(101.0), ORDER, shares=still)).startswith("No other cause")
    assert "cannot be read" in X.relative_sentence(X.fix_effects(_watermark(101.0), ORDER))


def test_effects_cells_marks_the_target():
    cells = X.effects_cells(X.fix_effects(_watermark(101.0, seeds=(1, 2, 3, 4, 5)), ORDER))
    assert cells.loc[("+admit watermark", "preempt (its target)"), "moved?"] == "moved"
    assert cells.loc[("+admit watermark", "prefill"), "moved?"] == "within spread (every seed up)"
    three = X.effects_cells(X.fix_effects(_watermark(101.0), ORDER))
    assert three.loc[("+admit watermark", "prefill"), "moved?"] == (
        "within spread (every seed up); cannot be judged with 3 seeds")


def test_a_target_that_fell_in_every_seed_within_the_spread_says_so():
    vals = {}
    for i, s in enumerate((1, 2, 3, 4, 5)):                 # one seed's level far above the others'
        vals[("+tokenize off-loop", s)] = {"preempt": (20.0, 600.0, 900.0, 700.0, 650.0)[i], "prefill": 100.0}
        vals[("+admit watermark", s)] = {"preempt": 1.0, "prefill": 100.0 + (i - 1)}
    cells = X.effects_cells(X.fix_effects(_times(vals), ORDER))
    # the spread (880) exceeds the target's whole median time (650): even its vanishing would
    # not pass, so the cell says the comparison could not judge it
    assert cells.loc[("+admit watermark", "preempt (its target)"), "moved?"] == (
        "within spread (every seed down); cannot be judged with 5 seeds")
    assert cells.loc[("+admit watermark", "prefill"), "moved?"] == "within spread"    # seeds disagree


def _ttft_runs(budget_after, watermark_after, seeds=(1, 2)):
    runs = []
    for s in seeds:
        runs += [{"rung": "+graphs to 48", "seed": s, "ttft_p50": 100.0},
                 {"rung": "+budget 256", "seed": s, "ttft_p50": budget_after},
                 {"rung": "+tokenize off-loop", "seed": s, "ttft_p50": 100.0},
                 {"rung": "+admit watermark", "seed": s, "ttft_p50": watermark_after}]
    return runs


def test_ttft_cost_both_ways():
    s = fix_costs.ttft_cost_sentence(_ttft_runs(150.0, 900.0), ORDER)
    assert ("smaller token budget moved TTFT p50 100 ms -> 150 ms (it rose in 2 of 2 paired run(s); "
            "paired verdict: cannot be judged with 2 seeds)") in s
    assert s.endswith("both made the first token later in every run, as in the article.")
    assert "neither made the first token later" in fix_costs.ttft_cost_sentence(_ttft_runs(90.0, 80.0), ORDER)
    assert "only the admission watermark made" in fix_costs.ttft_cost_sentence(_ttft_runs(90.0, 900.0), ORDER)
    part = [r for r in _ttft_runs(150.0, 900.0) if r["rung"] != "+budget 256"]
    assert "(the smaller token budget rung is not in this build)" in fix_costs.ttft_cost_sentence(part, ORDER)
    assert "cannot be read" in fix_costs.ttft_cost_sentence([], ORDER)
