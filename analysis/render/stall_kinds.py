"""The five stalls as a table, grouped by how each one reaches a waiting request.

The descriptive columns are fixed text (they describe mechanisms, not measurements);
the knob column is read from the engine's fix ladder, so the table cannot name a knob
or a value that the runs did not use.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..across_runs.wording import label_names
from ..core.schemes import ARTICLE
from ..instrument.knobs import ladder_knobs

# How a stall reaches the request that is waiting for its next token.
SHARES_STEP = "extra work in the same step"
STOPS_LOOP = "the loop stops"
SET_ASIDE = "a request is set aside"
SHAPES = (SHARES_STEP, STOPS_LOOP, SET_ASIDE)

NO_RUNG = "(no rung changes it)"
STALL_NAMES = label_names("stall")


@dataclass(frozen=True)
class Stall:
    cause: str          # the label in the article scheme
    shape: str
    busy_with: str      # what the engine is doing instead of handing out the token
    who_waits: str
    knobs: tuple        # engine Config fields that turn it down
    elsewhere: str      # the production lever, with the chapter's reference number

    @property
    def name(self) -> str:
        return STALL_NAMES[self.cause]


STALLS = (
    Stall("prefill", SHARES_STEP,
          "running a chunk of another request's prompt inside the decode step",
          "every request decoding in that step", ("token_budget",),
          "max_num_batched_tokens [2]; prefill on other machines [8]"),
    Stall("graph", SHARES_STEP,
          "decoding a batch larger than every captured size, one sequence at a time",
          "every request in that batch", ("capture_sizes",),
          "capture sizes up to max_num_seqs [3, 4]"),
    Stall("gc", STOPS_LOOP,
          "a cyclic-GC pass over the live Python heap",
          "every request in flight", ("gc_freeze", "compact_history"),
          "freeze the start-up heap; log pauses with VLLM_GC_DEBUG [5]"),
    Stall("tok", STOPS_LOOP,
          "turning a newly arrived prompt into token ids on the loop",
          "every request in flight", ("async_tokenize",),
          "tokenize in the frontend process [7]"),
    Stall("preempt", SET_ASIDE,
          "copying an evicted request's KV cache out, and later back in",
          "the evicted request until readmitted; the rest of its step for the copy",
          ("admit_watermark",),
          "preemption mode (recompute or swap); more KV memory, a lower max_num_seqs [2]"),
)


def knob_changes(knobs, ladder=None) -> str:
    """'knob: from -> to (rung)' for each knob, from the ladder (ladder_knobs' frame)."""
    ladder = ladder_knobs() if ladder is None else ladder
    out = []
    for knob in knobs:
        rows = ladder[ladder["knob"] == knob]
        out += [f"{knob}: {r['from']} → {r['to']} ({r['rung']})" for _, r in rows.iterrows()]
    return "; ".join(out) if out else NO_RUNG


def stall_table(ladder=None, stalls=STALLS):
    """One row per stall, grouped by shape: what the engine is busy with, who waits, the
    knob here (from the ladder) and the lever in a production engine."""
    import pandas as pd

    missing = set(ARTICLE.causes) - {s.cause for s in stalls}
    if missing:
        raise ValueError(f"stall table lacks the cause(s) {sorted(missing)}")
    ladder = ladder_knobs() if ladder is None else ladder
    rows = [{"stall": s.name, "how it reaches you": s.shape, "the engine is busy with": s.busy_with,
             "who waits": s.who_waits, "knob here (rung)": knob_changes(s.knobs, ladder),
             "in a GPU engine": s.elsewhere}
            for s in sorted(stalls, key=lambda s: SHAPES.index(s.shape))]
    return pd.DataFrame(rows)
