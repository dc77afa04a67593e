import numpy as np

from analysis.render.glue import plain


def test_numpy_scalars_become_python_numbers_that_format():
    for value in (np.float64(3.25), np.int64(7), np.bool_(True)):
        out = plain(value)
        assert type(out) in (float, int, bool) and out == value
        assert format(out, "") == str(out)
    assert plain("text") == "text" and plain(2.5) == 2.5
