"""benchmarks/bench_carry.py's plan, without its runs: the three conditions, the check seeds
added to fill the last group, and a recorded order that mixes the conditions."""
import importlib.util

import pytest

from engine.runs.calibrate import CHECK_SEEDS
from engine.runs.offered import decode_demand
from tests.support.paths import REPO

spec = importlib.util.spec_from_file_location("bench_carry", REPO / "benchmarks" / "bench_carry.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def test_the_carried_condition_asks_the_checks_decode_demand_and_the_others_run_at_the_record():
    conds = bench.conditions(13.2, CHECK_SEEDS, (1, 2, 3, 4, 5), 60.0)
    assert conds[bench.CHECKS] == (CHECK_SEEDS, 13.2)
    assert conds[bench.UNCARRIED] == ((1, 2, 3, 4, 5), 13.2)
    seeds, carried = conds[bench.CARRIED]
    assert seeds == (1, 2, 3, 4, 5) and carried != 13.2
    want = decode_demand(CHECK_SEEDS, 60.0, 13.2)
    assert abs(decode_demand(seeds, 60.0, carried) / want - 1) < abs(decode_demand(seeds, 60.0, 13.2) / want - 1)


def test_check_seeds_are_added_until_the_runs_fill_whole_groups():
    conds = bench.conditions(13.2, (101, 102, 103), (1, 2, 3, 4, 5), 60.0)      # 13 runs
    assert bench.padded(conds, 2)[bench.CHECKS][0] == (101, 102, 103, 104)
    assert bench.padded(conds, 1) == conds
    assert bench.padded(conds, 4)[bench.CHECKS][0] == (101, 102, 103, 104, 105, 106)
    assert bench.padded(conds, 2)[bench.CARRIED] == conds[bench.CARRIED]        # only the checks grow


def test_the_order_is_every_run_once_fixed_by_its_seed_and_not_grouped_by_condition():
    conds = bench.padded(bench.conditions(13.2, (101, 102, 103), (1, 2, 3, 4, 5), 60.0), 2)
    order = bench.run_order(conds, 46)
    assert sorted(order) == sorted((c, s) for c, (seeds, _) in conds.items() for s in seeds)
    assert order == bench.run_order(conds, 46) and order != bench.run_order(conds, 47)
    firsts = [c for c, _ in order[:len(conds[bench.CHECKS][0])]]
    assert len(set(firsts)) > 1


def test_a_bad_repeat_count_or_rate_is_refused_by_name_before_any_run(monkeypatch, capsys):
    for argv, word in ((["--repeats", "0"], "--repeats"), (["--rate", "-3"], "--rate")):
        monkeypatch.setattr("sys.argv", ["bench_carry.py", *argv])
        with pytest.raises(SystemExit) as e:
            bench.main()
        assert e.value.code == 2 and word in capsys.readouterr().err
