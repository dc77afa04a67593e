"""The calibration search (pure): converges on a monotone signature, places a check onto
the regime's cliff before along it, and says so when the regime cannot be reached."""
import math

import pytest

from engine.runs.calibrate import search_rate
from engine.runs.target import BAND, REGIME, Band, Regime


def monotone(per_rate: float, drain_limit: float = 1e9, log=None, full_at: float = 0.0,
             saturate: float = 1.1):
    """A synthetic baseline: fullness jumps from 0.1 to `saturate` once the rate passes
    `full_at` (the cliff) and then stays; preemptions per minute grow linearly with the rate;
    the queue stops draining above drain_limit."""
    def measure(rate):
        if log is not None:
            log.append(rate)
        return {"fullness": saturate if rate >= full_at else 0.1, "preemptions_per_min": per_rate * rate,
                "ttft_p50_ms": 50.0 if rate <= drain_limit else 5e3,
                "drains": rate <= drain_limit}
    return measure


@pytest.mark.parametrize("start", [1.0, 6.0, 40.0])
def test_search_converges_into_the_regime(start):
    seen = []
    found = search_rate(monotone(30.0, log=seen), start)       # band 142-318 at 4.7-10.6 req/s
    assert found["reached"] is True
    assert BAND.low <= 30.0 * found["rate"] <= BAND.high
    assert [c["rate"] for c in found["checks"]] == [round(r, 4) for r in seen]
    assert found["checks"][-1]["place"] == "in band"
    assert all(c["place"] in ("below", "above") for c in found["checks"][:-1])


def test_a_light_step_is_below_whatever_its_preemptions_say():
    """Below the cliff the count of preemptions does not place a check: a run whose steps are
    nearly empty is in a lighter regime even if it drew a burst of evictions."""
    found = search_rate(monotone(30.0, full_at=9.0), 6.0)       # preemptions in band at 6, fullness not
    first = found["checks"][0]
    assert first["rate"] == 6.0 and first["place"] == "below" and first["decided_by"] == "fullness"
    assert found["reached"] is True and found["rate"] >= 9.0
    assert found["checks"][-1]["decided_by"] == "preemptions"


def test_steps_fuller_than_the_article_are_above():
    found = search_rate(monotone(30.0, saturate=2.0), 6.0, max_checks=3)
    assert all(c["place"] == "above" and c["decided_by"] == "fullness" for c in found["checks"])
    assert found["reached"] is False


def test_search_reports_failure_when_the_regime_cannot_be_reached():
    # the queue stops draining at 4 req/s, before the signature reaches the band (120/min)
    found = search_rate(monotone(30.0, drain_limit=4.0), 2.0, max_checks=12)
    assert found["reached"] is False
    assert found["rate"] <= 4.0                                  # the closest check that drained
    assert not any(c["place"] == "in band" for c in found["checks"])
    assert found["rate"] == max(c["rate"] for c in found["checks"] if c["drains"])
    assert any(c["decided_by"] == "drain" for c in found["checks"])


def test_band_places_a_signature():
    band = Band(low=10, high=20, max_ttft_p50_s=1.0)
    assert band.place(15, True) == "in band"
    assert band.place(5, True) == "below"
    assert band.place(25, True) == "above"
    assert band.place(15, False) == "above"                      # a queue that does not drain is too heavy


def test_regime_target_is_the_articles_ratio():
    """The fullness target is the article's median gap over its batch-32 forward pass, and the
    like-for-like range is 0.8-1.25 of it."""
    assert REGIME.fullness == pytest.approx(13.7 / 12.8)
    lo, hi = REGIME.fullness_range
    assert lo == pytest.approx(0.8 * 13.7 / 12.8) and hi == pytest.approx(1.25 * 13.7 / 12.8)
    r = Regime(band=Band(low=10, high=20, max_ttft_p50_s=1.0))
    sig = {"fullness": 1.0, "preemptions_per_min": 15, "ttft_p50_ms": 500}
    assert r.stage(sig) == ("in band", "preemptions")
    assert r.stage({**sig, "ttft_p50_ms": 1500}) == ("above", "drain")
    assert r.stage({**sig, "fullness": 0.5}) == ("below", "fullness")
    with pytest.raises(ValueError, match="fullness"):
        r.stage({**sig, "fullness": math.nan})


@pytest.mark.parametrize("k, n", [(1, 3), (2, 4), (3, 3), (4, 4), (5, 5), (16, 16)])
def test_checks_fill_whole_rounds_of_workers(k, n):
    from engine.runs.calibrate import CHECK_SEEDS, held_out_seeds
    from engine.runs.profiles import PROFILES
    seeds = held_out_seeds(k)
    assert len(seeds) == n and n % k == 0
    assert seeds[:len(CHECK_SEEDS)] == CHECK_SEEDS and len(set(seeds)) == n
    assert not set(seeds) & {s for p in PROFILES.values() for s in p.seeds + p.sweep_seeds + p.control_seeds}


def test_a_check_runs_every_held_out_seed_beside_the_others(monkeypatch, tmp_path):
    """At k=2 a check is four runs, two rounds of two: none of them measures alone."""
    from engine.runs import calibrate, execute, regime
    asked = []

    def ensure_runs(specs, **kw):
        asked.extend(specs)
        return [tmp_path / f"{s.seed}.npz" for s in specs]
    monkeypatch.setattr(execute, "ensure_runs", ensure_runs)
    monkeypatch.setattr(regime, "signature", lambda p, yard: {"fullness": 1.0, "preemptions_per_min": 200.0,
                                                             "ttft_p50_ms": float(p.stem)})
    out = calibrate.check_rate(11.0, 60.0, progress=False, concurrency=2)
    assert [s.seed for s in asked] == [101, 102, 103, 104] and {s.concurrency for s in asked} == {2}
    assert [x["seed"] for x in out["per_seed"]] == [101, 102, 103, 104]
    assert out["ttft_p50_ms"] == 102.5                     # the median of four


def test_a_record_of_three_checks_on_two_workers_is_not_reused(monkeypatch, tmp_path):
    """Records name their check protocol: alone (k=1) it is the three seeds it always was, so
    those records stay valid; at k=2 the four-seed protocol has its own."""
    from engine.runs.calibrate import _checked_records, calibration_path
    monkeypatch.setenv("ITL_CACHE_DIR", str(tmp_path))
    alone, paired = calibration_path("checked", "article", 60.0, 1), calibration_path("checked", "article", 60.0, 2)
    assert alone.name.startswith("checked-60s-in-run-article-")
    assert paired.name.startswith("checked-60s-in-run-4seeds-article-k2-")
    old = paired.with_name(paired.name.replace("-4seeds", ""))     # what the three-seed protocol wrote
    for p in (alone, paired, old):
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("{}")
    assert _checked_records("article", 2) == [paired] and _checked_records("article", 1) == [alone]
