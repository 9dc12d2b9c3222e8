"""lib.device: automatic choice (CUDA, then MPS, then CPU), the override, and clear errors."""

from __future__ import annotations

import pytest
import torch

from lib import device as dev
from lib.device import DEVICE_ENV, pick_device

HAS_CUDA = torch.cuda.is_available()
HAS_MPS = dev._mps_available()


@pytest.fixture(autouse=True)
def no_override(monkeypatch):
    monkeypatch.delenv(DEVICE_ENV, raising=False)


def _expected_auto() -> str:
    return "cuda" if HAS_CUDA else "mps" if HAS_MPS else "cpu"


def test_automatic_choice():
    assert pick_device() == torch.device(_expected_auto())
    assert pick_device("auto") == pick_device(None) == pick_device()
    if not (HAS_CUDA or HAS_MPS):
        assert pick_device() == torch.device("cpu")  # this CPU-only machine


def test_automatic_choice_order(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(dev, "_mps_available", lambda: False)
    assert pick_device() == torch.device("cpu")
    monkeypatch.setattr(dev, "_mps_available", lambda: True)
    assert pick_device() == torch.device("mps")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert pick_device() == torch.device("cuda")


def test_explicit_cpu():
    assert pick_device("cpu") == torch.device("cpu")
    assert pick_device(torch.device("cpu")) == torch.device("cpu")


@pytest.mark.skipif(HAS_CUDA, reason="CUDA is available here")
@pytest.mark.parametrize("name", ["cuda", "cuda:0", torch.device("cuda")])
def test_unavailable_cuda_is_a_clear_runtime_error(name):
    with pytest.raises(RuntimeError, match=r"CUDA is not available here .*use 'cpu' or 'auto'"):
        pick_device(name)


@pytest.mark.skipif(not HAS_CUDA, reason="needs CUDA")
def test_missing_cuda_index_is_a_clear_runtime_error():
    n = torch.cuda.device_count()
    assert pick_device("cuda:0") == torch.device("cuda:0")
    with pytest.raises(RuntimeError, match=rf"only {n} CUDA device\(s\) exist"):
        pick_device(f"cuda:{n}")


@pytest.mark.skipif(HAS_MPS, reason="MPS is available here")
def test_unavailable_mps_is_a_clear_runtime_error():
    with pytest.raises(RuntimeError, match="'mps' was requested but Apple MPS is not available"):
        pick_device("mps")


@pytest.mark.parametrize("name", ["banana", "gpu", "cuda:x", ""])
def test_unknown_device_is_a_value_error(name):
    with pytest.raises(ValueError, match=rf"unknown device {name!r}: use 'cpu', 'cuda'"):
        pick_device(name)


@pytest.mark.parametrize("name", ["meta", "xpu"])
def test_devices_the_course_does_not_support(name):
    with pytest.raises(ValueError, match=f"unsupported device '{name}': use 'cpu', 'cuda' or"):
        pick_device(name)


def test_environment_override(monkeypatch):
    monkeypatch.setenv(DEVICE_ENV, "cpu")
    assert pick_device() == torch.device("cpu")
    assert pick_device("cpu") == torch.device("cpu")
    monkeypatch.setenv(DEVICE_ENV, "")  # empty: automatic
    assert pick_device() == torch.device(_expected_auto())
    monkeypatch.setenv(DEVICE_ENV, "auto")
    assert pick_device() == torch.device(_expected_auto())
    monkeypatch.setenv(DEVICE_ENV, "banana")
    with pytest.raises(ValueError, match="unknown device 'banana'"):
        pick_device()
    assert pick_device("cpu") == torch.device("cpu")  # an explicit argument wins


@pytest.mark.skipif(HAS_CUDA, reason="CUDA is available here")
def test_environment_override_to_an_unavailable_device(monkeypatch):
    monkeypatch.setenv(DEVICE_ENV, "cuda")
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        pick_device()
