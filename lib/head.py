"""The prediction head: from a decoder state to a distribution over the target vocabulary.

    logits_t = W_p s_t^L + b_p                      (eq. 6)
    P(y_t | y_<t, c) = softmax(logits_t)             (eq. 8)
    loss = -sum_t log P(y*_t | y*_<t, c)             (eq. 7), padding masked out
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from lib.data import PAD


class PredictionHead(nn.Module):
    """A single linear map W_p: hidden size -> vocabulary size (eq. 6)."""

    def __init__(self, hidden_size: int, vocab_size: int):
        super().__init__()
        self.proj = nn.Linear(hidden_size, vocab_size)

    def forward(self, states: torch.Tensor) -> torch.Tensor:
        # states (..., H) -> logits (..., V)
        return self.proj(states)


def masked_cross_entropy(logits: torch.Tensor, targets: torch.Tensor, pad: int = PAD,
                         reduction: str = "mean", label_smoothing: float = 0.0
                         ) -> torch.Tensor:
    """Negative log-likelihood of the targets, ignoring padded positions.

    logits (B, T, V), targets (B, T). `reduction="mean"` averages over real (non-pad) tokens,
    so a batch of short sentences weighs the same per token as a batch of long ones;
    "sum" returns the summed negative log-probability of eq. 7.

    With `label_smoothing` = eps > 0 (Szegedy et al. 2016) each position's target is the
    mixture (1 - eps) * one-hot + eps * uniform over the V tokens, so the loss is
    (1 - eps) * (-log P(y*)) + eps * mean_v(-log P(v)): the model is never pushed to put all
    its probability on one word, which regularises it. eps = 0 is eq. 7 exactly.
    """
    if logits.shape[:-1] != targets.shape:
        raise ValueError(f"logits {tuple(logits.shape)} do not match targets "
                         f"{tuple(targets.shape)}: expected logits (B, T, V) and targets (B, T)")
    if reduction not in ("mean", "sum"):
        raise ValueError(f"reduction must be 'mean' or 'sum', got {reduction!r}")
    if not 0.0 <= label_smoothing < 1.0:
        raise ValueError(f"label_smoothing must be in [0, 1), got {label_smoothing!r}")
    # (B*T, V) vs (B*T,): positions where the target is <pad> contribute 0
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1),
                           ignore_index=pad, reduction=reduction,
                           label_smoothing=label_smoothing)
