"""The order runs are made in: blocked by seed, conditions shuffled within each block.

This machine kind's speed drifts by about 20% from hour to hour, so running rung after
rung would let a drift pass for a rung's effect. Each seed is a block (every condition
of that seed runs before the next seed starts), and within a block the conditions are
shuffled by a generator fixed by (ORDER_SEED, block seed): the order is random with
respect to the rungs, yet the same on every build, and it is recorded with each run.
"""
from __future__ import annotations

import dataclasses

import numpy as np

ORDER_SEED = 20261008      # the article's correction date; any fixed number would do


def block_permutation(n: int, block_seed: int) -> list[int]:
    """A permutation of range(n), stable for its block seed."""
    return [int(i) for i in np.random.default_rng([ORDER_SEED, int(block_seed)]).permutation(n)]


def blocked_order(specs: list) -> list:
    """The same specs, in the same (listing) order, each given its schedule: its block
    (seed), its position in the block and its position overall. Blocks follow the order
    in which seeds first appear; conditions are shuffled within each block."""
    blocks: dict[int, list[int]] = {}
    for i, s in enumerate(specs):
        blocks.setdefault(s.seed, []).append(i)
    schedule, k = {}, 0
    for seed, members in blocks.items():
        for j, p in enumerate(block_permutation(len(members), seed)):
            schedule[members[p]] = {"block": seed, "in_block": j, "position": k, "of": len(specs)}
            k += 1
    return [dataclasses.replace(s, schedule=schedule[i]) for i, s in enumerate(specs)]


def execution_order(specs: list) -> list:
    """The order to run specs in: groups (ladder, overload, ...) one after another as they
    first appear, each group by its schedule position (unscheduled specs keep their place)."""
    first = {}
    for i, s in enumerate(specs):
        first.setdefault(s.group, i)
    keyed = [(first[s.group], s.schedule.get("position", i), i, s) for i, s in enumerate(specs)]
    return [s for *_, s in sorted(keyed, key=lambda t: t[:3])]
