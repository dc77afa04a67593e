"""The real-engine page (analysis/chapters/real_engine.py) and its computations
(analysis/across_runs/real_findings.py): known numbers through the pure functions, then the
smoke page from the engine's own runs (the session cache the smoke build shares)."""
import math

import numpy as np
import pytest

from analysis.across_runs import real_findings as R
from analysis.chapters import real_engine
from tests.support.page_cells import calls_only_its_page, cited

LABELS = ["prefill", "preempt", "graph", "gc", "tok", "kernel", "residual"]


def _summary(rung, seed, p99, share):
    return {"rung": rung, "seed": seed, "itl_p50": 5.0, "itl_p99": p99, "itl_p999": 2 * p99, "itl_max": 4 * p99,
            "ttft_p50": 20.0, "tail_share": share}


def test_tail_table_sets_the_three_engines_side_by_side():
    real = [_summary("baseline", s, 10, {"preempt": 0.6, "kernel": 0.4}) for s in (1, 2, 3)]
    ours = [_summary("baseline", s, 10, {"prefill": 0.5, "kernel": 0.5}) for s in (1, 2, 3)]
    table = R.tail_table(real, ours, LABELS)
    assert table.loc["preempt", "real engine"] == pytest.approx(60.0)
    assert table.loc["prefill", "this book's engine"] == pytest.approx(50.0)
    assert table.loc["preempt", "article"] == pytest.approx(77.1)
    assert R.leading_cause(table, "real engine") == ("preempt", pytest.approx(60.0))
    words = R.transfer_sentence(table)
    assert words.startswith("On the real engine the largest cause of tail time was preempt (60% of tail time), "
                            "the same cause as the article's baseline (preempt, 77%)")
    assert "on this book's engine in this build it was prefill (50%)" in words


def test_ladder_pairs_read_two_seeds_as_cannot_be_judged():
    runs = [_summary("baseline", s, 10.0 * s, {}) for s in (1, 2)]
    runs += [_summary("+gc.freeze", s, 5.0 * s, {}) for s in (1, 2)]
    pairs = R.ladder_pairs(runs).set_index(["rung", "metric"])
    row = pairs.loc[("+gc.freeze", "itl_p99")]
    assert row["ratio"] == pytest.approx(0.5) and row["n"] == 2
    assert row["verdict"] == "cannot be judged with 2 seeds"


def test_the_split_check_compares_mixed_steps_with_the_pure_decode_line(tmp_path):
    """Pure-decode steps cost 1 + 0.1 ms per row; a mixed step whose split gave its 10 decode
    rows 4 ms reads 2x the line's 2 ms."""
    from engine.serve import rawlog
    steps, segs, mix, t = [], [], [], 0.0
    for i, rows in enumerate([10, 20, 30, 10]):
        dec = (1 + 0.1 * rows) / 1e3 if i < 3 else 4e-3
        pre = 0.0 if i < 3 else 3e-3
        steps.append((t, t + pre + dec, rows, 0 if i < 3 else 50, 0, 0, 0))
        if pre:
            segs.append((i, 2, t, t + pre))
        segs.append((i, 3, t + pre, t + pre + dec))
        mix.append((0, 0 if i < 3 else 50, rows))
        t += pre + dec + 1e-3
    arrays = {"steps": np.array(steps, float), "segs": np.array(segs, float), "gcs": np.zeros((0, 3)),
              "emissions": np.array([(0, steps[0][1], 0), (0, steps[3][1], 3)], float),
              "evictions": np.zeros((0, 3)), "requests": np.array([(0, 0.0, 5, 2, steps[0][1])], float),
              "trace": np.array([(0, 0.0, 20, 2)], float), "step_mix": np.array(mix, np.int64)}
    path = rawlog.write_atomic(tmp_path / "mixed.npz", arrays, t, {"rung": "baseline", "seed": 1}, {})
    found = R.split_check([path])
    assert found["pure"] == 3 and found["mixed"] == 1
    assert found["slope_ms"] == pytest.approx(0.1) and found["intercept_ms"] == pytest.approx(1.0)
    assert found["ratio"] == pytest.approx(2.0)


def test_the_split_sentence_says_which_way_the_split_errs():
    assert R.split_sentence({"ratio": 1.1}).startswith("The split holds: in the median mixed step, decode was "
                                                       "charged 1.10 times")
    under = R.split_sentence({"ratio": 0.26})
    assert under.startswith("The split does not hold") and "0.26 times" in under
    assert "under-charges the decode rows, and so over-charges prefill" in under
    assert "over-charges the decode rows, and so under-charges prefill" in R.split_sentence({"ratio": 1.6})
    assert R.split_sentence({"ratio": math.nan}).startswith("No step mixed prefill with decode rows")


def test_the_gc_sentence_says_which_thread_the_collector_ran_in():
    none = {"loop_n": 3, "loop_max_ms": 2.0, "other_n": 0, "other_max_ms": 0.0}
    assert R.gc_sentence(none, 2) == ("Over the 2 baseline run(s): 3 collector pause(s) in the engine's loop thread "
                                      "(the longest 2.0 ms), and none in any other thread.")
    other = R.gc_sentence({**none, "other_n": 4, "other_max_ms": 12.5}, 2)
    assert "and 4 in the request thread (the longest 12.5 ms)" in other and "interpreter lock" in other


def test_the_fix_sentence_gives_each_rungs_paired_ratio_and_verdict():
    runs = [_summary("baseline", s, 10.0 * s, {}) for s in (1, 2)]
    runs += [_summary("+budget 256", s, 5.0 * s, {}) for s in (1, 2)]
    runs += [_summary("swap", s, 20.0 * s, {}) for s in (1, 2)]
    words = R.fix_sentence(R.ladder_pairs(runs))
    assert words == ("Against the baseline, seed by seed (the median of the per-seed ratios): +budget 256: "
                     "p99 0.50x (cannot be judged with 2 seeds), p99.9 0.50x (cannot be judged with 2 seeds); "
                     "swap: p99 2.00x (cannot be judged with 2 seeds), p99.9 2.00x (cannot be judged with 2 "
                     "seeds).")
    assert R.fix_sentence(R.ladder_pairs(runs[:2])) == "No rung but the baseline ran, so no fix was compared."


def test_the_tail_figure_stacks_each_source_by_label():
    from analysis.render.figures_real import tail_sources_figure
    real = [_summary("baseline", s, 10, {"preempt": 0.6, "kernel": 0.4}) for s in (1, 2)]
    table = R.tail_table(real, real, LABELS)
    ax = tail_sources_figure(table).axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["real engine", "this book's engine", "article"]
    heights = np.array([[p.get_height() for p in c] for c in ax.containers])     # label x source
    assert heights[:, 0].sum() == pytest.approx(100.0)
    assert heights[:, 2].sum() == pytest.approx(100 * sum(R.A.TAIL_SHARE[R.BASELINE].get(k, 0) for k in LABELS))


def test_the_smoke_page_from_the_engines_own_runs():
    page = real_engine.page("smoke")
    n = page.numbers
    assert cited("real_engine") <= set(n)
    assert n["re_transformers"] == "5.25.0" and n["re_rate_how"] == "uncalibrated"
    assert n["re_reconcile"] < 1e-6 and n["re_runs"] == 5
    assert n["re_place"] in ("below", "in band", "above", "unplaced")
    assert n["re_strongest"] == "cannot be judged with 1 seed"
    assert math.isfinite(n["re_split_ratio"]) or n["re_split_mixed"] == 0
    assert set(page.table("ladder").data["verdict"]) == {"cannot be judged with 1 seed"}
    assert n["re_swap_pool"] in ("pinned", "unpinned (no accelerator here)")
    for name in ("histogram", "tails", "ladder"):
        assert page.figure(name).axes, name


def test_the_notebook_only_calls_its_page():
    assert calls_only_its_page("real_engine") == []


def _checked_record(tmp_path, monkeypatch, rates: dict):
    """Fake checked records (check length -> rate) in a temporary cache."""
    from engine.runs.calibrate import CHECK_SEEDS, _write_json_atomic, calibration_path
    monkeypatch.setenv("ITL_CACHE_DIR", str(tmp_path))
    for length, rate in rates.items():
        record = {"rate": rate, "method": "checked", "forward": "article", "capacity": {"tokens_per_s": 900.0},
                  "proposed_rate": rate, "checks": [], "band_reached": True, "machine": {},
                  "check_seeds": list(CHECK_SEEDS), "check_duration_s": length}
        _write_json_atomic(calibration_path("checked", "article", length), record)


def test_a_shorter_real_engine_run_is_set_beside_runs_placed_by_checks_of_its_length(tmp_path, monkeypatch):
    """The quick profile's real-engine runs are shorter than its ladder's: the book's engine
    runs beside them are as long, at the rate of checks that long, not the ladder's."""
    import engine
    from engine.runs.calibrate import CHECK_SEEDS, run_rate
    prof = engine.get_profile("quick")
    assert real_engine.run_length(prof) == real_engine.check_length(prof) == prof.real_duration < prof.duration
    _checked_record(tmp_path, monkeypatch, {prof.duration: 11.0, prof.real_duration: 13.0})
    ours = real_engine.ours_specs(prof, prof.seeds, prof.real_duration)
    want = run_rate(13.0, CHECK_SEEDS, prof.real_duration, prof.seeds, prof.real_duration)["rate"]
    assert {s.rate for s in ours} == {round(want, 6)} and {s.duration for s in ours} == {prof.real_duration}
    ladder = engine.profile_specs(prof)
    assert {s.rate for s in ladder} == {round(run_rate(11.0, CHECK_SEEDS, prof.duration, prof.seeds,
                                                       prof.duration)["rate"], 6)}


def test_without_a_real_engine_length_the_page_runs_as_long_as_the_ladder():
    import engine
    prof = engine.get_profile("article")
    assert prof.real_duration is None
    assert real_engine.run_length(prof) == prof.duration and real_engine.check_length(prof) == prof.check_duration


@pytest.mark.parametrize("missing, remade, rate", [(False, False, None), (True, False, None), (True, True, None),
                                                   (True, False, 5.0)])
def test_real_engine_runs_are_measured_on_a_confirmed_calibration(tmp_path, monkeypatch, missing, remade, rate):
    """As the ladder's: a build with real-engine runs to measure on a calibrated rate first
    confirms the calibration, and plans its runs again when it was remade; a build with all
    of them made, or with a given rate, probes nothing."""
    from types import SimpleNamespace
    log = tmp_path / "real.npz"
    if not missing:
        log.write_bytes(b"")
    rates, planned, confirmed, made = iter([7.0, 8.0]), [], [], []

    def operating(prof, rate, seeds, duration):
        planned.append(next(rates))
        return planned[-1], "checked", None

    runs = SimpleNamespace(ladder_specs=lambda r, seeds, duration: [SimpleNamespace(path=log, rate=r)],
                           ensure_real_runs=lambda specs: made.extend(s.rate for s in specs))
    monkeypatch.setattr(real_engine, "real_engine",
                        lambda: {"internals": SimpleNamespace(check=lambda: {}), "runs": runs})
    monkeypatch.setattr(real_engine, "operating", operating)
    monkeypatch.setattr(real_engine, "ours_specs", lambda prof, seeds, duration: [])
    monkeypatch.setattr(real_engine, "ensure_runs", lambda specs: None)
    monkeypatch.setattr("engine.runs.freshness.confirm",
                        lambda prof, **k: confirmed.append(prof.name) or {"remade": remade})
    specs = real_engine.ensure_real("quick", rate=rate)
    assert confirmed == (["quick"] if missing and rate is None else [])
    assert planned == ([7.0, 8.0] if remade else [7.0])
    assert made == ([planned[-1]] if missing else []) and specs[0].rate == planned[-1]


def test_checking_the_internals_drops_only_tqdms_widget_note():
    """transformers imports tqdm.auto when the internals are checked; in a kernel without
    ipywidgets that prints a TqdmWarning above the page's first table. The page drops that
    one note and lets every other warning through."""
    import warnings

    def check(note):
        def _check():
            warnings.warn(note, UserWarning, stacklevel=2)
            return {"transformers": "x"}
        return {"internals": type("I", (), {"check": staticmethod(_check)})}

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert real_engine.checked_versions(check("IProgress not found. Please update jupyter")) == {"transformers": "x"}
        real_engine.checked_versions(check("some other problem"))
    assert [str(w.message) for w in seen] == ["some other problem"]
