"""Pick the device the course runs on: CUDA, then Apple's MPS, then the CPU.

`SEQ2SEQ_DEVICE=cpu` (or an explicit argument) overrides the choice, e.g. to compare timings.
`one_thread` runs small CPU work on one thread, where more threads mostly wait for each other.
"""

from __future__ import annotations

import contextlib
import os

import torch

DEVICE_ENV = "SEQ2SEQ_DEVICE"


def _mps_available() -> bool:
    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def pick_device(name: str | torch.device | None = None) -> torch.device:
    """Return a usable torch.device; a clear error if the requested one is not available."""
    if name is None:
        name = os.environ.get(DEVICE_ENV) or None
    if name is None or str(name) == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if _mps_available():
            return torch.device("mps")
        return torch.device("cpu")
    try:
        device = torch.device(name)
    except (RuntimeError, TypeError) as e:
        raise ValueError(f"unknown device {name!r}: use 'cpu', 'cuda', 'cuda:N', 'mps' or "
                         f"'auto'") from e
    if device.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError(f"device {name!r} was requested but CUDA is not available here "
                           f"(torch {torch.__version__}); use 'cpu' or 'auto'")
    if device.type == "cuda" and device.index is not None \
            and device.index >= torch.cuda.device_count():
        raise RuntimeError(f"device {name!r} was requested but only "
                           f"{torch.cuda.device_count()} CUDA device(s) exist")
    if device.type == "mps" and not _mps_available():
        raise RuntimeError(f"device {name!r} was requested but Apple MPS is not available here")
    if device.type not in ("cpu", "cuda", "mps"):
        raise ValueError(f"unsupported device {name!r}: use 'cpu', 'cuda' or 'mps'")
    return device


@contextlib.contextmanager
def one_thread(active: bool = True):
    """Run torch's CPU work inside the block on one intra-op thread (when `active`), then
    restore the thread count: small tensors gain nothing from more threads, and on a busy
    machine extra threads mostly wait for each other."""
    threads = torch.get_num_threads()
    if active:
        torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
