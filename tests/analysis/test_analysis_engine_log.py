"""The analysis on a real run of our own engine, with every mechanism firing."""
import analysis
from tests.support.golden import assert_paths_agree


def test_whole_run_path_equals_scalar_on_every_gap_of_a_real_run(pressured_log):
    log = analysis.load(pressured_log)
    gaps = analysis.partition_run(log)
    assert len(gaps) > 1000 and len(log.evictions) > 0 and (log.steps[:, 4] == 0).any()
    assert gaps["n_evictions"].sum() > 0 and gaps["graph"].sum() > 0 and gaps["gc"].sum() > 0
    assert_paths_agree(log, gaps)


def test_our_logs_load_as_schema_3_with_provenance(smoke_log):
    log = analysis.load(smoke_log)
    assert log.schema_version == 3 and "seg_detail" in log.extras and "gc_tracked" in log.extras
    assert log.provenance["rate"]["rate"] == 14.0


def test_prefix_percentiles_are_those_of_the_shorter_window(smoke_log):
    from types import SimpleNamespace

    import numpy as np

    from analysis.across_runs import summaries
    spec = SimpleNamespace(path=smoke_log, rung="baseline", seed=1)
    rows = summaries.prefix_percentiles([spec], windows=(2.0, 4.0))
    gaps = analysis.partition_run(smoke_log)
    assert [r["duration"] for r in rows] == [2.0, 4.0]
    early = gaps.loc[gaps["t1"] <= 2.0, "gap_ms"].to_numpy()
    assert rows[0]["itl_p999"] == np.percentile(early, 99.9) and rows[0]["itl_max"] == early.max()
    assert rows[1]["itl_max"] >= rows[0]["itl_max"]
