"""lib.course.checkpoint: round trips, never unpickling code, and clear errors for wrong,
mismatched,
corrupt and foreign files."""

from __future__ import annotations

import errno
import functools
import re
import shutil
import tempfile
from collections import namedtuple
from pathlib import Path

import numpy as np
import pytest
import torch

from lib import data
from lib.course import checkpoint
from lib.course.checkpoint import FORMAT, CheckpointError
from lib.data import Vocab
from lib.experiments import toy
from lib.model import ModelConfig, Seq2Seq

PAIRS = [("I am here.", "Je suis là."), ("You are here.", "Tu es là."),
         ("Go away!", "Va-t'en !"), ("Who is it?", "Qui est-ce ?")]
SRC = Vocab.build([data.tokenize(en) for en, _ in PAIRS])
TGT = Vocab.build([data.tokenize(fr) for _, fr in PAIRS])


pytestmark = pytest.mark.usefixtures("one_thread")  # tiny models: see conftest


tiny_model = functools.partial(toy.tiny_model, src_vocab=SRC, tgt_vocab=TGT, dropout=0.1,
                               max_tgt_len=6)


@pytest.fixture
def saved(tmp_path):
    model = tiny_model()
    with torch.no_grad():  # make the weights distinctive, not just the seeded initialisation
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.5)
    path = checkpoint.save(model, tmp_path / "ckpt" / "model.pt",
                           extra={"minutes": 1.5, "history": {"loss": [3.0, 2.5], "step": [1, 2]},
                                  "note": "tiny"})
    return model, path


def _named(path):
    return re.escape(str(path))


# ---------------------------------------------------------------------------------------------
# Round trip
# ---------------------------------------------------------------------------------------------


def test_round_trip_gives_identical_weights_translations_and_metadata(saved):
    model, path = saved
    assert path.is_file() and not list(path.parent.glob("*.part"))  # written atomically
    loaded = checkpoint.load(path, device="cpu")
    assert isinstance(loaded, Seq2Seq) and not loaded.training
    assert loaded.config == model.config
    assert loaded.src_vocab == SRC and loaded.tgt_vocab == TGT
    a, b = model.state_dict(), loaded.state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    sentences = [en for en, _ in PAIRS] + ["Xyzzy!"]
    assert loaded.translate(sentences) == model.eval().translate(sentences)
    assert loaded.extra == {"minutes": 1.5, "history": {"loss": [3.0, 2.5], "step": [1, 2]},
                            "note": "tiny"}
    assert loaded.device == torch.device("cpu")


def test_load_with_the_same_config_is_accepted(saved):
    model, path = saved
    assert checkpoint.load(path, config=model.config, device="cpu").config == model.config


def test_read_returns_plain_data(saved):
    model, path = saved
    blob = checkpoint.read(path)
    assert blob["format"] == FORMAT == "seq2seq-course/1"
    assert blob["config"] == model.config.to_dict()
    assert blob["src_itos"] == SRC.itos and blob["tgt_itos"] == TGT.itos
    assert all(isinstance(v, torch.Tensor) for v in blob["state_dict"].values())


def test_save_overwrites_atomically(saved):
    model, path = saved
    other = tiny_model(seed=5)
    checkpoint.save(other, path)
    loaded = checkpoint.load(path, device="cpu")
    assert torch.equal(loaded.decoder.head.proj.weight, other.decoder.head.proj.weight)
    assert loaded.extra == {}
    assert sorted(p.name for p in path.parent.iterdir()) == ["model.pt"]


def _failing_save(obj, f, *args, **kwargs):
    half = b"PK\x03\x04 half a checkpoint"  # as if the disk filled up mid-write
    if hasattr(f, "write"):
        f.write(half)
    else:
        Path(f).write_bytes(half)
    raise OSError(28, "No space left on device")


@pytest.fixture
def temp_dir(tmp_path, monkeypatch):
    """The system temp folder, where a checkpoint that cannot be saved is kept."""
    folder = tmp_path / "system-tmp"
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def test_a_failed_save_keeps_the_previous_checkpoint(saved, temp_dir, monkeypatch):
    model, path = saved
    before = path.read_bytes()
    monkeypatch.setattr(torch, "save", _failing_save)  # everywhere: the rescue fails too
    with pytest.raises(CheckpointError, match="No space left|no space left") as err:
        checkpoint.save(tiny_model(seed=9), path)
    assert "the weights are lost" in str(err.value)
    assert path.read_bytes() == before  # the destination is never half-written


def test_a_failed_save_leaves_no_temporary_file(saved, temp_dir, monkeypatch):
    model, path = saved
    monkeypatch.setattr(torch, "save", _failing_save)
    with pytest.raises(CheckpointError):
        checkpoint.save(tiny_model(seed=9), path)
    assert sorted(p.name for p in path.parent.iterdir()) == ["model.pt"]
    assert list(temp_dir.rglob("*.part-*")) == []


def _fails_in(folder: Path, error: Exception):
    """checkpoint._write that raises `error` for files in `folder` and writes elsewhere."""
    real = checkpoint._write

    def write(blob, path):
        if Path(path).parent == folder:
            Path(path).write_bytes(b"PK\x03\x04 half")  # as if the disk filled up mid-write
            raise error
        real(blob, path)

    return write


def test_a_full_disk_keeps_the_weights_in_the_temp_folder_and_says_where(saved, temp_dir,
                                                                           monkeypatch):
    """A failed final save must not throw away a training run: the weights go to the system
    temp folder, and the error names the reason and the file."""
    _, path = saved
    before = path.read_bytes()
    model = tiny_model(seed=9)
    full = OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(checkpoint, "_write", _fails_in(path.parent, full))
    with pytest.raises(CheckpointError) as err:
        checkpoint.save(model, path, extra={"minutes": 20.0})
    kept = checkpoint.rescue_path(path)
    assert kept.parent.parent == temp_dir and kept.is_file()
    message = str(err.value)
    assert "no space left on the device" in message and "MB free" in message
    assert str(kept) in message and str(path) in message
    assert path.read_bytes() == before  # the old checkpoint is untouched, no temporary files
    assert sorted(p.name for p in path.parent.iterdir()) == ["model.pt"]
    rescued = checkpoint.load(kept, device="cpu")
    assert _same_state(rescued, model) and rescued.extra == {"minutes": 20.0}


def _same_state(a, b) -> bool:
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def test_torchs_inline_container_error_on_a_full_disk_is_named(saved, temp_dir, monkeypatch):
    """torch.save reports a full disk as an unreadable RuntimeError: the free space tells."""
    _, path = saved
    torch_error = RuntimeError("[enforce fail at inline_container.cc:595] . unexpected pos "
                               "1216 vs 1110")
    monkeypatch.setattr(checkpoint, "_write", _fails_in(path.parent, torch_error))
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage(10**9, 10**9 - 1000, 1000))
    with pytest.raises(CheckpointError, match=r"no space left on the device; 0\.0 MB free "
                                              r"there, the checkpoint needs about"):
        checkpoint.save(tiny_model(seed=9), path)
    assert checkpoint.rescue_path(path).is_file()


def test_an_unwritable_destination_keeps_the_weights_in_the_temp_folder(tmp_path, temp_dir):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    path = blocker / "model.pt"
    model = tiny_model(seed=3)
    with pytest.raises(CheckpointError, match=re.escape(str(checkpoint.rescue_path(path)))):
        checkpoint.save(model, path)
    assert _same_state(checkpoint.load(checkpoint.rescue_path(path), device="cpu"), model)


def test_check_writable_fails_before_training_not_after(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(CheckpointError, match=_named(blocker / "sub" / "model.pt")):
        checkpoint.check_writable(blocker / "sub" / "model.pt")
    ok = tmp_path / "new" / "folder" / "model.pt"
    assert checkpoint.check_writable(ok) == ok
    assert ok.parent.is_dir() and list(ok.parent.iterdir()) == []  # the probe is gone


# ---------------------------------------------------------------------------------------------
# Never unpickle code
# ---------------------------------------------------------------------------------------------

MARKER = {"path": None}


def _run_code(path):  # what an evil pickle would call while loading
    Path(path).write_text("code ran")
    return "pwned"


class Evil:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (_run_code, (self.marker,))


class Innocent:
    def __init__(self):
        self.value = 3


def test_read_uses_weights_only(saved, monkeypatch):
    _, path = saved
    calls = []
    real = torch.load

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(torch, "load", spy)
    checkpoint.read(path)
    assert calls and all(c.get("weights_only") is True for c in calls)


@pytest.mark.parametrize("payload", ["evil", "innocent"])
def test_a_pickled_object_is_refused_and_never_runs(saved, tmp_path, payload):
    model, path = saved
    marker = tmp_path / "marker.txt"
    blob = checkpoint.read(path)
    blob["extra"] = {"x": Evil(str(marker)) if payload == "evil" else Innocent()}
    bad = tmp_path / "pickled.pt"
    torch.save(blob, bad)
    assert not marker.exists()
    with pytest.raises(CheckpointError, match=_named(bad)):
        checkpoint.read(bad)
    with pytest.raises(CheckpointError, match=_named(bad)):
        checkpoint.load(bad, device="cpu")
    assert not marker.exists()  # the code in the pickle never ran
    if payload == "evil":  # proof that the file does carry code: an unsafe load runs it
        torch.load(bad, weights_only=False)
        assert marker.read_text() == "code ran"


# ---------------------------------------------------------------------------------------------
# Mismatched config
# ---------------------------------------------------------------------------------------------


def test_mismatched_config_names_every_differing_field(saved):
    model, path = saved
    wanted = ModelConfig(len(SRC), len(TGT) + 1, emb_dim=8, hidden_size=32, num_layers=1,
                         dropout=0.1, max_tgt_len=6)
    with pytest.raises(CheckpointError) as info:
        checkpoint.load(path, config=wanted, device="cpu")
    msg = str(info.value)
    assert str(path) in msg
    assert f"tgt_vocab_size: checkpoint {len(TGT)}, requested {len(TGT) + 1}" in msg
    assert "hidden_size: checkpoint 16, requested 32" in msg
    assert "num_layers: checkpoint 2, requested 1" in msg
    for same in ("src_vocab_size", "emb_dim", "dropout", "feed_context", "max_src_len",
                 "max_tgt_len"):
        assert same not in msg


def test_mismatched_boolean_field(saved):
    model, path = saved
    wanted = ModelConfig(**{**model.config.to_dict(), "feed_context": False})
    with pytest.raises(CheckpointError, match="feed_context: checkpoint True, requested False$"):
        checkpoint.load(path, config=wanted)


def test_weights_that_do_not_fit_the_stored_config(saved, tmp_path):
    model, path = saved
    blob = checkpoint.read(path)
    blob["state_dict"] = tiny_model(hidden=12).state_dict()
    bad = tmp_path / "misfit.pt"
    torch.save(blob, bad)
    with pytest.raises(CheckpointError, match=_named(bad) + " weights do not fit its config"):
        checkpoint.load(bad, device="cpu")


# ---------------------------------------------------------------------------------------------
# Missing, corrupt, truncated and foreign files
# ---------------------------------------------------------------------------------------------


def test_missing_file(tmp_path):
    with pytest.raises(CheckpointError, match=_named(tmp_path / "nope.pt") + " does not exist"):
        checkpoint.load(tmp_path / "nope.pt")


@pytest.mark.parametrize("damage", ["truncated", "empty", "garbage", "text", "flipped"])
def test_corrupt_or_truncated_file_names_the_file(saved, tmp_path, damage):
    _, path = saved
    raw = path.read_bytes()
    content = {
        "truncated": raw[:len(raw) // 2],
        "empty": b"",
        "garbage": bytes(range(256)) * 10,
        "text": "Go.\tVa !\n".encode(),
        "flipped": raw[:200] + bytes(b ^ 0xFF for b in raw[200:400]) + raw[400:],
    }[damage]
    bad = tmp_path / f"{damage}.pt"
    bad.write_bytes(content)
    expected = " is corrupt: its member .* fails its CRC" if damage == "flipped" else \
        " is corrupt or not a torch file"
    with pytest.raises(CheckpointError, match=_named(bad) + expected):
        checkpoint.load(bad, device="cpu")


@pytest.mark.parametrize("obj, found", [
    ({"weights": torch.zeros(3)}, "None"),
    ({"format": "seq2seq-course/0", "config": {}}, "'seq2seq-course/0'"),
    (torch.zeros(3), "'Tensor'"),
    ([1, 2, 3], "'list'"),
])
def test_a_torch_file_that_is_not_a_checkpoint(tmp_path, obj, found):
    bad = tmp_path / "foreign.pt"
    torch.save(obj, bad)
    with pytest.raises(CheckpointError, match=_named(bad) + r" is not a seq2seq-course checkpoint "
                                              rf"\(format {re.escape(found)}, expected "):
        checkpoint.load(bad, device="cpu")


def _broken(blob, case):
    blob = dict(blob)
    if case == "no state_dict":
        del blob["state_dict"]
    elif case == "no config":
        del blob["config"]
    elif case == "unknown config field":
        blob["config"] = {**blob["config"], "attentionn": True}
    elif case == "vocab size differs from config":
        blob["tgt_itos"] = blob["tgt_itos"][:-1]
    elif case == "vocab lists a token twice":
        blob["src_itos"] = blob["src_itos"][:-1] + [blob["src_itos"][4]]
    return blob


@pytest.mark.parametrize("case", ["no state_dict", "no config", "unknown config field",
                                  "vocab size differs from config", "vocab lists a token twice"])
def test_an_incomplete_or_inconsistent_checkpoint_is_a_checkpoint_error(saved, tmp_path, case):
    _, path = saved
    bad = tmp_path / "broken.pt"
    torch.save(_broken(checkpoint.read(path), case), bad)
    with pytest.raises(CheckpointError, match=_named(bad)):
        checkpoint.load(bad, device="cpu")


@pytest.mark.parametrize("value", [np.float64(31.5), Path("fra.txt")], ids=["numpy", "path"])
def test_save_only_writes_what_load_accepts(tmp_path, value):
    path = tmp_path / "model.pt"
    try:
        checkpoint.save(tiny_model(), path, extra={"value": value})
    except (TypeError, ValueError):
        assert not path.exists()  # refused up front, nothing written: acceptable
        return
    assert checkpoint.load(path, device="cpu").extra["value"] == value


@pytest.mark.parametrize("field, value, words", [
    ("dropout", "0.1", "dropout must be a number, got '0.1' (str)"),
    ("hidden_size", 16.0, "hidden_size must be an integer, got 16.0"),
    ("num_layers", True, "num_layers must be an integer, got True (bool)"),
    ("feed_context", 1, "feed_context must be True or False, got 1"),
    ("src_vocab_size", None, "src_vocab_size must be an integer, got None"),
])
def test_a_config_value_of_the_wrong_type_is_a_checkpoint_error(saved, tmp_path, field, value,
                                                                 words):
    """Not a raw TypeError from deep inside torch: the file, the field and the value."""
    _, path = saved
    blob = checkpoint.read(path)
    blob["config"][field] = value
    bad = tmp_path / "bad-config.pt"
    torch.save(blob, bad)
    with pytest.raises(CheckpointError, match=_named(bad) + ".*" + re.escape(words)):
        checkpoint.load(bad, device="cpu")


@pytest.mark.parametrize("config, words", [
    ("hidden=16", "expected a dict of ModelConfig fields, got str"),
    ({"tgt_vocab_size": 9}, "the field 'src_vocab_size' is missing"),
])
def test_a_config_that_is_not_a_dict_of_fields(saved, tmp_path, config, words):
    _, path = saved
    blob = {**checkpoint.read(path), "config": config}
    bad = tmp_path / "bad-config.pt"
    torch.save(blob, bad)
    with pytest.raises(CheckpointError, match=re.escape(words)):
        checkpoint.read(bad)


def _with_int64_weights(blob):
    name = "decoder.head.proj.bias"
    return {**blob, "state_dict": {**blob["state_dict"], name: torch.arange(
        blob["state_dict"][name].numel())}}


def _with_a_nan_weight(blob):
    state = dict(blob["state_dict"])
    weight = state["encoder.embedding.weight"].clone()
    weight[3, 1] = float("nan")
    return {**blob, "state_dict": {**state, "encoder.embedding.weight": weight}}


# Well-typed files whose values no model can have: each is refused at load, naming the problem,
# not built into a model (max_src_len=-1 refused every sentence, max_tgt_len=0 decoded nothing,
# integer weights were cast silently, a NaN weight translated nonsense) nor escaping as TypeError.
MALFORMED = {
    "max_src_len=-1": (lambda b: {**b, "config": {**b["config"], "max_src_len": -1}},
                       "max_src_len must be at least 1, got -1"),
    "max_tgt_len=0": (lambda b: {**b, "config": {**b["config"], "max_tgt_len": 0}},
                      "max_tgt_len must be at least 1, got 0"),
    "hidden_size=0": (lambda b: {**b, "config": {**b["config"], "hidden_size": 0}},
                      "hidden_size must be at least 1, got 0"),
    "dropout=nan": (lambda b: {**b, "config": {**b["config"], "dropout": float("nan")}},
                    "dropout must be between 0 and 1, got nan"),
    "int64 weights": (_with_int64_weights, "the weight 'decoder.head.proj.bias' is torch.int64, "
                                           "not floating point"),
    "NaN weight": (_with_a_nan_weight, "the weight 'encoder.embedding.weight' holds 1 NaN or "
                                       "infinite value"),
    "weight not a tensor": (lambda b: {**b, "state_dict": {**b["state_dict"],
                                                           "decoder.head.proj.bias": [0.0] * 10}},
                            "the weight 'decoder.head.proj.bias' is a list, not a tensor"),
    "state_dict a list": (lambda b: {**b, "state_dict": list(b["state_dict"].values())},
                          "state_dict must be a dict of named tensors, got list"),
    "token not a string": (lambda b: {**b, "src_itos": b["src_itos"][:5] + [7]
                                      + b["src_itos"][6:]},
                           "src_itos must list strings: its entry 5 is 7 (int)"),
    "vocabulary not a list": (lambda b: {**b, "tgt_itos": "<pad><unk>"},
                              "tgt_itos must be a list of tokens, got str"),
    "extra a list": (lambda b: {**b, "extra": [1, 2]}, "extra must be a dict, got list"),
}


@pytest.mark.parametrize("case", MALFORMED)
def test_a_checkpoint_with_values_no_model_can_have_is_refused_by_name(saved, tmp_path, case):
    _, path = saved
    change, words = MALFORMED[case]
    bad = tmp_path / "malformed.pt"
    torch.save(change(checkpoint.read(path)), bad)
    with pytest.raises(CheckpointError, match=_named(bad) + ".*" + re.escape(words)):
        checkpoint.read(bad)
    with pytest.raises(CheckpointError, match=_named(bad) + ".*" + re.escape(words)):
        checkpoint.load(bad, device="cpu")


def test_the_load_checks_accept_every_checkpoint_save_writes(saved, tmp_path):
    """The refusals above are not too eager: a one-word limit, dropout 0, half precision,
    an empty `extra` and an attention model all load."""
    model = tiny_model(max_src_len=1, max_tgt_len=1, dropout=0.0)
    for name, kwargs in [("edge", {}), ("half", {"dtype": torch.float16})]:
        path = checkpoint.save(model, tmp_path / f"{name}.pt", **kwargs)
        assert checkpoint.load(path, device="cpu").config == model.config
    attention = Seq2Seq(ModelConfig(len(SRC), len(TGT), emb_dim=4, hidden_size=6, num_layers=1,
                                    attention=True), SRC, TGT)
    path = checkpoint.save(attention, tmp_path / "attention.pt")
    assert checkpoint.load(path, device="cpu").extra == {}


def test_checkpoint_error_is_a_value_error():
    assert issubclass(CheckpointError, ValueError)


# ---------------------------------------------------------------------------------------------
# Damage that torch.load would not notice, and half-precision storage
# ---------------------------------------------------------------------------------------------


def test_every_single_bit_flip_is_refused_or_changes_nothing(tmp_path):
    """torch.load ignores the archive's CRCs; read() checks them. Flip each byte's lowest bit of
    a small checkpoint in turn: the result must be a CheckpointError or the very same content."""
    model = tiny_model(emb_dim=2, hidden=4, layers=1, dropout=0.0)
    path = checkpoint.save(model, tmp_path / "m.pt", extra={"note": "flip"})
    original = checkpoint.read(path)
    raw = path.read_bytes()
    damaged = tmp_path / "damaged.pt"
    refused = unchanged = 0
    for offset in range(len(raw)):
        blob = bytearray(raw)
        blob[offset] ^= 0x01
        damaged.write_bytes(bytes(blob))
        try:
            got = checkpoint.read(damaged)
        except CheckpointError:
            refused += 1
            continue
        same = got.keys() == original.keys() and all(
            torch.equal(got["state_dict"][k], v) for k, v in original["state_dict"].items()) \
            and all(got[k] == original[k] for k in original if k != "state_dict")
        assert same, f"a flipped bit at byte {offset} loaded silently with other content"
        unchanged += 1
    assert refused > len(raw) // 2  # every byte of every member is covered by a CRC


def test_a_flip_inside_the_weights_names_the_damaged_member(saved, tmp_path):
    _, path = saved
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0x10
    bad = tmp_path / "bad.pt"
    bad.write_bytes(bytes(raw))
    with pytest.raises(CheckpointError,
                       match=_named(bad) + r" is corrupt: its member .* fails its CRC"):
        checkpoint.load(bad)


def test_half_precision_storage_halves_the_file_and_loads_as_float32(saved, tmp_path):
    model, full_path = saved
    half_path = checkpoint.save(model, tmp_path / "half.pt", dtype=torch.float16)
    stored = checkpoint.read(half_path)["state_dict"]
    assert all(v.dtype == torch.float16 for v in stored.values() if v.is_floating_point())
    weights = sum(v.numel() for v in model.state_dict().values())
    assert full_path.stat().st_size - half_path.stat().st_size >= 2 * weights - 4096
    loaded = checkpoint.load(half_path, device="cpu")
    for name, value in model.state_dict().items():
        got = loaded.state_dict()[name]
        assert got.dtype == value.dtype
        torch.testing.assert_close(got, value.to(torch.float16).to(value.dtype), rtol=0, atol=0)
    with pytest.raises(ValueError, match="dtype must be a floating-point torch dtype"):
        checkpoint.save(model, tmp_path / "x.pt", dtype=torch.int8)


# ---------------------------------------------------------------------------------------------
# Unreadable is not damaged; no folder, and no room, before a training run
# ---------------------------------------------------------------------------------------------


def make_unreadable(path: Path, monkeypatch) -> None:
    """Make `path` unreadable to this process: chmod 000, or, for root (whom permissions do
    not stop), checkpoint's `open` refusing it as the system would."""
    import builtins
    import os

    if os.geteuid() != 0:
        path.chmod(0)  # still deletable: its folder is writable
        return

    def refusing(file, *args, **kwargs):
        if Path(file) == path:
            raise PermissionError(errno.EACCES, "Permission denied", str(file))
        return builtins.open(file, *args, **kwargs)

    monkeypatch.setattr(checkpoint, "open", refusing, raising=False)


def test_an_unreadable_checkpoint_is_an_os_error_not_damage(saved, monkeypatch):
    """A caller deletes a damaged file: one it cannot read may be whole, so it is told apart."""
    _, path = saved
    make_unreadable(path, monkeypatch)
    with pytest.raises(PermissionError, match=_named(path) + r" \(Permission denied\); it may "
                                                             r"well be whole") as caught:
        checkpoint.load(path)
    assert not isinstance(caught.value, CheckpointError) and caught.value.filename == str(path)


def test_a_folder_is_not_a_checkpoint(tmp_path):
    (tmp_path / "model.pt").mkdir()
    with pytest.raises(CheckpointError, match=_named(tmp_path / "model.pt") + " is a folder"):
        checkpoint.load(tmp_path / "model.pt")
    with pytest.raises(CheckpointError, match="a folder .* is there; remove it"):
        checkpoint.check_writable(tmp_path / "model.pt")


def test_check_writable_compares_the_free_space_with_the_checkpoints_size(tmp_path, monkeypatch):
    """A 1 MB filesystem takes the 4 kB probe, not a 50 MB checkpoint: say so before training."""
    path = tmp_path / "small-disk" / "model.pt"
    usage = shutil.disk_usage(tmp_path)._replace(free=10**6)
    monkeypatch.setattr(checkpoint.shutil, "disk_usage", lambda folder: usage)
    with pytest.raises(CheckpointError, match=_named(path) + r": only 1\.0 MB are free in .* and "
                                              r"it needs about 50\.0 MB; free some space first"):
        checkpoint.check_writable(path, size=50 * 10**6)
    assert checkpoint.check_writable(path, size=10**5) == path
    assert checkpoint.check_writable(path) == path  # no size: no space check


def test_expected_bytes_covers_what_save_writes(saved, tmp_path):
    model, path = saved
    history = {"loss": [float(i) for i in range(5000)], "step": list(range(5000))}
    big = checkpoint.save(model, tmp_path / "history.pt", extra={"history": history})
    need = checkpoint.expected_bytes(model)
    assert path.stat().st_size < big.stat().st_size <= need
    with torch.device("meta"):  # the size of a model not built yet, without its memory
        shaped = tiny_model()
    assert checkpoint.expected_bytes(shaped) == need
