"""The preemption chapter's sentences, each computed from its tables (book/preemption).

Every function takes what analysis/across_runs/preemption_modes.py makes and returns one or more
sentences; an empty table or a missing mode gets a sentence saying so, never a number
that was not measured.
"""
from __future__ import annotations

import pandas as pd

from .preemption_modes import HALF, ONSET_PER_MIN
from .load_sweep import crossing_sentence
from .tables import METRIC_NAMES

NAMES = {**METRIC_NAMES, "tok_per_s": "throughput"}


def _num(x, fmt=".2f") -> str:
    return "n/a" if x is None or x != x else format(x, fmt)


def availability_sentence(available: bool, n_recompute: int) -> str:
    if not available:
        return ("This engine version has no recompute preemption mode (its configuration has no "
                "preempt_mode knob), so this build measured swap only: the comparisons with "
                "recompute below are empty, and the model's account of swap stands alone.")
    if n_recompute == 0:
        return "This engine has a recompute mode, but this build made no recompute runs."
    return (f"This engine preempts by swap (the article's engine, and every rung of the ladder) or "
            f"by recompute (vLLM V1's default); this build made {n_recompute} recompute run(s) beside "
            f"the swap runs it shares with the ladder and the sweep.")


def op_sentence(pairs: pd.DataFrame, table: pd.DataFrame) -> str:
    """Recompute against swap at the operating point, per rung, from mode_pairs/op_table."""
    if pairs.empty:
        return "No recompute runs were paired with swap runs, so the operating point compares nothing."
    out = []
    for rung, g in pairs.groupby("rung", sort=False):
        g = g.set_index("metric")
        parts = ", ".join(f"{NAMES[m]} {g.loc[m, 'ratio']:.2f}x ({g.loc[m, 'verdict']})"
                          for m in ("itl_p99", "itl_p999", "itl_max", "ttft_p50", "tok_per_s") if m in g.index)
        pm = table["preempt_per_min"]
        pre = (f"; preemptions per 60 s {pm.loc[(rung, 'swap')]:.0f} under swap, "
               f"{pm.loc[(rung, 'recompute')]:.0f} under recompute"
               if (rung, "swap") in pm.index and (rung, "recompute") in pm.index else "")
        out.append(f"With {rung}, recompute against swap over {int(g['n'].min())} paired seed(s), "
                   f"medians after over before: {parts}{pre}.")
    return " ".join(out)


INTERLEAVED_MIN = 15.0    # pairs further apart than this were not made in one seed block


def pairing_sentence(timing: pd.DataFrame, pairs: pd.DataFrame, control_rungs: list) -> str:
    """How far apart in time each recompute run and its swap pair were made, and, at a rung
    where neither mode preempted (the same system twice), how much they differed anyway."""
    if timing.empty:
        return "The runs record no start times, so how far apart the paired runs were made is unknown."
    med, top = float(timing["minutes_apart"].median()), float(timing["minutes_apart"].max())
    out = [f"Each recompute run started a median of {med:.0f} min (at most {top:.0f} min) from its swap pair"]
    if top > INTERLEAVED_MIN:
        out[0] += (": the pairs were not made side by side, so the machine's drift between them is part "
                   "of every ratio in this section.")
    else:
        out[0] += f": every pair within {INTERLEAVED_MIN:g} min, made side by side."
    for rung in control_rungs:
        g = pairs[(pairs["rung"] == rung) & pairs["metric"].isin(["itl_p50", "ttft_p50"])].set_index("metric")
        if {"itl_p50", "ttft_p50"} <= set(g.index):
            out.append(f"At {rung}, where neither mode preempted (a median of 0 per 60 s under both), the two "
                       f"modes ran the same system, and recompute against swap read ITL p50 "
                       f"{g.loc['itl_p50', 'ratio']:.2f}x and TTFT p50 {g.loc['ttft_p50', 'ratio']:.2f}x: "
                       f"that much difference between the modes the machine makes alone.")
    return " ".join(out)


def wait_paid_sentence(table: pd.DataFrame) -> str:
    """The victims' wait against what the others paid, per (rung, mode) of op_table."""
    if table.empty:
        return "No runs were found to weigh the victims' wait against the others' cost."
    out = []
    for (rung, mode), row in table.iterrows():
        paid = row["paid_copy_per_min"] if mode == "swap" else row["paid_reprefill_per_min"]
        what = "copying KV out and back" if mode == "swap" else "re-prefilling the victims"
        if not row["victim_wait_per_min"] > 0:
            out.append(f"Under {mode}, {rung} had no victims that came back.")
            continue
        out.append(f"Under {mode}, {rung}'s victims sat evicted {row['victim_wait_per_min']:.1f} s per 60 s, "
                   f"while the steps spent {paid:.2f} s per 60 s {what} "
                   f"({paid / row['victim_wait_per_min']:.1%} of the wait).")
    return " ".join(out)


def crossing_sentences(res_by_mode: dict) -> str:
    """The load at which preemption first holds half the baseline's tail, per mode."""
    return " ".join(crossing_sentence(res, f"under {mode}, preemption's share of baseline tail time", HALF)
                    for mode, res in res_by_mode.items())


def model_sentence(agree: pd.DataFrame, factor: float, mode: str = "swap") -> str:
    """Where the model's preemption rate held within `factor` of the measured, and where not."""
    if agree.empty:
        return f"No measured loads under {mode} to set the model against."
    loads = lambda mask: ", ".join(f"{x:g}x" for x in agree.index[mask]) or "none"   # noqa: E731
    held, failed = agree["holds"].astype(bool), ~agree["holds"].astype(bool)
    verdict = ("held at every load" if failed.sum() == 0 else "failed at every load" if held.sum() == 0
               else "held at some loads and not others")
    over = agree.loc[failed, "model"] > agree.loc[failed, "measured"]
    side = ("" if failed.sum() == 0 else
            f"; where it failed it predicted {'more' if over.all() else 'fewer' if not over.any() else 'more at some loads, fewer at others'}"
            f" preemptions than the runs had")
    where = (f"at {loads(held)}" if failed.sum() == 0 else f"not at {loads(failed)}" if held.sum() == 0
             else f"at {loads(held)} and not at {loads(failed)}")
    return (f"Under {mode}, the model's preemptions per 60 s (median over seeds) {verdict} of the sweep, within a "
            f"factor of {factor:g} of the measured (both under {ONSET_PER_MIN:g} counts as agreement): {where}{side}.")


def onset_sentence(measured: dict, model: dict, fluid_load: float | None, what: str) -> str:
    """Measured and predicted loads at which something sets in, with the queueing
    estimate's where it has one (fluid_load None: it has none)."""
    def one(res):
        if res["n_seeds"] == 0:
            return "was not measured"
        if res["n_crossed"] == 0:
            return f"did not within the sweep ({res['levels'][0]:.2f}-{res['levels'][1]:.2f}x)"
        rng = f" (seeds {res['lo']:.2f}-{res['hi']:.2f}x)" if res["n_crossed"] > 1 else ""
        miss = (f", in {res['n_crossed']} of {res['n_seeds']} seeds" if res["n_crossed"] < res["n_seeds"] else "")
        return f"at {res['median']:.2f}x{rng}{miss}"
    fl = ("" if fluid_load is None else ", and by the queueing estimate "
          + ("beyond the loads it was asked about" if fluid_load != fluid_load else f"at {fluid_load:.2f}x"))
    gap = ""
    if measured.get("n_crossed") and model.get("n_crossed"):
        d = model["median"] / measured["median"] - 1
        gap = f"; the model is {abs(d):.0%} {'above' if d > 0 else 'below'} the runs"
    return f"{what[0].upper() + what[1:]}: in the runs {one(measured)}, in the model {one(model)}{fl}{gap}."


def watermark_cost_sentence(model: dict, measured: dict) -> str:
    """The watermark's TTFT cost: the model's (the watermark alone) and the ladder's step."""
    if not model.get("n") or model["without"] != model["without"]:
        return "The model was not run for the watermark rung, so its TTFT cost is not predicted."
    m = (f"In the model, the watermark alone moves the median TTFT p50 from {model['without']:.0f} ms to "
         f"{model['with']:.0f} ms ({model['with'] / model['without']:.2f}x)")
    if not measured.get("n"):
        return m + "; the ladder's step to the watermark was not measured in this build."
    return (m + f"; in the ladder's step to the watermark rung it moved from {measured['without']:.0f} ms "
            f"to {measured['with']:.0f} ms ({measured['ratio']:.2f}x, {measured['n']} seed(s)).")


def kv_demand_sentence(peak: float, pool: int, mean_used: float, preemptions: float) -> str:
    """What one simulated run at the operating point says about demand against the pool."""
    if peak != peak:
        return "The model was not run at the operating point."
    over = peak / pool
    return (f"In the model's run at the operating point (baseline, swap, first seed), KV demand peaked at "
            f"{peak:.0f} blocks, {over:.2f}x the pool of {pool}, while the blocks in use averaged "
            f"{mean_used:.0f}; it preempted {preemptions:.0f} times per 60 s.")
