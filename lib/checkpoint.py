"""Save and load a model with its vocabularies and config, without ever unpickling code.

A checkpoint is a plain dict of tensors, strings and numbers written by `torch.save` and read
with `torch.load(weights_only=True)`, so opening a file from the internet cannot run code.
`torch.save` writes a zip archive with a CRC-32 per member, but `torch.load` never checks them:
a damaged file can load silently and translate nonsense. `read` checks every CRC first.
"""

from __future__ import annotations

import os
import secrets
import zipfile
import zlib
from pathlib import Path

import torch

from lib.data import Vocab
from lib.model import ModelConfig, Seq2Seq

FORMAT = "seq2seq-course/1"


class CheckpointError(ValueError):
    """A checkpoint is corrupt, of another format, or does not fit the requested model."""


def save(model: Seq2Seq, path: str | os.PathLike, extra: dict | None = None,
         dtype: torch.dtype | None = None) -> Path:
    """Write model weights, config, vocabularies and `extra` (e.g. training info) atomically.

    `dtype` (e.g. torch.float16) stores the floating-point weights in that precision, to halve a
    download; `load` casts them back to the model's float32 parameters.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if dtype is not None and not (isinstance(dtype, torch.dtype) and dtype.is_floating_point):
        raise ValueError(f"dtype must be a floating-point torch dtype or None, got {dtype!r}")
    state = {k: v.detach().cpu().to(dtype if dtype and v.is_floating_point() else v.dtype)
             .contiguous() for k, v in model.state_dict().items()}
    blob = {"format": FORMAT, "config": model.config.to_dict(),
            "src_itos": model.src_vocab.itos, "tgt_itos": model.tgt_vocab.itos,
            "state_dict": state, "extra": extra or {}}
    tmp = path.with_name(f"{path.name}.part-{secrets.token_hex(4)}")
    try:
        # Through a file object: torch.save records a path's name inside the archive, which
        # would make identical models give different bytes under random temporary names.
        with open(tmp, "wb") as f:
            torch.save(blob, f)
        try:
            torch.load(tmp, map_location="cpu", weights_only=True)
        except Exception as e:
            raise CheckpointError(f"cannot save {path}: `extra` holds values a safe load "
                                  f"refuses ({e}); use str/int/float/bool/list/dict/tensors"
                                  ) from e
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def read(path: str | os.PathLike) -> dict:
    """Read a checkpoint dict safely; clear errors for missing, corrupt or foreign files."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint {path} does not exist")
    check_archive(path)
    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many types for truncated or foreign files
        raise CheckpointError(f"checkpoint {path} is corrupt or not a torch file: {e}") from e
    if not isinstance(blob, dict) or blob.get("format") != FORMAT:
        found = blob.get("format") if isinstance(blob, dict) else type(blob).__name__
        raise CheckpointError(f"{path} is not a seq2seq-course checkpoint (format {found!r}, "
                              f"expected {FORMAT!r})")
    return blob


def check_archive(path: str | os.PathLike) -> None:
    """Raise CheckpointError unless `path` is a zip archive whose every member matches its CRC."""
    try:
        with zipfile.ZipFile(path) as archive:
            bad = archive.testzip()
    # zipfile raises many types for a damaged directory: RuntimeError for a garbled flag
    # ("encrypted"), NotImplementedError for a garbled compression method, UnicodeDecodeError
    # for a garbled name, ...
    except (zipfile.BadZipFile, EOFError, zlib.error, OSError, NotImplementedError,
            RuntimeError, UnicodeDecodeError, ValueError) as e:
        raise CheckpointError(f"checkpoint {path} is corrupt or not a torch file ({e}); "
                              f"delete it and download or train it again") from e
    if bad is not None:
        raise CheckpointError(f"checkpoint {path} is corrupt: its member {bad} fails its CRC "
                              f"check; delete it and download or train it again")


def load(path: str | os.PathLike, config: ModelConfig | None = None, device=None) -> Seq2Seq:
    """Rebuild the model stored at `path`.

    If `config` is given, the stored config must equal it; otherwise the error lists every
    field that differs, e.g. "hidden_size: checkpoint 512, requested 256".
    """
    from lib.device import pick_device

    blob = read(path)
    try:
        stored = ModelConfig(**blob["config"])
        vocabs = Vocab(blob["src_itos"]), Vocab(blob["tgt_itos"])
        state_dict = blob["state_dict"]
    except (KeyError, TypeError, ValueError) as e:
        raise CheckpointError(f"checkpoint {path} is incomplete or inconsistent: {e!r}") from e
    if config is not None and config != stored:
        diffs = [f"{k}: checkpoint {v!r}, requested {config.to_dict()[k]!r}"
                 for k, v in stored.to_dict().items() if config.to_dict()[k] != v]
        raise CheckpointError(f"checkpoint {path} does not match the requested config: "
                              + "; ".join(diffs))
    try:
        model = Seq2Seq(stored, *vocabs)
        model.load_state_dict(state_dict)
    except (RuntimeError, ValueError) as e:
        raise CheckpointError(f"checkpoint {path} weights do not fit its config: {e}") from e
    model.extra = blob.get("extra", {})
    return model.to(pick_device(device)).eval()
