"""Score the instrument's controls (engine/controls.py) from their raw logs.

Negative: the share of all gap time a scheme charges to a cause that cannot happen.
Positive: for each injected stall, the ms its label got in the gaps that contain it,
next to the ms injected (measured by the injector around the injected work, on its
own clock reads). A point injection at step N lies inside every gap that opens before
step N and closes at or after it; a forced preemption only in its victim's gap; the CPU
hog's window in every gap of each request that decoded through the whole window.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.columns import STEP
from ..core.schemes import get_scheme
from ..core.runlog import RunLog
from ..core.threadclocks import step_clock_ms
from ..core.gaps import as_log, partition_run
from ..engine_link import CONTROLS, INJECTION_KINDS as ENGINE_INJECTION_KINDS
from ..across_runs.summaries import per_run_cached
from ..across_runs.wording import exact_pct

# the label each injected kind must land in; the log stores the kind as its position
# in the engine's INJECTION_KINDS
INJECTION_LABEL = {"gc": "gc", "pause": "tok", "prefill": "prefill", "preempt": "preempt", "hog": "os"}
INJECTION_KINDS = tuple(ENGINE_INJECTION_KINDS)
NEGATIVE_BOUND = 1e-4       # at most 0.01% of all gap time
POSITIVE_BOUND = {"hog": 0.90}
DEFAULT_POSITIVE_BOUND = 0.95


def bound_words() -> dict[str, str]:
    """The bounds as the chapter states them: the negative controls' ceiling and the
    default positive bound either way (0.95: between 95% and 105%)."""
    return {"negative_bound": exact_pct(NEGATIVE_BOUND), "positive_low": exact_pct(DEFAULT_POSITIVE_BOUND),
            "positive_high": exact_pct(2 - DEFAULT_POSITIVE_BOUND)}


def within(frac, bound):
    """A positive control passes when its label got the injected time to within the bound
    either way: 95% means between 95% and 105% (a label that got 101.4% counted time that
    was not injected, which a one-sided bound would never notice)."""
    frac = np.asarray(frac, float)
    return np.isfinite(frac) & (frac >= bound) & (frac <= 2 - np.asarray(bound, float))


def worst(fracs) -> float:
    """The recovered fraction farthest from 1 (either way); NaN if none is finite."""
    f = pd.Series(fracs, dtype=float).dropna()
    return float(f.iloc[(f - 1).abs().argmax()]) if len(f) else float("nan")


def charged_share(log_or_path, cause: str, scheme="refined") -> float:
    """Fraction of all gap time the scheme charges to ``cause``."""
    df = partition_run(as_log(log_or_path), scheme)
    return float(df[cause].sum() / df["gap_ms"].sum())


def injections(log: RunLog) -> pd.DataFrame:
    """The log's injected stalls: kind, step, start and end (s), injected ms, request."""
    raw = np.asarray(log.extras.get("injections", np.zeros((0, 6))), dtype=float).reshape(-1, 6)
    df = pd.DataFrame(raw, columns=["kind", "step", "t0", "t1", "injected_ms", "request"])
    df["kind"] = [INJECTION_KINDS[int(k)] for k in df["kind"]]
    return df.astype({"step": int, "request": int})


def recovered_ms(gaps: pd.DataFrame, inj: pd.Series, label: str) -> tuple[float, int]:
    """(ms of ``label`` in the gaps holding the injection, gaps or requests it is read over)."""
    if inj["kind"] == "preempt":
        g = gaps[(gaps["request"] == inj["request"]) & (gaps["t0"] <= inj["t0"]) & (gaps["t1"] > inj["t0"])]
        return (float(g[label].sum()), len(g)) if len(g) else (float("nan"), 0)
    if inj["kind"] == "hog":
        span = gaps.groupby("request").agg(first=("t0", "min"), last=("t1", "max"))
        through = span.index[(span["first"] <= inj["t0"]) & (span["last"] >= inj["t1"])]
        g = gaps[gaps["request"].isin(through) & (gaps["t1"] > inj["t0"]) & (gaps["t0"] < inj["t1"])]
        per_request = g.groupby("request")[label].sum()
        return (float(per_request.median()), len(per_request)) if len(per_request) else (float("nan"), 0)
    g = gaps[(gaps["step0"] < inj["step"]) & (gaps["step1"] >= inj["step"])]
    return (float(g[label].median()), len(g)) if len(g) else (float("nan"), 0)


def positive_table(log_or_path, scheme="refined") -> pd.DataFrame:
    """One row per injection: kind, label, injected ms, recovered ms, fraction, bound, pass."""
    sch = get_scheme(scheme)
    log = as_log(log_or_path)
    inj = injections(log)
    if not len(inj):
        raise ValueError(f"{log.path}: no injections in this log; is it a positive-control run?")
    gaps = partition_run(log, sch)
    rows = []
    for _, r in inj.iterrows():
        label = INJECTION_LABEL[r["kind"]]
        if label in sch.labels:
            got, n = recovered_ms(gaps, r, label)
        else:
            got, n = float("nan"), 0       # the scheme has no label for it: invisible
        bound = POSITIVE_BOUND.get(r["kind"], DEFAULT_POSITIVE_BOUND)
        frac = got / r["injected_ms"] if r["injected_ms"] > 0 else float("nan")
        rows.append({"kind": r["kind"], "label": label if label in sch.labels else "(none)",
                     "step": r["step"], "injected_ms": r["injected_ms"], "recovered_ms": got,
                     "recovered": frac, "read_over": n, "bound": bound,
                     "ok": bool(within(frac, bound))})
    return pd.DataFrame(rows)


def negative_row(log_or_path, cause: str, scheme="refined") -> dict:
    share = charged_share(log_or_path, cause, scheme)
    return {"cause": cause, "charged_share": share, "bound": NEGATIVE_BOUND, "ok": share <= NEGATIVE_BOUND}


# ---------------------------------------------------------------- tables for the book
def _by_control(specs):
    known = {c.config.name: c for c in CONTROLS}
    return [(known[s.rung], s) for s in specs if s.rung in known]


def negative_table(specs) -> pd.DataFrame:
    """Per cause: the control, the worst share (over seeds) each scheme charged to it."""
    rows = []
    for control, spec in _by_control(specs):
        if control.expected != "none":
            continue
        rows.append({"cause": control.cause, "control": control.what, "seed": spec.seed,
                     **{scheme: _charged_share_cached(spec.path, control.cause, scheme)
                        for scheme in ("article", "refined")}})
    df = pd.DataFrame(rows)
    out = df.groupby(["cause", "control"], sort=False)[["article", "refined"]].max()
    out["runs"] = df.groupby(["cause", "control"], sort=False).size()
    out["bound"] = NEGATIVE_BOUND
    out["verdict"] = np.where(out["refined"] <= NEGATIVE_BOUND, "pass", "FAIL")
    return out.reset_index()


# a rebuild reads these from the run cache's side files instead of partitioning every
# control run again under both schemes (per_run_cached: keyed by log and the analysis code it imports)
def _charged_share_cached(path, cause: str, scheme: str) -> float:
    return per_run_cached(path, f"charged-{cause}-{scheme}", lambda: charged_share(path, cause, scheme))


def _positive_table_cached(path, scheme: str) -> pd.DataFrame:
    return pd.DataFrame(per_run_cached(path, f"positive-{scheme}",
                                       lambda: positive_table(path, scheme).to_dict("records")))


def positive_rows(specs) -> pd.DataFrame:
    """Every injection of every positive-control run, scored under both schemes."""
    frames = []
    for control, spec in _by_control(specs):
        if control.expected != "injected":
            continue
        ref = _positive_table_cached(spec.path, "refined").assign(seed=spec.seed, control=control.what)
        art = _positive_table_cached(spec.path, "article")
        ref["article_recovered"] = art["recovered"].to_numpy()
        frames.append(ref)
    return pd.concat(frames, ignore_index=True)


INJECTION_WHAT = {
    "gc": "forced full collection (startup heap + 100k lists)",
    "pause": "busy-wait inside a tokenize segment",
    "prefill": "extra prefill chunk of a scratch prompt",
    "preempt": "forced eviction of the oldest emitting request, held out",
    "hog": "CPU-bound process pinned to the engine's core",
}


def positive_summary(rows: pd.DataFrame) -> pd.DataFrame:
    """Per injection kind: label, control, median injected and recovered ms, the worst
    recovered fraction over runs (both schemes), the bound and the verdict."""
    g = rows.groupby("kind", sort=False)
    label = g["label"].first()
    out = pd.DataFrame({
        "label": label,
        "control": [INJECTION_WHAT[k] for k in label.index],
        "injected ms": g["injected_ms"].median(),
        "recovered ms": g["recovered_ms"].median(),
        "worst recovered": g["recovered"].agg(worst),
        "worst, article scheme": g["article_recovered"].agg(worst),
        "runs": g.size(),
        "bound": g["bound"].first(),
    })
    out["verdict"] = np.where(within(out["worst recovered"], out["bound"]), "pass", "FAIL")
    return out.reset_index()


def hog_window(log_or_path) -> dict:
    """For the steps that ran entirely inside the hog's window: their wall ms, the ms the
    engine thread spent off the CPU, and the ms it waited on the run queue."""
    log = as_log(log_or_path)
    inj = injections(log)
    inj = inj[inj["kind"] == "hog"]
    if not len(inj):
        raise ValueError(f"{log.path}: no CPU-hog injection in this log")
    t0, t1 = inj["t0"].iloc[0], inj["t1"].iloc[0]
    st = log.steps
    inside = (st[:, STEP.t0] >= t0) & (st[:, STEP.t1] <= t1)
    wall_ms, off_ms, wait_ms = (x[inside] for x in step_clock_ms(log))
    wall, off, wait = float(wall_ms.sum()), float(off_ms.sum()), float(np.nansum(wait_ms))
    return {"steps": int(inside.sum()), "wall_ms": wall, "offcpu_ms": off, "runq_ms": wait,
            "offcpu_share": off / wall if wall else float("nan"),
            "runq_share_of_offcpu": wait / off if off > 0 else float("nan")}


def failing_causes(negative: pd.DataFrame, scheme: str = "article") -> list[str]:
    """The negative controls' causes a scheme charged more than the bound."""
    return list(negative.loc[negative[scheme] > NEGATIVE_BOUND, "cause"])


def article_scheme_holds(summary: pd.DataFrame) -> bool:
    """Whether every point injection (all but the CPU hog, which the article's scheme
    has no label for) is recovered within its bound under the article's scheme too."""
    points = summary[summary["kind"] != "hog"]
    return bool(within(points["worst, article scheme"], points["bound"]).all())


def hog_contention_sentence(w: dict, off_floor: float = 0.1, runq_floor: float = 0.5) -> str:
    """What the thread clocks saw while the hog spun (hog_window's dict): time off the CPU,
    and whether it was waiting on the run queue, which is what contention looks like."""
    if not w.get("steps"):
        return "No step ran entirely inside the hog's window, so the thread clocks cannot say what it looked like."
    off, runq = w["offcpu_share"], w["runq_share_of_offcpu"]
    head = (f"Over the {w['steps']:,} steps that ran inside the window, {off:.0%} of their wall time was "
            f"the thread off the CPU")
    if not off >= off_floor:
        return head + ": the hog hardly took the engine off the CPU, so it does not show up as contention here."
    head += (f", and run-queue wait came to {runq:.0%} of that off-CPU time (the two clocks are read a "
             f"few microseconds apart, so the ratio can pass 100%)")
    if runq >= runq_floor:
        return head + ": the thread was waiting to run, so the hog's stall looks like contention to the instrument."
    return (head + ": most of that time was not spent waiting to run, so the instrument does not see the "
            "hog's stall as contention.")
