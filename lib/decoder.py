"""The decoder: its own embedding and GRU stack, started from the encoder's hidden states.

    s_0^i = h_S^i                                   (eq. 3: the context initialises each layer)
    s_t^1 = GRU([e(y_{t-1}); c], s_{t-1}^1) ...     (eq. 4, with y_0 = <sos>)

so s_t^L summarises the source and the output so far (eq. 5). With `feed_context=False` the
context only enters as the initial state (Sutskever et al. 2014); with `feed_context=True` the
last layer's context c = h_S^L is also concatenated to every input (Cho et al. 2014), so the
decoder cannot forget it as it writes.
"""

from __future__ import annotations

import torch
from torch import nn

from lib.data import PAD
from lib.head import PredictionHead


class Decoder(nn.Module):
    def __init__(self, vocab_size: int, emb_dim: int, hidden_size: int, num_layers: int = 2,
                 dropout: float = 0.0, feed_context: bool = True):
        super().__init__()
        self.feed_context = feed_context
        self.embedding = nn.Embedding(vocab_size, emb_dim, padding_idx=PAD)
        self.dropout = nn.Dropout(dropout)
        in_dim = emb_dim + (hidden_size if feed_context else 0)
        self.rnn = nn.GRU(in_dim, hidden_size, num_layers, batch_first=True,
                          dropout=dropout if num_layers > 1 else 0.0)
        self.head = PredictionHead(hidden_size, vocab_size)

    def _inputs(self, tokens: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        # tokens (B, T), context (B, H) -> GRU inputs (B, T, E [+ H])
        emb = self.dropout(self.embedding(tokens))
        if not self.feed_context:
            return emb
        return torch.cat([emb, context.unsqueeze(1).expand(-1, tokens.size(1), -1)], dim=-1)

    def features(self, tgt_in: torch.Tensor, state: torch.Tensor, context: torch.Tensor
                 ) -> tuple[torch.Tensor, torch.Tensor]:
        """The top layer's states s_t^L, as the head reads them (after dropout), in one GRU call.

        tgt_in (B, T) = <sos> y_1 .. y_{T-1}; state (L, B, H); context (B, H)
        -> states (B, T, H), final state (L, B, H)
        """
        states, state = self.rnn(self._inputs(tgt_in, context), state)  # (B, T, H)
        return self.dropout(states), state

    def forward(self, tgt_in: torch.Tensor, state: torch.Tensor, context: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """Teacher-forced pass over a whole target: logits (B, T, V), final state (L, B, H)."""
        states, state = self.features(tgt_in, state, context)  # (B, T, H)
        return self.head(states), state

    def step(self, prev: torch.Tensor, state: torch.Tensor, context: torch.Tensor
             ) -> tuple[torch.Tensor, torch.Tensor]:
        """One decoding step, shared by teacher forcing < 1, greedy and beam search.

        prev (N,) previous tokens, state (L, N, H), context (N, H) -> logits (N, V), state
        """
        states, state = self.rnn(self._inputs(prev.unsqueeze(1), context), state)  # (N, 1, H)
        return self.head(self.dropout(states[:, 0])), state
