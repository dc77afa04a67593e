"""The engine's decisions on fixed traces under a deterministic clock match the recorded
ones exactly: for every rung, every control and both preemption modes (the records are
tests/data/decisions; `python -m engine.decisions --write tests/data/decisions` remakes them
after a deliberate change to what the engine decides)."""
import json

import pytest

from engine import decisions as D
from engine.serve.config import Config

from tests.support.paths import DATA as TEST_DATA

DATA = TEST_DATA / "decisions"
CASES = D.cases()


def test_every_case_has_a_record_and_every_record_a_case():
    assert sorted(p.stem for p in DATA.glob("*.json")) == sorted(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_decisions_match_the_record(name):
    cfg, trace = CASES[name]
    want = json.loads((DATA / f"{name}.json").read_text())
    # a knob the record predates takes its default (the record was made under it)
    assert {**Config().to_dict(), **want["config"]} == cfg.to_dict() and want["trace"] == trace
    got = D.record(D.run(cfg, trace))
    for part in ("steps", "requests"):
        for col, values in want[part].items():
            assert got[part][col] == values, f"{name}: {part}.{col} differs"
    assert got["injections"] == want["injections"]


def test_the_records_exercise_every_decision():
    recs = {n: json.loads((DATA / f"{n}.json").read_text()) for n in CASES}
    base = recs["baseline--poisson"]["steps"]
    assert sum(base["evicted"]) > 0 and sum(base["readmitted"]) > 0 and 0 in base["graph"]
    assert any(n > 0 for n in base["n_prefill_tok"])
    injected = recs["control-injected"]["injections"]
    assert sorted(k for k, _, _ in injected) == [0, 1, 2, 3]


def test_the_fake_clock_makes_runs_repeat_and_a_changed_knob_changes_decisions():
    cfg, trace = CASES["baseline--burst"]
    one, two = (D.record(D.run(cfg, trace)) for _ in range(2))
    assert one == two
    import dataclasses
    other = D.record(D.run(dataclasses.replace(cfg, swap_in_headroom=40), trace))
    assert other["steps"] != one["steps"]
