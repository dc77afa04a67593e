"""Our engine's cost beside the article engine's (engine/fidelity.py), as a table and a
computed sentence."""
from __future__ import annotations

import pandas as pd


def fidelity_frame(result: dict) -> pd.DataFrame:
    """engine.fidelity.compare()'s rows as a table: ms per side, and ours over theirs."""
    df = pd.DataFrame(result["rows"]).set_index("measurement")
    names = {"article_ms": "ours, article forward (ms)", "fast_ms": "ours, fast forward (ms)",
             "theirs_ms": "the article's engine (ms)", "article_ratio": "ratio, article forward",
             "fast_ratio": "ratio, fast forward"}
    return df[[c for c in names if c in df]].rename(columns=names).round(2)


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
    listed = "; ".join(f"{m} ({r:.2f})" for m, r in off)
    return (f"{len(off)} of {len(rows)} article-forward ratios fall outside {low:.2f}-{high:.2f} "
            f"(medians of {result['repeats']} rounds): {listed}. The others are within it." + fast)
