"""The fix ladder: seven cumulative rungs, each the one above plus exactly its fix."""
import dataclasses

import pytest

from engine import FIXES, LADDER, Config, rung_config, slug

ARTICLE_RUNGS = ["baseline", "+gc.freeze", "+compact history", "+graphs to 48", "+budget 256",
                 "+tokenize off-loop", "+admit watermark"]


def test_rung_names_and_order():
    assert list(LADDER) == ARTICLE_RUNGS


def test_article_defaults():
    c = Config()
    assert (c.max_num_seqs, c.token_budget, c.kv_blocks, c.block_size, c.max_model_len) == (48, 2048, 1000, 16, 2048)
    assert c.capture_sizes == (1, 2, 4, 8, 16, 24, 32)
    assert not (c.gc_freeze or c.compact_history or c.async_tokenize) and c.admit_watermark == 0


def _diff(a: Config, b: Config) -> dict:
    da, db = dataclasses.asdict(a), dataclasses.asdict(b)
    return {k: db[k] for k in da if k != "name" and da[k] != db[k]}


def test_each_rung_differs_from_the_one_above_only_by_its_fix():
    names = list(LADDER)
    assert _diff(Config(), LADDER["baseline"]) == {}
    for above, here in zip(names, names[1:]):
        fix = dict(FIXES)[here]
        assert _diff(LADDER[above], LADDER[here]) == {k: tuple(v) if isinstance(v, tuple) else v
                                                      for k, v in fix.items()}


def test_fixes_are_the_articles():
    last = LADDER["+admit watermark"]
    assert last.gc_freeze and last.compact_history and last.async_tokenize
    assert last.capture_sizes[-1] == 48 and last.token_budget == 256 and last.admit_watermark == 0.10


def test_rung_lookup_by_slug_and_clear_error():
    assert rung_config("tokenize-off-loop") is LADDER["+tokenize off-loop"]
    assert slug("+graphs to 48") == "graphs-to-48"
    with pytest.raises(ValueError, match="valid rungs: 'baseline'"):
        rung_config("+faster kernels")


def test_bad_config_rejected():
    with pytest.raises(ValueError, match="capture_sizes"):
        Config(capture_sizes=(4, 2))
    with pytest.raises(ValueError, match="admit_watermark"):
        Config(admit_watermark=1.5)
