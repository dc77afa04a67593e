"""Which runs a chapter's pooled check covers, said in the chapter (the rule itself is
analysis.render.chapter_runs.overload_joins: the overload sidebar's runs join only when a
chapter runs the profile's own seeds)."""
from __future__ import annotations

# Why a chapter re-run with `seeds` leaves the overload sidebar's runs out (said by the
# reconciliation here and by the findings' note in analysis/render/book_findings.py).
OVERLOAD_LEFT_OUT = ("they are made for the profile's own seeds, and a chapter re-run with other "
                     "seeds speaks for those seeds alone")


def reconcile_scope_sentence(seeds, n_ladder: int, n_overload: int) -> str:
    """What the reconciliation below covers, and why the overload runs are missing when
    `seeds` (the chapter's parameter) was given."""
    if seeds is None:
        extra = f" and the {n_overload} runs of the overload sidebar" if n_overload else ""
        return f"The check covers this build's {n_ladder} ladder runs{extra}."
    listed = ", ".join(str(s) for s in seeds)
    return (f"The check covers the {n_ladder} ladder runs of the seeds given ({listed}). The overload "
            f"sidebar's runs are left out: {OVERLOAD_LEFT_OUT}.")
