"""The tagging-overhead analysis: what the thread clocks cost, counted from the
logs of the overhead pair at smoke size. Counts and arithmetic only; the <1% goal is a
timing result and is met in benchmarks/bench_tagging.py, not here."""
import numpy as np
import pandas as pd

from analysis import load
from analysis.instrument.overhead import observed_phrase, overhead_table, reads_per_step
from engine.controls import overhead_configs


def _pair(control_logs):
    return [control_logs[c.name] for c in overhead_configs()]


def test_wall_only_tagging_reads_no_thread_clock(control_logs):
    article_tags, _ = (load(p) for p in _pair(control_logs))
    reads = reads_per_step(article_tags)
    assert reads["cpu"] == 0 and reads["runq"] <= 1 / len(article_tags.steps)


def test_full_tagging_reads_at_step_ends_and_after_working_segments(control_logs):
    _, full = (load(p) for p in _pair(control_logs))
    reads = reads_per_step(full)
    worked = int((full.extras["seg_work"] > 0).sum())
    assert np.isclose(reads["cpu"], (2 * len(full.steps) + worked) / len(full.steps))
    # a step that only decodes reads three times: the old scheme read twelve
    decode_only = ~np.isin(np.arange(len(full.steps)),
                           full.segs[(full.extras["seg_work"] > 0) & (full.segs[:, 1] != 3), 0])
    assert decode_only.mean() > 0.5 and 2 < reads["cpu"] < 4
    # the run queue is read once before serving, then only at a CPU reading where the
    # thread had lost CPU time: every change of its value seen in the log needs a read of
    # its own, and there are fewer than one per two steps
    in_loop = int(full.extras["runq_reads"]) - 1
    changes = _runq_changes(full)
    assert 1 <= changes <= in_loop <= 2 * len(full.steps) + worked
    assert in_loop / len(full.steps) < 0.5


def _runq_changes(log) -> int:
    """How many times the run-queue reading differs from the one before it, in time order."""
    steps, segs = log.steps, log.segs
    srq, work = log.extras["step_runq"], log.extras["seg_work"]
    t = np.concatenate([steps[:, 0], steps[:, 1], segs[work > 0, 3]])
    v = np.concatenate([srq[:, 0], srq[:, 1], log.extras["seg_runq_end"][work > 0]])
    v = v[np.argsort(t, kind="stable")]
    v = v[np.isfinite(v)]
    return int((np.diff(v) != 0).sum())


def test_overhead_table_is_reads_times_cost(control_logs):
    a, f = _pair(control_logs)
    costs = {"cpu": 0.5, "runq": 2.0, "wall": 0.05}
    t = overhead_table([(1, a, f)], costs=costs)
    reads = reads_per_step(load(f))
    row = t.loc[1]
    assert np.isclose(row["direct us per step"], 0.5 * reads["cpu"] + 2.0 * reads["runq"])
    assert np.isclose(row["direct overhead"], row["direct us per step"] / 1e3 / row["median step ms"])


def test_observed_phrase_follows_the_scatter():
    table = lambda obs: pd.DataFrame({"observed overhead": obs, "direct overhead": [0.001] * len(obs)})
    assert "cannot resolve" in observed_phrase(table([-0.1, 0.1, 0.0]))
    assert "rough check" in observed_phrase(table([0.001, 0.002, 0.0015]))
    assert "one seed" in observed_phrase(table([0.01]))
