"""Timing training work fairly: the best wall time of a forward and backward pass, in turns.

"The prediction head" times the head's loss over all words against a shortlist, and "Teacher
forcing" times one decoder call against one call per token. Both ask the same question (how long
does this loss take to compute and differentiate?) and both run on machines whose load changes
from moment to moment, so `best_times` measures the candidates in turns and keeps each one's
best time: a busy moment then slows every candidate alike, and the best of a few rounds is the
least disturbed.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import torch


def _sync() -> None:
    """Wait for the GPU: its kernels run asynchronously, so a clock read would come too early."""
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def best_times(fns: dict[str, Callable[[], torch.Tensor]], rounds: int = 3,
               model: torch.nn.Module | None = None) -> dict[str, float]:
    """Best wall time in seconds of `fn().backward()` for each named fn, measured in turns.

    Each fn takes no argument and returns a scalar loss that requires grad. With `model`, its
    gradients are cleared before every pass and at the end (timing leaves no trace), and on a
    GPU the model runs in training mode while it is timed, because cuDNN's GRU computes
    gradients only in training mode; its own mode is restored afterwards. Only the time is kept.
    """
    if not isinstance(fns, dict) or not fns:
        raise ValueError("fns must be a non-empty dict {name: function returning a loss}")
    for name, fn in fns.items():
        if not callable(fn):
            raise TypeError(f"fns[{name!r}] must be a function, got {type(fn).__name__}")
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise ValueError(f"rounds must be an integer >= 1, got {rounds!r}")
    was_training = model.training if model is not None else None
    if model is not None and torch.cuda.is_available():
        model.train()
    best = {name: math.inf for name in fns}
    try:
        for _ in range(rounds):
            for name, fn in fns.items():  # in turns: a busy moment hits every candidate
                if model is not None:
                    model.zero_grad(set_to_none=True)
                _sync()
                start = time.perf_counter()
                loss = fn()
                if not (torch.is_tensor(loss) and loss.numel() == 1 and loss.requires_grad):
                    raise ValueError(f"fns[{name!r}] must return a scalar loss that requires "
                                     f"grad, got {_describe(loss)}")
                loss.backward()
                _sync()
                best[name] = min(best[name], time.perf_counter() - start)
    finally:
        if model is not None:
            model.zero_grad(set_to_none=True)
            model.train(was_training)
    return best


def _describe(value) -> str:
    if not torch.is_tensor(value):
        return type(value).__name__
    if value.numel() != 1:
        return f"a tensor of shape {tuple(value.shape)}"
    return "a tensor without grad (computed under torch.no_grad, or from detached inputs?)"
