"""lib.course.chapter_models: the attention chapter's runs published as releases and fetched by
`lib.experiments.long_inputs.cached_runs` before it trains. A tiny model stands in for the
reference model
and six joined test groups for the 573, so the round trip takes seconds; the oracles are the
files the build computed, byte for byte, and the requests the release server saw."""

from __future__ import annotations

import contextlib
import functools
import http.server
import io
import json
import re
import shutil
import threading
import time
from pathlib import Path

import pytest
import torch
from conftest import ROOT
from test_reference import _closed_port, _Handler, _same_weights

from lib import train as training
from lib.course import chapter_models, checkpoint, links, memo, reference, release
from lib.course.download import sha256_of
from lib.course.memo import load_corpus
from lib.experiments import long_inputs
from lib.experiments.long_inputs import FinetuneConfig
from lib.experiments.toy import tiny_model

pytestmark = pytest.mark.usefixtures("one_thread")  # tiny models: see conftest

BASE = functools.partial(tiny_model, 0, hidden=16, emb_dim=8, layers=1)  # the "reference"
CONFIGS = {"as it is": FinetuneConfig(steps=0), "fixed": FinetuneConfig(steps=2, batch_size=4),
           "attention": FinetuneConfig(attention=True, steps=2, batch_size=4)}
WHAT = "the attention chapter's fine-tuned copies"


def _tiny_chapter(m, corpus, cache: Path) -> None:
    """The tiny reference model, six test groups, the corpus loaded once, a private cache."""
    m.setenv("SEQ2SEQ_CACHE", str(cache))
    m.delenv("SEQ2SEQ_RECOMPUTE", raising=False)
    m.setattr(reference, "pretrained", lambda **kwargs: BASE())
    m.setattr(long_inputs, "load_corpus", lambda *args, **kwargs: corpus)
    groups = long_inputs.test_groups
    m.setattr(long_inputs, "test_groups", lambda config, split=None: groups(config, split)[:6])


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    """The tiny runs computed once with no release reachable, and `make release`'s folders:
    {"out": release folder, "results", "weights": {label: bytes}, "said": printed text}."""
    corpus = load_corpus()  # the machine's own cache, before the private one is set
    with pytest.MonkeyPatch.context() as m:
        _tiny_chapter(m, corpus, tmp_path_factory.mktemp("build-cache"))
        m.setenv(links.RELEASE_ENV, f"http://127.0.0.1:{_closed_port()}")
        said = io.StringIO()
        with contextlib.redirect_stdout(said):
            results = long_inputs.cached_runs(CONFIGS)
        out = tmp_path_factory.mktemp("release")
        (out / "long-inputs-0000000000000000").mkdir()  # another key's run
        (out / "manifest.json").write_text("{}")  # the reference model's release
        manifests = release.write_runs(out, CONFIGS)
        files = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in out.rglob("*.*")}
        again = release.write_runs(out, CONFIGS)  # cached and written: nothing changes
        kept = files == {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in out.rglob("*.*")}
        weights = {label: long_inputs.weights_path(c).read_bytes()
                   for label, c in CONFIGS.items() if c.steps}
        (out / "manifest.json").unlink()
        yield {"out": out, "results": results, "weights": weights, "said": said.getvalue(),
               "manifests": manifests, "corpus": corpus, "again": again, "kept": kept}


@pytest.fixture
def reader(tmp_path, monkeypatch, published):
    """A reader's empty cache and the release folders served on 127.0.0.1 as GitHub serves
    them (<tag>/<file>); yields (served root, request log)."""
    _tiny_chapter(monkeypatch, published["corpus"], tmp_path / "cache")
    root = tmp_path / "served"
    shutil.copytree(published["out"], root)
    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Handler, directory=str(root)))
    httpd.daemon_threads = True
    httpd.requests = []
    threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True).start()
    host, port = httpd.server_address[:2]
    monkeypatch.setenv(links.RELEASE_ENV, f"http://{host}:{port}")
    yield root, httpd.requests
    httpd.shutdown()
    httpd.server_close()


@functools.cache
def _run(config: FinetuneConfig) -> chapter_models.Run:
    """long_inputs.cached_run(config), worked out once (its keys hash the corpus)."""
    return long_inputs.cached_run(config)


def _refuse_training(monkeypatch):
    def refuse(config):
        raise AssertionError("long_inputs.run must not run here")

    monkeypatch.setattr(long_inputs, "run", refuse)


def _compute_here(monkeypatch):
    """A fast stand-in for long_inputs.run: saves the untrained copy, says it ran here."""
    def here(config):
        copy = long_inputs.copy_of(BASE(), config.attention, config.max_len, config.seed)
        checkpoint.save(copy, long_inputs.weights_path(config))
        return {"computed": "here", "steps": config.steps}

    monkeypatch.setattr(long_inputs, "run", here)


def _requests(configs: dict) -> list[str]:
    """What a reader fetches for `configs`, in order: manifest, weights, result, per run."""
    paths = []
    for config in configs.values():
        run = _run(config)
        paths += [f"/{run.tag}/manifest.json"] + [f"/{run.tag}/{name}" for name in run.files()]
    return paths


def _manifest(root: Path, label: str) -> dict:
    return json.loads((root / _run(CONFIGS[label]).tag / "manifest.json")
                      .read_text(encoding="utf-8"))


def _write_manifest(root: Path, label: str, manifest: dict) -> None:
    tag = _run(CONFIGS[label]).tag
    (root / tag / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


# --- the key ---------------------------------------------------------------------------------


def test_the_published_key_hashes_config_reference_training_torch_and_version(monkeypatch):
    """Like the reference model's key: what training does, not the code's text."""
    key = long_inputs.cached_run(FinetuneConfig()).key
    assert re.fullmatch(r"[0-9a-f]{16}", key)
    assert long_inputs.cached_run(FinetuneConfig()).tag == f"long-inputs-{key}"
    assert long_inputs.cached_run(FinetuneConfig(steps=100)).key != key
    assert long_inputs.cached_run(FinetuneConfig(attention=True)).key != key
    monkeypatch.setattr(reference, "reference_key", lambda data_sha256=None: "f" * 16)
    assert long_inputs.cached_run(FinetuneConfig()).key != key
    monkeypatch.undo()
    monkeypatch.setattr(training, "TRAINING_TORCH", "9.9.9")
    assert long_inputs.cached_run(FinetuneConfig()).key != key
    monkeypatch.undo()
    monkeypatch.setattr(training, "TRAINING_VERSION", training.TRAINING_VERSION + 1)
    assert long_inputs.cached_run(FinetuneConfig()).key != key
    monkeypatch.undo()
    assert long_inputs.cached_run(FinetuneConfig()).key == key
    first = chapter_models.published_key("x", {"n": 1})
    assert chapter_models.published_key("x", {"n": 1}) == first
    assert chapter_models.published_key("x", {"n": 2}) != first
    assert chapter_models.published_key("y", {"n": 1}) != first


def test_the_published_key_ignores_the_runtime_torch_that_memos_key_holds(monkeypatch,
                                                                          tmp_path):
    """Colab's torch is not the one the runs were trained with: it must still find them."""
    monkeypatch.setenv("SEQ2SEQ_CACHE", str(tmp_path))
    run = long_inputs.cached_run(FinetuneConfig(attention=True))
    here = run.key, run.result
    monkeypatch.setattr(torch, "__version__", "2.99.0+cu999")
    colab = long_inputs.cached_run(FinetuneConfig(attention=True))
    assert colab.key == here[0]
    assert colab.result != here[1]  # memo's local key holds it: that is why it is not reused


def test_runs_must_share_one_memo_name():
    runs = {"a": chapter_models.Run("one", {}), "b": chapter_models.Run("two", {})}
    with pytest.raises(ValueError, match="one memo name, got 2"):
        chapter_models.cached(runs, lambda label: {}, "toys")


# --- the build: compute, then release ----------------------------------------------------------


def test_nothing_published_so_the_build_computes_each_run_and_says_why(published):
    said = published["said"].splitlines()
    assert len(said) == len(CONFIGS), said
    for line, (label, config) in zip(said, CONFIGS.items()):
        key = _run(config).key
        assert line.startswith(f"Computing the run {label!r} of {WHAT} here, because no usable "
                               f"published run for key {key} (")
    results = published["results"]
    assert [r["steps"] for r in results.values()] == [0, 2, 2]
    assert all(len(r["hypotheses"]) == 6 for r in results.values())


def test_release_writes_one_folder_per_run_with_the_cached_files(published):
    out = published["out"]
    assert sorted(p.name for p in out.iterdir()) == sorted(m["tag"] for m in published[
        "manifests"])
    for (label, config), manifest in zip(CONFIGS.items(), published["manifests"]):
        run = _run(config)
        folder = out / run.tag
        assert json.loads((folder / "manifest.json").read_text()) == manifest
        assert manifest["key"] == run.key and manifest["tag"] == run.tag
        assert manifest["settings"] == {"reference": reference.reference_key(),
                                        **config.__dict__}
        assert manifest["torch"] == training.TRAINING_TORCH
        names = [f"{run.tag}.pt"] * bool(config.steps) + [f"{run.tag}.json"]
        assert [f["file"] for f in manifest["files"]] == names
        assert sorted(p.name for p in folder.iterdir()) == sorted(names + ["manifest.json"])
        for entry in manifest["files"]:
            path = folder / entry["file"]
            assert entry["sha256"] == sha256_of(path) and entry["bytes"] == path.stat().st_size
        assert json.loads((folder / f"{run.tag}.json").read_text()) == \
            published["results"][label]
        if config.steps:
            assert (folder / f"{run.tag}.pt").read_bytes() == published["weights"][label]
        assert label in manifest["description"]


def test_release_again_keeps_the_current_runs_and_drops_other_keys(published):
    assert published["again"] == published["manifests"] and published["kept"]
    assert not (published["out"] / "long-inputs-0000000000000000").exists()


def test_a_run_that_is_not_cached_is_not_released(tmp_path, monkeypatch):
    monkeypatch.setenv("SEQ2SEQ_CACHE", str(tmp_path / "cache"))
    run = long_inputs.cached_run(FinetuneConfig(attention=True))
    with pytest.raises(FileNotFoundError, match=r"long-inputs is not cached \(.*\.pt, "
                                                r".*\.json missing\): run it first"):
        chapter_models.write_release(run, tmp_path / "out", "a run")
    assert not (tmp_path / "out").exists()


def test_the_release_publishes_the_chapters_own_configs():
    chapter = (ROOT / "book" / "attention.md").read_text(encoding="utf-8")
    assert '"reference as it is": long_inputs.FinetuneConfig(steps=0)' in chapter
    assert "ft = long_inputs.FinetuneConfig()" in chapter and '"fixed vector": ft' in chapter
    assert '"attention": long_inputs.FinetuneConfig(attention=True)' in chapter
    assert "runs = long_inputs.cached_runs(ft_configs)" in chapter
    assert release.CHAPTER_RUNS == {"reference as it is": FinetuneConfig(steps=0),
                                    "fixed vector": FinetuneConfig(),
                                    "attention": FinetuneConfig(attention=True)}


# --- the reader: download instead of training ----------------------------------------------


def test_a_reader_downloads_the_published_runs_instead_of_training(published, reader,
                                                                   monkeypatch, capsys):
    _, requests = reader
    _refuse_training(monkeypatch)
    assert long_inputs.cached_runs(CONFIGS) == published["results"]
    assert requests == _requests(CONFIGS)
    assert capsys.readouterr().out == ""
    for label, config in CONFIGS.items():
        if config.steps:
            assert long_inputs.weights_path(config).read_bytes() == published["weights"][label]
    attention = long_inputs.load_copy(CONFIGS["attention"], device="cpu")
    assert attention.config.attention and not attention.training
    # no weights are published for 0 steps: the copy is the reference model's own
    as_is = long_inputs.load_copy(CONFIGS["as it is"], device="cpu")
    assert not long_inputs.weights_path(CONFIGS["as it is"]).exists()
    built = long_inputs.copy_of(BASE(), False, max_len=100)
    assert _same_weights(as_is, built) and as_is.config.max_src_len == 100
    assert long_inputs.cached_runs(CONFIGS) == published["results"]  # the cache, no network
    assert len(requests) == len(_requests(CONFIGS))
    assert not list(long_inputs.weights_path(CONFIGS["fixed"]).parent.glob("*.part-*"))
    long_inputs.weights_path(CONFIGS["fixed"]).unlink()  # a result without its weights is stale
    assert long_inputs.cached_runs(CONFIGS) == published["results"]
    assert requests[len(_requests(CONFIGS)):] == _requests({"fixed": CONFIGS["fixed"]})


@pytest.mark.parametrize("damage", [b"", b'{"cut short', b"\xff\xfe"])
def test_a_cached_result_that_cannot_be_read_is_downloaded_again(published, reader,
                                                                 monkeypatch, capsys, damage):
    _, requests = reader
    _refuse_training(monkeypatch)
    assert long_inputs.cached_runs(CONFIGS) == published["results"]
    run = _run(CONFIGS["fixed"])
    run.result.write_bytes(damage)  # an empty, cut or garbled result
    assert long_inputs.cached_runs(CONFIGS) == published["results"]
    # the manifest and the result again; the weights on disk match the manifest and are kept
    assert requests[len(_requests(CONFIGS)):] == [f"/{run.tag}/manifest.json",
                                                   f"/{run.tag}/{run.tag}.json"]
    assert capsys.readouterr().out == ""


def _break_attention_pt(root: Path, how: str) -> str:
    """Damage what is served for the attention run; returns the problem the reader is told."""
    manifest = _manifest(root, "attention")
    run = _run(CONFIGS["attention"])
    pt = root / run.tag / f"{run.tag}.pt"
    if how == "sha256":
        manifest["files"][0]["sha256"] = "0" * 64
        problem = "has sha256 .*, expected 0{64}"
    elif how == "key":
        manifest["key"] = "f" * 16
        problem = f"is for key {'f' * 16}, not {run.key}"
    elif how == "truncated":
        pt.write_bytes(pt.read_bytes()[:1000])
        problem = f"1000 bytes .* but {manifest['files'][0]['bytes']} were expected"
    elif how == "unlisted":
        manifest["files"] = manifest["files"][1:]
        problem = f"the release manifest of {run.tag} lists no {run.tag}.pt"
    elif how == "malformed":
        manifest["files"][0]["bytes"] = -1
        problem = r"is not valid: files\[0\]: 'bytes' must be a whole number"
    else:
        manifest["files"] = []
        problem = "'files' must be a non-empty list of objects"
    _write_manifest(root, "attention", manifest)
    return problem


@pytest.mark.parametrize("how", ["sha256", "key", "truncated", "unlisted", "malformed", "empty"])
def test_a_bad_download_is_refused_by_name_and_that_run_computed(published, reader, how,
                                                                 monkeypatch, capsys):
    root, requests = reader
    problem = _break_attention_pt(root, how)
    _compute_here(monkeypatch)
    got = long_inputs.cached_runs(CONFIGS)
    assert got["attention"] == {"computed": "here", "steps": 2}
    assert {k: got[k] for k in ("as it is", "fixed")} == {
        k: published["results"][k] for k in ("as it is", "fixed")}
    said = capsys.readouterr().out
    key = _run(CONFIGS["attention"]).key
    assert re.fullmatch(rf"Computing the run 'attention' of {WHAT} here, because no usable "
                        rf"published run for key {key} \(.*{problem}.*\)\. This takes minutes "
                        rf"on a CPU; the result is cached in .*\.\n", said, flags=re.S), said
    path = long_inputs.weights_path(CONFIGS["attention"])
    assert sha256_of(path) != _manifest(published["out"], "attention")["files"][0]["sha256"]
    assert not list(path.parent.glob("*.part-*"))


def test_no_server_means_every_run_is_computed_and_says_so(published, reader, monkeypatch,
                                                          capsys):
    monkeypatch.setenv(links.RELEASE_ENV, f"http://127.0.0.1:{_closed_port()}")
    _compute_here(monkeypatch)
    got = long_inputs.cached_runs(CONFIGS)
    assert all(r == {"computed": "here", "steps": c.steps}
               for r, c in zip(got.values(), CONFIGS.values()))
    said = capsys.readouterr().out.splitlines()
    assert [line.split("'")[1] for line in said] == list(CONFIGS)
    assert all("no usable published run" in line and "refused" in line for line in said), said


def test_one_deadline_bounds_all_the_downloads(published, reader, monkeypatch, capsys):
    root, _ = reader
    for config in CONFIGS.values():
        (root / _run(config).tag / "manifest.json.slow").write_text("0.7")
    _compute_here(monkeypatch)
    runs = {label: long_inputs.cached_run(c) for label, c in CONFIGS.items()}
    start = time.monotonic()
    got = chapter_models.cached(runs, lambda label: long_inputs.run(CONFIGS[label]), WHAT,
                                deadline=1.0)
    assert time.monotonic() - start < 6
    assert got["as it is"] == published["results"]["as it is"]  # 0.7 s: within the deadline
    assert got["attention"] == {"computed": "here", "steps": 2}
    assert "took longer than its deadline of 1 s" in capsys.readouterr().out


def test_recompute_downloads_nothing(published, reader, monkeypatch):
    _, requests = reader
    monkeypatch.setenv("SEQ2SEQ_RECOMPUTE", "1")
    _compute_here(monkeypatch)
    assert long_inputs.cached_runs(CONFIGS)["fixed"] == {"computed": "here", "steps": 2}
    assert requests == []


def test_a_second_process_waits_then_reads_what_the_first_left(published, reader, monkeypatch,
                                                               capsys):
    """While another process holds the runs' lock, cached_runs waits and says so; it then
    finds the runs cached and neither downloads nor trains them."""
    root, requests = reader
    _refuse_training(monkeypatch)
    results = long_inputs.weights_path(CONFIGS["fixed"]).parent
    results.mkdir(parents=True)
    holder = reference.CacheLock(results / "long-inputs", "is downloading", WHAT).__enter__()
    got = []
    waiter = threading.Thread(target=lambda: got.append(long_inputs.cached_runs(CONFIGS)),
                              daemon=True)
    waiter.start()
    said = ""
    for _ in range(100):
        said += capsys.readouterr().out
        if "waiting" in said:
            break
        time.sleep(0.05)
    assert f"is downloading {WHAT}; waiting for it to finish" in said
    for config in CONFIGS.values():  # what the other process fetched
        run = long_inputs.cached_run(config)
        for name, dest in run.files().items():
            shutil.copyfile(root / run.tag / name, dest)
    holder.__exit__(None, None, None)
    waiter.join(timeout=30)
    assert got == [published["results"]] and requests == []


def test_memo_and_the_fetch_agree_on_where_a_result_lives(tmp_path, monkeypatch):
    monkeypatch.setenv("SEQ2SEQ_CACHE", str(tmp_path))
    config = FinetuneConfig(attention=True)
    run = long_inputs.cached_run(config)
    assert run.result == memo.result_path("long-inputs", run.settings)
    assert run.weights == long_inputs.weights_path(config) == run.result.with_suffix(".pt")
    assert long_inputs.cached_run(FinetuneConfig(steps=0)).weights is None


def test_make_chapter_models_caches_the_runs_and_writes_no_release(tmp_path, monkeypatch, reader,
                                                                   published, capsys):
    """`make chapter-models` (release --prepare-runs) before the site build: the runs end up in
    the cache (here downloaded), so the chapter reads them and the page says nothing about
    computing them; nothing goes into the release folder."""
    monkeypatch.setattr(release, "CHAPTER_RUNS", CONFIGS)
    _refuse_training(monkeypatch)
    out = tmp_path / "release"
    release.main(["--prepare-runs", "--out", str(out)])
    said = capsys.readouterr().out
    assert not out.exists()
    for label, config in CONFIGS.items():
        result = long_inputs.cached_run(config).result  # in this test's cache, not _run's
        assert f"{label}: cached at {result}" in said
        assert result.is_file()
    with contextlib.redirect_stdout(io.StringIO()) as quiet:
        again = long_inputs.cached_runs(CONFIGS)  # what the chapter's cell does next
    assert quiet.getvalue() == ""
    assert {label: run["hypotheses"] for label, run in again.items()} == \
        {label: run["hypotheses"] for label, run in published["results"].items()}
