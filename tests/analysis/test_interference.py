"""The interference control: its table and verdicts on known numbers, and its two arms
measured for real (alone, and beside a neighbour on another core at the same time)."""
import json

import numpy as np
import pandas as pd
import pytest

from analysis.instrument import interference_scores as ifc
from engine.runs import topology


def _run(seed, f, jitter=1.0):
    return {"seed": seed, "itl_p50": 10 * f * jitter, "itl_p99": 50 * f * jitter, "itl_p999": 90 * f * jitter,
            "itl_max": 200 * f * jitter, "tail_share": {"kernel": 0.5, "preempt": 0.3, "gc": 0.0},
            "preemptions": 10, "duration": 3.0}


def test_a_change_larger_than_the_seed_spread_is_flagged_and_cautioned():
    alone = [_run(s, 1.0, 1 + 0.02 * s) for s in (1, 2, 3, 4)]
    beside = [_run(s, 1.5, 1 + 0.02 * s) for s in (1, 2, 3, 4)]
    table = ifc.interference_table(alone, beside)
    row = table.set_index("measure").loc["p99.9"]
    assert row["change"] == pytest.approx(1.5) and ifc.flag(row["beyond_spread"]) is True and row["n"] == 4
    assert ifc.flag(table.set_index("measure").loc["preemptions per 60 s", "beyond_spread"]) is False  # 200 both
    words = ifc.interference_sentence(table, 2)
    assert words.startswith("Caution: measured beside 1 other run at a time, p50, p99, p99.9, max moved beyond")


def test_a_change_within_the_seed_spread_is_not():
    alone = [_run(s, 1.0, 1 + 0.2 * s) for s in range(1, 7)]
    beside = [_run(s, 1.01, 1 + 0.2 * s) for s in range(1, 7)]
    beside[0]["itl_p999"] *= 0.97            # one seed the other way: the test finds no change
    table = ifc.interference_table(alone, beside)
    assert ifc.moved(table) == []
    assert ifc.interference_sentence(table, 2).startswith("Measured beside 1 other run at a time, no measure")
    assert "within the noise" in ifc.interference_sentence(table, 2)
    shown = ifc.display_table(table)
    assert shown.loc["p99.9", "change"] == "1.00x" and shown.loc["preempt share of tail time", "alone"] == "30.0%"
    assert shown.loc["p99.9", "verdict"] == "no change detected"


def test_two_seeds_cannot_judge_and_the_sentence_does_not_clear_the_runs():
    """The quick build's control has 2 seeds an arm: the smallest p they reach is 0.5, so no
    row may read "no change", and the sentence may not say the runs read as if alone."""
    alone = [_run(s, 1.0, 1 + 0.2 * s) for s in (1, 2)]
    beside = [_run(s, 1.05, 1 + 0.2 * s) for s in (1, 2)]
    table = ifc.interference_table(alone, beside)
    assert ifc.moved(table) == []
    assert set(table["verdict"]) == {"cannot be judged with 2 seeds"}
    words = ifc.interference_sentence(table, 2)
    assert "cannot judge these changes (the smallest p-value 2 seeds can reach is 0.5)" in words
    assert "within the noise" not in words and "at least 5 seeds" in words


def test_one_seed_or_one_core_cannot_judge():
    table = ifc.interference_table([_run(1, 1.0)], [_run(1, 2.0)])
    assert {ifc.flag(v) for v in table["beyond_spread"]} == {None}
    assert "cannot be told" in ifc.interference_sentence(table, 2)
    assert "fewer than two physical cores" in ifc.interference_sentence(pd.DataFrame(), None)


def test_capacity_beyond_the_workers_range():
    row = ifc.capacity_row({"k": 2, "alone": 100.0, "beside": 80.0, "beside_each": [79.0, 81.0], "ratio": 0.8})
    assert ifc.flag(row["beyond_spread"]) is True and row["change"] == 0.8
    assert ifc.capacity_row({}) == {}


@pytest.mark.skipif(len(topology.measuring_cpus()) < 2, reason="needs two physical cores")
def test_the_parallel_arm_really_ran_side_by_side(run_cache):
    from engine.runs.interference import interference_specs
    from analysis.engine_link import ensure_runs
    arms = interference_specs("smoke")
    assert arms["k"] == 2 and [s.seed for s in arms["alone"]] == [s.seed for s in arms["beside"]]
    assert {s.concurrency for s in arms["alone"]} == {1} and {s.concurrency for s in arms["beside"]} == {2}
    ensure_runs(arms["alone"] + arms["beside"], progress=False)
    prov = []
    for s in arms["beside"]:
        with np.load(s.path) as z:
            prov.append((json.loads(str(z["provenance"])), float(z["wall"])))
    spans = [(p["started_unix"], p["started_unix"] + w) for p, w in prov]
    assert max(a for a, _ in spans) < min(b for _, b in spans)            # the runs overlapped in time
    assert len({p["schedule"]["cpus_allowed"] for p, _ in prov}) == 2       # on two cores
    found = ifc.control("smoke")
    assert found["k"] == 2 and len(found["table"]) > 5 and found["sentence"]
