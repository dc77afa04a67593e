"""A real HuggingFace BPE tokenizer, trained in-process on synthetic text.

Training is deterministic (fixed corpus seed) and takes about a second; each process
trains it once. `tokenize` is also the entry point of the off-loop tokenizer worker.
"""
from __future__ import annotations

import os

import numpy as np

from .text import make_text

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")   # one thread, like the engine loop

VOCAB_SIZE = 4096
_CORPUS_SEED, _CORPUS_DOCS, _CORPUS_CHARS = 12345, 3000, 400
_TOKENIZER = None


def get_tokenizer():
    global _TOKENIZER
    if _TOKENIZER is None:
        from tokenizers import Tokenizer, models, pre_tokenizers, trainers

        rng = np.random.default_rng(_CORPUS_SEED)
        corpus = [make_text(rng, _CORPUS_CHARS) for _ in range(_CORPUS_DOCS)]
        tok = Tokenizer(models.BPE(unk_token="[UNK]"))
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        trainer = trainers.BpeTrainer(vocab_size=VOCAB_SIZE, show_progress=False,
                                      special_tokens=["[UNK]"])
        tok.train_from_iterator(corpus, trainer)
        _TOKENIZER = tok
    return _TOKENIZER


def tokenize(text: str) -> list[int]:
    return get_tokenizer().encode(text).ids
