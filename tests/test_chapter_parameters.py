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
])
def test_bad_chapter_parameters_name_themselves(kwargs, message):
    with pytest.raises(ValueError, match="papermill") as err:
        engine.profile_specs("smoke", **kwargs)
    assert message in str(err.value)


def test_unknown_profile_shows_the_valid_ones():
    with pytest.raises(ValueError, match="unknown profile 'huge'; valid profiles: article, quick, smoke"):
        engine.profile_specs("huge", seeds=[1], rate=5.0)
