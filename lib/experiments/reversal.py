"""A toy task for experiments that must train in seconds: write a sequence of digits backwards.

"Teacher forcing" uses it to let a learner observe exposure bias: two tiny models trained on it,
one reading the reference's previous token and one reading its own, differ in how much worse
they do after their own prefixes. The task has the shape of translation (a source sentence, a
target sentence of its own length, <eos> to learn) without a corpus, and its difficulty grows
with the length: the decoder must recall the source from its last word to its first.

    examples = reversal_examples(2000, seed=0)     # [(src ids, tgt ids)], ids as lib.data gives
    model = reversal_model(seed=0)                 # a small untrained Seq2Seq for it
"""

from __future__ import annotations

import random

import torch

from lib.data import SPECIALS, Vocab
from lib.model import ModelConfig, Seq2Seq

DIGITS = 8  # distinct symbols: enough for sequences to differ, few enough to learn in seconds


def vocab(side: str) -> Vocab:
    """The words of one side: the specials, then `en0 … en7` (source) or `fr0 … fr7`."""
    if side not in ("en", "fr"):
        raise ValueError(f"side must be 'en' or 'fr', got {side!r}")
    return Vocab(list(SPECIALS) + [f"{side}{i}" for i in range(DIGITS)])


def reversal_examples(n: int, seed: int, min_len: int = 3, max_len: int = 8
                      ) -> list[tuple[list[int], list[int]]]:
    """`n` random (source ids, target ids) pairs, the target being the source backwards.

    Ids are vocabulary ids without <sos>/<eos>, as `lib.data.encode_pairs` gives them, so
    `lib.data.collate` and `lib.train.train` take them as they take the corpus.
    """
    for name, value in (("n", n), ("min_len", min_len), ("max_len", max_len)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    if min_len > max_len:
        raise ValueError(f"min_len ({min_len}) must not exceed max_len ({max_len})")
    rng = random.Random(seed)
    first = len(SPECIALS)  # en0 and fr0 have the first id after the specials on both sides
    pairs = []
    for _ in range(n):
        digits = [rng.randrange(DIGITS) for _ in range(rng.randint(min_len, max_len))]
        pairs.append(([first + d for d in digits], [first + d for d in reversed(digits)]))
    return pairs


def reversal_model(seed: int = 0, hidden: int = 64, attention: bool = False,
                   max_len: int = 40):
    """A small untrained Seq2Seq for the task: one GRU layer, embeddings of 16, no dropout.

    With `attention=True` the decoder attends over the encoder's output states (additive
    attention, `lib.attention`) instead of reading one fixed context; everything else, the
    initial weights of every other layer included (same seed), is the same model. `max_len`
    caps the source and the output, in digits.
    """
    src, tgt = vocab("en"), vocab("fr")
    torch.manual_seed(seed)
    config = ModelConfig(len(src), len(tgt), emb_dim=16, hidden_size=hidden, num_layers=1,
                         dropout=0.0, feed_context=True, attention=attention,
                         max_src_len=max_len, max_tgt_len=max_len)
    return Seq2Seq(config, src, tgt).eval()
