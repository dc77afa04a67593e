"""The forward pass of the demonstrator, selected by `Config.forward`.

  "article"  the article engine's numerics and data movement (float64 compute over a
             float32 KV cache, no output head): the default, so the book runs the
             article's system (model_article.py)
  "fast"     float32 throughout with a vocabulary projection: measured on this
             project's machine (`python -m engine fidelity`) at 0.79-0.96x the article
             forward's decode time and 0.42-0.49x its prefill time, so cheaper mostly in
             prefill; the named variant later chapters compare (model_fast.py)

Both have the same entry points: decode_batched, decode_eager and prefill_chunk, and
own their KV storage: new_kv(capacity), capacity(kv), take_prefix(kv, n) (a host copy)
and put_prefix(kv, prefix, n).
"""
from __future__ import annotations

from .model_article import ArticleModel
from .model_fast import FastModel

FORWARDS = {"article": ArticleModel, "fast": FastModel}


def make_model(forward: str = "article", seed: int = 0):
    try:
        return FORWARDS[forward](seed)
    except KeyError:
        raise ValueError(f"unknown forward {forward!r}; valid forwards: {', '.join(FORWARDS)}") from None
