"""The real-engine page (book/real_engine), computed: Hugging Face transformers' continuous
batching serving the book's workload under the probe (engine/real), partitioned by the
book's method, beside this book's engine and the article; the notebook only displays it.

Profiles: smoke runs every rung once, 3 s, at the search's start rate (not calibrated,
and the page says where that rate landed); quick and article place the baseline by the
regime method (engine/real/operating.py) with checks as long as the page's runs, which are
the profile's real-engine length (quick: 20 s, shorter than its ladder's) or its ladder's.
"""
from __future__ import annotations

import math
import warnings

import pandas as pd

from ..core.gaps import partition_run
from ..core.runlog import load
from ..core.schemes import get_scheme
from ..engine_link import (LADDER, ensure_runs, get_profile, median_signature, planned_on_confirmed, profile_specs,
                           real_engine, target)
from ..across_runs import real_findings as R
from ..across_runs.summaries import run_summaries
from ..across_runs.verdicts import strongest
from ..render import figures, figures_real
from ..render.page_view import PageView

PERCENT = "{:.1f}"
# tqdm's note that a notebook kernel lacks ipywidgets: transformers imports tqdm.auto when the
# probe's internals are checked, and the page would print it above its first table
NO_WIDGETS = "IProgress not found"


def checked_versions(re: dict) -> dict:
    """The probe's internals checked (engine/real/internals.check), without tqdm's widget note."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=NO_WIDGETS)
        return re["internals"].check()


def operating(prof, rate, seeds, duration):
    """(rate, how it was chosen, the calibration record or None) for runs of `seeds` x
    `duration`: a rate found by checks is carried to these seeds by decode demand, as the
    book's engine does (engine/runs/calibrate.run_rate)."""
    op = real_engine()["operating"]
    if rate is not None:
        return float(rate), "given", None
    if prof.calibration != "checked":
        return op.START_RATE, "uncalibrated", None
    rec = op.operating_point(check_length(prof))
    return op.run_rate(rec, seeds, duration)["rate"], "checked, carried to these seeds by decode demand", rec


def run_length(prof) -> float:
    """Seconds of arrivals per real-engine run: the profile's real-engine length, else its ladder's."""
    return float(prof.real_duration or prof.duration)


def check_length(prof) -> float | None:
    """The calibration checks the page's rates come from, as long as its runs (None: a
    profile without checks)."""
    return prof.real_duration or prof.check_duration


def ours_specs(prof, seeds, duration, rate=None) -> list:
    """This book's engine's baseline runs beside the real engine's: same seeds and length,
    placed by checks of that length (the ladder's own runs where the lengths agree)."""
    return profile_specs(prof, rungs=[LADDER["baseline"]], seeds=seeds, duration=duration, rate=rate,
                         check_length=check_length(prof))


def ensure_real(profile=None, seeds=None, duration=None, rate=None) -> list:
    """The page's real-engine runs, made first where missing (the operating point's checks
    too), with this book's engine's runs beside them: the book's build calls this before any
    chapter executes. Before any is measured on a calibrated rate, the calibration is
    confirmed as the ladder's is (engine/runs/freshness.py). Returns the real engine's specs."""
    prof = get_profile(profile)
    re = real_engine()
    checked_versions(re)
    seeds, duration = tuple(seeds or prof.seeds), float(duration or run_length(prof))

    def planned():
        op_rate, _, _ = operating(prof, rate, seeds, duration)
        return re["runs"].ladder_specs(op_rate, seeds, duration), ours_specs(prof, seeds, duration)

    # a given rate stands on no calibration: nothing to confirm
    specs, ours = planned_on_confirmed(
        prof, planned, lambda runs: rate is None and any(not s.path.exists() for s in [*runs[0], *runs[1]]))
    if any(not s.path.exists() for s in specs):    # (no progress bar, and no tqdm warning, when all are made)
        re["runs"].ensure_real_runs(specs)
    ensure_runs(ours)
    return specs


def page(profile=None, seeds=None, duration=None, rate=None) -> PageView:
    prof = get_profile(profile)
    re = real_engine()
    versions = checked_versions(re)
    seeds = tuple(seeds or prof.seeds)
    duration = float(duration or run_length(prof))
    specs = ensure_real(prof, seeds, duration, rate)     # first: it may remake the calibration
    op_rate, how, rec = operating(prof, rate, seeds, duration)
    summaries = run_summaries(specs)
    base = [s for s in summaries if s["rung"] == "baseline"]
    base_paths = [s.path for s in specs if s.rung == "baseline"]
    ours = run_summaries(ours_specs(prof, seeds, duration))     # made by ensure_real

    labels = list(get_scheme("article").labels)
    tails = R.tail_table(base, ours, labels)
    split = R.split_check(base_paths)
    yard = re["operating"].decode_forward_ms(base_paths)
    sig = [re["operating"].regime.signature(p, yard["ms"]) for p in base_paths]
    med = median_signature(sig)
    place, decided = target.REGIME.stage(med) if math.isfinite(med["fullness"]) else ("unplaced", "fullness")
    pairs = R.ladder_pairs(summaries)
    cfg = re["config"].RealConfig()

    numbers = {
        "re_transformers": versions["transformers"], "re_torch": versions["torch"],
        "re_layers": cfg.num_layers, "re_hidden": cfg.hidden_size, "re_vocab": cfg.vocab_size,
        "re_blocks": cfg.num_blocks, "re_page": cfg.page_size, "re_budget": cfg.max_batch_tokens,
        "re_rate": op_rate, "re_rate_how": how, "re_seeds": len(seeds), "re_duration": duration,
        "re_checks": len(rec["checks"]) if rec else 0,
        "re_reached": ("reached" if rec["reached"] else "not reached") if rec else "not searched",
        "re_fwd_b32": yard["ms"], "re_fullness": med["fullness"], "re_article_fullness": target.REGIME.fullness,
        "re_preempt_min": med["preemptions_per_min"], "re_ttft_p50": med["ttft_p50_ms"],
        "re_place": place, "re_place_by": decided,
        "re_reconcile": max(s["reconcile_max_err_ms"] for s in summaries),
        "re_runs": len(summaries), "re_gaps": sum(s["gaps"] for s in summaries),
        "re_split_ratio": split["ratio"], "re_split_mixed": split["mixed"], "re_split_pure": split["pure"],
        "re_split_sentence": R.split_sentence(split),
        "re_gc_threads": R.gc_sentence(R.gc_threads(base_paths), len(base_paths)),
        "re_transfer": R.transfer_sentence(tails), "re_strongest": strongest(len(seeds)),
        "re_fixes": R.fix_sentence(pairs), "re_swap_pool": _swap_pool(specs),
    }
    tables = {
        "tails": tails.style.format(PERCENT, na_rep="-"),
        "ladder": pairs.style.format({"baseline": "{:.2f}", "rung value": "{:.2f}", "ratio": "{:.2f}x"})
                       .hide(axis="index"),
        "runs": pd.DataFrame([{k: s[k] for k in ("rung", "seed", "requests", "gaps", "itl_p50", "itl_p99",
                                                  "itl_p999", "preemptions")} for s in summaries])
                  .style.format({"itl_p50": "{:.2f}", "itl_p99": "{:.2f}", "itl_p999": "{:.1f}"}).hide(axis="index"),
    }
    first = next(s for s in specs if s.rung == "baseline")
    rungs = list(dict.fromkeys(s.rung for s in specs))
    figs = {
        "histogram": lambda: figures.cause_histogram_figure(partition_run(load(first.path))),
        "tails": lambda: figures_real.tail_sources_figure(tails),
        "ladder": lambda: figures.ladder_figure(summaries, order=rungs),
    }
    numbers["re_hist_seed"] = first.seed
    return PageView(numbers=numbers, tables=tables, figures=figs)


def _swap_pool(specs) -> str:
    """How the swap rung's runs held their CPU swap pool (replay.swap_pool_on_cpu)."""
    pinned = {bool(load(s.path).provenance.get("swap_pool_pinned")) for s in specs if s.rung == "swap"}
    if not pinned:
        return "no swap run in this build"
    return {frozenset({True}): "pinned", frozenset({False}): "unpinned (no accelerator here)"}.get(
        frozenset(pinned), "pinned in some runs and not in others")
