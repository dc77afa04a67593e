"""Our engine's cost beside the article engine's (engine/fidelity.py), as a table and a
computed sentence."""
from __future__ import annotations

import math

import pandas as pd


def fidelity_frame(result: dict) -> pd.DataFrame:
    """engine.fidelity.compare()'s rows as a table: ms per side, and ours over theirs."""
    df = pd.DataFrame(result["rows"]).set_index("measurement")
    names = {"article_ms": "ours, article forward (ms)", "fast_ms": "ours, fast forward (ms)",
             "theirs_ms": "the article's engine (ms)", "article_ratio": "ratio, article forward",
             "fast_ratio": "ratio, fast forward",
             "article_faults": "page faults per call, ours (article forward)",
             "theirs_faults": "page faults per call, the article's engine"}
    out = df[[c for c in names if c in df]].rename(columns=names).round(2)
    faults = [names[c] for c in ("article_faults", "theirs_faults") if c in df]
    out[faults] = out[faults].astype(object).where(out[faults].notna(), "")   # counted for KV copies only
    return out


def fidelity_sentence(result: dict, low: float = 0.85, high: float = 1.15) -> str:
    """What the fidelity table says, computed: which article-forward ratios fall outside
    [low, high], and how much faster the fast forward decodes a batch of 32."""
    if not result["article_engine"]:
        return ("The article's text was not found beside this repository, so only our side was "
                "timed; no ratio can be given.")
    rows = {r["measurement"]: r for r in result["rows"]}
    off = [(m, r["article_ratio"]) for m, r in rows.items() if not low <= r["article_ratio"] <= high]
    b32 = rows.get("decode captured, batch 32")
    fast = (f" The fast forward decodes a batch of 32 in {b32['fast_ratio']:.2f} of the article "
            f"engine's time." if b32 else "")
    if not off:
        return (f"Every ratio of the article forward lies within {low:.2f}-{high:.2f} "
                f"(medians of {result['repeats']} rounds): mechanism by mechanism, this engine costs "
                f"what the article's does on this machine." + fast)
    listed = "; ".join(f"{m} ({r:.2f}{_faults_note(rows[m])})" for m, r in off)
    return (f"{len(off)} of {len(rows)} article-forward ratios fall outside {low:.2f}-{high:.2f} "
            f"(medians of {result['repeats']} rounds): {listed}. The others are within it." + fast)


def _faults_note(row: dict) -> str:
    """The page faults behind a KV copy's ratio, where they were counted."""
    if "article_faults" not in row or "theirs_faults" not in row:
        return ""
    if row["article_faults"] == 0 and row["theirs_faults"] == 0:
        return ", with no page fault on either side: the copies differ in their memory traffic alone"
    return (f", with {row['article_faults']:,.0f} minor page faults per call here against "
            f"{row['theirs_faults']:,.0f} in the article's engine")


def forward_vs_article_sentence(here_ms: float, article_ms: float, result: dict,
                                row: str = "decode captured, batch 32") -> str:
    """Our batch-32 decode (the microbenchmark) against the article's figure, split with the
    side-by-side benchmark's ratio of the two engines on this machine: what is left of the
    difference is the machine (and whatever else differs between the article's benchmark
    and ours). Also what the float64 numerics cost: the fast forward against ours."""
    r = here_ms / article_ms
    head = (f"A batched decode of 32 sequences took {here_ms:.2f} ms here; the article reports "
            f"{article_ms:.1f} ms on its VM ({r:.2f} times that).")
    rows = {x["measurement"]: x for x in result.get("rows", [])}
    x = rows.get(row)
    if not result.get("article_engine") or x is None:
        return (head + " Without the article's engine timed beside ours, this machine's speed and "
                "our engine's cannot be told apart in that ratio.")
    engine = x["article_ratio"]
    machine = r / engine
    mostly = "this machine" if abs(math.log(machine)) >= abs(math.log(engine)) else "our engine"
    return (head + f" In the side-by-side benchmark below, on this machine, our decode of 32 takes "
            f"{engine:.2f} times the article engine's: that factor is the engine, and the remaining "
            f"{machine:.2f} is the machine (with whatever else differs between the article's benchmark "
            f"and ours), so the difference from the article's figure is mostly {mostly}. The float32 "
            f"fast forward takes {x['fast_ms'] / x['article_ms']:.2f} of our article forward's time "
            f"there: that is what the article's float64 numerics cost.")
