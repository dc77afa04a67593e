"""The operating point of a build's baseline runs, beside the article's.

One row per baseline run (its signature: load, traffic, KV pressure, fallback steps,
time to first token, full collections and the tracked heap), and a side-by-side
table of median [min-max] across runs against the article's published figures
(engine/runs/target.py). Where the build misses the article's band, a sentence says
where and by how much.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..engine_link import BAND, Band, target
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
    ttft_s = float(sig["ttft_p50_ms"].median()) / 1e3
    drains = ttft_s <= band.max_ttft_p50_s
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


def check_sentence(sig: pd.DataFrame, calibration: dict | None, band: Band = BAND) -> str:
    """The calibration's check at the rate the ladder ran, beside the ladder's baseline
    runs: the same rate on other seeds. Near capacity they can land on different sides
    of the band, and the chapter says so rather than leave the two tables to disagree."""
    rate = float(sig["rate"].median()) if len(sig) else float("nan")
    checks = [c for c in (calibration or {}).get("checks", []) if abs(c["rate"] - rate) <= 1e-3 * rate]
    if not checks:
        return ("No calibration check ran at the rate the ladder used, so there is no second "
                "reading of it on other seeds.")
    c = checks[-1]
    seeds = ", ".join(str(s) for s in (calibration or {}).get("check_seeds", [])) or "its own seeds"
    per_seed = [s["preemptions_per_min"] for s in c.get("per_seed", [])]
    spread = f" ({min(per_seed):.0f}-{max(per_seed):.0f} across seeds)" if per_seed else ""
    ladder = float(sig["preemptions_per_min"].median())
    ladder_drains = float(sig["ttft_p50_ms"].median()) / 1e3 <= band.max_ttft_p50_s
    ladder_place = band.place(ladder, ladder_drains)
    head = (f"The calibration checked this same rate on seeds {seeds}: a median of "
            f"{c['preemptions_per_min']:.0f} preemptions per 60 s{spread}, "
            f"{'a queue that drained' if c['drains'] else 'a queue that did not drain'} ({c['place']} the band); "
            f"the ladder's seeds read {ladder:.0f} "
            f"({sig['preemptions_per_min'].min():.0f}-{sig['preemptions_per_min'].max():.0f} across runs)")
    if c["place"] == ladder_place:
        return head + ", on the same side of the band."
    load = float(sig["load"].median()) if "load" in sig else float("nan")
    at = f" at {load:.2f} of capacity" if load == load else ""
    return (head + f". The two readings of one rate fall on different sides of the band: the signature is "
            f"steep{at}, and which seeds a run draws decides which side it lands on.")
