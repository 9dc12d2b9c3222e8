"""The encoder: an embedding and a stack of GRU layers that read the source sentence.

Layer 1 reads the embedded tokens x_t, layer i > 1 reads the states of layer i-1 (eq. 1):

    h_t^1 = GRU(x_t, h_{t-1}^1),   h_t^i = GRU(h_t^{i-1}, h_{t-1}^i)

so h_t^i summarises x_1 .. x_t (eq. 2). The encoder returns two sets of vectors:
the *output states* [h_1^L .. h_S^L] of the last layer, one per source token, and the
*hidden states* [h_S^1 .. h_S^L] of the last step, one per layer: the context vector.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from lib.data import PAD


class Encoder(nn.Module):
    def __init__(self, vocab_size: int, emb_dim: int, hidden_size: int, num_layers: int = 2,
                 dropout: float = 0.0):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_dim, padding_idx=PAD)
        self.dropout = nn.Dropout(dropout)
        self.rnn = nn.GRU(emb_dim, hidden_size, num_layers, batch_first=True,
                          dropout=dropout if num_layers > 1 else 0.0)

    def forward(self, src: torch.Tensor, src_lengths: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """src (B, S) ids, src_lengths (B,) -> outputs (B, S, H), hidden (L, B, H).

        Sequences are packed, so the GRU never reads <pad>: the hidden state of a short
        sentence is its state after its own last word, and its outputs past the end are zero.
        """
        lengths = src_lengths.cpu()
        if lengths.min() < 1:
            raise ValueError("every source sentence needs at least one token (got length 0)")
        emb = self.dropout(self.embedding(src))  # (B, S, E)
        if bool((lengths == src.size(1)).all()):
            # No padding anywhere (length-bucketed batches): packing would only cost time.
            outputs, hidden = self.rnn(emb)  # (B, S, H), (L, B, H)
            return outputs, hidden
        packed = pack_padded_sequence(emb, lengths, batch_first=True, enforce_sorted=False)
        outputs, hidden = self.rnn(packed)
        outputs, _ = pad_packed_sequence(outputs, batch_first=True,
                                         total_length=src.size(1))  # (B, S, H)
        return outputs, hidden
