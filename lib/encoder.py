"""The encoder: an embedding and a stack of GRU layers that read the source sentence.

Layer 1 reads the embedded tokens x_t, layer i > 1 reads the states of layer i-1 (eq. 1):

    h_t^1 = GRU(x_t, h_{t-1}^1),   h_t^i = GRU(h_t^{i-1}, h_{t-1}^i)

so h_t^i summarises x_1 .. x_t (eq. 2). The encoder returns two sets of vectors:
the *output states* [h_1^L .. h_S^L] of the last layer, one per source token, and the
*hidden states* [h_S^1 .. h_S^L] of the last step, one per layer: the context vector.

The chapter also compares the encoder's last state with other summaries of the sentence:
`pool_states` (the mean or the maximum of the output states over the real tokens),
`linear_probe` (what a linear map can read back from a summary), `paired_interval` (is one
summary's advantage more than the noise of the test set), and `LSTMStateCell`, an LSTM step
whose two states travel as one vector, so `lib.experiments.gradient_flow` measures it like a GRU.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from lib.data import PAD

POOLS = ("mean", "max")


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


def pool_states(outputs: torch.Tensor, lengths: torch.Tensor, how: str = "mean") -> torch.Tensor:
    """outputs (B, S, H), lengths (B,) -> (B, H): the mean or the maximum over each sentence's
    real steps only. Padded steps hold zeros, which would pull a mean towards 0 and win a
    maximum over negative values, so both skip them."""
    if how not in POOLS:
        raise ValueError(f"how must be one of {POOLS}, got {how!r}")
    if outputs.dim() != 3 or lengths.shape != (outputs.size(0),):
        raise ValueError(f"expected outputs (B, S, H) and lengths (B,), got "
                         f"{tuple(outputs.shape)} and {tuple(lengths.shape)}")
    lengths = lengths.to(outputs.device)
    if lengths.min() < 1 or lengths.max() > outputs.size(1):
        raise ValueError(f"lengths must be in [1, S={outputs.size(1)}], got {lengths.tolist()}")
    steps = torch.arange(outputs.size(1), device=outputs.device)  # (S,)
    real = (steps[None] < lengths[:, None])[..., None]  # (B, S, 1)
    if how == "mean":
        return (outputs * real).sum(1) / lengths[:, None].to(outputs.dtype)  # (B, H)
    return outputs.masked_fill(~real, float("-inf")).amax(1)  # (B, H)


def linear_probe(train_x: torch.Tensor, train_y: torch.Tensor, test_x: torch.Tensor,
                 n_classes: int, ridge: float = 10.0) -> torch.Tensor:
    """Predicted classes (N_test,) of a least-squares linear classifier fitted on train_x
    (N, H) with labels train_y (N,) in [0, n_classes): features standardised on the training
    rows, one-hot targets, ridge penalty `ridge`, argmax of the scores. One linear solve, no
    training loop: what a linear map can read from a vector, with nothing left to tune."""
    if train_x.dim() != 2 or test_x.dim() != 2 or train_x.size(1) != test_x.size(1):
        raise ValueError(f"expected train_x (N, H) and test_x (M, H), got "
                         f"{tuple(train_x.shape)} and {tuple(test_x.shape)}")
    if train_y.shape != (train_x.size(0),):
        raise ValueError(f"train_y should have shape ({train_x.size(0)},), got "
                         f"{tuple(train_y.shape)}")
    if train_y.min() < 0 or train_y.max() >= n_classes:
        raise ValueError(f"labels must be in [0, {n_classes}), got {train_y.min()} to "
                         f"{train_y.max()}")
    x, xt = train_x.double(), test_x.double()
    mean, std = x.mean(0), x.std(0).clamp_min(1e-6)  # (H,)
    ones = torch.ones(1, dtype=torch.float64)

    def features(v):  # standardised, with a constant column for the bias: (N, H + 1)
        return torch.cat([(v - mean) / std, ones.expand(len(v), 1)], dim=1)

    a = features(x)
    targets = nn.functional.one_hot(train_y, n_classes).double()  # (N, C)
    eye = torch.eye(a.size(1), dtype=torch.float64)
    w = torch.linalg.solve(a.T @ a + ridge * eye, a.T @ targets)  # (H + 1, C)
    return (features(xt) @ w).argmax(1)  # (M,)


def paired_interval(correct_a: torch.Tensor, correct_b: torch.Tensor, rounds: int = 2000,
                    seed: int = 0, level: float = 0.95) -> tuple[float, float]:
    """A bootstrap interval of accuracy(a) - accuracy(b) on the same test items: resample the
    items with replacement `rounds` times and take the central `level` of the differences."""
    if correct_a.shape != correct_b.shape or correct_a.dim() != 1 or len(correct_a) == 0:
        raise ValueError(f"expected two 1-d results of the same items, got "
                         f"{tuple(correct_a.shape)} and {tuple(correct_b.shape)}")
    diff = correct_a.double() - correct_b.double()  # (N,)
    g = torch.Generator().manual_seed(seed)
    picks = torch.randint(len(diff), (rounds, len(diff)), generator=g)  # (rounds, N)
    means = diff[picks].mean(1)  # (rounds,)
    tail = (1 - level) / 2
    lo, hi = torch.quantile(means, torch.tensor([tail, 1 - tail], dtype=torch.float64))
    return float(lo), float(hi)


class LSTMStateCell(nn.Module):
    """An `nn.LSTMCell` whose state is one vector [h; c] of size 2H.

    An LSTM carries two states, the output h and the cell c; tools written for a cell with
    one state, such as `lib.experiments.gradient_flow.gradient_norms`, then measure ∂[h_T;
    c_T]/∂[h_t; c_t]
    for it, the LSTM's counterpart of a GRU's ∂h_T/∂h_t.
    """

    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.lstm = nn.LSTMCell(input_size, hidden_size)
        self.input_size, self.hidden_size = input_size, 2 * hidden_size

    def forward(self, x: torch.Tensor, state: torch.Tensor) -> torch.Tensor:
        """x (B, I), state (B, 2H) = [h; c] -> the next [h; c], (B, 2H)."""
        if state.dim() != 2 or state.size(1) != self.hidden_size:
            raise ValueError(f"state should have shape (B, 2H) = (B, {self.hidden_size}), got "
                             f"{tuple(state.shape)}")
        h, c = state.chunk(2, dim=1)  # each (B, H)
        h, c = self.lstm(x, (h.contiguous(), c.contiguous()))
        return torch.cat([h, c], dim=1)  # (B, 2H)


def lstm_state_factors(cell: LSTMStateCell, x: torch.Tensor) -> tuple[float, float]:
    """(||∂h_T/∂h_0||, ||∂c_T/∂c_0||), spectral norms, for an LSTM run over x (T, I) from zero.

    The joint factor ||∂[h;c]_T/∂[h;c]_0|| mixes a bounded output h with an unbounded cell c;
    the h block compares like for like with a GRU's ||∂h_T/∂h_0||, the c block is the memory path.
    """
    if not isinstance(cell, LSTMStateCell):
        raise TypeError(f"expected an LSTMStateCell, got {type(cell).__name__}")
    if x.dim() != 2 or x.size(1) != cell.lstm.input_size:
        raise ValueError(f"x should have shape (T, I) = (T, {cell.lstm.input_size}), got "
                         f"{tuple(x.shape)}")
    H = cell.lstm.hidden_size

    def unroll(state: torch.Tensor) -> torch.Tensor:  # [h_0; c_0] (2H,) -> [h_T; c_T] (2H,)
        s = state[None]  # (1, 2H)
        for x_t in x:  # x_t (I,)
            s = cell(x_t[None], s)
        return s[0]

    jac = torch.autograd.functional.jacobian(unroll, torch.zeros(2 * H, dtype=x.dtype))  # (2H, 2H)
    return (float(torch.linalg.matrix_norm(jac[:H, :H], ord=2)),
            float(torch.linalg.matrix_norm(jac[H:, H:], ord=2)))
