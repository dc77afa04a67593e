"""The instrument page (book/instrument), computed: the knobs and the workload, one run's
tags, GC pauses and raw log, the forward-pass microbenchmark, fidelity to the article's
engine by mechanism and in a run, and the calibration behind the rate; the notebook only
displays them.

Live values: the microbenchmark (forward_ms_subprocess) is measured afresh on every call, so
its glue values and table differ between executions; the mechanism benchmark and the article
engine's run are read from their caches when present.

The page shares its name with the layer ``analysis/instrument`` (the instrument checked),
which it imports: ``analysis.chapters.instrument`` is the page, ``analysis.instrument`` the layer.
"""
from __future__ import annotations

from ..core.columns import STEP
from ..core.runlog import load
from ..engine_link import (LADDER, cached_compare, forward_ms_subprocess, get_profile, made_on_confirmed,
                           load_calibration, profile_specs, run_article)
from ..across_runs import article
from ..across_runs.rungs import FIRST
from ..instrument import knobs, mechanism_fidelity, run_fidelity_page, tags
from ..render import protocol_tables
from ..render.page_view import PageView

SMOKE_REPEATS, REPEATS = 3, 15      # rounds of the mechanism benchmark: the smoke profile's, every other's
MICROBENCH_BATCHES = {"fwd1": (1, "batched_ms"), "fwd32": (32, "batched_ms"), "fwd48": (48, "batched_ms"),
                      "eager33": (33, "eager_ms"), "eager48": (48, "eager_ms"),
                      "eager_ratio48": (48, "eager / batched")}   # glue name -> (batch, column)


def fidelity_repeats(profile_name: str) -> int:
    """Rounds of the mechanism benchmark: few in the smoke profile, which only checks that the page builds."""
    return SMOKE_REPEATS if profile_name == "smoke" else REPEATS


def page(profile=None, seeds=None, duration=None, rate=None) -> PageView:
    """Everything book/instrument shows, from the first seed of the ladder's first rung (made if missing)."""
    prof = get_profile(profile)
    specs = made_on_confirmed(prof, lambda: profile_specs(prof, rungs=[FIRST], seeds=seeds, duration=duration, rate=rate), rate)
    log = load(specs[0].path)
    out = PageView(numbers={"seed": specs[0].seed, "profile_name": prof.name})
    out.tables["knobs"] = knobs.knob_table(LADDER[FIRST])
    out.tables["ladder_knobs"] = knobs.ladder_knobs()
    out.numbers.update({"wl_" + key: value for key, value in knobs.workload_facts().items()})
    _tags(out, log)
    mb = tags.microbench_frame(forward_ms_subprocess(forward=LADDER[FIRST].forward))
    out.numbers.update({name: mb.loc[batch, col] for name, (batch, col) in MICROBENCH_BATCHES.items()})
    out.numbers["article_fwd32"] = article.FORWARD_MS_BATCH32
    out.tables["microbench"] = mb.round(2)
    _fidelity(out, mb, fidelity_repeats(prof.name))
    _run_fidelity(out, specs[0], specs[0].path)
    _calibration(out, prof, specs[0].rate, specs[0].rate_info)
    return out


def _tags(out: PageView, log) -> None:
    """One step's tags (the busiest), the GC pauses and the raw log's arrays."""
    step = tags.busiest_step(log)
    out.numbers.update(step_index=step, step_ms=(log.steps[step, STEP.t1] - log.steps[step, STEP.t0]) * 1e3,
                       step_batch=int(log.steps[step, STEP.n_decode]))
    out.tables["step_segments"] = tags.step_segments(log, step).round(3)
    gct = tags.gc_table(log)
    out.numbers.update(gc_n=int(gct["pauses"].sum()), gc_gen2_max=float(gct.loc[2, "largest_ms"]))
    out.tables["gc"] = gct.round(2)
    out.tables["rawlog"] = tags.rawlog_table(log)


def _fidelity(out: PageView, mb, repeats: int) -> None:
    """The mechanisms side by side with the article's engine, and our forward pass against the article's."""
    fid = cached_compare(repeats=repeats)
    out.numbers.update(fid_rounds=fid["repeats"], fid_sentence=mechanism_fidelity.fidelity_sentence(fid),
                       fwd_vs_article=mechanism_fidelity.forward_vs_article_sentence(
                           mb.loc[32, "batched_ms"], article.FORWARD_MS_BATCH32, fid))
    out.tables["fidelity"] = mechanism_fidelity.fidelity_frame(fid)


def _run_fidelity(out: PageView, spec, path) -> None:
    """A whole run of the article's engine beside ours, same seed, length and rate."""
    theirs = run_article(spec.seed, spec.duration, spec.rate)
    table, load_table, sentence = run_fidelity_page.chapter_view(path, theirs, spec.seed, spec.duration, spec.rate)
    out.numbers.update(rf_sentence=sentence, rf_duration=spec.duration, rf_seed=spec.seed)
    out.tables["run_load"] = load_table.round(1)
    out.tables["run_fidelity"] = table


def carried_sentence(rate_info: dict) -> str:
    """Why the runs' rate differs from the calibrated one, when it was carried by decode demand."""
    if rate_info.get("source") == "given":
        return "That rate was given to this chapter, not calibrated."
    if "check_rate" not in rate_info:
        return "The runs used the calibrated rate as it is."
    return (f"The check seeds' traces asked for {rate_info['check_demand']:.2f} of the workload's expected "
            f"decode tokens at the calibrated rate and these runs' seeds for {rate_info['demand_at_check_rate']:.2f}, "
            "so the runs' rate was carried to where their seeds ask for as many decode tokens per second.")


def _calibration(out: PageView, prof, run_rate: float, rate_info: dict) -> None:
    """How this machine's rate was calibrated, and its checks."""
    cal = load_calibration(prof.calibration, check_duration=prof.check_duration)
    out.numbers.update(cal_method=cal["method"], cal_capacity=cal["capacity"]["tokens_per_s"],
                       cal_util=cal["target_utilization"], cal_mean_out=cal["mean_output_tokens"],
                       cal_proposed=cal["proposed_rate"], cal_rate=cal["rate"], run_rate=run_rate,
                       cal_n_checks=len(cal["checks"]), article_rate=article.RATE,
                       cal_carried=carried_sentence(rate_info))
    out.tables["calibration"] = protocol_tables.calibration_checks(cal).round(1)
