"""The prediction head: from a decoder state to a distribution over the target vocabulary.

    logits_t = W_p s_t^L + b_p                      (eq. 6)
    P(y_t | y_<t, c) = softmax(logits_t)             (eq. 8)
    loss = -sum_t log P(y*_t | y*_<t, c)             (eq. 7), padding masked out

The head costs |V| x H multiply-adds per target token, the largest single matrix of a training
step; `shortlist_cross_entropy` is the training-only shortcut that softmaxes over fewer words.
"""

from __future__ import annotations

import math

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


def shortlist_ids(targets: torch.Tensor, shortlist: int, pad: int = PAD) -> torch.Tensor:
    """The words a shortlist softmax scores: ids 0 .. shortlist-1 and every target present.

    Vocabularies list the most frequent words first, so ids below `shortlist` are the common
    words; adding the batch's own targets guarantees every target has a logit. Sorted (C,).
    """
    words = targets[targets != pad]
    common = torch.arange(shortlist, device=targets.device)
    return torch.unique(torch.cat([common, words]))  # sorted, no repeats


def shortlist_columns(targets: torch.Tensor, vocab_size: int, shortlist: int,
                      samples: int = 0, generator: torch.Generator | None = None,
                      pad: int = PAD) -> tuple[torch.Tensor, torch.Tensor, float]:
    """The words a training step's shortlist softmax scores, as `shortlist_cross_entropy` picks
    them: `listed` (C,), the `shortlist_ids`; `drawn` (K,), up to `samples` of the rarer words
    drawn at random (uniformly, without replacement) that are not listed already; and `offset`,
    log(n_rare / k), which is added to each drawn word's logit (0.0 when nothing is drawn)."""
    shortlist = min(shortlist, vocab_size)
    listed = shortlist_ids(targets, shortlist, pad)  # (C,)
    n_rare = vocab_size - shortlist
    if not (samples and n_rare):
        return listed, listed.new_empty(0), 0.0
    k = min(samples, n_rare)
    drawn = torch.randperm(n_rare, generator=generator)[:k].to(listed.device) + shortlist
    drawn = drawn[~torch.isin(drawn, listed)]  # (K,) the batch's targets are listed already
    # each rare word is drawn with probability k / n_rare: weight it by the inverse
    return listed, drawn, math.log(n_rare / k)


def shortlist_cross_entropy(head: PredictionHead, states: torch.Tensor, targets: torch.Tensor,
                            shortlist: int, pad: int = PAD, label_smoothing: float = 0.0,
                            samples: int = 0, generator: torch.Generator | None = None
                            ) -> torch.Tensor:
    """The training loss with the softmax over a shortlist of words, not all of V.

    states (B, T, H), targets (B, T) -> mean over real tokens of -log P'(y*_t), where P' is the
    softmax of eq. 8 restricted to `shortlist_ids` (the `shortlist` most frequent words plus
    the batch's targets; Jean et al. 2015 train on such per-batch vocabularies). Only those
    rows of W_p are multiplied, which cuts the head's cost by about |V| / C.

    A rare word outside the list would never be pushed down, so the model would keep too much
    probability on rare words. `samples` > 0 draws that many of the words after the shortlist
    at random (uniformly, without replacement) into the softmax, each with log(n_rare / samples)
    added to its logit: a drawn word then stands in for all the rare words it represents, and
    the denominator estimates the full softmax's (sampled softmax). Label smoothing spreads eps
    over the columns used. Decoding always uses the full head. With shortlist >= |V|, or with
    samples covering every rare word, this equals `masked_cross_entropy(head(states), ...)`.
    """
    if states.shape[:-1] != targets.shape:
        raise ValueError(f"states {tuple(states.shape)} do not match targets "
                         f"{tuple(targets.shape)}: expected states (B, T, H) and targets (B, T)")
    if isinstance(shortlist, bool) or not isinstance(shortlist, int) or shortlist < 1:
        raise ValueError(f"shortlist must be a positive int (a number of words), got "
                         f"{shortlist!r}")
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 0:
        raise ValueError(f"samples must be an int >= 0 (rare words drawn per step), got "
                         f"{samples!r}")
    if not 0.0 <= label_smoothing < 1.0:
        raise ValueError(f"label_smoothing must be in [0, 1), got {label_smoothing!r}")
    weight, bias = head.proj.weight, head.proj.bias  # (V, H), (V,)
    real = targets != pad  # (B, T)
    # (C,) listed words, (K,) drawn ones
    words, drawn, offset = shortlist_columns(targets, weight.size(0), shortlist, samples,
                                             generator, pad)
    h = states[real]  # (N, H): real positions only
    column = torch.searchsorted(words, targets[real])  # (N,) each target's place in `words`
    logits = F.linear(h, weight[words], bias[words])  # (N, C)
    if drawn.numel():
        extra = F.linear(h, weight[drawn], bias[drawn]) + offset  # (N, K)
        logits = torch.cat([logits, extra], dim=1)  # (N, C + K)
    return F.cross_entropy(logits, column, label_smoothing=label_smoothing)
