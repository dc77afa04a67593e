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


def test_paired_groups_run_inside_their_partners_seed_blocks():
    """Recompute runs are compared run for run with the ladder's swap runs: each is made in
    the ladder's block of its own seed, shuffled with it, and on the same worker, not after
    the whole ladder, where the machine's drift would pass for the preemption mode's effect."""
    from engine.runs.preemption_runs import preemption_specs
    from engine.runs.workers import deal_blocks
    ladder = engine.profile_specs("article", rate=7.0)
    recompute = [s for s in preemption_specs("article", rate=7.0) if s.config.preempt_mode == "recompute"]
    assert recompute and {s.group for s in recompute} == {"preemption"}
    run = execution_order(ladder + recompute)
    assert sorted(s.path for s in run) == sorted(s.path for s in ladder + recompute)
    assert [s.seed for s in run] == sorted(s.seed for s in run)          # one block per seed, each whole
    assert [s.schedule["position"] for s in run] == list(range(len(run)))
    followed = []
    for seed in sorted({s.seed for s in run}):
        groups = [s.group for s in run if s.seed == seed]
        assert groups.count("preemption") == 2 and groups.count("ladder") == len(engine.RUNGS)
        followed.append("ladder" in groups[groups.index("preemption") + 1:])
    assert any(followed)                                 # shuffled in, not appended to each block
    for worker in deal_blocks(run, 2):                   # a seed's pair stays on one worker
        for s in worker:
            if s.group == "preemption":
                assert any(o.group == "ladder" and o.seed == s.seed for o in worker)


def test_a_group_alone_keeps_its_schedule():
    specs = engine.profile_specs("quick", rate=7.0)
    assert [s.schedule for s in execution_order(specs)] == sorted((s.schedule for s in specs),
                                                                  key=lambda d: d["position"])
