"""The calibration search (pure): converges on a monotone signature, and says so when the
article's band cannot be reached."""
import pytest

from engine.runs.calibrate import search_rate
from engine.runs.target import BAND, Band


def monotone(per_rate: float, drain_limit: float = 1e9, log=None):
    """A synthetic baseline: preemptions per minute grow linearly with the rate; the queue
    stops draining above drain_limit."""
    def measure(rate):
        if log is not None:
            log.append(rate)
        return {"preemptions_per_min": per_rate * rate, "drains": rate <= drain_limit}
    return measure


@pytest.mark.parametrize("start", [1.0, 6.0, 40.0])
def test_search_converges_into_the_band(start):
    seen = []
    found = search_rate(monotone(30.0, log=seen), start)       # band 142-318 at 4.7-10.6 req/s
    assert found["reached"] is True
    assert BAND.low <= 30.0 * found["rate"] <= BAND.high
    assert [c["rate"] for c in found["checks"]] == [round(r, 4) for r in seen]
    assert found["checks"][-1]["place"] == "in band"
    assert all(c["place"] in ("below", "above") for c in found["checks"][:-1])


def test_search_reports_failure_when_the_band_cannot_be_reached():
    # the queue stops draining at 4 req/s, before the signature reaches the band (120/min)
    found = search_rate(monotone(30.0, drain_limit=4.0), 2.0, max_checks=12)
    assert found["reached"] is False
    assert found["rate"] <= 4.0                                  # the closest check that drained
    assert not any(c["place"] == "in band" for c in found["checks"])
    assert found["rate"] == max(c["rate"] for c in found["checks"] if c["drains"])


def test_band_places_a_signature():
    band = Band(low=10, high=20, max_ttft_p50_s=1.0)
    assert band.place(15, True) == "in band"
    assert band.place(5, True) == "below"
    assert band.place(25, True) == "above"
    assert band.place(15, False) == "above"                      # a queue that does not drain is too heavy
