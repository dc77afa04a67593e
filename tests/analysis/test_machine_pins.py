"""The pinned-against-installed check on the reproducing page reads a pin as pip does."""
from analysis.render.machine import satisfies


def test_a_local_build_meets_its_release_pin_and_nothing_else_does():
    assert satisfies("2.13.0+cpu", "2.13.0") and satisfies("2.13.0", "2.13.0")
    assert not satisfies("2.13.1", "2.13.0") and not satisfies("missing", "2.13.0")
    assert not satisfies("2.13.0", "2.13.0+cpu")
