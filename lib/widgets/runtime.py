"""How a widget runs the model: evaluation mode, no gradients, and one CPU thread.

A widget's tensors are small (one sentence, a few hundred context vectors): one thread computes
them about as fast as several, while on a busy machine extra threads mostly wait for each
other. bench/widgets.py times the live widgets' redraws (`--threads` sets the thread count).
"""

from __future__ import annotations

import contextlib

import torch
from torch import nn

from lib.device import one_thread


def on_cpu(model) -> bool:
    """Whether `model`'s parameters live on the CPU (True for a model without parameters)."""
    params = model.parameters() if isinstance(model, nn.Module) else iter(())
    return next(params, torch.empty(0)).device.type == "cpu"


@contextlib.contextmanager
def evaluating(model):
    """Dropout off and no gradients while we look inside, then the model's own mode back
    (and, on the CPU, one thread)."""
    module = isinstance(model, nn.Module)
    was_training = module and model.training
    if module:
        model.eval()
    try:
        with torch.no_grad(), one_thread(on_cpu(model)):
            yield
    finally:
        if module:
            model.train(was_training)
