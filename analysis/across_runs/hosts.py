"""Where each run was measured (host, CPU model, cores, concurrency), and the rule that a
pair compares two runs of one kind of CPU.

A seed is a block: a build measures all of a seed's rungs on one worker (one core of one
host, engine/runs/workers.py), so a ratio between two rungs always compares runs of one
machine. A build on a cluster may still spread its seeds over several hosts; the ladder
says so. A pair measured on two CPU models would compare the machines as much as the
fixes, and is refused.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

WHERE_FIELDS = ("host", "cpu_model", "cpus_allowed", "concurrency")


def read_where(path) -> dict:
    """A raw log's host, CPU model, allowed cores and concurrency, from its provenance
    (the schedule a build stamped, else the machine fields every log has; a log made
    before hosts were recorded has host None and concurrency 1)."""
    with np.load(Path(path)) as z:
        prov = json.loads(str(z["provenance"])) if "provenance" in z.files else {}
    sched = prov.get("schedule") or {}
    return {"host": sched.get("host"), "cpu_model": sched.get("cpu_model") or prov.get("cpu_model"),
            "cpus_allowed": sched.get("cpus_allowed"), "concurrency": int(sched.get("concurrency") or 1)}


def mixed_cpu_problem(frame) -> str | None:
    """Why runs of this frame cannot be paired by seed (a seed whose runs were measured on
    more than one CPU model), or None."""
    if "cpu_model" not in frame.columns or "seed" not in frame.columns:
        return None
    models = frame.dropna(subset=["cpu_model"]).groupby("seed")["cpu_model"].unique()
    for seed, found in models.items():
        if len(found) > 1:
            rungs = {m: frame.loc[(frame["seed"] == seed) & (frame["cpu_model"] == m), "rung"].iloc[0]
                     for m in found}
            where = ", ".join(f"{r!r} on {m!r}" for m, r in rungs.items())
            return (f"runs of seed {seed} were measured on different CPU models ({where}); a paired "
                    f"comparison needs both runs of a pair on one CPU model: measure each seed's block "
                    f"on one kind of machine (the executors keep a block on one worker)")
    return None


def refuse_mixed_cpus(frame) -> None:
    """One clear ValueError if any pair would span two CPU models."""
    if (problem := mixed_cpu_problem(frame)) is not None:
        raise ValueError(problem)


def hosts_sentence(summaries) -> str:
    """Whether this build's pairs span hosts, in one or two sentences."""
    import pandas as pd
    frame = pd.DataFrame(list(summaries)) if not isinstance(summaries, pd.DataFrame) else summaries
    if frame.empty or "host" not in frame.columns or frame["host"].isna().all():
        return "These runs predate the record of hosts, so where each was measured is not known."
    hosts = sorted(frame["host"].dropna().unique())
    models = sorted(frame["cpu_model"].dropna().unique()) if "cpu_model" in frame.columns else []
    k = sorted({int(c) for c in frame.get("concurrency", pd.Series([1])).dropna()})
    level = ("one at a time" if k == [1] else
             "with " + " or ".join(str(c - 1) for c in k) + " other run(s) measuring at the same time")
    if len(hosts) == 1:
        return f"Every run of this build was measured on one host ({hosts[0]}, {models[0] if models else 'CPU unknown'}), {level}."
    per_seed = frame.groupby("seed")["host"].nunique()
    split = [int(s) for s, n in per_seed.items() if n > 1]
    within = ("each seed's rungs on one host, so every ratio compares runs of one machine while the "
              "spread between seeds includes the differences between hosts" if not split else
              f"seed(s) {split} had rungs on more than one host, so their ratios compare machines too")
    return (f"The pairs span {len(hosts)} hosts ({', '.join(hosts)}; CPU model(s): {', '.join(models)}), "
            f"{level}: {within}.")
