"""The findings table's verdicts in words, for the pages that state them: one predicate
per finding, the table's column, the counts and the sentence naming the findings that
did not hold or could not be tested. Every word comes from verdicts.py."""
from __future__ import annotations

import numpy as np
import pandas as pd

from .verdicts import UNTESTABLE, finding_predicate, finding_text, finding_word


def _is_none(held) -> bool:
    return held is None or (isinstance(held, float) and np.isnan(held))


def verdict_word(held, reason: str = "") -> str:
    """'held', 'did not hold' or 'was not testable (<reason>)': the predicate of a
    sentence whose subject is the finding ("This finding ...")."""
    return finding_predicate(held, reason)


def verdict(found: pd.DataFrame, key: str) -> str:
    """The verdict of one row of findings(), as the predicate of a sentence about it."""
    reason = found.loc[key, "reason"] if "reason" in found.columns else ""
    return verdict_word(found.loc[key, "held"], reason if isinstance(reason, str) else "")


def verdicts(found: pd.DataFrame) -> pd.Series:
    """Every row's verdict as the table states it: 'held', 'did not hold', 'not testable
    (<reason>)'."""
    if "verdict text" in found.columns:
        return found["verdict text"].astype(object)
    reasons = found["reason"] if "reason" in found.columns else pd.Series("", index=found.index)
    return pd.Series([finding_text(h, r if isinstance(r, str) else "") for h, r in zip(found["held"], reasons)],
                     index=found.index, dtype=object)


def _words(found: pd.DataFrame) -> list[str]:
    if "verdict" in found.columns:
        return list(found["verdict"])
    return [finding_word(None if _is_none(h) else bool(h)) for h in found["held"]]


def verdict_counts(found: pd.DataFrame) -> dict:
    """How many findings held, did not, and could not be tested: one count for every
    chapter that reports them (the summary and the report)."""
    words = _words(found)
    return {"n_findings": len(words), "n_held": words.count("held"), "n_not": words.count("did not hold"),
            "n_untestable": words.count(UNTESTABLE)}


def failed_sentence(found: pd.DataFrame) -> str:
    """The findings that did not hold, named by their claims; and the untestable ones,
    named with why."""
    words = _words(found)
    failed = [found.loc[k, "claim"] for k, w in zip(found.index, words) if w == "did not hold"]
    untested = [f'"{found.loc[k, "claim"]}" ({found.loc[k, "reason"]})' for k, w in zip(found.index, words)
                if w == UNTESTABLE and "reason" in found.columns and found.loc[k, "reason"]]
    tail = (" Not testable here: " + "; ".join(untested) + ".") if untested else ""
    if not failed:
        return ("None did not hold: every finding that could be tested held." if words.count("held")
                else "None could be tested in these runs.") + tail
    return "The ones that did not: " + "; ".join(f'"{c}"' for c in failed) + "." + tail
