"""lib.checks.snapshot.Globals: what a learner's function leaves changed for the whole notebook is
recognised by the objects it was bound to before the call, put back, and named as the learner
changed it."""

from __future__ import annotations

import sys

import pytest
import torch

from lib.checks.harness import Mismatch, call


def mismatch(fn, *args) -> str:
    with pytest.raises(Mismatch) as info:
        call(fn, *args)
    return str(info.value)


def test_a_name_rebound_to_another_library_function_is_put_back():
    equal, softmax = torch.equal, torch.Tensor.softmax

    def cheat(x):
        torch.equal = torch.nn.functional.pad  # a function from torch's own files
        torch.Tensor.softmax = torch.nn.functional.softmax
        return x

    message = mismatch(cheat, 1)
    assert "`torch.equal`" in message and "`torch.Tensor.softmax`" in message
    assert torch.equal is equal and torch.Tensor.softmax is softmax


def test_a_librarys_own_wrapper_of_its_function_is_not_a_change():
    seed = torch.manual_seed

    def wraps(x):  # as torch._dynamo wraps torch.manual_seed on first import
        def wrapper(*a, **k):
            return seed(*a, **k)

        wrapper.__wrapped__ = seed
        torch.manual_seed = wrapper
        return x

    try:
        assert call(wraps, 1) == 1
    finally:
        torch.manual_seed = seed


def test_the_default_dtype_is_put_back_and_named():
    message = mismatch(lambda x: torch.set_default_dtype(torch.float64), 1)
    assert torch.get_default_dtype() is torch.float32
    assert "changed the default dtype from torch.float32 to torch.float64" in message
    assert "Storage" not in message  # set_default_dtype rebinds torch.Storage, not the learner


def test_the_recursion_limit_is_put_back_and_named():
    limit = sys.getrecursionlimit()
    message = mismatch(lambda x: sys.setrecursionlimit(limit + 500), 1)
    assert sys.getrecursionlimit() == limit
    assert f"changed the recursion limit from {limit} to {limit + 500}" in message


@pytest.mark.skipif(not hasattr(torch, "get_default_device"), reason="torch < 2.3")
def test_the_default_device_is_put_back_and_named():
    message = mismatch(lambda x: torch.set_default_device("meta"), 1)
    assert torch.get_default_device() == torch.device("cpu")
    assert torch.zeros(1).device == torch.device("cpu")
    assert "changed the default device from cpu to meta" in message
