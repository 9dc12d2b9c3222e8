"""The small seeded models that more than one chapter's checkers run on.

A checker's cases must be cheap to recompute and the same on every machine, so they run on
untrained `lib.experiments.toy.tiny_model`s with settings fixed here, in one place.
"""

from __future__ import annotations

import functools

from lib.data import SPECIALS
from lib.experiments import toy

# shared_vocab_model(seed): a small random Seq2Seq (eval mode), weights x2 so outputs depend on
# inputs, over one made-up vocabulary `w0 w1 …` (12 tokens with the specials) for both sides, so
# a checker can feed the model's output back as its input. The decoder and prediction-head
# chapters' checkers run on it.
shared_vocab_model = functools.partial(
    toy.tiny_model, shared_words=12 - len(SPECIALS), hidden=16, layers=2, max_src_len=20,
    max_tgt_len=12, scale=2.0)
