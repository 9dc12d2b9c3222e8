"""Every layer's states of a stacked GRU over time.

`nn.GRU` returns the last layer's states at every step and every layer's state at the last step
only; the hidden-state explorer shows every layer at every step. Layer l > 1 reads the states of
layer l - 1 (eq. 1 of the encoder chapter), so we run the layers one at a time, each as a
one-layer `nn.GRU` that holds the stacked module's own parameters (shared, not copied): the same
kernel computes the same numbers.
"""

from __future__ import annotations

import warnings

import torch
from torch import nn


def one_layer(rnn: nn.GRU, layer: int) -> nn.GRU:
    """Layer `layer` (0-based) of `rnn` as a one-layer GRU sharing its parameters (the
    Playground exports the encoder's layers with it too: lib.course.playground)."""
    input_size = rnn.input_size if layer == 0 else rnn.hidden_size
    one = nn.GRU(input_size, rnn.hidden_size, 1, bias=rnn.bias, batch_first=rnn.batch_first,
                 device="meta")  # no weights allocated: they are replaced below
    for name, _ in list(one.named_parameters()):  # weight_ih_l0, weight_hh_l0, bias_ih_l0, ...
        setattr(one, name, getattr(rnn, name.replace("_l0", f"_l{layer}")))
    return one


def gru_layer_states(rnn: nn.GRU, inputs: torch.Tensor, h0: torch.Tensor | None = None
                     ) -> list[torch.Tensor]:
    """Run a stacked GRU one layer at a time -> every layer's outputs [(B, S, H)] * L.

    inputs (B, S, I) (batch_first), h0 (L, B, H) or None for zeros.
    """
    outs, x = [], inputs
    for layer in range(rnn.num_layers):
        hx = None if h0 is None else h0[layer:layer + 1]  # (1, B, H)
        with warnings.catch_warnings():  # cuDNN warns that the weights are not one flat chunk
            warnings.simplefilter("ignore", UserWarning)
            x, _ = one_layer(rnn, layer)(x, hx)  # (B, S, H)
        outs.append(x)
    return outs
