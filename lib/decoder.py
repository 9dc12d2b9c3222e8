"""The decoder: its own embedding and GRU stack, started from the encoder's hidden states.

    s_0^i = h_S^i                                   (eq. 3: the context initialises each layer)
    s_t^1 = GRU([e(y_{t-1}); c], s_{t-1}^1) ...     (eq. 4, with y_0 = <sos>)

so s_t^L summarises the source and the output so far (eq. 5). With `feed_context=False` the
context only enters as the initial state (Sutskever et al. 2014); with `feed_context=True` the
last layer's context c = h_S^L is also concatenated to every input (Cho et al. 2014), so the
source stays within reach at every step. That path is structural: a trained model need not use
it much (book/decoder.md measures which one the reference model follows).

With `attention=True` (Bahdanau et al. 2015, `lib.attention`) the fixed c is replaced by a
context c_t computed at every step from the previous top-layer state s_{t-1}^L over all the
encoder's output states: s_t^1 = GRU([e(y_{t-1}); c_t], s_{t-1}^1). The GRU's input has the same
size as with `feed_context=True`, so an attention decoder can start from a fixed-vector one's
weights. Its context argument is then the `lib.attention.Memory` that `Seq2Seq.encode` returns.
"""

from __future__ import annotations

import torch
from torch import nn

from lib.attention import AdditiveAttention, Memory
from lib.data import PAD
from lib.head import PredictionHead


class Decoder(nn.Module):
    def __init__(self, vocab_size: int, emb_dim: int, hidden_size: int, num_layers: int = 2,
                 dropout: float = 0.0, feed_context: bool = True, attention: bool = False):
        super().__init__()
        if attention and not feed_context:
            raise ValueError("attention=True feeds a context c_t to every step; it needs "
                             "feed_context=True (the input [e(y); c])")
        self.feed_context = feed_context
        self.embedding = nn.Embedding(vocab_size, emb_dim, padding_idx=PAD)
        self.dropout = nn.Dropout(dropout)
        in_dim = emb_dim + (hidden_size if feed_context else 0)
        self.rnn = nn.GRU(in_dim, hidden_size, num_layers, batch_first=True,
                          dropout=dropout if num_layers > 1 else 0.0)
        self.head = PredictionHead(hidden_size, vocab_size)
        # created last, so the layers above draw the same initial weights with or without it
        self.attention = AdditiveAttention(hidden_size, hidden_size, hidden_size) \
            if attention else None

    def _check_context(self, context) -> None:
        if self.attention is not None and not isinstance(context, Memory):
            raise TypeError(f"this decoder attends over the source: pass the Memory that "
                            f"model.encode returns as its third value, not "
                            f"{type(context).__name__}")
        if self.attention is None and isinstance(context, Memory):
            raise TypeError("this decoder has no attention: pass the context (B, H), not a "
                            "Memory")

    def _inputs(self, tokens: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        # tokens (B, T), context (B, H) -> GRU inputs (B, T, E [+ H])
        emb = self.dropout(self.embedding(tokens))
        if not self.feed_context:
            return emb
        return torch.cat([emb, context.unsqueeze(1).expand(-1, tokens.size(1), -1)], dim=-1)

    def _attend_step(self, emb: torch.Tensor, state: torch.Tensor, memory: Memory
                     ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """One attention step: c_t from s_{t-1}^L, then the GRU on [e(y_{t-1}); c_t].

        emb (N, E) the embedded previous tokens, state (L, N, H)
        -> top state s_t^L (N, H), state (L, N, H), weights a_t (N, S)
        """
        context, weights = self.attention(state[-1], memory)  # (N, H), (N, S)
        x = torch.cat([emb, context], dim=-1).unsqueeze(1)  # (N, 1, E + H)
        out, state = self.rnn(x, state)  # (N, 1, H), (L, N, H)
        return out[:, 0], state, weights

    def features(self, tgt_in: torch.Tensor, state: torch.Tensor, context,
                 return_attention: bool = False):
        """The top layer's states s_t^L, as the head reads them (after dropout).

        tgt_in (B, T) = <sos> y_1 .. y_{T-1}; state (L, B, H); context (B, H), or the Memory
        of an attention decoder -> states (B, T, H), final state (L, B, H) [, weights (B, T, S)]

        Without attention the whole target runs through the GRU in one call. With attention
        c_t depends on s_{t-1}, so the decoder steps through time even when teacher-forced.
        """
        self._check_context(context)
        if self.attention is None:
            if return_attention:
                raise ValueError("this decoder has no attention weights (attention=False)")
            states, state = self.rnn(self._inputs(tgt_in, context), state)  # (B, T, H)
            return self.dropout(states), state
        emb = self.dropout(self.embedding(tgt_in))  # (B, T, E)
        outs, weights = [], []
        for t in range(tgt_in.size(1)):
            out, state, a = self._attend_step(emb[:, t], state, context)  # (B, H), (B, S)
            outs.append(out)
            weights.append(a)
        states = self.dropout(torch.stack(outs, dim=1))  # (B, T, H)
        if return_attention:
            return states, state, torch.stack(weights, dim=1)  # ..., (B, T, S)
        return states, state

    def forward(self, tgt_in: torch.Tensor, state: torch.Tensor, context
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """Teacher-forced pass over a whole target: logits (B, T, V), final state (L, B, H)."""
        states, state = self.features(tgt_in, state, context)  # (B, T, H)
        return self.head(states), state

    def step(self, prev: torch.Tensor, state: torch.Tensor, context,
             return_attention: bool = False):
        """One decoding step, shared by teacher forcing < 1, greedy and beam search.

        prev (N,) previous tokens, state (L, N, H), context (N, H) or a Memory of N rows
        -> logits (N, V), state [, the attention weights a_t (N, S) with return_attention]
        """
        self._check_context(context)
        if self.attention is None:
            if return_attention:
                raise ValueError("this decoder has no attention weights (attention=False)")
            states, state = self.rnn(self._inputs(prev.unsqueeze(1), context), state)  # (N, 1, H)
            return self.head(self.dropout(states[:, 0])), state
        emb = self.dropout(self.embedding(prev))  # (N, E)
        out, state, weights = self._attend_step(emb, state, context)  # (N, H), (N, S)
        logits = self.head(self.dropout(out))  # (N, V)
        return (logits, state, weights) if return_attention else (logits, state)
