"""The article's text histogram: one row per ITL bin, one character per ~1/36 of the
bin's gaps, drawn by primary cause."""
from __future__ import annotations

from ..core.schemes import CLEAN

SYMBOLS = {CLEAN: "·", "prefill": "P", "graph": "C", "preempt": "S", "gc": "G", "tok": "T"}
WIDTH = 36


def _bin_name(lo, hi) -> str:
    return f"{lo:g}-inf" if hi >= 1e9 else f"{lo:g}-{hi:g}"


def histogram_bar(row: dict, width: int = WIDTH) -> str:
    """Characters by cause, each rounded on its own (so a bar can be 35 or 37 wide,
    as in the article); causes in the order clean, P, C, S, G, T."""
    n = row["n"]
    if not n:
        return ""
    return "".join(sym * round(width * row.get(cause, 0) / n) for cause, sym in SYMBOLS.items())


def text_histogram(summary: dict, width: int = WIDTH, title: str | None = None) -> str:
    """Render a run summary's ``hist`` like the article's figure."""
    if title is None:
        title = (f"ITL HISTOGRAM BY PRIMARY CAUSE, {summary.get('rung')}, run {summary.get('seed')}"
                 f"   (p99 = {summary['itl_p99']:.1f} ms)")
    lines = [title, f"{'ITL ms':>8} {'tokens':>10}  share of the bin's tokens by primary cause"]
    for row in summary["hist"]:
        bar = histogram_bar(row, width)
        lines.append(f"{_bin_name(row['lo'], row['hi']):>8} {row['n']:>10}  {bar}".rstrip())
    return "\n".join(lines)


LEGEND = "  ".join(f"{sym} {cause}" for cause, sym in SYMBOLS.items())
