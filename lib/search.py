"""Decoding: turn the decoder's one-step distributions into a sentence.

Greedy search takes the most likely *token* at every step. Beam search keeps the k most
likely partial *sequences*. Both run batched on `Decoder.step`.
"""

from __future__ import annotations

import torch

from lib.data import EOS, PAD, SOS


def _check_max_len(model, max_len):
    max_len = model.config.max_tgt_len if max_len is None else max_len
    if not isinstance(max_len, int) or max_len < 1:
        raise ValueError(f"max_len must be a positive integer, got {max_len!r}")
    return max_len


@torch.no_grad()
def greedy(model, src: torch.Tensor, src_lengths: torch.Tensor, max_len: int | None = None
           ) -> torch.Tensor:
    """Batched greedy decoding -> ids (B, T) padded with <pad> after each sentence's <eos>.

    Every sentence stops at its own <eos> (later steps are ignored) or at max_len tokens.
    """
    max_len = _check_max_len(model, max_len)
    _, state, context = model.encode(src, src_lengths)  # state (L, B, H), context (B, H)
    B = src.size(0)
    prev = torch.full((B,), SOS, dtype=torch.long, device=src.device)  # (B,)
    done = torch.zeros(B, dtype=torch.bool, device=src.device)
    out = []
    for _ in range(max_len):
        logits, state = model.decoder.step(prev, state, context)  # (B, V)
        tok = logits.argmax(-1)  # argmax needs no softmax: softmax is monotonic
        tok = tok.masked_fill(done, PAD)
        out.append(tok)
        done |= tok == EOS
        prev = tok
        if bool(done.all()):
            break
    return torch.stack(out, dim=1)  # (B, T)
