"""Where runs were measured: pairs across CPU models are refused, and the ladder's
sentence says when pairs span hosts."""
import json

import numpy as np
import pytest

from analysis.across_runs import hosts, paired


def _runs(model_of=lambda rung, seed: "Xeon", host_of=lambda rung, seed: "h1", k=1):
    return [{"rung": r, "seed": s, "itl_p99": 10.0 + s + 3 * (r == "b"), "cpu_model": model_of(r, s),
             "host": host_of(r, s), "concurrency": k} for r in ("a", "b") for s in (1, 2, 3)]


def test_a_pair_across_cpu_models_is_refused_with_one_clear_error():
    runs = _runs(model_of=lambda r, s: "EPYC" if (r, s) == ("b", 2) else "Xeon")
    with pytest.raises(ValueError, match=r"runs of seed 2 were measured on different CPU models \('a' on 'Xeon', "
                                         r"'b' on 'EPYC'\)"):
        paired.ladder_verdicts(runs, metrics=["itl_p99"])
    with pytest.raises(ValueError, match="different CPU models"):
        paired.seed_subsample_intervals(runs, "itl_p99", ("a", "b"))


def test_seeds_on_different_models_still_pair_within_each_seed():
    runs = _runs(model_of=lambda r, s: "EPYC" if s == 3 else "Xeon")
    assert hosts.mixed_cpu_problem(__import__("pandas").DataFrame(runs)) is None
    assert paired.ladder_verdicts(runs, metrics=["itl_p99"])["n"].iloc[0] == 3


def test_the_sentence_says_when_pairs_span_hosts():
    one = hosts.hosts_sentence(_runs(k=2))
    assert one.startswith("Every run of this build was measured on one host (h1, Xeon)") and "1 other" in one
    many = hosts.hosts_sentence(_runs(host_of=lambda r, s: f"node{s}"))
    assert many.startswith("The pairs span 3 hosts (node1, node2, node3") and "one machine" in many
    split = hosts.hosts_sentence(_runs(host_of=lambda r, s: f"node{s}" if r == "a" else "node9"))
    assert "more than one host" in split
    old = hosts.hosts_sentence([{"rung": "a", "seed": 1, "host": None, "cpu_model": "Xeon"}])
    assert "predate" in old


def test_where_is_read_from_a_logs_provenance(smoke_log):
    where = hosts.read_where(smoke_log)
    with np.load(smoke_log) as z:
        prov = json.loads(str(z["provenance"]))
    assert where["cpu_model"] == prov["cpu_model"] and where["concurrency"] == 1


def test_the_larger_protocol_is_read_only_where_built(tmp_path, monkeypatch):
    from analysis.across_runs import larger_protocol as lp
    monkeypatch.setenv("ITL_CACHE_DIR", str(tmp_path))           # an empty cache: nothing is measured
    assert lp.larger_runs() is None
    assert lp.larger_sentence(None).startswith("No article-20 build (20 seeds of 60 s per rung) is in this cache")
    assert not (tmp_path / "runs").exists()
    rng = np.random.default_rng(0)
    runs = [{"rung": r, "seed": s, "itl_p999": 100 * (0.6 if r != "baseline" else 1.0) * rng.uniform(0.9, 1.1)}
            for r in lp.ENDS for s in range(1, 21)]
    view, change = lp.larger_view(runs)
    assert change["n"] == 20 and change["verdict"] == "established" and view["seeds"].max() >= 20
    assert f"{change['lo']:.2f}-{change['hi']:.2f}" in lp.larger_sentence(change)
