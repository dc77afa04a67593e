"""In what order a build's runs were made, read back from each raw log's provenance.

The engine runs a ladder seed by seed and shuffles the rungs within each seed
(engine/runs/order.py), so a drift of the machine over the hours of a build spreads
over every rung instead of passing for one rung's effect. Each run records its place
in that schedule and the wall-clock time it started.
"""
from __future__ import annotations

import pandas as pd


def run_order(logs) -> pd.DataFrame:
    """One row per run, in the order the runs started: seed (block), position in block,
    rung, and minutes since the first run started. Runs that predate the schedule have
    NaN positions."""
    rows = []
    for log in logs:
        prov = log.provenance or {}
        sched = prov.get("schedule") or {}
        rows.append({"seed": log.seed, "rung": log.rung, "in_block": sched.get("in_block"),
                     "position": sched.get("position"), "started_unix": prov.get("started_unix")})
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    df = df.sort_values(["started_unix", "seed"], na_position="last").reset_index(drop=True)
    df["minutes"] = (df["started_unix"] - df["started_unix"].min()) / 60.0
    return df.drop(columns="started_unix")


def order_grid(order: pd.DataFrame) -> pd.DataFrame:
    """Rungs as rows, seeds as columns, each cell the rung's place (1-based) within its
    seed's block, in the order the runs actually started."""
    if order.empty:
        return order
    o = order.copy()
    o["place"] = o.groupby("seed").cumcount() + 1
    return o.pivot(index="rung", columns="seed", values="place")


def order_sentence(order: pd.DataFrame) -> str:
    """How the runs were ordered, computed from what the logs recorded."""
    if order.empty:
        return "No runs were found, so no order can be shown."
    recorded = order["position"].notna()
    if not recorded.all():
        return (f"{int((~recorded).sum())} of {len(order)} runs were made by an earlier version of the engine "
                f"that did not record its schedule, so their order is shown by start time only.")
    seeds = order["seed"].tolist()
    switches = sum(a != b for a, b in zip(seeds, seeds[1:]))
    seed_major = switches == len(set(seeds)) - 1          # each seed's runs contiguous
    same = order.groupby("seed")["rung"].apply(tuple).nunique() == 1
    return (f"The {len(order)} runs were made {'seed by seed' if seed_major else 'in an interleaved order'} "
            f"over {order['minutes'].max():.0f} minutes, with the rungs "
            f"{'in the same order for every seed' if same else 'in a different shuffled order for each seed'} "
            f"(the grid gives each rung's place within its seed).")
