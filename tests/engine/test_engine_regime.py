"""The regime signature of a run (engine/runs/regime.py), its window, and the chapter's
sentence and table that set it beside the article's (analysis/across_runs/operating_point.py)."""
import json
import math

import numpy as np
import pandas as pd
import pytest

from analysis.across_runs import operating_point as op
from engine import cli
from engine.runs import regime
from engine.runs.target import REGIME


def synthetic_run() -> dict:
    """Two phases of 10 s of arrivals: a light first (batch 4, 2 ms steps), a full second
    (batch 32, 10 ms steps, eager every other step, one preemption per second), then 2 s of
    drain served like the second."""
    steps, emissions = [], []
    t = 0.0
    while t < 22.0:
        full = t >= 10.0
        dt, batch = (0.010, 32) if full else (0.002, 4)
        graph = 0 if full and len(steps) % 2 else 32
        preempted = 1 if full and abs(t - round(t)) < dt / 2 else 0
        steps.append((t, t + dt, batch, 0, graph, preempted, 0))
        for r in range(batch):
            emissions.append((r, t + dt, len(steps) - 1))
        t += dt
    requests = np.array([(i, 0.5 * i, 10, 10, 0.5 * i + 0.02) for i in range(40)], dtype=float)
    return {"steps": np.array(steps), "emissions": np.array(emissions), "requests": requests, "duration": 20.0}


def test_window_signature_reads_each_phase():
    run = synthetic_run()
    light = regime.window_signature(run, 10.0, 0.0, 10.0)
    full = regime.window_signature(run, 10.0, 10.0, 20.0)
    assert light["p50_ms"] == pytest.approx(2.0) and light["fullness"] == pytest.approx(0.2)
    assert light["decode_batch"] == pytest.approx(4.0)
    assert light["eager_steps_per_min"] == 0 and light["preemptions_per_min"] == 0
    assert full["p50_ms"] == pytest.approx(10.0) and full["fullness"] == pytest.approx(1.0)
    assert full["decode_batch"] == pytest.approx(32.0)
    assert full["eager_steps_per_min"] == pytest.approx(6 * 500, rel=0.01)      # half of 1,000 steps, x6
    assert 50 <= full["preemptions_per_min"] <= 70                              # about one a second
    assert full["ttft_p50_ms"] == pytest.approx(20.0)
    whole = regime.window_signature(run, None)
    assert math.isnan(whole["fullness"])
    # the whole run counts the drain too (as the article counted a run's preemptions), per 60 s of arrivals
    drain = regime.window_signature(run, 10.0, 20.0, 23.0)
    assert whole["gaps"] == light["gaps"] + full["gaps"] + drain["gaps"] and drain["gaps"] > 0
    n_pre = run["steps"][:, 5].sum()
    assert whole["preemptions_per_min"] == pytest.approx(n_pre * 60 / 20) and n_pre == 12
    with pytest.raises(ValueError, match="window"):
        regime.window_signature(run, 10.0, 5.0, 5.0)


def yardstick_run(extra_steps=()) -> dict:
    """Pure-decode captured steps whose decode segment takes 1 + 0.2 rows ms (7.4 ms at 32
    rows), plus `extra_steps`: (n_decode, n_prefill_tok, graph, decode ms) rows that the
    yardstick must leave out; each step emits one token per row."""
    rows = [(b, 0, 32, 1.0 + 0.2 * b) for b in (4, 8, 16, 24, 32) * 12] + list(extra_steps)
    steps, segs, emissions, t = [], [], [], 0.0
    for i, (b, prefill, graph, ms) in enumerate(rows):
        steps.append((t, t + ms / 1e3, b, prefill, graph, 0, 0))
        segs.append((i, 3, t, t + ms / 1e3))
        emissions += [(r, t + ms / 1e3, i) for r in range(b)]
        t += ms / 1e3
    requests = np.array([(r, 0.0, 10, 10, 0.001) for r in range(32)], dtype=float)
    return {"steps": np.array(steps), "segs": np.array(segs), "emissions": np.array(emissions),
            "requests": requests, "duration": t}


def test_the_yardstick_is_the_runs_own_batch_32_forward_pass():
    run = yardstick_run()
    yard = regime.forward_yardstick(run)
    assert yard["ms"] == pytest.approx(7.4) and yard["steps"] == 60 and not yard["extrapolated"]
    # prompt tokens in the step, or the eager path, are not the captured decode forward pass
    noisy = yardstick_run([(32, 100, 32, 50.0)] * 5 + [(40, 0, 0, 30.0)] * 5)
    assert regime.forward_yardstick(noisy)["ms"] == pytest.approx(7.4)
    sig = regime.window_signature(noisy, regime.IN_RUN)
    assert sig["forward_ms_b32"] == pytest.approx(7.4) and sig["fullness"] == pytest.approx(sig["p50_ms"] / 7.4)
    # a given yardstick is used as given; too few pure-decode steps, or one batch size, read NaN
    assert regime.window_signature(noisy, 10.0)["fullness"] == pytest.approx(sig["p50_ms"] / 10.0)
    n = regime.MIN_PURE_DECODE_STEPS - 1
    few = {**run, "steps": run["steps"][:n], "segs": run["segs"][:n]}
    assert math.isnan(regime.forward_yardstick(few)["ms"])
    assert math.isnan(regime.forward_line([8] * 40, [3.0] * 40)["ms"])
    assert math.isnan(regime.window_signature({**run, "segs": None}, regime.IN_RUN)["fullness"])
    # only the window's steps count
    late = regime.forward_yardstick(run, start=run["duration"] / 2)
    assert late["ms"] == pytest.approx(7.4) and regime.MIN_PURE_DECODE_STEPS <= late["steps"] < 60


def test_settle_time_finds_the_climb():
    """The whole run's batch is 19.3 (10 s at 4, then 12 s at 32 with the drain, by step
    time): a prefix of L > 10 s reads (40 + 32 (L - 10)) / L, which passes 17.3 (10% short)
    only at L = 20 and 9.6 (50%) at 13."""
    run = synthetic_run()
    assert regime.settle_time(run, 10.0, "decode_batch", step_s=1.0) == 20.0
    assert regime.settle_time(run, 10.0, "decode_batch", tol=0.5, step_s=1.0) == 13.0


def _sig(fullness, pre, ttft_ms=100.0, n=2):
    return pd.DataFrame([{"fullness": fullness, "p50_ms": 10 * fullness, "decode_batch": 30.0,
                          "eager_steps_per_min": 500.0, "preemptions_per_min": pre, "ttft_p50_ms": ttft_ms}] * n)


def test_regime_sentence_each_way():
    assert op.regime_sentence(_sig(1.05, 200)).startswith("Like for like")
    light = op.regime_sentence(_sig(0.09, 0))
    assert light.startswith("Not like for like") and "lighter regime" in light and "0.09 times" in light
    heavy = op.regime_sentence(_sig(2.0, 200))
    assert "heavier regime" in heavy
    stuck = op.regime_sentence(_sig(1.05, 200, ttft_ms=5000))
    assert "did not drain" in stuck
    along = op.regime_sentence(_sig(1.05, 20))
    assert along.startswith("Close but not like for like") and "less pressure" in along
    assert "too few pure-decode steps" in op.regime_sentence(_sig(math.nan, 200))
    assert "has no baseline runs" in op.regime_sentence(pd.DataFrame())


def test_yardstick_sentence_sets_the_runs_own_forward_pass_beside_the_microbenchmark():
    sig = _sig(1.0, 200).assign(forward_ms_b32=[8.0, 10.0], p50_ms=[8.0, 10.0])
    words = op.yardstick_sentence(sig, 6.0)
    assert "took 9.00 ms (runs 8.00-10.00), 1.50 times the 6.00 ms" in words
    assert "would have read 1.50 instead of 1.00" in words
    assert "no microbenchmark" in op.yardstick_sentence(sig, None)
    assert op.yardstick_sentence(_sig(1.0, 200), 6.0).startswith("No baseline run had enough")


def test_the_regime_table_shows_the_yardstick_where_the_runs_recorded_it():
    table = op.regime_table({"old checks": _sig(1.0, 200), "runs": _sig(1.0, 200).assign(forward_ms_b32=7.0)})
    row = table.set_index("statistic").loc["batch-32 decode forward pass, ms"]
    assert row["old checks"] == "not recorded" and row["runs"] == "7.00 [7.00-7.00]"
    assert row["article (5 x 60 s)"].startswith("12.8")


def test_regime_table_sets_runs_beside_the_article():
    t = op.regime_table({"checks (3 seeds)": _sig(1.0, 150, n=3), "empty": pd.DataFrame()})
    assert list(t.columns) == ["statistic", "article (5 x 60 s)", "checks (3 seeds)", "empty"]
    row = t.set_index("statistic").loc["typical gap / batch-32 forward pass"]
    assert row["article (5 x 60 s)"].startswith(f"{REGIME.fullness:.2f}") and row["checks (3 seeds)"] == "1.00 [1.00-1.00]"
    assert (t["empty"] == "no runs").all()


def test_check_signatures_reads_the_chosen_rate():
    cal = {"rate": 10.0, "checks": [{"rate": 9.0, "per_seed": [{"seed": 101, "fullness": 0.1}]},
                                    {"rate": 10.0, "per_seed": [{"seed": 101, "fullness": 1.0},
                                                                {"seed": 102, "fullness": 1.1}]}]}
    assert list(op.check_signatures(cal)["fullness"]) == [1.0, 1.1]
    assert op.check_signatures(None).empty


def test_calibrate_cli_rejects_an_unknown_profile(capsys):
    assert cli.main(["calibrate", "--profile", "nope"]) == 2
    err = capsys.readouterr().err
    assert "nope" in err and "article" in err and "quick" in err and "smoke" in err


def test_calibrate_cli_prints_one_json_line_per_profile(monkeypatch, capsys):
    """--profile calibrates every check length the profile's build uses, and --json prints
    the rate, the target and every check's signature on one line."""
    import engine.runs.calibrate as cal
    import engine.runs.sweep as sw
    asked = []

    def fake(checks=True, force=False, forward="article", check_duration=60.0, progress=True):
        asked.append((checks, check_duration))
        return {"rate": check_duration / 10, "method": "checked" if checks else "capacity",
                "check_duration_s": check_duration if checks else None, "band_reached": checks or None,
                "proposed_rate": 1.0, "seconds_taken": 1.0,
                "capacity": {"tokens_per_s": 100.0, "forward_ms_b32": 8.0},
                "checks": [{"rate": check_duration / 10, "fullness": 1.0, "place": "in band"}] if checks else []}
    monkeypatch.setattr(cal, "calibrate", fake)
    monkeypatch.setattr(sw, "capacity_scale", lambda prof, fwd: 1.0)
    assert cli.main(["calibrate", "--profile", "article", "--json"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert asked == [(True, 20.0), (True, 60.0)]                  # the sweep's 20 s and the ladder's 60 s
    assert out["rate"] == 6.0 and out["target"]["fullness"] == pytest.approx(REGIME.fullness)
    assert [c["check_duration_s"] for c in out["calibrations"]] == [20.0, 60.0]
    assert out["calibrations"][1]["checks"][0]["fullness"] == 1.0
    # the ladder's seeds 1-5 run where they ask for the decode tokens the check seeds did at 6 req/s
    assert out["ladder"] == cal.run_rate(6.0, cal.CHECK_SEEDS, 60.0, (1, 2, 3, 4, 5), 60.0)
    assert out["ladder"]["check_rate"] == 6.0 and out["ladder"]["rate"] != 6.0
    asked.clear()
    assert cli.main(["calibrate", "--profile", "smoke", "--json"]) == 0
    assert asked == [(False, 60.0)]
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["ladder"] is None   # a proposal: nothing carried
