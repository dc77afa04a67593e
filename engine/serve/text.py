"""Synthetic prompt text: a small English-ish vocabulary plus numbers with units.

Texts are drawn from a numpy Generator, so a seed gives the same text on any machine.
"""
from __future__ import annotations

import numpy as np

VOCAB = np.array((
    "a an the and or but if then so as at by for from in into of on onto to with "
    "we you they it this that these those is are was were be been has have had do "
    "please summarise explain compare list rewrite translate check review draft "
    "server request reply queue worker thread process memory buffer cache block page "
    "token tokens prompt answer context window batch step loop latency throughput "
    "report table figure chart result error warning retry timeout deadline budget "
    "schedule order invoice customer account payment contract meeting agenda notes"
).split())
UNITS = np.array(["ms", "%", "x", "kB", ".5", "s"])
ODD_WORD_P = 0.08          # share of words replaced by a number with a unit
_MEAN_WORD = 6.0           # generous mean word length incl. space, to draw enough words


def make_text(rng: np.random.Generator, n_chars: int) -> str:
    """About `n_chars` characters of text (cut at exactly n_chars)."""
    n_words = int(n_chars / _MEAN_WORD * 1.3) + 8
    words = VOCAB[rng.integers(0, len(VOCAB), n_words)].astype(object)
    odd = rng.random(n_words) < ODD_WORD_P
    nums = rng.integers(0, 100_000, n_words)
    units = UNITS[rng.integers(0, len(UNITS), n_words)]
    words[odd] = [f"{n}{u}" for n, u in zip(nums[odd], units[odd])]
    text = " ".join(words)
    while len(text) < n_chars:            # rare: a run of short words; extend deterministically
        text = text + " " + text
    return text[:n_chars]
