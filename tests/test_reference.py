"""lib.course.reference and lib.pretrained: the cache key, cache / download / train, and an import
without side effects. The reference model is never trained here: tiny configs are patched in."""

from __future__ import annotations

import importlib.util
import inspect
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import torch
from conftest import QuietHandler, serving

import lib
from lib import data
from lib.course import checkpoint, links, memo, reference
from lib.course.download import sha256_of
from lib.data import DataConfig, Vocab
from lib.model import ModelConfig, Seq2Seq
from lib.train import TrainConfig

ROOT = Path(__file__).resolve().parent.parent
TINY_DATA = DataConfig(min_freq=1, n_valid=20, n_test=20, seed=0, limit=600)
TINY_MODEL = dict(emb_dim=8, hidden_size=16, num_layers=1, dropout=0.0, feed_context=True,
                  max_tgt_len=8)
TINY_TRAIN = TrainConfig(epochs=1, batch_size=64, lr=5e-3, warmup_steps=2, eval_sentences=5)
ZERO_SHA = "0" * 64


pytestmark = pytest.mark.usefixtures("one_thread")  # tiny models: see conftest


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    """A private cache, releases at a closed local port (nothing published), automatic device."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("SEQ2SEQ_CACHE", str(cache))
    monkeypatch.delenv("SEQ2SEQ_DEVICE", raising=False)
    monkeypatch.setenv(links.RELEASE_ENV, f"http://127.0.0.1:{_closed_port()}/releases")
    return cache


def _closed_port() -> int:
    """A local port that nothing listens on: a download from it fails at once."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def tiny(monkeypatch):
    """Tiny reference configs, and a counter of the times train_reference really runs."""
    monkeypatch.setattr(reference, "DATA", TINY_DATA)
    monkeypatch.setattr(reference, "MODEL", TINY_MODEL)
    monkeypatch.setattr(reference, "TRAIN", TINY_TRAIN)
    calls = []
    real = reference.train_reference

    def counting(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(reference, "train_reference", counting)
    return calls


def _forbid_training(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("train_reference must not run here")

    monkeypatch.setattr(reference, "train_reference", refuse)


def _same_weights(a, b):
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


# ---------------------------------------------------------------------------------------------
# reference_key
# ---------------------------------------------------------------------------------------------


def test_key_is_short_hex_and_hashes_the_corpus_text():
    key = reference.reference_key()
    assert re.fullmatch(r"[0-9a-f]{16}", key)
    assert key == reference.reference_key(data.corpus_sha256(data.corpus_path())) \
        == reference.reference_key(data.CORPUS_SHA256)
    assert reference.cache_path().name == f"reference-{key}.pt"


def test_key_changes_with_every_config_and_the_corpus(monkeypatch):
    base = reference.reference_key(ZERO_SHA)
    assert reference.reference_key("1" * 64) != base
    changes = [("DATA", DataConfig(min_freq=2)), ("DATA", DataConfig(seed=1)),
               ("MODEL", {**reference.MODEL, "hidden_size": 256}),
               ("MODEL", {**reference.MODEL, "feed_context": False}),
               ("TRAIN", TrainConfig(epochs=6, batch_size=128, lr=1e-3)),
               ("TRAIN", TrainConfig(epochs=6, batch_size=128, lr=2e-3, teacher_forcing=0.5))]
    keys = set()
    for name, value in changes:
        with monkeypatch.context() as m:
            m.setattr(reference, name, value)
            keys.add(reference.reference_key(ZERO_SHA))
    assert len(keys) == len(changes) and base not in keys
    assert reference.reference_key(ZERO_SHA) == base  # back to the same configs: same key


def test_key_ignores_the_code_text():
    """A refactor keeps the key; tests/test_training_golden.py guards what the code computes."""
    import inspect

    assert "TRAINING_VERSION" in inspect.getsource(reference.training_key)
    assert "getsource" not in inspect.getsource(reference)


# ---------------------------------------------------------------------------------------------
# pretrained(): cache, train, download
# ---------------------------------------------------------------------------------------------


def test_pretrained_trains_once_then_loads_from_the_cache(tiny, isolated, monkeypatch):
    first = reference.pretrained(device="cpu", progress=False)
    assert len(tiny) == 1
    path = reference.cache_path()
    assert path.parent == isolated and path.is_file()
    # nothing else: no lock, part or manifest left (results/ is lib.data's memo of the corpus)
    assert sorted(p.name for p in isolated.iterdir() if p.name != "results") == [path.name]
    assert isinstance(first, Seq2Seq) and not first.training
    assert first.config == ModelConfig(len(first.src_vocab), len(first.tgt_vocab), **TINY_MODEL)
    corpus = memo.load_corpus(TINY_DATA)
    assert first.src_vocab == corpus.src_vocab and first.tgt_vocab == corpus.tgt_vocab

    _forbid_training(monkeypatch)
    second = lib.pretrained(device="cpu", progress=False)  # the public, lazy entry point
    assert _same_weights(first, second)
    sentences = [en for en, _ in corpus.split.test[:5]]
    assert second.translate(sentences) == first.translate(sentences)
    extra = second.extra
    assert extra["key"] == reference.reference_key() == path.stem.split("-", 1)[1]
    assert extra["minutes"] > 0 and extra["tokens_per_second"] > 0
    hist = extra["history"]
    assert hist["step"][-1] == -(-len(corpus.train_examples) // TINY_TRAIN.batch_size)
    assert hist["eval_step"] == hist["step"][-1:] and len(hist["valid_bleu"]) == 1


def test_a_config_change_trains_a_new_model_instead_of_a_stale_one(tiny, monkeypatch):
    reference.pretrained(device="cpu", progress=False)
    old_path = reference.cache_path()
    monkeypatch.setattr(reference, "TRAIN", TrainConfig(**{**TINY_TRAIN.to_dict(), "lr": 1e-2}))
    assert reference.cache_path() != old_path
    reference.pretrained(device="cpu", progress=False)
    assert len(tiny) == 2 and reference.cache_path().is_file() and old_path.is_file()


def test_nothing_cached_and_training_disabled(isolated, monkeypatch):
    _forbid_training(monkeypatch)
    with pytest.raises(FileNotFoundError, match=r"no reference model at .*reference-[0-9a-f]{16}"
                                                r"\.pt and training is disabled; run `make train`"):
        reference.pretrained(train=False)
    with pytest.raises(FileNotFoundError, match="make train"):
        lib.pretrained(train=False)


class _Handler(QuietHandler):
    """Serves a release folder. Beside a file, `<file>.slow` (holding seconds) delays its
    answer, and `<file>.endless` makes it a body that never ends."""

    def answer(self):
        served = Path(self.directory) / self.path.lstrip("/")
        slow = served.with_name(served.name + ".slow")
        if slow.is_file():
            time.sleep(float(slow.read_text()))
        if served.with_name(served.name + ".endless").is_file():
            self.send_response(200)
            self.end_headers()
            stop = time.monotonic() + 30  # a broken cap fails the test, it does not hang it
            while time.monotonic() < stop:
                self.wfile.write(b" " * 65536)
            return
        super().answer()


def _publish(root: Path, model, for_key: str, **manifest_changes) -> dict:
    """Lay out a release as GitHub serves it: <root>/<tag>/<file> and <tag>/manifest.json."""
    tag = reference.release_tag(for_key)
    path = checkpoint.save(model, root / tag / f"reference-{for_key}.pt",
                           extra={"key": for_key, "published": True})
    manifest = {"key": for_key, "tag": tag, "file": path.name, "sha256": sha256_of(path),
                "bytes": path.stat().st_size, **manifest_changes}
    (root / tag / reference.MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    return manifest


SMALL_MODEL = dict(emb_dim=4, hidden_size=8, num_layers=1, dropout=0.0)


def _small_model(src_words: list[str], tgt_words: list[str], **sizes) -> Seq2Seq:
    sv, tv = Vocab(list(data.SPECIALS) + src_words), Vocab(list(data.SPECIALS) + tgt_words)
    torch.manual_seed(4)
    return Seq2Seq(ModelConfig(len(sv), len(tv), **{**SMALL_MODEL, **sizes}), sv, tv)


@pytest.fixture
def served(tmp_path, monkeypatch):
    """A tiny checkpoint published for the current key on 127.0.0.1:
    (model, release folder, request log); $SEQ2SEQ_RELEASE_URL points at it. The reference's
    sizes are the small model's, so that the published checkpoint is the reference's size."""
    monkeypatch.setattr(reference, "MODEL", SMALL_MODEL)
    root = tmp_path / "served"
    model = _small_model(["hello", "."], ["bonjour", "."])
    _publish(root, model, reference.reference_key())
    with serving(root, _Handler) as (httpd, url):
        monkeypatch.setenv(links.RELEASE_ENV, url.rstrip("/"))
        yield model, root, httpd.requests


def _release_requests(key: str) -> list[str]:
    tag = reference.release_tag(key)
    return [f"/{tag}/{reference.MANIFEST}", f"/{tag}/reference-{key}.pt"]


def test_pretrained_downloads_the_checkpoint_published_for_its_key(served, isolated,
                                                                    monkeypatch, capsys):
    model, _, requests = served
    _forbid_training(monkeypatch)
    key = reference.reference_key()
    got = reference.pretrained(device="cpu", progress=False)
    assert _same_weights(got, model) and got.extra == {"key": key, "published": True}
    assert got.source == "download"
    assert requests == _release_requests(key)
    path = reference.cache_path()
    assert path.is_file() and not list(isolated.glob("*.part-*"))
    again = reference.pretrained(device="cpu", progress=False)  # the cache, no network
    assert _same_weights(again, model) and again.source == "cache"
    assert requests == _release_requests(key)
    assert "Training" not in capsys.readouterr().out


def test_the_release_url_is_derived_from_the_repository(monkeypatch):
    monkeypatch.delenv(links.RELEASE_ENV, raising=False)
    assert links.release_asset("reference-abc", "manifest.json") == \
        f"{links.REPOSITORY}/releases/download/reference-abc/manifest.json"
    monkeypatch.setenv(links.RELEASE_ENV, "http://127.0.0.1:9/rel/")
    assert links.release_asset("t", "f.pt") == "http://127.0.0.1:9/rel/t/f.pt"


def test_a_checkpoint_with_a_wrong_checksum_is_not_kept_and_training_says_why(
        served, isolated, tiny, capsys):
    _, root, requests = served
    key = reference.reference_key()  # the tiny configs: a new key, published below
    model = _small_model(["a", "b"], ["c", "d"])
    _publish(root, model, key, sha256="0" * 64)
    got = reference.pretrained(device="cpu", progress=False)
    assert len(tiny) == 1 and got.source == "training"
    out = capsys.readouterr().out
    assert f"Training the reference model here, because no usable published checkpoint for key " \
           f"{key}" in out and "sha256" in out
    assert requests == _release_requests(key)
    # What is cached now is the trained model, not the bad download; no part file is left.
    assert _same_weights(checkpoint.load(reference.cache_path(), device="cpu"), got)
    assert not list(isolated.glob("*.part-*"))


def test_a_manifest_for_another_key_is_refused(served, tiny, capsys):
    _, root, _ = served
    key = reference.reference_key()
    model = _small_model(["a", "b"], ["c", "d"])
    _publish(root, model, key, key="f" * 16)
    assert reference.pretrained(device="cpu", progress=False).source == "training"
    assert f"is for key {'f' * 16}, not {key}" in capsys.readouterr().out


def test_a_damaged_cached_file_is_deleted_and_downloaded_again(served, monkeypatch, capsys):
    model, _, requests = served
    _forbid_training(monkeypatch)
    reference.pretrained(device="cpu", progress=False)
    path = reference.cache_path()
    blob = bytearray(path.read_bytes())
    blob[len(blob) // 2] ^= 0x01  # one flipped bit inside the weights
    path.write_bytes(bytes(blob))
    got = reference.pretrained(device="cpu", progress=False)
    assert "damaged and is deleted" in capsys.readouterr().out
    assert got.source == "download" and _same_weights(got, model)
    assert len(requests) == 4 and sha256_of(path) == sha256_of(
        served[1] / reference.release_tag(reference.reference_key()) / path.name)


def test_nothing_published_and_training_disabled_names_the_command(isolated, monkeypatch):
    _forbid_training(monkeypatch)
    with pytest.raises(FileNotFoundError, match="make train"):
        reference.pretrained(train=False, progress=False)
    assert list(isolated.iterdir()) == [] or not list(isolated.glob("reference-*.pt"))


def test_download_false_does_not_touch_the_network(served, monkeypatch):
    _, _, requests = served
    _forbid_training(monkeypatch)
    with pytest.raises(FileNotFoundError, match="make train"):
        reference.pretrained(download=False, train=False)
    assert requests == []


def test_a_fresh_cache_wins_over_the_download(served, tiny):
    _, _, requests = served
    trained = reference.pretrained(device="cpu", progress=False)  # nothing published: 404
    assert trained.source == "training"
    assert requests == _release_requests(reference.reference_key())[:1]
    assert _same_weights(reference.pretrained(device="cpu"), trained)
    assert len(requests) == 1 and len(tiny) == 1  # the cache: no new request, no training


# ---------------------------------------------------------------------------------------------
# Before training: a cache that cannot take the model, and two processes at once
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def unwritable_cache(tmp_path, monkeypatch):
    """A cache path whose folder cannot be made (a file is in the way; chmod does not stop
    root), and training that must not start."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    path = blocker / "cache" / f"reference-{'0' * 16}.pt"
    monkeypatch.setattr(reference, "cache_path", lambda: path)
    _forbid_training(monkeypatch)
    return path


def test_pretrained_checks_the_cache_is_writable_before_training(unwritable_cache):
    """A failed final save once threw away a whole training run: fail in a second instead."""
    with pytest.raises(checkpoint.CheckpointError, match=re.escape(str(unwritable_cache))
                       + r".*set SEQ2SEQ_CACHE to a folder that can be written"):
        reference.pretrained(device="cpu", download=False, progress=False)


def test_main_checks_the_cache_is_writable_before_training(unwritable_cache):
    with pytest.raises(checkpoint.CheckpointError, match="SEQ2SEQ_CACHE"):
        reference.main(["--train", "--device", "cpu"])


_TWO_NOTEBOOKS = """
import os, sys, time
from pathlib import Path
from lib.experiments import toy
from lib.course import checkpoint, reference

out = Path(sys.argv[1])

def fast_training(progress=True, device=None, path=None):
    with open(out / "trained", "a") as f:
        f.write(f"{os.getpid()}\\n")
    deadline = time.time() + 180  # hold the lock until the test has seen the other one wait
    while not (out / "go").exists() and time.time() < deadline:
        time.sleep(0.05)
    model = toy.tiny_model(0)
    checkpoint.save(model, path or reference.cache_path(), extra={"key": reference.reference_key()})
    return model, None

reference.train_reference = fast_training
reference.MODEL = dict(emb_dim=8, hidden_size=16, num_layers=2, dropout=0.0)  # tiny_model's
reference._expected_bytes = lambda: 1  # not the real corpus's vocabularies: a tiny model
model = reference.pretrained(device="cpu", download=False, progress=False)
print("got", model.source, sum(p.numel() for p in model.parameters()), flush=True)
"""


def test_two_processes_train_once_and_the_second_waits_for_the_first(tmp_path, isolated):
    """Two notebooks calling lib.pretrained() on a machine without the model: one trains, the
    other says it waits for that pid, then loads the cached result."""
    env = {**os.environ, "SEQ2SEQ_CACHE": str(isolated), "PYTHONUNBUFFERED": "1"}

    def start():
        return subprocess.Popen([sys.executable, "-c", _TWO_NOTEBOOKS, str(tmp_path)], cwd=ROOT,
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)

    first = start()
    try:
        for _ in range(1200):  # the first holds the lock once its training has started
            if (tmp_path / "trained").exists() or first.poll() is not None:
                break
            threading.Event().wait(0.05)
        assert (tmp_path / "trained").exists(), first.communicate()[0]
        second = start()
        waiting = second.stdout.readline()  # blocks until the second process prints
        (tmp_path / "go").touch()
        out_first, out_second = first.communicate(timeout=120)[0], second.communicate(
            timeout=120)[0]
    finally:
        for p in (first, locals().get("second")):
            if p is not None and p.poll() is None:
                p.kill()
    assert (tmp_path / "trained").read_text().split() == [str(first.pid)]  # trained once
    assert f"Another process (pid {first.pid}) is training the reference model; waiting" \
        in waiting, waiting + out_second
    got_first, got_second = (o.strip().splitlines()[-1].split() for o in (out_first, out_second))
    assert got_first[:2] == ["got", "training"] and got_second[:2] == ["got", "cache"]
    assert got_first[2] == got_second[2]  # the same model
    names = [p.name for p in isolated.iterdir()]  # the tiny sizes' key: one model, no lock
    assert len(names) == 1 and re.fullmatch(r"reference-[0-9a-f]{16}\.pt", names[0]), names


# ---------------------------------------------------------------------------------------------
# The command line behind `make train`
# ---------------------------------------------------------------------------------------------


def test_main_trains_then_prints_held_out_bleu_and_minutes(tiny, capsys, monkeypatch):
    reference.main(["--train", "--device", "cpu"])
    out = capsys.readouterr().out
    assert len(tiny) == 1 and reference.cache_path().is_file()
    assert re.search(r"reference model .*reference-.*: trained \d+\.\d min at \d+ target "
                     r"tokens/s", out)
    assert re.search(r"held-out BLEU \(greedy, sacrebleu, all references\): \d+\.\d\d", out)
    assert re.search(r"held-out BLEU \(beam 5, sacrebleu, all references\): \d+\.\d\d", out)
    _forbid_training(monkeypatch)
    reference.main(["--ensure"])
    assert "reference model is cached and fresh" in capsys.readouterr().out


def _make_train_module() -> str:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^train:.*\n((?:\t.*\n)+)", makefile, re.M).group(1)
    return re.search(r"-m (\S+)", recipe).group(1)


def test_make_train_runs_a_module_that_exists():
    module = _make_train_module()
    assert importlib.util.find_spec(module) is not None, module


# ---------------------------------------------------------------------------------------------
# `import lib` has no side effects; lib.pretrained is lazy
# ---------------------------------------------------------------------------------------------

_IMPORT_PROBE = """
import importlib, json, pkgutil, sys
import lib
report = {"torch": "torch" in sys.modules,
          "submodules": sorted(m for m in sys.modules if m.startswith("lib."))}
for info in pkgutil.iter_modules(lib.__path__):
    importlib.import_module("lib." + info.name)
from lib.course import reference
report["key"] = reference.reference_key("0" * 64)
print(json.dumps(report))
"""


def test_import_lib_has_no_side_effects(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    cache = tmp_path / "never-created"
    env = {**os.environ, "SEQ2SEQ_CACHE": str(cache), "HOME": str(home),
           "PYTHONHASHSEED": "12345", "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, "-c", _IMPORT_PROBE], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["torch"] is False  # `import lib` alone does not even load torch
    assert report["submodules"] == []
    assert not cache.exists()  # importing every lib module created no cache...
    assert list(home.iterdir()) == []  # ...and wrote nothing in the home directory
    # The key is a content hash: the same in another process with another hash seed.
    assert report["key"] == reference.reference_key("0" * 64)


def test_lib_pretrained_is_a_lazy_function_that_forwards_its_arguments(monkeypatch):
    assert inspect.isfunction(lib.pretrained)
    ours, theirs = inspect.signature(lib.pretrained), inspect.signature(reference.pretrained)
    assert [(p.name, p.default) for p in ours.parameters.values()] == \
        [(p.name, p.default) for p in theirs.parameters.values()] + [("attention", False)]
    seen = []
    monkeypatch.setattr(reference, "pretrained", lambda **kw: seen.append(kw) or "model")
    assert lib.pretrained("cpu", download=False, train=False, progress=False) == "model"
    assert seen == [dict(device="cpu", download=False, train=False, progress=False)]
    from lib.experiments import long_inputs

    monkeypatch.setattr(long_inputs, "pretrained", lambda **kw: seen.append(kw) or "attention")
    assert lib.pretrained("cpu", download=False, attention=True) == "attention"
    assert seen[-1] == dict(device="cpu", download=False, train=True)


# ---------------------------------------------------------------------------------------------
# What the download and the cache must not trust
# ---------------------------------------------------------------------------------------------


def _release_folder(root: Path) -> Path:
    return root / reference.release_tag(reference.reference_key())


def _write_manifest(root: Path, manifest) -> None:
    (_release_folder(root) / reference.MANIFEST).write_text(
        manifest if isinstance(manifest, str) else json.dumps(manifest), encoding="utf-8")


def _published_manifest(root: Path) -> dict:
    return json.loads((_release_folder(root) / reference.MANIFEST).read_text(encoding="utf-8"))


@pytest.mark.parametrize("change, problem", [
    (lambda m: {k: v for k, v in m.items() if k != "file"}, "'file' must be a plain file name"),
    (lambda m: {**m, "file": "../../../etc/passwd"}, "'file' must be a plain file name"),
    (lambda m: {**m, "sha256": "z" * 64}, "'sha256' must be 64 hex digits"),
    (lambda m: {**m, "sha256": None}, "'sha256' must be 64 hex digits"),
    (lambda m: {**m, "bytes": 34343.0}, "'bytes' must be a whole number"),
    (lambda m: {**m, "bytes": True}, "'bytes' must be a whole number"),
    (lambda m: {**m, "bytes": 2**40}, "'bytes' must be a whole number from 1 to"),
    (lambda m: [m], "a JSON list, not an object"),
    (lambda m: "{not json", "not JSON"),
])
def test_a_malformed_manifest_is_a_download_error_that_train_false_reports(
        served, isolated, monkeypatch, change, problem):
    """No KeyError, ValueError or TypeError escapes: the download failed, and the error says why."""
    _, root, _ = served
    _forbid_training(monkeypatch)
    _write_manifest(root, change(_published_manifest(root)))
    with pytest.raises(FileNotFoundError, match=r"make train.*Not downloaded: no usable "
                                                r"published checkpoint for key .*release "
                                                r"manifest of .* is not valid: " + re.escape(
                                                    problem)):
        reference.pretrained(device="cpu", train=False, progress=False)
    assert not list(isolated.glob("reference-*.pt"))


def test_a_malformed_manifest_falls_back_to_training(served, tiny, capsys):
    _, root, _ = served
    _publish(root, _small_model(["a"], ["b"]), reference.reference_key(), bytes=34343.0)
    assert reference.pretrained(device="cpu", progress=False).source == "training"
    assert len(tiny) == 1 and "'bytes' must be a whole number" in capsys.readouterr().out


def test_an_endless_manifest_is_cut_off_instead_of_filling_the_disk(served, isolated,
                                                                    monkeypatch):
    _, root, _ = served
    _forbid_training(monkeypatch)
    (_release_folder(root) / f"{reference.MANIFEST}.endless").touch()
    start = time.monotonic()
    with pytest.raises(FileNotFoundError, match=f"sent more than the "
                                                f"{reference.MANIFEST_MAX_BYTES} bytes"):
        reference.pretrained(device="cpu", train=False, progress=False)
    assert time.monotonic() - start < 20
    assert sum(p.stat().st_size for p in isolated.iterdir() if p.is_file()) < 100_000


def reference_download():
    from lib.course import download

    return download


def test_one_deadline_bounds_the_whole_fetch(served, tmp_path):
    """The manifest and the checkpoint each arrive within the deadline, not both together."""
    _, root, _ = served
    key = reference.reference_key()
    for name in (reference.MANIFEST, f"reference-{key}.pt"):
        (_release_folder(root) / f"{name}.slow").write_text("0.75")
    start = time.monotonic()
    with pytest.raises(reference_download().DownloadError, match="deadline"):
        reference.fetch_published(tmp_path / "m.pt", key, progress=False, deadline=1.25)
    assert time.monotonic() - start < 2.5 and not (tmp_path / "m.pt").exists()
    assert reference.fetch_published(tmp_path / "m.pt", key, progress=False, deadline=10).is_file()


def test_train_false_keeps_why_the_download_failed(served, monkeypatch):
    _, root, _ = served
    _forbid_training(monkeypatch)
    _publish(root, _small_model(["a"], ["b"]), reference.reference_key(), sha256="0" * 64)
    with pytest.raises(FileNotFoundError, match=r"training is disabled; run `make train` .*"
                                                r"Not downloaded: .*sha256") as caught:
        reference.pretrained(device="cpu", train=False, progress=False)
    assert isinstance(caught.value.__cause__, reference_download().ChecksumError)


def test_a_checkpoint_of_another_key_is_not_the_reference(served, isolated, monkeypatch, capsys):
    """A valid checkpoint published (or cached) under this key's name, holding another key's
    model (another size, say), is refused like a damaged one."""
    model, root, _ = served
    _forbid_training(monkeypatch)
    key = reference.reference_key()
    other = _small_model(["x", "y", "z"], ["u", "v"])
    path = checkpoint.save(other, _release_folder(root) / f"reference-{key}.pt",
                           extra={"key": "f" * 16})
    _write_manifest(root, {**_published_manifest(root), "sha256": sha256_of(path),
                           "bytes": path.stat().st_size})
    with pytest.raises(FileNotFoundError, match=f"holds the model of key '{'f' * 16}', "
                                                f"not '{key}'"):
        reference.pretrained(device="cpu", train=False, progress=False)
    assert not reference.cache_path().exists()
    # the right one published again; another key's model in the cache is deleted, not loaded
    _publish(root, model, key)
    checkpoint.save(other, reference.cache_path(), extra={"key": "f" * 16})
    got = reference.pretrained(device="cpu", progress=False)
    assert got.source == "download" and _same_weights(got, model)
    assert "is another key's model and is deleted" in capsys.readouterr().out


def test_a_checkpoint_of_this_key_but_another_size_is_not_the_reference(served, monkeypatch,
                                                                         capsys):
    """The key in a checkpoint's extra is a claim; its stored config is checked against the
    reference's sizes too, downloaded or cached."""
    model, root, _ = served
    _forbid_training(monkeypatch)
    key = reference.reference_key()
    other = _small_model(["hello", "."], ["bonjour", "."], hidden_size=16)
    path = checkpoint.save(other, _release_folder(root) / f"reference-{key}.pt",
                           extra={"key": key})
    _write_manifest(root, {**_published_manifest(root), "sha256": sha256_of(path),
                           "bytes": path.stat().st_size})
    with pytest.raises(FileNotFoundError, match="hidden_size is 16, the reference's is 8"):
        reference.pretrained(device="cpu", train=False, progress=False)
    assert not reference.cache_path().exists()
    _publish(root, model, key)
    checkpoint.save(other, reference.cache_path(), extra={"key": key})
    got = reference.pretrained(device="cpu", progress=False)
    assert got.source == "download" and _same_weights(got, model)
    out = capsys.readouterr().out
    assert "is not the reference's size and is deleted" in out and "hidden_size is 16" in out


def test_an_unreadable_cached_model_is_kept_and_named(served, monkeypatch):
    """Unreadable is not damaged: the file may be whole (another user's, wrong permissions)."""
    from test_checkpoint import make_unreadable

    _, _, requests = served
    _forbid_training(monkeypatch)
    reference.pretrained(device="cpu", progress=False)
    path, asked = reference.cache_path(), len(requests)
    make_unreadable(path, monkeypatch)
    with pytest.raises(PermissionError, match=r"The cached reference model cannot be read, so "
                                              r"it is kept: cannot read checkpoint .*\.pt "
                                              r"\(Permission denied\); it may well be whole"):
        reference.pretrained(device="cpu", progress=False)
    assert path.is_file() and len(requests) == asked  # kept, and nothing fetched over it


def test_a_damaged_model_that_cannot_be_deleted_says_what_to_do(served, monkeypatch):
    """A read-only cache folder: the damaged file stays, and the error says so (root ignores
    folder permissions, so the refusal is simulated)."""
    _forbid_training(monkeypatch)
    reference.pretrained(device="cpu", progress=False)
    path = reference.cache_path()
    path.write_bytes(path.read_bytes()[:100])  # damaged
    unlink = Path.unlink

    def refusing(self, *args, **kwargs):
        if self == path:
            raise PermissionError(13, "Permission denied", str(self))
        return unlink(self, *args, **kwargs)

    monkeypatch.setattr(Path, "unlink", refusing)
    with pytest.raises(PermissionError, match=r"The cached reference model was damaged \(.*\) "
                                              r"but cannot be deleted \(Permission denied\): "
                                              r"delete it by hand, or set SEQ2SEQ_CACHE"):
        reference.pretrained(device="cpu", progress=False)


def test_stale_parts_go_once_the_model_is_cached(served):
    reference.pretrained(device="cpu", progress=False)
    path = reference.cache_path()
    stale, fresh = (path.with_name(f"{path.name}.part-{tag}") for tag in ("0123abcd", "89abcdef"))
    for part, age in ((stale, 2 * 3600), (fresh, 0)):  # a killed download; a live one, maybe
        part.write_bytes(b"x" * 1000)
        os.utime(part, (time.time() - age, time.time() - age))
    assert reference.pretrained(device="cpu", progress=False).source == "cache"
    assert not stale.exists() and fresh.exists()


def test_a_folder_at_the_models_path_is_named(isolated, monkeypatch):
    _forbid_training(monkeypatch)
    reference.cache_path().mkdir(parents=True)
    with pytest.raises(checkpoint.CheckpointError, match=r"reference-[0-9a-f]{16}\.pt: a folder "
                                                         r".* is there; remove it"):
        reference.pretrained(device="cpu", progress=False)


def test_no_room_for_the_model_is_said_before_training(tiny, isolated, monkeypatch):
    """A 1 MB filesystem passed the old 4 kB probe, then failed the save after the training."""
    import shutil

    usage = shutil.disk_usage(isolated.parent)._replace(free=10**6)
    monkeypatch.setattr(shutil, "disk_usage", lambda folder: usage)
    with pytest.raises(checkpoint.CheckpointError, match=r"only 1\.0 MB are free in .* it needs "
                                                         r"about \d+\.\d MB.*SEQ2SEQ_CACHE"):
        reference.pretrained(device="cpu", progress=False)
    assert tiny == []  # no training started


# --- the lock: what a waiting process is told ------------------------------------------------


def test_the_lock_says_what_its_holder_does_from_the_start(isolated):
    path = isolated / "reference-0000000000000000.pt"
    isolated.mkdir(parents=True, exist_ok=True)
    with reference.CacheLock(path, "is training") as lock:
        assert lock.lock_path.read_text().split() == [str(os.getpid()), "is", "training"]
    assert not lock.lock_path.exists()


def test_a_waiting_process_hears_when_the_holder_turns_to_training(isolated, capsys):
    """It said "is fetching" for the whole training run: now it says what the holder does, and
    again when that changes."""
    path = isolated / "reference-0000000000000000.pt"
    isolated.mkdir(parents=True, exist_ok=True)
    holder = reference.CacheLock(path, "is downloading").__enter__()
    got = []

    def wait():
        with reference.CacheLock(path) as lock:
            got.append(lock.waited)

    waiter = threading.Thread(target=wait, daemon=True)
    said = ""

    def hear(words: str) -> None:
        nonlocal said
        for _ in range(100):
            said += capsys.readouterr().out
            if words in said:
                return
            time.sleep(0.05)
        raise AssertionError(f"never said {words!r}: {said!r}")

    try:
        waiter.start()
        hear(f"Another process (pid {os.getpid()}) is downloading the reference model; waiting")
        holder.doing("is training")
        hear(f"The other process (pid {os.getpid()}) moved on: it is training the reference "
             f"model; still waiting")
    finally:
        holder.__exit__(None, None, None)
        waiter.join(10)
    assert got == [True] and said.count("\n") == 2, said


def test_a_manifest_that_parsed_but_is_malformed_is_not_called_truncated(served, monkeypatch):
    """A manifest read whole as JSON but with a bad field was blamed on a truncated transfer;
    the error names the field, and only JSON that does not parse mentions a cut-short one."""
    _, root, _ = served
    _forbid_training(monkeypatch)
    _write_manifest(root, {**_published_manifest(root), "bytes": 34343.0})
    with pytest.raises(FileNotFoundError) as caught:
        reference.pretrained(device="cpu", train=False, progress=False)
    assert "'bytes' must be a whole number" in str(caught.value)
    assert "truncated" not in str(caught.value) and "cut short" not in str(caught.value)
    (_release_folder(root) / reference.MANIFEST).write_text('{"key": "a', encoding="utf-8")
    with pytest.raises(FileNotFoundError, match="not JSON .*cut short"):
        reference.pretrained(device="cpu", train=False, progress=False)
