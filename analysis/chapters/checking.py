"""The checking page (book/checking), computed: the negative and positive controls, the
CPU hog step by step, the article's scheme against the refined one at the ladder's ends,
the sixth pile of slow steps, the clean tail, what the clock reads cost, and the
interference control; the notebook only displays them.

Live values: the clock reads' cost (overhead.read_cost_us) is measured afresh on every call,
so cost_cpu_us, cost_runq_us, direct_overhead, direct_overhead_token and overhead_goal and the
overhead table's cost-derived rows differ between executions; everything else is read
from the runs.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..engine_link import HOG_MS, POSITIVE, control_specs, get_profile, made_on_confirmed, profile_specs
from ..across_runs import article, summaries, tables
from ..across_runs.rungs import FIRST, LAST
from ..instrument import control_scores, interference_scores, overhead, sixth_pile
from ..render import figures_controls
from ..render.chapter_runs import every
from ..render.page_view import PageView

SCHEMES = ("article", "refined")
SCHEME_COLUMNS = {"article": "charged, article scheme", "refined": "charged, refined scheme"}
SLOW_COLUMNS = ["seed", "step", "size", "decode_ms", "predicted_ms", "ratio", "offcpu_ms", "runq_ms"]
SLOW_SHOWN = 12                      # the slowest steps the page lists
SCHEMES_TITLE = "Tail time by label: article vs refined scheme"


def page(profile=None, seeds=None, duration=None, rate=None) -> PageView:
    """Everything book/checking shows; the control runs and the ladder's two ends are made first."""
    prof = get_profile(profile)
    specs, ends = made_on_confirmed(prof, lambda: (
        control_specs(prof, seeds=seeds, duration=duration, rate=rate),
        profile_specs(prof, rungs=[FIRST, LAST], seeds=seeds, duration=duration, rate=rate)), rate)
    out = PageView(numbers={"n_control_seeds": len({s.seed for s in specs}), "control_duration": specs[0].duration,
                            "rate": specs[0].rate, "last_rung": LAST, "n_end_seeds": len({s.seed for s in ends}),
                            "end_duration": ends[0].duration, **control_scores.bound_words()})
    _negative(out, specs)
    _positive(out, specs)
    hog_spec = next(s for s in specs if s.rung == POSITIVE[1].config.name)
    w = control_scores.hog_window(hog_spec.path)
    out.numbers.update(hog_off_share=f"{100 * w['offcpu_share']:.0f}%",
                       hog_runq_share=f"{100 * w['runq_share_of_offcpu']:.0f}%",
                       hog_sentence=control_scores.hog_contention_sentence(w))
    out.figures["hog"] = lambda: figures_controls.hog_figure(hog_spec.path)
    _schemes(out, ends)
    last_specs = [s for s in ends if s.rung == LAST]
    _sixth_pile(out, last_specs)
    _clean_tail(out, [s.path for s in last_specs])
    _overhead(out, specs)
    ifc = interference_scores.control(profile)
    out.numbers.update(interference_numbers(ifc))
    out.tables["interference"] = interference_scores.display_table(ifc["table"]) if len(ifc["table"]) else None
    return out


# ---------------------------------------------------------------- the controls
def failing_words(causes: list[str]) -> str:
    """The causes a scheme fails the negative controls on, or 'none'."""
    return ", ".join(causes) or "none"


def article_phrase(holds: bool) -> str:
    """Whether the positive controls hold under the article's scheme too."""
    return "holds under both schemes" if holds else "does not hold under the article's scheme for every injection"


def _negative(out: PageView, specs) -> None:
    neg = control_scores.negative_table(specs)
    by_cause = neg.set_index("cause")
    out.numbers.update(neg_preempt_article=f"{100 * by_cause.loc['preempt', 'article']:.2f}%",
                       neg_prefill_article=f"{100 * by_cause.loc['prefill', 'article']:.4f}%",
                       neg_refined_worst=f"{100 * neg['refined'].max():.4f}%",
                       neg_all_pass=every(neg["verdict"] == "pass"),
                       neg_article_fails=failing_words(control_scores.failing_causes(neg, "article")),
                       reference_preempt=f"{100 * article.UNBOUNDED_POOL_PREEMPT_SHARE:.1f}%")
    shown = neg.copy()
    for col in ("article", "refined", "bound"):
        shown[col] = shown[col].map(lambda v: f"{100 * v:.4f}%")
    out.tables["negative"] = shown.rename(columns=SCHEME_COLUMNS)


def positive_cells(pos: pd.DataFrame) -> pd.DataFrame:
    """The positive controls' summary as the page shows it: shares in percent ('no label'
    where the injection has none), times in ms."""
    shown = pos.copy()
    for col in ("worst recovered", "worst, article scheme", "bound"):
        shown[col] = shown[col].map(lambda v: "no label" if pd.isna(v) else f"{100 * v:.1f}%")
    for col in ("injected ms", "recovered ms"):
        shown[col] = shown[col].map(lambda v: f"{v:.1f}")
    return shown


def _positive(out: PageView, specs) -> None:
    pos = control_scores.positive_summary(control_scores.positive_rows(specs))
    hog = pos.set_index("kind").loc["hog"]
    hog_bound = control_scores.POSITIVE_BOUND["hog"]
    out.numbers.update(
        pos_worst=f"{100 * control_scores.worst(pos.loc[pos['kind'] != 'hog', 'worst recovered']):.1f}%",
        pos_all_pass=every(pos["verdict"] == "pass"), hog_ms=HOG_MS,
        hog_injected=f"{hog['injected ms']:.0f} ms", hog_recovered=f"{100 * hog['worst recovered']:.1f}%",
        hog_bound=f"{100 * hog_bound:g}-{100 * (2 - hog_bound):g}%",
        pos_article_phrase=article_phrase(control_scores.article_scheme_holds(pos)))
    out.tables["positive"] = positive_cells(pos)


# ---------------------------------------------------------------- the two schemes at the ladder's ends
def scheme_numbers(cmp: pd.DataFrame) -> dict:
    """Preemption's, the residual's, the OS's and the scheduler's share of tail time at the
    baseline (base_*) and the last rung (last_*), as the prose quotes them."""
    def share(rung, scheme, label):
        return f"{100 * cmp.loc[label, (rung, scheme)]:.1f}%"
    out = {}
    for rung, key in ((FIRST, "base"), (LAST, "last")):
        out.update({f"{key}_preempt_article": share(rung, "article", "preempt"),
                    f"{key}_preempt_refined": share(rung, "refined", "preempt"),
                    f"{key}_residual_article": share(rung, "article", "residual"),
                    f"{key}_residual_refined": share(rung, "refined", "residual"),
                    f"{key}_os": share(rung, "refined", "os"), f"{key}_sched": share(rung, "refined", "sched")})
    return out


def _schemes(out: PageView, ends) -> None:
    by_scheme = {name: summaries.run_summaries(ends, scheme=name) for name in SCHEMES}
    cmp = tables.scheme_tail_table(by_scheme, order=[FIRST, LAST])
    out.numbers.update(scheme_numbers(cmp))
    out.tables["schemes"] = tables.percent_cells(cmp.fillna(np.nan)).replace("nan%", "")
    out.figures["schemes"] = lambda: figures_controls.scheme_tail_figure(cmp, title=SCHEMES_TITLE)


# ---------------------------------------------------------------- the last rung's slow steps and clean tail
def _sixth_pile(out: PageView, last_specs) -> None:
    last_paths = [s.path for s in last_specs]
    steps = sixth_pile.decode_steps_of(last_paths)
    pile = sixth_pile.sixth_pile(steps)
    slow = sixth_pile.slow_steps(steps)
    slow["seed"] = slow["run"].map(lambda i: last_specs[i].seed)
    out.numbers.update({f"pile_{k}": f"{pile[k]:,}" for k in ("captured_steps", "slow_steps", "descheduled", "runs")})
    out.numbers.update(pile_per_10k=f"{pile['slow_per_10k']:.1f}", pile_how=sixth_pile.answer(pile)["how"],
                       pile_sentence=sixth_pile.slow_steps_sentence(pile),
                       steal_sentence=sixth_pile.steal_sentence(sixth_pile.machine_steal(last_paths)),
                       pile_not_runq_ms=f"{sixth_pile.excess_not_runq_ms(slow):.0f} ms")
    out.tables["slow_steps"] = slow.sort_values("ratio", ascending=False)[SLOW_COLUMNS].head(SLOW_SHOWN).round(2)


def clean_numbers(counts: pd.Series, clean_time: pd.Series) -> dict:
    """The clean tail's gaps by refined cause and its time by refined label: how many, how
    many stay clean or go to the OS, the forward pass's and the OS's share, and the
    largest other label's."""
    rest = clean_time.drop("kernel").sort_values(ascending=False)
    return {"clean_total": f"{int(counts.sum()):,}", "clean_still": f"{int(counts.get('clean', 0)):,}",
            "clean_to_os": f"{int(counts.get('os', 0)):,}", "clean_fwd": f"{100 * clean_time['kernel']:.0f}%",
            "clean_os_time": f"{100 * clean_time['os']:.0f}%", "clean_stall_label": rest.index[0],
            "clean_stall_share": f"{100 * rest.iloc[0]:.0f}%"}


def _clean_tail(out: PageView, last_paths) -> None:
    counts, clean_time = sixth_pile.clean_tail(last_paths)
    out.numbers.update(clean_numbers(counts, clean_time))
    out.tables["clean_tail"] = counts.rename("tail gaps").to_frame()


# ---------------------------------------------------------------- what the clock reads cost
def goal_words(met: bool) -> str:
    return "met" if met else "missed"


def overhead_numbers(ov: pd.DataFrame, costs: dict) -> dict:
    """The reads' measured cost, the direct and the observed overhead (medians over pairs, and
    the observed range) and the step sizes they are set against."""
    return {"cost_cpu_us": f"{costs['cpu']:.2f}", "cost_runq_us": f"{costs['runq']:.2f}",
            "reads_per_step": f"{ov['reads per step'].median():.1f}",
            "direct_overhead": f"{100 * ov['direct overhead'].median():.2f}%",
            "observed_overhead": f"{100 * ov['observed overhead'].median():+.2f}%",
            "observed_low": f"{100 * ov['observed overhead'].min():+.1f}%",
            "observed_high": f"{100 * ov['observed overhead'].max():+.1f}%",
            "observed_phrase": overhead.observed_phrase(ov), "overhead_goal": goal_words(overhead.goal_met(ov)),
            "direct_overhead_token": f"{100 * ov['direct overhead per token'].median():.2f}%",
            "median_step_us": f"{1e3 * ov['median step ms'].median():.0f}",
            "small_steps": f"{100 * ov['steps decoding 2 or fewer'].median():.0f}%",
            "median_token_step_ms": f"{ov['median step per token ms'].median():.2f}"}


def _overhead(out: PageView, specs) -> None:
    pairs = overhead.overhead_pairs(specs)
    costs = overhead.read_cost_us()
    ov = overhead.overhead_table(pairs, costs=costs)
    out.numbers.update(overhead_numbers(ov, costs))
    out.tables["overhead"] = ov.round(4).T


# ---------------------------------------------------------------- the interference control
def interference_numbers(ifc: dict) -> dict:
    """The control's size as the prose states it: k engines (or 'none' when the profile has
    no control), k - 1 neighbours, its seeds and run length, and its sentence."""
    k = ifc["k"]
    return {"ifc_k": k if k else "none", "ifc_neighbours": (k - 1) if k else 0, "ifc_seeds": ifc["seeds"],
            "ifc_duration": ifc["duration"], "ifc_sentence": ifc["sentence"]}
