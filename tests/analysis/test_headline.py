"""Summary lead-ins and the count-vs-time split, computed in both directions."""
import pandas as pd

from analysis.core.schemes import CAUSES
from analysis.across_runs import headline


def _run(seed, counts, shares):
    r = {"rung": "baseline", "seed": seed, "tail_count": {c: counts.get(c, 0) for c in CAUSES + ["clean"]},
         "tail_share": {c: shares.get(c, 0.0) for c in CAUSES + ["kernel", "residual"]}}
    return r


def test_lead_in_says_the_verdict_first():
    index = ["a", "b", "c"]
    found = pd.DataFrame({"claim": ["a typical gap is almost all forward pass"] * 3,
                          "held": pd.Series([True, False, None], index=index, dtype=object)}, index=index)
    assert headline.lead_in(found, "a") == "Held here: a typical gap is almost all forward pass."
    assert headline.lead_in(found, "b").startswith("Did not hold here:")
    assert headline.lead_in(found, "c").startswith("Not testable here:")


def test_a_heading_over_several_findings_never_contradicts_its_body():
    index = ["p999_end", "max_end", "p50_flat"]
    claims = ["the ladder collapses p99.9", "the ladder collapses the worst gap", "the median ITL barely moves"]
    found = pd.DataFrame({"claim": claims, "verdict": ["did not hold", "held", "did not hold"]}, index=index)
    lead = headline.group_lead(found, index)
    assert not lead.startswith("Did not hold here")        # the old lead named only the first
    assert lead == ("Mixed here: the ladder collapses p99.9 (did not hold); the ladder collapses the worst gap "
                    "(held); the median ITL barely moves (did not hold).")
    same = found.assign(verdict="held")
    assert headline.group_lead(same, index).startswith("Held here: the ladder collapses p99.9; ")


def test_count_and_time_split_both_ways():
    runs = [_run(1, {"prefill": 700, "preempt": 50}, {"prefill": 0.2, "preempt": 0.7}),
            _run(2, {"prefill": 700, "preempt": 50}, {"prefill": 0.6, "preempt": 0.2})]
    split = headline.count_time_split(runs)
    assert split["disagree"].tolist() == [True, False]
    s = headline.count_time_sentence(split)
    assert s.startswith("Count and time disagreed in 1 of 2") and "prefill by count, preempt by time" in s
    agree = headline.count_time_split(runs[1:])
    assert headline.count_time_sentence(agree).startswith("Count and time agreed in all 1")
    assert "cannot be compared" in headline.count_time_sentence(headline.count_time_split([]))


def test_forward_speedup_sentence_follows_the_shares():
    s = headline.forward_speedup_sentence(0.96, 0.2)
    assert "typical gap by about 48%" in s and "tail gap by about 10%" in s and "typical gaps gain more" in s
    assert "tail gaps gain more" in headline.forward_speedup_sentence(0.3, 0.6)
    assert "cannot be read" in headline.forward_speedup_sentence(float("nan"), 0.2)


def test_graph_sentence_both_ways():
    def found(tail, body):
        index = ["graph_tail", "graph_body"]
        return pd.DataFrame({"held": pd.Series([tail, body], index=index, dtype=object),
                             "this build": ["0.2-0.5%", "1.5% of all gap time"]}, index=index)
    assert "as in the article" in headline.graph_sentence(found(True, True))
    assert "reach into the tail" in headline.graph_sentence(found(False, True))
    assert "unlike the article (0.1-0.7% of tail time)" in headline.graph_sentence(found(False, True))
    assert "cannot be tested" in headline.graph_sentence(found(None, True))
    idle = found(None, None).assign(reason=["no baseline decode step ran off the captured path", ""])
    assert headline.graph_sentence(idle).endswith("cannot be tested here: no baseline decode step ran off "
                                                  "the captured path.")
    none = idle.assign(**{"this build": ["0.0%", "no gap time at all, tail or not"]})
    s = headline.graph_sentence(none)          # not "0.0% of all gap time vs 0.0% of tail time"
    assert s.startswith("Graph misses took no gap time at all; ") and "0.0%" not in s


def test_rate_clause_says_calibrated_only_when_calibration_chose_it():
    assert headline.rate_clause(5.214, "calibration") == "5.21 req/s (this machine's calibrated rate)"
    given = headline.rate_clause(7.0, "given")
    assert given == "7.00 req/s (the rate given to this chapter)" and "calibrated" not in given


def test_summary_and_report_share_one_findings_table_and_say_when_overload_is_left_out():
    from analysis.render.book_findings import overload_note
    assert "included" in overload_note(True)
    note = overload_note(False, [6, 7])
    assert "seeds [6, 7]" in note and "left out, because" in note
