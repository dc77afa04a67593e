"""The order runs are made in: blocked by seed, conditions shuffled within each block.

This machine kind's speed drifts by about 20% from hour to hour, so running rung after
rung would let a drift pass for a rung's effect. Each seed is a block (every condition
of that seed runs before the next seed starts), and within a block the conditions are
shuffled by a generator fixed by (ORDER_SEED, block seed): the order is random with
respect to the rungs, yet the same on every build, and it is recorded with each run.

Groups run one after another, except a group whose runs are compared run for run with
another group's (the preemption chapter's recompute runs against the ladder's and the
sweep's swap runs): it is made inside its partner's seed blocks, shuffled with the
partner's runs. Made after the whole partner group instead, it ran an hour or more later
than the runs it is paired with, and the drift passed for the preemption mode's effect.
"""
from __future__ import annotations

import dataclasses

import numpy as np

ORDER_SEED = 20261008      # the article's correction date; any fixed number would do
# group -> the group it is paired with, run for run; they are ordered as one
PAIRED_WITH = {"preemption": "ladder", "preemption-sweep": "sweep"}


def ordering_unit(group: str) -> str:
    """The group whose seed blocks a group's runs are made in (its own, unless paired)."""
    return PAIRED_WITH.get(group, group)


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


def interleave_paired(specs: list) -> list:
    """The same specs, where an ordering unit holds more than one group (a group and the
    one it is paired with), rescheduled as one blocked order: each seed's runs of both
    groups in one block, shuffled together. Units of one group keep their schedule."""
    units: dict[str, list[int]] = {}
    for i, s in enumerate(specs):
        units.setdefault(ordering_unit(s.group), []).append(i)
    out = list(specs)
    for members in units.values():
        if len({specs[i].group for i in members}) > 1:
            for i, s in zip(members, blocked_order([specs[i] for i in members])):
                out[i] = s
    return out


def execution_order(specs: list) -> list:
    """The order to run specs in: ordering units (ladder with the runs paired with it,
    overload, ...) one after another as they first appear, each by its schedule position
    (unscheduled specs keep their place)."""
    specs = interleave_paired(specs)
    first = {}
    for i, s in enumerate(specs):
        first.setdefault(ordering_unit(s.group), i)
    keyed = [(first[ordering_unit(s.group)], s.schedule.get("position", i), i, s) for i, s in enumerate(specs)]
    return [s for *_, s in sorted(keyed, key=lambda t: t[:3])]
