"""The run order: blocked by seed, shuffled within blocks, a permutation stable per seed."""
import engine
from engine.runs.order import block_permutation, blocked_order, execution_order


def test_block_permutation_is_a_stable_permutation():
    for seed in (1, 2, 3):
        p = block_permutation(7, seed)
        assert sorted(p) == list(range(7)) and p == block_permutation(7, seed)
    assert len({tuple(block_permutation(7, s)) for s in range(1, 6)}) > 1   # seeds differ


def test_profile_runs_in_seed_blocks_shuffled_within():
    specs = engine.profile_specs("article", rate=7.0)
    assert [(s.rung, s.seed) for s in specs[:2]] == [("baseline", 1), ("baseline", 2)]   # listing order kept
    run = execution_order(specs)
    assert sorted(map(id, run)) == sorted(map(id, specs))
    assert [s.schedule["position"] for s in run] == list(range(len(specs)))
    blocks = [s.seed for s in run]
    assert blocks == sorted(blocks)                       # each seed's rungs run before the next seed's
    for seed in (1, 2, 3, 4, 5):
        rungs = [s.rung for s in run if s.seed == seed]
        assert sorted(rungs) == sorted(engine.RUNGS)
    orders = {tuple(s.rung for s in run if s.seed == seed) for seed in (1, 2, 3, 4, 5)}
    assert len(orders) > 1                               # the shuffle differs between blocks
    assert execution_order(engine.profile_specs("article", rate=7.0)) == run   # stable across calls


def test_groups_run_one_after_another():
    specs = blocked_order(engine.profile_specs("quick", rate=7.0)) + engine.profile_specs("quick", overload=True,
                                                                                          rate=7.0)
    groups = [s.group for s in execution_order(specs)]
    assert groups == sorted(groups, key=["ladder", "overload"].index)
