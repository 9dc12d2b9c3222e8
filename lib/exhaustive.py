"""Exhaustive search: score every possible output and keep the best, the oracle that greedy and
beam search (`lib.search`) are tested against.

There are |V|^T outputs of up to T tokens, so this runs on toy vocabularies only and refuses a
space larger than `MAX_EXHAUSTIVE` sequences. It follows `lib.search`'s conventions (outputs,
length caps, never-generated tokens, length normalisation) and returns its `BeamResult`.
"""

from __future__ import annotations

import torch

from lib.data import EOS, SOS
from lib.search import (
    NEG_INF,
    NEVER_GENERATED,
    BeamResult,
    _check_alpha,
    _check_batch,
    _Pool,
    check_max_len,
    log_probs,
    normalize,
)
from lib.validate import is_int

MAX_EXHAUSTIVE = 2_000_000  # exhaustive_search refuses to score more sequences than this


def count_sequences(vocab_size: int, max_len: int) -> int:
    """How many outputs exhaustive search scores: every sequence ending in <eos> within max_len
    tokens, plus every max_len-token sequence without <eos> (the cap cuts it)."""
    w = vocab_size - len(NEVER_GENERATED) - 1  # tokens that continue a sequence
    return sum(w ** (t - 1) for t in range(1, max_len + 1)) + w ** max_len


def _within(vocab_size: int, max_len: int, limit: int) -> bool:
    """count_sequences(vocab_size, max_len) <= limit, without counting past the limit (the
    count has thousands of digits for a long max_len, and takes minutes to write out)."""
    w = vocab_size - len(NEVER_GENERATED) - 1
    count = 0
    for t in range(1, max_len + 1):
        count += w ** (t - 1)  # sequences ending in <eos> at step t
        if count > limit:
            return False
        if w == 0:
            break  # no word continues: only <eos> at step 1
    return count + w ** max_len <= limit


@torch.no_grad()
def exhaustive_search(model, src: torch.Tensor, src_lengths: torch.Tensor, max_len: int,
                      alpha: float = 0.0, n_best: int = 1, limit: int = MAX_EXHAUSTIVE
                      ) -> BeamResult:
    """Score every possible output and return the best: the answer beam search approximates.

    Same definitions as `beam_search` (sequences end at <eos> or after max_len tokens; the
    score is log P / L^alpha). Batched over all prefixes of a depth; one sentence at a time.
    Refuses when there are more than `limit` sequences (at most MAX_EXHAUSTIVE): |V|^T grows
    far too fast.
    """
    _check_batch(src, src_lengths)
    # the count of sequences against `limit` bounds the work, whatever the length cap
    max_len, alpha = check_max_len(model, max_len, bounded=True), _check_alpha(alpha)
    if not is_int(limit) or not 1 <= limit <= MAX_EXHAUSTIVE:
        raise ValueError(f"limit (the most sequences to score) must be an integer from 1 to "
                         f"MAX_EXHAUSTIVE={MAX_EXHAUSTIVE:,}, got {limit!r}: every sequence "
                         f"is held in memory with its tokens and score")
    if not is_int(n_best) or n_best < 1:
        raise ValueError(f"n_best must be an integer >= 1, got {n_best!r}")
    V = len(model.tgt_vocab)
    if not _within(V, max_len, limit):
        w = V - len(NEVER_GENERATED) - 1
        raise ValueError(f"exhaustive search would score more than limit={limit:,} sequences "
                         f"({V} tokens, up to {max_len:,} steps: about {w}^{max_len:,}); use a "
                         f"smaller vocabulary or max_len, or beam search")
    dev = src.device
    words = torch.tensor([i for i in range(V) if i not in NEVER_GENERATED and i != EOS],
                         device=dev)  # (w,) tokens that continue a sequence
    pool = _Pool(src.size(0), n_best, dev)
    for b in range(src.size(0)):
        n = int(src_lengths[b])
        _, state, context = model.encode(src[b:b + 1, :n], src_lengths[b:b + 1])  # (L, 1, H)
        prefixes = torch.empty((1, 0), dtype=torch.long, device=dev)  # (N, t-1)
        raw = torch.zeros(1, device=dev)  # (N,)
        prev = torch.full((1,), SOS, dtype=torch.long, device=dev)  # (N,)
        for t in range(1, max_len + 1):
            N = prefixes.size(0)
            rows = torch.zeros(N, dtype=torch.long, device=dev)  # (N,) all read sentence b
            ctx = context.index_select(0, rows)  # (N, H), or a Memory of N rows
            logits, state = model.decoder.step(prev, state, ctx)  # (N, V), (L, N, H)
            total = raw.unsqueeze(1) + log_probs(logits)  # (N, V)
            ends = words if t == max_len else words[:0]  # at the cap every token ends
            ends = torch.cat([torch.tensor([EOS], device=dev), ends])  # (e,)
            seq = torch.cat([prefixes.repeat_interleave(len(ends), 0),
                             ends.repeat(N).unsqueeze(1)], 1)  # (N*e, t)
            score = total[:, ends].reshape(1, -1)  # (1, N*e)
            ids = torch.zeros_like(score, dtype=torch.long)  # no trace here
            pool.add(torch.tensor([b], device=dev), seq.unsqueeze(0), score,
                     normalize(score, t, alpha), ids, score > NEG_INF)
            if t == max_len:
                break
            prefixes = torch.cat([prefixes.repeat_interleave(len(words), 0),
                                  words.repeat(N).unsqueeze(1)], 1)  # (N*w, t)
            raw = total[:, words].reshape(-1)  # (N*w,)
            state = state.repeat_interleave(len(words), dim=1)  # (L, N*w, H)
            prev = prefixes[:, -1]  # (N*w,)
    return pool.result()
