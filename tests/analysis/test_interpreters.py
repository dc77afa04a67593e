"""The GC rungs under two interpreters, from synthetic cached runs (the real comparison
needs runs under both interpreters; this checks the table and the sentence both ways)."""
from analysis.across_runs import interpreters as I
from analysis.render import machine


def _runs(gen0, gen2_base, gen2_frozen, rate, p50, preempt, seeds=(101, 102, 103)):
    out = []
    for s in seeds:
        out += [{"rung": "baseline", "seed": s, "rate": rate, "gc_counts": {"0": gen0, "2": 4},
                 "gen2_serving_ms": gen2_base, "itl_p50": p50, "itl_p999": 300.0, "preemptions": preempt},
                {"rung": "+gc.freeze", "seed": s, "rate": rate, "gc_counts": {"0": gen0 + 20, "2": 6},
                 "gen2_serving_ms": gen2_frozen, "itl_p50": p50 * 0.8, "itl_p999": 150.0, "preemptions": preempt // 2},
                {"rung": "+compact history", "seed": s, "rate": rate, "gc_counts": {"0": 30, "2": 0},
                 "gen2_serving_ms": [], "itl_p50": p50 * 0.8, "itl_p999": 90.0, "preemptions": preempt // 2}]
    return out


def test_the_gc_rungs_side_by_side_for_two_interpreters():
    both = {"3.13.0": _runs(630, [157.0, 305.0], [30.0, 150.0], 10.5, 3.3, 36),
            "3.11.7": _runs(1731, [141.0, 298.0], [33.0, 175.0], 10.5, 9.2, 380)}
    t = I.gc_rung_table(both).set_index(["Python", "rung"])
    assert len(t) == 6
    assert t.loc[("3.13.0", "+gc.freeze"), "largest vs baseline"] == "0.49x"
    assert t.loc[("3.11.7", "+gc.freeze"), "largest vs baseline"] == "0.59x"
    assert t.loc[("3.11.7", "baseline"), "gen-0 / gen-2 collections"] == "1731 / 4"
    s = I.interpreter_sentence(both)
    assert "Python 3.13.0 the largest serving gen-2 pause at +gc.freeze was 0.49x the baseline's (held)" in s
    assert s.startswith("Under Python 3.13.0") and "0.59x the baseline's (did not hold)" in s and "3 seed(s)" in s


def test_one_interpreter_is_said_to_be_unmeasured():
    s = I.interpreter_sentence({"3.11.7": _runs(1731, [141.0], [33.0], 10.5, 9.2, 380)})
    assert s.startswith("The GC rungs have not been run under two interpreters")
    assert I.gc_rung_table({}).empty


def test_the_machine_table_sets_the_interpreter_and_its_collector_beside_the_articles():
    prov = {"python": "3.11.7", "numpy": "1.26.4", "gc_threshold": [700, 10, 10], "threads": {}}
    t = machine.machine_table(prov).set_index("what")
    assert t.loc["Python", "the article"] == "3.13.16" and t.loc["Python", "this build"] == "3.11.7"
    assert t.loc["gc.get_threshold()", "this build"] == "(700, 10, 10)"
    assert t.loc["gc.get_threshold()", "the article"].startswith("(2000, 10, 10)")
    assert "the article ran 3.13.16" in machine.interpreter_sentence(prov)
    assert "the article's minor version" in machine.interpreter_sentence({"python": "3.13.2"})
