"""Fidelity in runs, as the instrument chapter and the benchmark show it: the load each
engine met, the ratio table as text or a frame, the ratios outside the band, and the
computed sentence (analysis/instrument/run_fidelity.py reads the logs and makes the table)."""
from __future__ import annotations

import pandas as pd

from ..core.columns import GC, REQ, STEP
from .run_fidelity import Bands, EAGER, THEIRS, ratio_table, read_log


def load(log: dict) -> dict:
    """What load a run met: requests, prompt tokens and output, evictions, its length."""
    rq, st = log["requests"], log["steps"]
    span = float(st[-1, STEP.t1]) if len(st) else 0.0
    return {"requests served": len(rq), "prompt tokens (mean)": float(rq[:, REQ.prompt_tokens].mean()),
            "output tokens (mean)": float(rq[:, REQ.max_new].mean()),
            "decode steps": int((st[:, STEP.n_decode] > 0).sum()),
            "mean decode batch": float(st[st[:, STEP.n_decode] > 0, STEP.n_decode].mean()),
            "eager steps": int((st[:, STEP.graph] == EAGER).sum()),
            "evictions": len(log["evictions"]), "gen-2 collections": int((log["gcs"][:, GC.generation] == 2).sum()),
            "seconds served": span}


def load_table(ours: dict, theirs: dict) -> pd.DataFrame:
    """The load each run met, side by side (one row per figure)."""
    return pd.DataFrame({"ours": load(ours), THEIRS: load(theirs)})


def format_table(table: pd.DataFrame, bands: Bands = Bands()) -> str:
    head = (f"{'mechanism':<32} {'unit':<20} {'ours':>8} {'n':>6} {'article':>8} {'n':>6} {'ratio':>6}"
            f" {'matched':>8} {'n':>5}   {'median size (ours / article)':<30}")
    lines = [head, "-" * len(head)]
    for name, r in table.iterrows():
        mark = {True: "   ", False: " x ", None: " ? "}[r["agrees"]]
        size = (f"{r['size']}: {r['size, ours']:,.0f} / {r['size, article']:,.0f}" if r["size"] else "")
        lines.append(f"{name:<32} {r['unit']:<20} {r['ours']:>8.3f} {r['ours n']:>6} "
                     f"{r[THEIRS]:>8.3f} {r['article n']:>6} {r['ratio']:>6.2f} {r['matched ratio']:>8.2f}"
                     f" {r['matched n']:>5}{mark}{size}")
    lines.append(f"medians over each side's events; ratio = ours / the article's engine; matched: the same "
                 f"among events within {bands.match:.0%} of the pooled median size (n: the fewer side's "
                 f"count); x: matched ratio outside "
                 f"{bands.low:.2f}-{bands.high:.2f}; ?: not judged (fewer than {bands.min_events} events "
                 f"on a side, {bands.min_gc} for gen-2 pauses)")
    return "\n".join(lines)


def outside(table: pd.DataFrame) -> list[str]:
    """The judged mechanisms whose ratio falls outside the band."""
    return [n for n, a in table["agrees"].items() if a is False]


def sentence(table: pd.DataFrame, duration: float, seed: int, rate: float, bands: Bands = Bands()) -> str:
    """What the run-level table says, computed."""
    judged = table[table["agrees"].notna()]
    off = outside(table)
    head = (f"Both engines made a baseline run of {duration:g} s of arrivals at seed {seed} and {rate:.2f} req/s, "
            f"each on the trace its own generator draws, in a fresh process with the default allocator. ")
    few = len(table) - len(judged)
    tail = (f" {few} row(s) had too few events of matched size in one run to be judged."
            if few else "")
    if not off:
        return head + (f"At matched event sizes, all {len(judged)} judged ratios lie within "
                       f"{bands.low:.2f}-{bands.high:.2f}." + tail)
    listed = "; ".join(f"{n} ({table.loc[n, 'matched ratio']:.3f})" for n in off)
    return head + (f"At matched event sizes, {len(judged) - len(off)} of {len(judged)} judged ratios lie within "
                   f"{bands.low:.2f}-{bands.high:.2f}; outside: {listed}." + tail)


def display_frame(table: pd.DataFrame) -> pd.DataFrame:
    """The ratio table as the chapter shows it: one row per mechanism, readable headers."""
    out = table.rename(columns={"ours": "ours (median)", THEIRS: "article's engine (median)",
                                "ours n": "events, ours", "article n": "events, article's engine",
                                "agrees": "matched ratio within band", "size": "event size",
                                "matched ratio": "ratio at matched size", "matched n": "matched events (fewer side)",
                                "size, ours": "median size, ours", "size, article": "median size, article's"})
    out["matched ratio within band"] = out["matched ratio within band"].map({True: "yes", False: "no", None: "too few events"})
    return out.round(3)


def chapter_view(ours_path, theirs_path, seed: int, duration: float, rate: float,
                 bands: Bands = Bands()) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """(ratio table, load table, sentence) for the chapter; without the article engine's
    log (its text not found) the tables are empty and the sentence says so."""
    if theirs_path is None:
        return (pd.DataFrame(), pd.DataFrame(),
                "The article's text was not found beside this repository, so its engine could not be run; "
                "no run-level ratio can be given.")
    ours, theirs = read_log(ours_path), read_log(theirs_path)
    table = ratio_table(ours, theirs, bands)
    return display_frame(table), load_table(ours, theirs), sentence(table, duration, seed, rate, bands)
