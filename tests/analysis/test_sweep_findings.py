"""The operating-point findings judged at each load of the sweep
(analysis/across_runs/sweep_findings.py), on a synthetic sweep frame."""
import pandas as pd

from analysis.across_runs import sweep_findings as S

LOADS = (0.6, 1.0, 1.4)


def _row(fwd, rung, load, seed, **over):
    r = {"forward": fwd, "rung": rung, "load": load, "seed": seed, "preempt_per_min": 0.0,
         "ttft_p50": 100.0, "fwd_share_clean": 0.95, "itl_p50": 10.0, "itl_p99": 40.0, "itl_p999": 100.0,
         "itl_max": 1000.0, "tail_preempt": 0.1}
    r.update(over)
    return r


def frame(fwds=("article",), watermark=True):
    rows = []
    for fwd in fwds:
        for seed in (1, 2):
            for load in LOADS:
                heavy = load >= 1.0
                rows.append(_row(fwd, "baseline", load, seed, preempt_per_min=200.0 * load if heavy else 0.0,
                                 tail_preempt=0.8 if heavy else 0.1, itl_p999=900.0 if heavy else 100.0,
                                 ttft_p50=5000.0 if load > 1.2 else 200.0,
                                 fwd_share_clean=0.95 if fwd == "article" else 0.6))
                if watermark:
                    rows.append(_row(fwd, "+admit watermark", load, seed, preempt_per_min=1.0,
                                     itl_p999=60.0 if heavy else 95.0, ttft_p50=900.0 if heavy else 90.0,
                                     itl_p50=14.0 if load > 1.2 else 10.0, itl_p99=30.0))
    return pd.DataFrame(rows)


def _row_of(table, claim, fwd="article"):
    return table[(table["claim"] == claim) & (table["forward"] == fwd)].iloc[0]


def test_loads_at_which_each_finding_holds():
    t = S.load_findings(frame())
    pre = _row_of(t, "preemption holds most baseline tail time")
    assert pre["held at"] == "1x, 1.4x" and pre["did not hold at"] == "0.6x" and pre["not testable at"] == "none"
    wm = _row_of(t, "the ladder collapses p99.9")
    assert wm["held at"] == "1x, 1.4x" and wm["did not hold at"] == "0.6x"
    flat = _row_of(t, "the median ITL barely moves")
    assert flat["held at"] == "0.6x, 1x" and flat["did not hold at"] == "1.4x"
    assert _row_of(t, "the ladder lowers p99")["held at"] == "0.6x, 1x, 1.4x"
    assert _row_of(t, "the ladder collapses the worst gap")["held at"] == "none"
    drains = _row_of(t, "the baseline's queue drains")
    assert drains["held at"] == "0.6x, 1x" and drains["did not hold at"] == "1.4x"
    idle = _row_of(t, "all six fixes together nearly end preemption (baseline vs last rung)")
    assert idle["not testable at"] == "0.6x" and idle["held at"] == "1x, 1.4x"   # nothing to prevent at 0.6x


def test_the_sweep_does_not_judge_the_watermark_alone_under_the_watermarks_name():
    # the sweep runs the baseline and the last rung only: its TTFT row compares all six fixes,
    # so it must not carry the report's "the watermark's cost is time to first token"
    from analysis.across_runs.findings import FINDINGS
    claims = set(S.load_findings(frame())["claim"])
    watermark_only = {f.claim for f in FINDINGS if f.key.startswith("watermark_")}
    assert not claims & watermark_only
    assert "all six fixes together raise time to first token (baseline vs last rung)" in claims


def test_each_forward_gets_its_own_rows():
    t = S.load_findings(frame(fwds=("article", "fast")))
    assert set(t["forward"]) == {"article", "fast"}
    assert _row_of(t, "a typical gap is almost all forward pass", "fast")["held at"] == "none"
    assert _row_of(t, "a typical gap is almost all forward pass")["held at"] == "0.6x, 1x, 1.4x"


def test_a_missing_rung_is_not_testable_and_no_sweep_is_said():
    t = S.load_findings(frame(watermark=False))
    assert _row_of(t, "the ladder collapses p99.9")["not testable at"] == "0.6x, 1x, 1.4x"
    assert _row_of(t, "preemption holds most baseline tail time")["held at"] == "1x, 1.4x"
    empty = S.load_findings(None)
    assert empty.empty and "ran no load sweep" in S.load_findings_sentence(empty)
    assert "2 seed(s) of 20 s per level" in S.load_findings_sentence(t, 2, 20.0)
