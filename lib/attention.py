"""Additive attention (Bahdanau et al. 2015): a new context vector at every decoder step.

A fixed-vector decoder reads one context c = h_S^L for the whole output, however long the source.
An attention decoder keeps all the encoder's output states h_1 .. h_S (the *annotations*) and,
before writing word t, scores each of them against its previous state s_{t-1}:

    e_{t,j} = v^T tanh(W_s s_{t-1} + W_h h_j)      (how well h_j fits what comes next)
    a_{t,j} = exp(e_{t,j}) / sum_k exp(e_{t,k})     (softmax over the real source positions)
    c_t     = sum_j a_{t,j} h_j                      (the context of step t: a weighted mean)

W_h h_j does not depend on t, so it is computed once per sentence (`AdditiveAttention.memory`);
each step then costs O(S * A) for S source positions: the price of removing the bottleneck is
work per step that grows with the source. A batch pads short sentences to the longest, and a
padded position must get exactly zero weight, or a sentence's context would depend on the
batch it sits in: `masked_softmax` gives those scores -inf, so their exp is exactly 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from lib.data import EOS, PAD, SOS
from lib.validate import check_ids, is_int


def source_mask(lengths: torch.Tensor, max_len: int) -> torch.Tensor:
    """lengths (B,) -> mask (B, max_len): True at the real tokens, False at the padding."""
    if not torch.is_tensor(lengths) or lengths.is_floating_point() or lengths.is_complex() \
            or lengths.dtype == torch.bool:
        raise ValueError(f"lengths must be a tensor of whole token counts, got "
                         f"{getattr(lengths, 'dtype', type(lengths).__name__)}")
    if (lengths < 0).any():
        raise ValueError(f"lengths must be >= 0 (token counts), got {lengths.tolist()}")
    if not is_int(max_len) or max_len < 0:
        raise ValueError(f"max_len must be an integer >= 0, got {max_len!r}")
    positions = torch.arange(max_len, device=lengths.device)  # (S,)
    return positions.unsqueeze(0) < lengths.unsqueeze(1)  # (B, S)


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Softmax of scores (..., S) over the positions where mask (..., S) is True.

    A masked position's score becomes -inf, so exp(-inf) = 0: it gets exactly zero weight and
    the real positions' weights sum to 1 as if the padding were not there. Each row needs at
    least one real position (every sentence has a token).
    """
    scores = scores.masked_fill(~mask, float("-inf"))  # (..., S) padding can never win
    return torch.softmax(scores, dim=-1)  # (..., S) rows sum to 1, zeros at the padding


@dataclass(frozen=True)
class Memory:
    """What an attention decoder reads at every step, for N sentences.

    It stands where a fixed-vector decoder's context (N, H) stands: `Seq2Seq.encode` returns it
    as its third value and `Decoder.step` takes it, so code that passes the context along works
    unchanged. Search selects sentences' rows of it as it does of a context tensor:
    `memory[rows]` and `memory.index_select(0, rows)`.
    """

    states: torch.Tensor  # (N, S, H) the encoder's output states h_j
    keys: torch.Tensor  # (N, S, A) their projections W_h h_j, computed once per sentence
    mask: torch.Tensor  # (N, S) True at real source tokens

    def __len__(self) -> int:
        return self.states.size(0)

    def __getitem__(self, rows) -> Memory:
        """The memory of some sentences: rows is an index, a bool mask (N,) or ids (N',)."""
        return Memory(self.states[rows], self.keys[rows], self.mask[rows])

    def index_select(self, dim: int, index: torch.Tensor) -> Memory:
        """Rows `index` (N',) of every tensor, like Tensor.index_select(0, index)."""
        if dim != 0:
            raise ValueError(f"a Memory selects sentences (dim 0), not dim {dim}")
        return Memory(self.states.index_select(0, index), self.keys.index_select(0, index),
                      self.mask.index_select(0, index))


class AdditiveAttention(nn.Module):
    """Scores e_{t,j} = v^T tanh(W_s s_{t-1} + W_h h_j), weights a_t, context c_t (module doc).

    query_size: the decoder state's size; key_size: the encoder states' size; attn_size: A, the
    size of the space where the two meet. No biases, as in the equations.
    """

    def __init__(self, query_size: int, key_size: int, attn_size: int):
        super().__init__()
        self.W_s = nn.Linear(query_size, attn_size, bias=False)
        self.W_h = nn.Linear(key_size, attn_size, bias=False)
        self.v = nn.Linear(attn_size, 1, bias=False)

    def memory(self, states: torch.Tensor, lengths: torch.Tensor) -> Memory:
        """Encoder output states (N, S, H) and source lengths (N,) -> the Memory to attend over.

        W_h h_j is the same at every step, so it is computed here, once per sentence.
        """
        mask = source_mask(lengths.to(states.device), states.size(1))  # (N, S)
        return Memory(states, self.W_h(states), mask)  # keys (N, S, A)

    def scores(self, query: torch.Tensor, memory: Memory) -> torch.Tensor:
        """query s_{t-1} (N, Hs) -> scores e_t (N, S), before masking."""
        q = self.W_s(query).unsqueeze(1)  # (N, 1, A) W_s s_{t-1}, the same for every j
        return self.v(torch.tanh(q + memory.keys)).squeeze(-1)  # (N, S)

    def forward(self, query: torch.Tensor, memory: Memory
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """query s_{t-1} (N, Hs) -> context c_t (N, H), weights a_t (N, S)."""
        weights = masked_softmax(self.scores(query, memory), memory.mask)  # (N, S)
        context = (weights.unsqueeze(-1) * memory.states).sum(dim=1)  # (N, H) sum_j a_tj h_j
        return context, weights


@torch.no_grad()
def attention_weights(model, src: torch.Tensor, src_lengths: torch.Tensor, tgt: torch.Tensor
                      ) -> torch.Tensor:
    """The weights a_{t,j} (B, T, S) an attention model uses to write the outputs tgt (B, T).

    Teacher-forced: the decoder reads <sos> y_1 .. y_{T-1}, so row t holds the weights over the
    source with which it scored y_t. tgt is read as the search functions write it (tokens, then
    <eos>, then <pad>): rows after the first <eos> are zero. Use it for heatmaps of any output,
    greedy's, each beam hypothesis's or a reference translation.
    """
    if not model.attends:
        raise ValueError("this model has no attention (ModelConfig.attention=False): there are "
                         "no attention weights to show")
    check_ids(src, len(model.src_vocab), "src")
    check_ids(tgt, len(model.tgt_vocab), "tgt")
    _, state, memory = model.encode(src, src_lengths)  # (L, B, H), Memory of B rows
    sos = torch.full_like(tgt[:, :1], SOS)  # (B, 1)
    tgt_in = torch.cat([sos, tgt[:, :-1]], dim=1)  # (B, T) the decoder's inputs
    _, _, weights = model.decoder.features(tgt_in, state, memory, return_attention=True)
    ended = torch.cumsum((tgt == EOS).long(), dim=1) - (tgt == EOS).long()  # (B, T) EOS before t
    written = (ended == 0) & (tgt != PAD)  # (B, T) up to and including the first <eos>
    return weights * written.unsqueeze(-1)  # (B, T, S)
