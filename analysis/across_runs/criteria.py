"""The thresholds the report's findings are judged by, in one place: the operating point's
verdicts (findings.py) and the load sweep's (sweep_findings.py) apply the same numbers,
and the criteria's words are written from them."""
from __future__ import annotations

CLEAN_FORWARD_MIN = 0.90   # "a typical gap is almost all forward pass": median share at least
TAIL_FORWARD_MAX = 0.50    # "a tail gap is mostly not forward pass": median share at most
MAJORITY = 0.50            # "holds most of the tail": a share above this
COLLAPSE = 0.5             # "collapses": below this fraction of the baseline's
P50_FLAT = (0.8, 1.25)     # "barely moves": a ratio of medians inside this
FALLS = 5                  # "nearly ends": a median count falls at least this many times
GRAPH_TAIL_MAX = 0.01      # "graph misses hold next to none of the tail time": every run's share below
TOK_TAIL_MAX = 0.001       # "off-loop tokenization removes tokenizer tail time": every run's share below
RECONCILE_MAX_MS = 1e-9    # "every gap's parts sum to the gap": the largest error below this (ms)

_FRACTION_WORDS = {0.5: ("half", "halves")}     # fractions the criteria name in words: noun, verb


def fraction_words(x: float) -> tuple[str, str]:
    """A fraction as the criteria's words give it: 0.5 -> ('half', 'halves')."""
    if x not in _FRACTION_WORDS:
        raise ValueError(f"the criteria have no words for the fraction {x!r}; "
                         f"add them to criteria._FRACTION_WORDS (has {sorted(_FRACTION_WORDS)})")
    return _FRACTION_WORDS[x]
