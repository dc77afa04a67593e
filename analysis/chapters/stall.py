"""The stall page (book/stall), computed: one run's summary, the article's hypothesis
checked on it, one tail gap picked and partitioned, and the table of stall kinds; the
notebook only displays them."""
from __future__ import annotations

from ..core.gaps import partition_run
from ..core.runlog import load
from ..core.schemes import ARTICLE
from ..core.summary import summarize
from ..engine_link import ensure_runs, get_profile, profile_specs
from ..across_runs.rungs import FIRST
from ..render import hypothesis, stall_example, stall_kinds
from ..render.page_view import PageView

FACT_KEYS = ("gap_ms", "cause", "request", "steps_spanned", "kernel_ms", "parts_sum_ms")   # glued as stall_<key>


def page(profile=None, seeds=None, duration=None, rate=None, rung=None, quantile=99.0) -> PageView:
    """Everything book/stall shows, from the first seed of ``rung`` (the ladder's first if None);
    the example is a gap at or above the run's ``quantile`` percentile. The run is made if missing."""
    rung = rung or FIRST
    spec = profile_specs(get_profile(profile), rungs=[rung], seeds=seeds, duration=duration, rate=rate)[0]
    log = load(ensure_runs([spec], progress=False)[0])
    gaps = partition_run(log)
    summary = summarize(log, gaps=gaps)
    stall = stall_example.pick_stall(gaps, quantile)
    out = PageView()
    out.numbers = {**summary_numbers(summary), **stall_numbers(stall_example.stall_facts(stall), quantile)}
    out.tables["partition"] = (stall_example.partition_frame(stall)
                               .style.format({"ms": "{:.2f}", "share of gap": "{:.1%}"}).hide(axis="index"))
    out.tables["kinds"] = stall_kinds.stall_table().style.hide(axis="index")
    out.figures["anatomy"] = lambda: stall_example.draw_stall(log, stall)
    return out


def summary_numbers(summary: dict) -> dict:
    """The run's figures the page states, the hypothesis' verdict on them, and the article's
    primary-cause rule."""
    return {"stall_rung": summary["rung"], "stall_seed": summary["seed"],
            "fwd_clean": summary["fwd_share_clean_median"], "fwd_tail": summary["fwd_share_tail_median"],
            "hypothesis_verdict": hypothesis.verdict(summary["fwd_share_clean_median"],
                                                     summary["fwd_share_tail_median"]),
            "run_p50": summary["itl_p50"], "run_p99": summary["itl_p99"], "n_gaps": summary["gaps"],
            "primary_floor_ms": ARTICLE.floor_ms, "primary_fraction": ARTICLE.min_fraction,
            "cause_order": ", ".join(ARTICLE.causes)}


def stall_numbers(facts: dict, quantile: float) -> dict:
    """The picked gap's facts as the page glues them (stall_<fact>), with the percentile it was picked at."""
    return {**{f"stall_{key}": facts[key] for key in FACT_KEYS}, "stall_quantile": quantile}
