"""The operating point of a build's baseline runs, beside the article's.

One row per baseline run (its signature: load, traffic, KV pressure, fallback steps,
time to first token, full collections and the tracked heap), and a side-by-side
table of median [min-max] across runs against the article's published figures
(engine/runs/target.py). Where the build misses the article's band, a sentence says
where and by how much.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..engine_link import BAND, REGIME, Band, Regime, regime, target
from .load import offered_load

ARTICLE_BASELINE = target.ARTICLE_BASELINE

DOC_CHARS = 150_000          # a request this long pasted a whole document (workload.doc_chars)

# row label, column of run_signature(), the article's (min, max) or None, number format
ROWS = [
    ("rate, req/s", "rate", ARTICLE_BASELINE["rate"], "{:.2f}"),
    ("offered load / capacity", "load", None, "{:.2f}"),
    ("requests", "requests", ARTICLE_BASELINE["requests"], "{:.0f}"),
    ("inter-token gaps", "gaps", ARTICLE_BASELINE["gaps"], "{:,.0f}"),
    ("tokens", "tokens", None, "{:,.0f}"),
    ("long documents (>= 150k chars)", "documents", None, "{:.0f}"),
    ("preemptions per 60 s", "preemptions_per_min", ARTICLE_BASELINE["preemptions"], "{:.0f}"),
    ("fallback (eager) steps per 60 s", "eager_steps_per_min", ARTICLE_BASELINE["eager_steps"], "{:.0f}"),
    ("TTFT p50, ms", "ttft_p50_ms", None, "{:.0f}"),
    ("TTFT p99, ms", "ttft_p99_ms", None, "{:.0f}"),
    ("gen-2 pauses while serving", "gen2_n", None, "{:.0f}"),
    ("longest gen-2 pause, ms", "gen2_max_ms", ARTICLE_BASELINE["gen2_serving_ms"], "{:.0f}"),
    ("tracked objects at start (thousands)", "tracked_start_k", None, "{:,.0f}"),
    ("tracked objects at end (thousands)", "tracked_end_k", None, "{:,.0f}"),
]


def run_signature(log, capacity_tokens_per_s: float | None = None,
                  mean_output_tokens: float | None = None) -> dict:
    """One baseline run's operating point, from its raw log (analysis.load)."""
    steps, req, gcs = log.steps, log.requests, log.gcs
    per_min = 60.0 / float(log.config["duration"])
    ttft = (req[:, 4] - req[:, 1]) * 1e3
    gen2 = (gcs[:, 1] - gcs[:, 0])[gcs[:, 2] == 2] * 1e3 if len(gcs) else np.array([])
    rate = float(log.config["rate"])
    load = offered_load(rate, capacity_tokens_per_s, mean_output_tokens)
    tracked = log.extras.get("gc_tracked")
    return {
        "seed": log.seed, "rate": rate, "load": load,
        "requests": len(req), "tokens": len(log.emissions), "gaps": len(log.emissions) - len(req),
        "documents": int((log.trace[:, 2] >= DOC_CHARS).sum()),
        "preemptions_per_min": float(steps[:, 5].sum()) * per_min,
        "eager_steps_per_min": float((steps[:, 4] == 0).sum()) * per_min,
        "ttft_p50_ms": float(np.median(ttft)), "ttft_p99_ms": float(np.percentile(ttft, 99)),
        "gen2_n": int(len(gen2)), "gen2_max_ms": float(gen2.max()) if len(gen2) else np.nan,
        "tracked_start_k": float(tracked[0]) / 1e3 if tracked is not None else np.nan,
        "tracked_end_k": float(tracked[1]) / 1e3 if tracked is not None else np.nan,
    }


def signatures(logs, calibration: dict | None = None) -> pd.DataFrame:
    cap = (calibration or {}).get("capacity", {}).get("tokens_per_s")
    mean_out = (calibration or {}).get("mean_output_tokens")
    return pd.DataFrame([run_signature(log, cap, mean_out) for log in logs])


def _spread(values, fmt: str) -> str:
    v = pd.Series(values, dtype=float).dropna()
    if v.empty:
        return "not recorded"
    if len(v) == 1:
        return fmt.format(v.iloc[0])
    return f"{fmt.format(v.median())} [{fmt.format(v.min())}-{fmt.format(v.max())}]"


def side_by_side(sig: pd.DataFrame) -> pd.DataFrame:
    """metric | the article (its reported range) | this build (median [min-max] across runs)."""
    rows = []
    for label, col, art, fmt in ROWS:
        article = ("not reported" if art is None else fmt.format(art[0]) if art[0] == art[1]
                   else f"{fmt.format(art[0])}-{fmt.format(art[1])}")
        rows.append({"metric": label, "article (5 runs)": article,
                     f"this build ({len(sig)} run{'s' * (len(sig) != 1)})": _spread(sig[col], fmt)})
    return pd.DataFrame(rows)


def band_sentence(sig: pd.DataFrame, band: Band = BAND) -> str:
    """Where this build's baseline sits against the article's band, computed."""
    per_min = float(sig["preemptions_per_min"].median())
    ttft_ms = float(sig["ttft_p50_ms"].median())
    ttft_s = ttft_ms / 1e3
    drains = band.drains(ttft_ms)
    place = band.place(per_min, drains)
    head = (f"The baseline runs of this build had a median of {per_min:.0f} preemptions per 60 s "
            f"against the article's band of {band.low:.0f}-{band.high:.0f}")
    if place == "in band":
        return head + f", inside it, with queues that drained (median TTFT p50 {ttft_s:.2f} s)."
    if not drains:
        return (head + f": the queue did not drain (median TTFT p50 {ttft_s:.2f} s, above the "
                f"{band.max_ttft_p50_s:.0f} s the article's overloaded runs started at), so this build "
                f"ran past the article's operating point.")
    if place == "below":
        return head + f": {100 * (1 - per_min / band.low):.0f}% below its lower end, a lighter regime."
    return head + f": {100 * (per_min / band.high - 1):.0f}% above its upper end, a heavier regime."


def check_at(calibration: dict | None, rate: float) -> dict | None:
    """The calibration's last check at `rate` (within 0.1%, the rounding of a carried or
    recorded rate); None when no check ran there."""
    found = [c for c in (calibration or {}).get("checks") or [] if abs(c["rate"] - rate) <= 1e-3 * rate]
    return found[-1] if found else None


def check_sentence(sig: pd.DataFrame, calibration: dict | None, band: Band = BAND,
                   rate_info: dict | None = None) -> str:
    """The calibration's check at the rate it chose, beside the ladder's baseline runs: one
    operating point read on other seeds. When the ladder's rate was carried from the checks'
    by decode demand (rate_info from engine/runs/calibrate.run_rate), the sentence says how
    far; otherwise the check must be at the ladder's own rate. Near capacity the two can land
    on different sides of the band, and the chapter says so rather than leave the two
    tables to disagree."""
    rate = float(sig["rate"].median()) if len(sig) else float("nan")
    carried = rate_info or {}
    at = float(carried["check_rate"]) if "check_rate" in carried else rate
    c = check_at(calibration, at)
    if c is None:
        return ("No calibration check ran at the rate the ladder used, so there is no second "
                "reading of it on other seeds.")
    # the preemption count alone, by the same rule for the check and the ladder (the check's
    # own place in the calibration also weighs how full its steps were)
    check_place = band.place(c["preemptions_per_min"], c["drains"])
    _words = {"below": "below the band", "in band": "inside the band", "above": "above the band"}
    seeds = ", ".join(str(s) for s in (calibration or {}).get("check_seeds", [])) or "its own seeds"
    per_seed = [s["preemptions_per_min"] for s in c.get("per_seed", [])]
    spread = f" ({min(per_seed):.0f}-{max(per_seed):.0f} across seeds)" if per_seed else ""
    ladder = float(sig["preemptions_per_min"].median())
    ladder_drains = band.drains(float(sig["ttft_p50_ms"].median()))
    ladder_place = band.place(ladder, ladder_drains)
    if "check_rate" in carried:
        opening = (f"The calibration's checks chose {at:.2f} req/s on seeds {seeds}, whose traces asked for "
                   f"{carried['check_demand']:.2f} of the workload's expected decode tokens there; at that rate "
                   f"this build's seeds ask for {carried['demand_at_check_rate']:.2f}, so its runs used "
                   f"{rate:.2f} req/s, where they ask for as many decode tokens per second. The checks read")
    else:
        opening = f"The calibration checked this same rate on seeds {seeds}:"
    head = (f"{opening} a median of "
            f"{c['preemptions_per_min']:.0f} preemptions per 60 s{spread}, "
            f"{'a queue that drained' if c['drains'] else 'a queue that did not drain'} ({_words[check_place]}); "
            f"the ladder's seeds read {ladder:.0f} "
            f"({sig['preemptions_per_min'].min():.0f}-{sig['preemptions_per_min'].max():.0f} across runs)")
    if check_place == ladder_place:
        return head + ", on the same side of the band."
    load = float(sig["load"].median()) if "load" in sig else float("nan")
    at_load = f" at {load:.2f} of capacity" if load == load else ""
    return (head + f". The two readings of one operating point fall on different sides of the band: the "
            f"signature is steep{at_load}, and which seeds a run draws decides which side it lands on.")


# ------------------------------------------------------------------ the regime signature
# statistic of engine.runs.regime, row label, number format, the article's figure as text
REGIME_ROWS = [
    ("fullness", "typical gap / batch-32 forward pass", "{:.2f}"),
    ("p50_ms", "ITL p50, ms", "{:.1f}"),
    ("forward_ms_b32", "batch-32 decode forward pass, ms", "{:.2f}"),
    ("decode_batch", "decode batch (time-weighted)", "{:.1f}"),
    ("eager_steps_per_min", "eager steps per 60 s", "{:.0f}"),
    ("preemptions_per_min", "preemptions per 60 s", "{:.0f}"),
    ("ttft_p50_ms", "TTFT p50, ms", "{:.0f}"),
]


def article_regime(target_: Regime = REGIME) -> dict:
    """The article's baseline regime, per statistic, as text (its runs' range where it gives one)."""
    art = ARTICLE_BASELINE
    lo, hi = target_.fullness_range
    p50 = art["itl_p50_ms"]
    return {"fullness": f"{target_.fullness:.2f} (target {lo:.2f}-{hi:.2f})",
            "p50_ms": f"{art['itl_p50_median_ms']:.1f} [{p50[0]:.1f}-{p50[1]:.1f}]",
            "forward_ms_b32": f"{art['forward_ms_batch32']:.1f} (its microbenchmark)",
            "decode_batch": "not reported",
            "eager_steps_per_min": f"{art['eager_steps'][0]:,}-{art['eager_steps'][1]:,}",
            "preemptions_per_min": f"{target_.band.low:.0f}-{target_.band.high:.0f} (one light run: "
                                   f"{art['preemptions'][0]})",
            "ttft_p50_ms": f"drains (overloaded: {art['ttft_p50_overloaded_s'][0]:.0f}-"
                           f"{art['ttft_p50_overloaded_s'][1]:.0f} s)"}


def regime_signatures(paths, forward_ms_b32=regime.IN_RUN) -> pd.DataFrame:
    """One row per raw log: its regime signature (engine.runs.regime) over the whole run,
    fullness against each run's own batch-32 forward pass unless a yardstick is given."""
    return pd.DataFrame([{"path": str(p), **regime.signature(p, forward_ms_b32)} for p in paths])


def regime_table(columns: dict[str, pd.DataFrame], target_: Regime = REGIME) -> pd.DataFrame:
    """statistic | the article | one column per named set of runs (median [min-max])."""
    art = article_regime(target_)
    rows = []
    for key, label, fmt in REGIME_ROWS:
        row = {"statistic": label, "article (5 x 60 s)": art[key]}
        for name, sig in columns.items():
            row[name] = _spread(sig[key], fmt) if key in sig else "not recorded" if len(sig) else "no runs"
        rows.append(row)
    return pd.DataFrame(rows)


def check_signatures(calibration: dict | None) -> pd.DataFrame:
    """The per-seed signatures of the calibration's check at the rate it chose."""
    cal = calibration or {}
    chosen = [c for c in cal.get("checks") or [] if abs(c["rate"] - cal.get("rate", math.nan)) <= 1e-9]
    return pd.DataFrame(chosen[-1].get("per_seed", []) if chosen else [])


def regime_place(sig: pd.DataFrame, target_: Regime = REGIME) -> tuple[str, str, dict]:
    """(place, deciding statistic, the median signature) of a set of baseline runs."""
    med = {k: float(sig[k].median()) for k, _, _ in REGIME_ROWS if k in sig}
    place, by = target_.stage(med)
    return place, by, med


def yardstick_sentence(sig: pd.DataFrame, micro_ms: float | None) -> str:
    """The runs' own batch-32 forward pass (the fullness yardstick) against this machine's
    microbenchmark of it, computed: how far a microbenchmark would have misplaced the build."""
    yard = sig["forward_ms_b32"].dropna() if sig is not None and "forward_ms_b32" in sig else pd.Series(dtype=float)
    if not len(yard):
        return "No baseline run had enough pure-decode steps to read its own batch-32 forward pass."
    own = (f"The baseline runs' own batch-32 decode forward pass took {yard.median():.2f} ms "
           f"(runs {yard.min():.2f}-{yard.max():.2f})")
    if not micro_ms or not math.isfinite(micro_ms):
        return own + "; no microbenchmark of it was recorded on this machine to set beside it."
    return (own + f", {yard.median() / micro_ms:.2f} times the {micro_ms:.2f} ms this machine's microbenchmark "
            f"read at calibration: measured against the microbenchmark, a typical gap would have read "
            f"{sig['p50_ms'].median() / micro_ms:.2f} instead of {sig['fullness'].median():.2f}.")


def regime_sentence(sig: pd.DataFrame, target_: Regime = REGIME, what: str = "baseline runs") -> str:
    """Which regime a set of baseline runs was in, and how far from the article's: computed."""
    if sig is None or not len(sig):
        return f"This build has no {what} to place against the article's regime."
    if not np.isfinite(sig["fullness"]).any():
        return (f"This build's {what} cannot be placed against the article's regime: they had too few "
                f"pure-decode steps to read their batch-32 forward pass, to compare their median gap with.")
    place, by, m = regime_place(sig, target_)
    lo, hi = target_.fullness_range
    band = target_.band
    facts = (f"a typical gap was {m['fullness']:.2f} times the runs' own batch-32 forward pass (the "
             f"article's {target_.fullness:.2f}; like for like within {lo:.2f}-{hi:.2f}), with "
             f"{m['eager_steps_per_min']:.0f} eager steps and {m['preemptions_per_min']:.0f} preemptions per "
             f"60 s (the article: {ARTICLE_BASELINE['eager_steps'][0]:,}-{ARTICLE_BASELINE['eager_steps'][1]:,} "
             f"and {band.low:.0f}-{band.high:.0f}) and a median time to first token of "
             f"{m['ttft_p50_ms'] / 1e3:.2f} s")
    n = f"{len(sig)} {what}" if len(sig) != 1 else f"its one {what.rstrip('s')}"
    if place == "in band":
        return f"Like for like: this build ran the article's regime. Over {n}, {facts}."
    if by == "drain":
        return (f"Not like for like: this build ran past the article's regime, with queues that did not "
                f"drain. Over {n}, {facts}.")
    if by == "fullness":
        side = "lighter" if place == "below" else "heavier"
        return f"Not like for like: this build ran a {side} regime than the article's. Over {n}, {facts}."
    side = "less" if place == "below" else "more"
    return (f"Close but not like for like: this build's steps were as full as the article's, with {side} "
            f"pressure on the KV pool. Over {n}, {facts}.")
