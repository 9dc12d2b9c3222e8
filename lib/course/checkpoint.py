"""Save and load a model with its vocabularies and config, without ever unpickling code.

A checkpoint is a plain dict of tensors, strings and numbers written by `torch.save` and read
with `torch.load(weights_only=True)`, so opening a file from the internet cannot run code.
`torch.save` writes a zip archive with a CRC-32 per member, but `torch.load` never checks them:
a damaged file can load silently and translate nonsense. `read` checks every CRC first.

A save never half-writes its destination (a temporary file is renamed over it), and when the
destination cannot take the file (a full disk, a read-only folder) the weights are written to
the system's temporary folder instead, and the error says where: a failed final save does not
throw away a training run. `check_writable` tells before training that a save will fail (no
folder, no permission, no room for `expected_bytes`).

A file that cannot be read (its permissions) raises OSError, not CheckpointError: nothing says
it is damaged, so a caller that deletes damaged files must not delete it.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import secrets
import shutil
import tempfile
import typing
import zipfile
import zlib
from pathlib import Path

import torch

from lib.data import Vocab
from lib.device import pick_device
from lib.model import ModelConfig, Seq2Seq
from lib.validate import is_int, is_number

FORMAT = "seq2seq-course/1"


class CheckpointError(ValueError):
    """A checkpoint is corrupt, of another format, or does not fit the requested model."""


def save(model: Seq2Seq, path: str | os.PathLike, extra: dict | None = None,
         dtype: torch.dtype | None = None) -> Path:
    """Write model weights, config, vocabularies and `extra` (e.g. training info) atomically.

    `dtype` (e.g. torch.float16) stores the floating-point weights in that precision, to halve a
    download; `load` casts them back to the model's float32 parameters. If `path` cannot be
    written, the checkpoint goes to `rescue_path(path)` and CheckpointError names both.
    """
    path = Path(path)
    if dtype is not None and not (isinstance(dtype, torch.dtype) and dtype.is_floating_point):
        raise ValueError(f"dtype must be a floating-point torch dtype or None, got {dtype!r}")
    state = {k: v.detach().cpu().to(dtype if dtype and v.is_floating_point() else v.dtype)
             .contiguous() for k, v in model.state_dict().items()}
    blob = {"format": FORMAT, "config": model.config.to_dict(),
            "src_itos": model.src_vocab.itos, "tgt_itos": model.tgt_vocab.itos,
            "state_dict": state, "extra": extra or {}}
    try:
        _write_atomically(blob, path)
    except (OSError, RuntimeError) as e:  # torch reports a full disk as a RuntimeError
        raise _rescue(blob, path, e) from e
    return path


def _write(blob: dict, path: Path) -> None:
    # Through a file object: torch.save records a path's name inside the archive, which
    # would make identical models give different bytes under random temporary names.
    with open(path, "wb") as f:
        torch.save(blob, f)


def _write_atomically(blob: dict, path: Path) -> None:
    """Write to a temporary file beside `path`, check that a safe load reads it, rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.part-{secrets.token_hex(4)}")
    try:
        _write(blob, tmp)
        try:
            torch.load(tmp, map_location="cpu", weights_only=True)
        except Exception as e:
            raise CheckpointError(f"cannot save {path}: `extra` holds values a safe load "
                                  f"refuses ({e}); use str/int/float/bool/list/dict/tensors"
                                  ) from e
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def rescue_path(path: str | os.PathLike) -> Path:
    """Where `save` puts a checkpoint that `path` could not take: the system's temp folder."""
    return Path(tempfile.gettempdir()) / "seq2seq-rescued" / Path(path).name


def _rescue(blob: dict, path: Path, error: Exception) -> CheckpointError:
    """Save `blob` at rescue_path(path) and return the error to raise, which says where."""
    reason = _why_not_written(error, path, blob)
    spare = rescue_path(path)
    if spare.parent.resolve() == path.parent.resolve():
        return CheckpointError(f"cannot save the checkpoint to {path}: {reason}")
    try:
        _write_atomically(blob, spare)
    except (OSError, RuntimeError) as e:
        return CheckpointError(f"cannot save the checkpoint to {path}: {reason}; keeping it in "
                               f"{spare} failed too ({e}), so the weights are lost")
    return CheckpointError(f"cannot save the checkpoint to {path}: {reason}. The weights are "
                           f"kept in {spare}: move that file to {path} once its folder can take "
                           f"it, or load it from there with lib.course.checkpoint.load")


def _why_not_written(error: Exception, path: Path, blob: dict) -> str:
    """A reason a person can act on; a full disk is named as such, with the sizes."""
    need = sum(t.numel() * t.element_size() for t in blob["state_dict"].values())
    folder = next((p for p in (path, *path.parents) if p.exists()), path.parent)
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        free = None
    full = isinstance(error, OSError) and error.errno == errno.ENOSPC
    if full or (free is not None and free < need):
        space = f"; {free / 1e6:.1f} MB free there" if free is not None else ""
        return (f"no space left on the device{space}, the checkpoint needs about "
                f"{need / 1e6:.1f} MB")
    if isinstance(error, OSError) and error.strerror:
        return f"{error.strerror} ({error.filename or path.parent})"
    return f"{type(error).__name__}: {error}"


def expected_bytes(model: Seq2Seq) -> int:
    """About how many bytes `save` writes for `model` (it may live on the meta device): its
    weights, and a margin for the vocabularies, the training history and the archive."""
    weights = sum(t.numel() * t.element_size() for t in model.state_dict().values())
    return weights + weights // 50 + 4 * 2**20


def check_writable(path: str | os.PathLike, size: int | None = None) -> Path:
    """Raise CheckpointError unless a checkpoint of about `size` bytes (see `expected_bytes`)
    can be written at `path` (its folder is created).

    Call it before a long training run, so that a read-only or missing folder, a folder where
    the file should be, or a disk without room for it fails in a second instead of after the
    run (a disk filled meanwhile is still caught by `save`'s rescue).
    """
    path = Path(path)
    if path.exists() and not path.is_file():
        raise CheckpointError(f"cannot write a checkpoint at {path}: a folder (or another "
                              f"non-file) is there; remove it")
    probe = path.with_name(f"{path.name}.probe-{secrets.token_hex(4)}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with open(probe, "wb") as f:
                f.write(b"\0" * 4096)
        finally:
            probe.unlink(missing_ok=True)
    except OSError as e:
        raise CheckpointError(f"cannot write a checkpoint at {path}: {e.strerror or e} "
                              f"({e.filename or path.parent})") from e
    if size is not None:
        free = shutil.disk_usage(path.parent).free
        if free < size:
            raise CheckpointError(f"cannot write a checkpoint at {path}: only {free / 1e6:.1f} MB "
                                  f"are free in {path.parent} and it needs about "
                                  f"{size / 1e6:.1f} MB; free some space first")
    return path


def read(path: str | os.PathLike) -> dict:
    """Read a checkpoint dict safely; clear errors for missing, corrupt or foreign files
    (CheckpointError), and OSError for a file that cannot be read at all."""
    path = Path(path)
    if not path.exists():
        raise CheckpointError(f"checkpoint {path} does not exist")
    if not path.is_file():
        raise CheckpointError(f"checkpoint {path} is a folder (or another non-file), not a file")
    try:
        with open(path, "rb") as f:
            f.read(1)
    except OSError as e:  # unreadable is not damaged: the caller must not delete it
        raise type(e)(e.errno, f"cannot read checkpoint {path} ({e.strerror or e}); it may well "
                      f"be whole: make it readable", str(path)) from e
    check_archive(path)
    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many types for truncated or foreign files
        raise CheckpointError(f"checkpoint {path} is corrupt or not a torch file: {e}") from e
    if not isinstance(blob, dict) or blob.get("format") != FORMAT:
        found = blob.get("format") if isinstance(blob, dict) else type(blob).__name__
        raise CheckpointError(f"{path} is not a seq2seq-course checkpoint (format {found!r}, "
                              f"expected {FORMAT!r})")
    problem = config_problem(blob.get("config"))
    if problem:
        raise CheckpointError(f"checkpoint {path} has an invalid config: {problem}")
    problem = contents_problem(blob)
    if problem:
        raise CheckpointError(f"checkpoint {path} holds what no model can have: {problem}")
    return blob


_FIELD_CHECKS = {int: (is_int, "an integer"), float: (is_number, "a number"),
                 bool: (lambda v: isinstance(v, bool), "True or False")}


def config_problem(config) -> str | None:
    """What is wrong with a stored config dict (None if nothing): every ModelConfig field
    present, no other, each of its declared type (a bool is not an int, "0.1" not a float),
    sizes and lengths at least 1 and dropout between 0 and 1."""
    if not isinstance(config, dict):
        return f"expected a dict of ModelConfig fields, got {type(config).__name__}"
    types = typing.get_type_hints(ModelConfig)
    fields = {f.name: f for f in dataclasses.fields(ModelConfig)}
    unknown = sorted(set(config) - set(fields), key=str)
    if unknown:
        return f"unknown field(s) {', '.join(map(repr, unknown))}"
    for name, f in fields.items():
        if name not in config:
            if f.default is dataclasses.MISSING:
                return f"the field {name!r} is missing"
            continue
        ok, kind = _FIELD_CHECKS[types[name]]
        if not ok(config[name]):
            return f"{name} must be {kind}, got {config[name]!r} ({type(config[name]).__name__})"
    value = config.get("dropout", 0.0)
    if not 0 <= value <= 1:  # also false for NaN
        return f"dropout must be between 0 and 1, got {value!r}"
    for name in _SIZES:
        if name in config and config[name] < 1:
            return f"{name} must be at least 1, got {config[name]!r}"
    return None


# Counts and lengths: a model with none of them cannot be built, and a sentence limit of 0 or
# less would refuse every sentence (max_src_len) or decode nothing (max_tgt_len).
_SIZES = ("src_vocab_size", "tgt_vocab_size", "emb_dim", "hidden_size", "num_layers",
          "max_src_len", "max_tgt_len")


def contents_problem(blob: dict) -> str | None:
    """What is wrong with a checkpoint's vocabularies, weights or `extra` (None if nothing).

    A safe load only says the file holds plain data; this says it is data a model can have:
    lists of string tokens, a dict of named floating-point tensors with finite values (an
    integer tensor would be cast silently, a NaN translates nonsense) and a dict of extras.
    Missing entries are left to `load`, which names them.
    """
    for name in ("src_itos", "tgt_itos"):
        tokens = blob.get(name, [])
        if not isinstance(tokens, list):
            return f"{name} must be a list of tokens, got {type(tokens).__name__}"
        odd = next((i for i, t in enumerate(tokens) if not isinstance(t, str)), None)
        if odd is not None:
            return (f"{name} must list strings: its entry {odd} is {tokens[odd]!r} "
                    f"({type(tokens[odd]).__name__})")
    state = blob.get("state_dict", {})
    if not isinstance(state, dict):
        return f"state_dict must be a dict of named tensors, got {type(state).__name__}"
    for key, value in state.items():
        if not isinstance(value, torch.Tensor):
            return f"the weight {key!r} is a {type(value).__name__}, not a tensor"
        if not value.is_floating_point():
            return f"the weight {key!r} is {value.dtype}, not floating point"
        bad = int((~torch.isfinite(value)).sum())
        if bad:
            return f"the weight {key!r} holds {bad} NaN or infinite value{'s' * (bad > 1)}"
    if not isinstance(blob.get("extra", {}), dict):
        return f"extra must be a dict, got {type(blob['extra']).__name__}"
    return None


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
