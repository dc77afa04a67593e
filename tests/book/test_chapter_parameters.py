"""Chapter parameters as papermill hands them: wrong ones fail at once, naming the
parameter and the -y form."""
import pytest

import engine


@pytest.mark.parametrize("kwargs, message", [
    (dict(seeds="[6, 7]"), "seeds must be a list of integers, got the text '[6, 7]'"),
    (dict(seeds=6), "seeds must be a list of integers, got 6"),
    (dict(seeds=[]), "seeds must name at least one seed"),
    (dict(seeds=[1], duration=-1.0), "duration must be a number of seconds"),
    (dict(seeds=[1], duration=0), "duration must be a number of seconds"),
    (dict(seeds=[1], rate="7"), "rate must be a number of req/s"),
    (dict(seeds=[1], duration="x"), "duration must be a number of seconds in (0, 86400], got 'x'"),
    (dict(seeds=[1], duration="20"), "duration must be a number of seconds in (0, 86400], got '20'"),
    (dict(seeds=[1], duration=[1]), "duration must be a number of seconds in (0, 86400], got [1]"),
    (dict(seeds=[1], duration=True), "duration must be a number of seconds in (0, 86400], got True"),
    (dict(seeds=[1, 1]), "seeds must be distinct, got [1, 1]"),
    (dict(seeds=[10**300]), "seed must be an integer in [0, 4294967295]"),
])
def test_bad_chapter_parameters_name_themselves(kwargs, message):
    with pytest.raises(ValueError, match="papermill") as err:
        engine.profile_specs("smoke", **kwargs)
    assert message in str(err.value)


def test_unknown_profile_shows_the_valid_ones():
    with pytest.raises(ValueError, match="unknown profile 'huge'; valid profiles: article, quick, smoke"):
        engine.profile_specs("huge", seeds=[1], rate=5.0)


@pytest.mark.parametrize("make", [engine.profile_specs, engine.control_specs])
def test_bad_duration_is_refused_by_every_chapter_entry_point(make):
    with pytest.raises(ValueError, match="duration must be a number of seconds.*got 'x'"):
        make("smoke", seeds=[1], duration="x", rate=5.0)


def test_sweep_refuses_a_bad_duration_before_anything_is_measured():
    from engine.runs.sweep import sweep_specs
    with pytest.raises(ValueError, match="duration must be a number of seconds.*got True"):
        sweep_specs("smoke", seeds=[1], duration=True, rate=5.0, fast_scale=1.0)


def test_a_numpy_array_of_seeds_is_a_list_of_seeds():
    import numpy as np
    specs = engine.profile_specs("smoke", seeds=np.array([2, 3]), duration=np.float64(2.0), rate=5.0)
    assert sorted({s.seed for s in specs}) == [2, 3] and all(type(s.seed) is int for s in specs)
    assert specs[0].path == engine.profile_specs("smoke", seeds=[2, 3], duration=2.0, rate=5.0)[0].path
