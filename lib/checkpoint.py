"""Save and load a model with its vocabularies and config, without ever unpickling code.

A checkpoint is a plain dict of tensors, strings and numbers written by `torch.save` and read
with `torch.load(weights_only=True)`, so opening a file from the internet cannot run code.
"""

from __future__ import annotations

import os
from pathlib import Path

import torch

from lib.data import Vocab
from lib.model import ModelConfig, Seq2Seq

FORMAT = "seq2seq-course/1"


class CheckpointError(ValueError):
    """A checkpoint is corrupt, of another format, or does not fit the requested model."""


def save(model: Seq2Seq, path: str | os.PathLike, extra: dict | None = None) -> Path:
    """Write model weights, config, vocabularies and `extra` (e.g. training info) atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    blob = {"format": FORMAT, "config": model.config.to_dict(),
            "src_itos": model.src_vocab.itos, "tgt_itos": model.tgt_vocab.itos,
            "state_dict": state, "extra": extra or {}}
    tmp = path.with_name(path.name + ".part")
    torch.save(blob, tmp)
    os.replace(tmp, path)
    return path


def read(path: str | os.PathLike) -> dict:
    """Read a checkpoint dict safely; clear errors for missing, corrupt or foreign files."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint {path} does not exist")
    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many types for truncated or foreign files
        raise CheckpointError(f"checkpoint {path} is corrupt or not a torch file: {e}") from e
    if not isinstance(blob, dict) or blob.get("format") != FORMAT:
        found = blob.get("format") if isinstance(blob, dict) else type(blob).__name__
        raise CheckpointError(f"{path} is not a seq2seq-course checkpoint (format {found!r}, "
                              f"expected {FORMAT!r})")
    return blob


def load(path: str | os.PathLike, config: ModelConfig | None = None, device=None) -> Seq2Seq:
    """Rebuild the model stored at `path`.

    If `config` is given, the stored config must equal it; otherwise the error lists every
    field that differs, e.g. "hidden_size: checkpoint 512, requested 256".
    """
    from lib.device import pick_device

    blob = read(path)
    stored = ModelConfig(**blob["config"])
    if config is not None and config != stored:
        diffs = [f"{k}: checkpoint {v!r}, requested {config.to_dict()[k]!r}"
                 for k, v in stored.to_dict().items() if config.to_dict()[k] != v]
        raise CheckpointError(f"checkpoint {path} does not match the requested config: "
                              + "; ".join(diffs))
    model = Seq2Seq(stored, Vocab(blob["src_itos"]), Vocab(blob["tgt_itos"]))
    try:
        model.load_state_dict(blob["state_dict"])
    except RuntimeError as e:
        raise CheckpointError(f"checkpoint {path} weights do not fit its config: {e}") from e
    model.extra = blob.get("extra", {})
    return model.to(pick_device(device)).eval()
