"""The run order read back from provenance, and its computed sentence, both ways."""
from types import SimpleNamespace

from analysis.across_runs import runorder


def _log(seed, rung, position, in_block, t):
    sched = {} if position is None else {"position": position, "in_block": in_block, "block": seed}
    return SimpleNamespace(seed=seed, rung=rung, provenance={"schedule": sched, "started_unix": t})


def test_seed_blocks_with_different_shuffles():
    logs = [_log(1, "a", 0, 0, 0.0), _log(1, "b", 1, 1, 60.0), _log(2, "b", 2, 0, 120.0), _log(2, "a", 3, 1, 180.0)]
    order = runorder.run_order(logs[::-1])
    assert list(order["rung"]) == ["a", "b", "b", "a"] and order["minutes"].max() == 3.0
    grid = runorder.order_grid(order)
    assert grid.loc["a", 1] == 1 and grid.loc["a", 2] == 2
    s = runorder.order_sentence(order)
    assert "seed by seed over 3 minutes" in s and "different shuffled order for each seed" in s


def test_same_order_and_unrecorded_runs_are_said():
    same = runorder.run_order([_log(1, "a", 0, 0, 0.0), _log(1, "b", 1, 1, 1.0),
                               _log(2, "a", 2, 0, 2.0), _log(2, "b", 3, 1, 3.0)])
    assert "in the same order for every seed" in runorder.order_sentence(same)
    old = runorder.run_order([_log(1, "a", None, None, 0.0), _log(1, "b", 1, 1, 1.0)])
    assert runorder.order_sentence(old).startswith("1 of 2 runs were made by an earlier version")


def test_interleaved_seeds_are_not_called_blocks():
    mixed = runorder.run_order([_log(1, "a", 0, 0, 0.0), _log(2, "a", 1, 0, 1.0),
                                _log(1, "b", 2, 1, 2.0), _log(2, "b", 3, 1, 3.0)])
    assert "in an interleaved order" in runorder.order_sentence(mixed)
