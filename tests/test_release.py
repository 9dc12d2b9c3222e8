"""lib.course.release (`make release`): the checkpoint and manifest readers download. A tiny
reference
model stands in for the real one; the oracle for the manifest is the file itself."""

from __future__ import annotations

import functools
import http.server
import json
import shutil
import threading

import pytest
import torch

import lib
from lib.course import checkpoint, links, memo, reference, release
from lib.course.download import sha256_of
from lib.data import DataConfig
from lib.train import TrainConfig

TINY_DATA = DataConfig(min_freq=1, n_valid=20, n_test=20, seed=0, limit=600)
TINY_MODEL = dict(emb_dim=8, hidden_size=16, num_layers=1, dropout=0.0, feed_context=True,
                  max_tgt_len=8)
TINY_TRAIN = TrainConfig(epochs=1, batch_size=64, lr=5e-3, warmup_steps=2, eval_sentences=5)


def _tiny_configs(monkeypatch) -> None:
    monkeypatch.setattr(reference, "DATA", TINY_DATA)
    monkeypatch.setattr(reference, "MODEL", TINY_MODEL)
    monkeypatch.setattr(reference, "TRAIN", TINY_TRAIN)


@pytest.fixture(scope="module")
def trained_tiny(tmp_path_factory):
    """One tiny reference model, trained once for the module."""
    with pytest.MonkeyPatch.context() as m:
        m.setenv("SEQ2SEQ_CACHE", str(tmp_path_factory.mktemp("trained")))
        _tiny_configs(m)
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            reference.train_reference(progress=False, device="cpu")
        finally:
            torch.set_num_threads(threads)
        yield reference.cache_path()


@pytest.fixture(autouse=True)
def tiny_reference(tmp_path, monkeypatch, trained_tiny):
    """Tiny reference configs and a private cache holding the trained tiny model."""
    monkeypatch.setenv("SEQ2SEQ_CACHE", str(tmp_path / "cache"))
    _tiny_configs(monkeypatch)
    (tmp_path / "cache").mkdir()
    shutil.copy2(trained_tiny, reference.cache_path())
    return reference.cache_path()


def test_release_writes_the_checkpoint_and_a_manifest_that_describes_it(tmp_path):
    out = tmp_path / "release"
    manifest = release.write_release(out)
    key = reference.reference_key()
    path = out / manifest["file"]
    assert json.loads((out / "manifest.json").read_text()) == manifest
    assert manifest["key"] == key and manifest["tag"] == f"reference-{key}"
    assert manifest["file"] == f"reference-{key}.pt"
    assert manifest["sha256"] == sha256_of(path) and manifest["bytes"] == path.stat().st_size
    assert manifest["lib_version"] == lib.__version__
    assert set(manifest["test_bleu"]) == {"float32", "float16"}
    for scores in manifest["test_bleu"].values():
        assert set(scores) == {"greedy", "beam5"}
        assert all(0 <= v <= 100 for v in scores.values())
    assert sorted(p.name for p in out.iterdir()) == sorted(["manifest.json", manifest["file"]])


def test_half_precision_only_when_bleu_stays_within_the_tolerance(tmp_path, monkeypatch):
    monkeypatch.setattr(release, "TOLERANCE", float("inf"))
    half = release.write_release(tmp_path / "a")
    stored = checkpoint.read(tmp_path / "a" / half["file"])["state_dict"]
    assert half["dtype"] == "float16" and all(
        v.dtype == torch.float16 for v in stored.values() if v.is_floating_point())
    monkeypatch.setattr(release, "TOLERANCE", -1.0)  # nothing is within a negative tolerance
    full = release.write_release(tmp_path / "b")
    stored = checkpoint.read(tmp_path / "b" / full["file"])["state_dict"]
    assert full["dtype"] == "float32" and all(
        v.dtype == torch.float32 for v in stored.values() if v.is_floating_point())
    assert full["bytes"] > 1.8 * half["bytes"] - 20_000


def test_the_half_precision_bleu_is_that_of_the_rounded_weights(tmp_path, monkeypatch):
    """The float16 figures must describe what readers load: score the released file itself."""
    from lib.evaluate import evaluate_bleu

    monkeypatch.setattr(release, "TOLERANCE", float("inf"))
    manifest = release.write_release(tmp_path)
    loaded = checkpoint.load(tmp_path / manifest["file"], device="cpu")
    test = memo.load_corpus(TINY_DATA).split.test
    assert round(evaluate_bleu(loaded, test), 2) == manifest["test_bleu"]["float16"]["greedy"]


def test_an_up_to_date_release_is_kept_and_a_stale_one_replaced(tmp_path, monkeypatch):
    out = tmp_path / "release"
    first = release.write_release(out)
    real_bleu = release._bleu
    monkeypatch.setattr(release, "_bleu", lambda *a: pytest.fail("re-evaluated a fresh release"))
    assert release.write_release(out) == first  # same key, intact file: nothing redone
    monkeypatch.setattr(release, "_bleu", real_bleu)
    (out / first["file"]).write_bytes(b"damaged")
    again = release.write_release(out)  # the file no longer has its sha256: written anew
    assert sha256_of(out / again["file"]) == again["sha256"]


def test_release_never_trains(tmp_path, tiny_reference):
    tiny_reference.unlink()
    with pytest.raises(FileNotFoundError, match="make train"):
        release.write_release(tmp_path / "release")


def test_a_reader_downloads_what_release_wrote(tmp_path, monkeypatch, tiny_reference):
    """The release folder, served as GitHub serves release assets, is what pretrained() takes."""
    manifest = release.write_release(tmp_path / "release")
    served = tmp_path / "served" / manifest["tag"]
    shutil.copytree(tmp_path / "release", served)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler,
                                directory=str(served.parent))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv(links.RELEASE_ENV, "http://127.0.0.1:%d" % httpd.server_address[1])
        trained = checkpoint.load(tiny_reference, device="cpu")
        tiny_reference.unlink()  # a reader's empty cache
        got = reference.pretrained(device="cpu", progress=False, train=False)
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert got.source == "download"
    for name, value in trained.state_dict().items():
        expected = value.to(getattr(torch, manifest["dtype"])).to(value.dtype)
        assert torch.equal(got.state_dict()[name], expected), name
