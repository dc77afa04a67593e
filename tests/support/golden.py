"""The whole-run partition against the scalar Partitioner, gap by gap."""
import numpy as np
import pytest

import analysis
from analysis import LABELS


def assert_paths_agree(log, gaps):
    """The whole-run frame equals the scalar Partitioner on every gap (parts, context, cause)."""
    p = analysis.Partitioner(analysis.steps_from_log(log), log.gcs[:, :2].tolist())
    assert gaps.attrs["baseline"] == pytest.approx((p.baseline.slope, p.baseline.intercept), rel=1e-12)
    evictions = analysis.evictions_by_request(log)
    scalar = np.empty((len(gaps), 2 * len(LABELS)))
    causes = []
    for i, (rid, t0, t1) in enumerate(gaps[["request", "t0", "t1"]].itertuples(index=False)):
        parts, ctx = p.gap(t0, t1, evictions.get(rid, ()))
        scalar[i] = [parts[k] for k in LABELS] + [ctx[k] for k in LABELS]
        causes.append(analysis.primary_cause((t1 - t0) * 1e3, parts))
    whole = gaps[LABELS + ["ctx_" + k for k in LABELS]].to_numpy()
    # ms values of a 60 s run computed two ways: agree to float rounding (~1e-11 ms)
    np.testing.assert_allclose(whole, scalar, rtol=0, atol=1e-9)
    assert (gaps["cause"].astype(str).to_numpy() == np.array(causes)).all()
    np.testing.assert_allclose(whole[:, :len(LABELS)].sum(axis=1), gaps["gap_ms"], rtol=0, atol=1e-9)
