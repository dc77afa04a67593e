"""The book's one verdict vocabulary, for the article's findings and for every paired
comparison between rungs, decided here and nowhere else.

A finding (findings.py) is judged by a criterion about runs:

* **held** / **did not hold**: the criterion was applied and met, or not;
* **not testable**: the mechanism the finding is about fired in no run, or in fewer
  runs than the criterion needs (the verdict says which, with the count), or a rung it
  compares was not run.

A paired comparison (paired.py's sign-flip test) either **moved** a metric (the test's
strength: *established* or *suggestive*), detected **no change**, or **cannot be judged
with n seeds**: fewer than two paired seeds, a smallest attainable p-value above the
"suggestive" level (n <= 4: with 2 seeds it is 0.5), or an interval so wide that it
admits a halving or a doubling. "No change" is only said by a comparison that could
have detected one, and every interval it shows states its coverage.
"""
from __future__ import annotations

import math

from .criteria import COLLAPSE
from .signflip import ALPHA, SUGGESTIVE, min_p

HELD, NOT_HELD, UNTESTABLE = "held", "did not hold", "not testable"
UNJUDGED = "cannot be judged"                    # followed by "with n seed(s)"
NO_CHANGE = "no change detected"
MOVED = ("established", "suggestive")            # the strengths of a detected change
FINDING_WORDS = (HELD, NOT_HELD, UNTESTABLE, UNJUDGED)
LEADS = {HELD: "Held here", NOT_HELD: "Did not hold here", UNTESTABLE: "Not testable here",
         UNJUDGED: "Cannot be judged here"}


def seeds_text(n: int) -> str:
    return f"{n} seed{'s' * (n != 1)}"


def unjudged(n: int) -> str:
    """'cannot be judged with 2 seeds'."""
    return f"{UNJUDGED} with {seeds_text(n)}"


# ---------------------------------------------------------------- findings
def _is_none(held) -> bool:
    return held is None or (isinstance(held, float) and math.isnan(held))


def finding_word(held) -> str:
    """held True/False/None -> 'held' / 'did not hold' / 'not testable'."""
    return UNTESTABLE if _is_none(held) else HELD if held else NOT_HELD


def finding_text(held, reason: str = "") -> str:
    """The verdict as a sentence's predicate: 'held', 'did not hold', or 'not testable
    (<why, with the count>)'."""
    word = finding_word(held)
    return f"{word} ({reason})" if word == UNTESTABLE and reason else word


def finding_predicate(held, reason: str = "") -> str:
    """The verdict as the predicate of a sentence whose subject is the finding: 'held',
    'did not hold', 'was not testable (<why>)'."""
    text = finding_text(held, reason)
    return "was " + text if text.startswith(UNTESTABLE) else text


def lead(word: str) -> str:
    """'Held here', 'Did not hold here', 'Not testable here' for a finding's verdict word."""
    return LEADS[UNJUDGED if word.startswith(UNJUDGED) else word]


def fired_reason(what: str, k: int, n: int, need: int, where: str) -> str:
    """Why a finding is not testable: its mechanism fired in fewer runs than needed."""
    runs = f"{where} run{'s' * (n != 1)}" if where == "baseline" else f"run{'s' * (n != 1)} of {where}"
    if k == 0:
        return (f"{what} did not occur in the one {runs}" if n == 1
                else f"{what} occurred in none of the {n} {runs}")
    return f"{what} occurred in {k} of the {n} {runs}; the criterion needs {need}"


# ---------------------------------------------------------------- paired comparisons
def power_floor(n: int) -> str | None:
    """Why n paired seeds cannot judge any comparison, or None when they can."""
    if n < 2:
        return "a paired comparison needs at least 2 seeds"
    if min_p(n) > SUGGESTIVE:
        return f"the smallest p-value {seeds_text(n)} can reach is {min_p(n):.2g}"
    return None


def interval_text(lo: float, hi: float, level: float) -> str:
    """'[0.81-1.10], 94% interval' ('' when unbounded or not computed)."""
    if not (math.isfinite(lo) and math.isfinite(hi) and level == level):
        return ""
    return f"[{lo:.2f}-{hi:.2f}], {level:.0%} interval"


def paired_word(res) -> str:
    """The vocabulary's word for one paired_change() result: 'established', 'suggestive',
    'no change detected' or 'cannot be judged with n seeds'."""
    n, raw = int(res["n"]), res["verdict"]
    if raw in MOVED and power_floor(n) is None:
        return raw
    if power_floor(n) is not None or raw not in ("no change",) + MOVED:
        return unjudged(n)
    lo, hi = res.get("lo", math.nan), res.get("hi", math.nan)
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo <= COLLAPSE or hi >= 1 / COLLAPSE:
        return unjudged(n)                   # a halving or a doubling could hide in it
    return NO_CHANGE


def difference_word(n: int, raw: str) -> str:
    """The vocabulary's word for a paired *difference* (a share or a count, which may be
    zero, so no ratio interval applies): the test's strength, 'no change detected' where
    n seeds could have detected one, else 'cannot be judged with n seeds'."""
    if power_floor(n) is not None or raw not in ("no change",) + MOVED:
        return unjudged(n)
    return raw if raw in MOVED else NO_CHANGE


def paired_reason(res) -> str:
    """Why a paired comparison cannot be judged ('' when it can)."""
    n = int(res["n"])
    if not paired_word(res).startswith(UNJUDGED):
        return ""
    floor = power_floor(n)
    if floor:
        return floor
    ci = interval_text(res.get("lo", math.nan), res.get("hi", math.nan), res.get("level", math.nan))
    return f"its interval {ci} admits a halving or a doubling" if ci else "its interval is unbounded"


def detected(res) -> bool:
    """Whether a paired comparison detected a change (a verdict one may act on)."""
    return paired_word(res) in MOVED


def could_detect(res) -> bool:
    """Whether the comparison had the power to detect a change at all: only then may a
    sentence say there was none."""
    return not paired_word(res).startswith(UNJUDGED)


def strongest(n: int) -> str:
    """The strongest paired verdict n seeds can reach, in the book's words."""
    if power_floor(n):
        return unjudged(n)
    return "established" if min_p(n) <= ALPHA else "suggestive"
