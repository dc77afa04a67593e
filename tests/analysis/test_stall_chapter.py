"""The stall chapter's table of stalls and its hypothesis verdict, on known answers."""
import math

import pandas as pd
import pytest

from analysis import CAUSES
from analysis.instrument.knobs import ladder_knobs
from analysis.render import hypothesis, stall_kinds


# ---------------------------------------------------------------- the verdict
def test_the_hypothesis_holds_when_ordinary_gaps_are_mostly_forward_and_tail_gaps_are_not():
    assert hypothesis.verdict(0.98, 0.23) == "holds on this run"


@pytest.mark.parametrize("ordinary, tail, words", [
    (0.98, 0.80, "at least half of a tail gap too"),
    (0.40, 0.20, "not most of an ordinary gap"),
    (0.40, 0.80, "at most half of an ordinary gap and at least half of a tail gap"),
])
def test_the_hypothesis_fails_and_says_which_half_failed(ordinary, tail, words):
    v = hypothesis.verdict(ordinary, tail)
    assert v.startswith("does not hold") and words in v


def test_mostly_means_more_than_half_on_both_sides():
    assert hypothesis.verdict(0.5, 0.2).startswith("does not hold")   # half is not most
    assert hypothesis.verdict(0.51, 0.5).startswith("does not hold")  # nor is the other half
    assert hypothesis.verdict(0.51, 0.49) == "holds on this run"


@pytest.mark.parametrize("ordinary, tail", [(math.nan, 0.2), (0.9, math.nan)])
def test_no_verdict_without_both_kinds_of_gap(ordinary, tail):
    assert hypothesis.verdict(ordinary, tail).startswith("cannot be checked")


# ---------------------------------------------------------------- the table
def test_the_table_has_every_cause_once_grouped_by_shape():
    table = stall_kinds.stall_table()
    assert len(table) == len(CAUSES) == len({s.cause for s in stall_kinds.STALLS})
    shapes = list(table["how it reaches you"])
    assert shapes == sorted(shapes, key=stall_kinds.SHAPES.index)


def test_the_knob_column_comes_from_the_ladder():
    table = stall_kinds.stall_table().set_index("stall")
    ladder = ladder_knobs()
    budget = ladder[ladder["knob"] == "token_budget"].iloc[0]
    assert table.loc["prefill chunk", "knob here (rung)"] == (
        f"token_budget: {budget['from']} → {budget['to']} ({budget['rung']})")
    assert table.loc["garbage collection", "knob here (rung)"].count(";") == 1   # two rungs
    assert stall_kinds.NO_RUNG not in "".join(table["knob here (rung)"])


def test_a_knob_no_rung_changes_is_said_so():
    ladder = pd.DataFrame([{"rung": "+x", "knob": "x", "from": "1", "to": "2"}])
    assert stall_kinds.knob_changes(("token_budget",), ladder) == stall_kinds.NO_RUNG
    assert stall_kinds.knob_changes(("x",), ladder) == "x: 1 → 2 (+x)"


def test_a_table_missing_a_cause_fails():
    with pytest.raises(ValueError, match="tok"):
        stall_kinds.stall_table(stalls=[s for s in stall_kinds.STALLS if s.cause != "tok"])
