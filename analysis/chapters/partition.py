"""The partition page (book/partition), computed: the article's partition cases and the
reviewer's two under the first and the corrected partitioner, and the reconciliation of
every gap of this build's runs; the notebook only displays them."""
from __future__ import annotations

import pandas as pd

from ..core.first_version import FirstVersionPartitioner
from ..core.partitioner import Partitioner
from ..core.schemes import LABELS
from ..engine_link import get_profile, made_on_confirmed, profile_specs
from ..across_runs import scope, summaries, tables
from ..instrument import cases as examples
from ..render.chapter_runs import overload_specs
from ..render.page_view import PageView

RECONCILE_COLUMNS = {"gaps": "sum", "reconcile_max_err_ms": "max", "skipped_steps_without_eviction": "sum"}


def page(profile=None, seeds=None, duration=None, rate=None) -> PageView:
    """Everything book/partition shows; the runs that are missing are made first."""
    out = cases_view()
    prof = get_profile(profile)
    ladder_specs, extra = made_on_confirmed(prof, lambda: (
        profile_specs(prof, seeds=seeds, duration=duration, rate=rate),
        overload_specs(prof, seeds, duration, rate)), rate)     # no overload runs when seeds are given (see the sentence)
    specs = ladder_specs + extra
    out.numbers["rec_scope"] = scope.reconcile_scope_sentence(seeds, len(ladder_specs), len(extra))
    frame = tables.summaries_frame(summaries.run_summaries(specs))
    out.numbers.update(reconcile_numbers(frame))
    out.tables["reconcile"] = reconcile_table(frame)
    return out


def cases_view() -> PageView:
    """The cases with known answers (no runs needed): the article's under the corrected
    partitioner, the reviewer's under both, and the numbers the prose quotes from them."""
    out = PageView()
    cases = examples.comparison(examples.ARTICLE_CASES, {"corrected": Partitioner}).droplevel(1)
    out.tables["stories"] = pd.Series({c.name: c.story for c in examples.ARTICLE_CASES}, name="timeline").to_frame()
    out.numbers["cases_max_err"] = float((cases["sum of parts ms"] - cases["gap ms"]).abs().max())
    out.tables["cases"] = cases[["gap ms"] + LABELS + ["sum of parts ms"]].round(2)
    side = examples.comparison(examples.REVIEWER_CASES,
                               {"first version": FirstVersionPartitioner, "corrected": Partitioner})
    ev, gcx = examples.EVICTED.name, examples.GC_IN_EAGER.name
    out.numbers.update(ex1_gap=side.loc[(ev, "first version"), "gap ms"],
                       ex1_v1_causes=side.loc[(ev, "first version"), "causes ms"],
                       ex1_fixed_preempt=side.loc[(ev, "corrected"), "preempt"],
                       ex1_fixed_kernel=side.loc[(ev, "corrected"), "kernel"],
                       ex2_v1_graph=side.loc[(gcx, "first version"), "graph"],
                       ex2_fixed_graph=side.loc[(gcx, "corrected"), "graph"],
                       ex2_fixed_gc=side.loc[(gcx, "corrected"), "gc"])
    out.tables["reviewer"] = side[["gap ms"] + LABELS + ["causes ms", "sum of parts ms"]].round(2)
    return out


def reconcile_numbers(frame: pd.DataFrame) -> dict:
    """How many runs and gaps were reconciled, the worst error and the steps skipped."""
    return {"rec_runs": len(frame), "rec_gaps": int(frame["gaps"].sum()),
            "rec_max_err": float(frame["reconcile_max_err_ms"].max()),
            "rec_skipped": int(frame["skipped_steps_without_eviction"].sum())}


def reconcile_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per group and rung: gaps reconciled, the worst error (ms), steps skipped."""
    return frame.groupby(["group", "rung"], sort=False, observed=True)[list(RECONCILE_COLUMNS)].agg(RECONCILE_COLUMNS)
