"""lib.course.chapter_models: the attention chapter's runs published as releases and fetched by
`lib.experiments.long_inputs.cached_runs` (and `lib.pretrained(attention=True)`) before it trains.
Tiny configs (8-wide embeddings, 16 units, 2 steps of 4 pairs) stand in for the chapter's models
and the first TEST_SENTENCES test sentences for the 2,000, so the round trip takes seconds; the
oracles are the files the build computed, byte for byte, what the saved weights decode, and the
requests the release server saw."""

from __future__ import annotations

import contextlib
import dataclasses
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
from conftest import ROOT, with_attention
from test_reference import _closed_port, _Handler, _same_weights

import lib
from lib import train as training
from lib.course import chapter_models, checkpoint, links, memo, reference, release
from lib.course.download import sha256_of
from lib.course.memo import load_corpus
from lib.data import corpus_path, corpus_sha256
from lib.evaluate import translate_all
from lib.experiments import long_inputs
from lib.experiments.long_inputs import ScratchConfig
from lib.experiments.toy import tiny_model
from lib.train import new_model

pytestmark = pytest.mark.usefixtures("one_thread")  # tiny models: see conftest

BASE = functools.partial(tiny_model, 0, hidden=16, emb_dim=8, layers=1)  # stand-ins' weights
TINY = dict(emb_dim=8, hidden_size=16, steps=2, batch_size=4)
# The chapter's labels (long_inputs.MODELS), so lib.pretrained(attention=True) finds them.
CONFIGS = {"fixed vector": ScratchConfig(**TINY),
           "attention": ScratchConfig(attention=True, **TINY)}
TEST_SENTENCES = 12  # single test sentences: a few joined groups of 1 .. k_max
WHAT = "the attention chapter's models"


CHAPTER_MODELS = long_inputs.MODELS  # as imported: the module fixture below swaps in tiny ones


def _short(corpus):
    """`corpus` with only its first TEST_SENTENCES test sentences."""
    split = dataclasses.replace(corpus.split, test=corpus.split.test[:TEST_SENTENCES])
    return dataclasses.replace(corpus, split=split)


def _tiny_chapter(m, corpus, cache: Path) -> None:
    """The tiny configs as the chapter's MODELS, the short corpus loaded once, a private cache."""
    m.setenv("SEQ2SEQ_CACHE", str(cache))
    m.delenv("SEQ2SEQ_RECOMPUTE", raising=False)
    m.setattr(long_inputs, "load_corpus", lambda *args, **kwargs: corpus)
    m.setattr(long_inputs, "MODELS", CONFIGS)


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    """The tiny runs computed once with no release reachable, and `make release`'s folders:
    {"out": release folder, "results", "weights": {label: bytes}, "said": printed text,
    "models": {label: the saved model}, "decoded": {label: what it decodes, greedily}}."""
    corpus = _short(load_corpus())  # the machine's own cache, before the private one is set
    with pytest.MonkeyPatch.context() as m:
        _tiny_chapter(m, corpus, tmp_path_factory.mktemp("build-cache"))
        m.setenv(links.RELEASE_ENV, f"http://127.0.0.1:{_closed_port()}")
        said = io.StringIO()
        with contextlib.redirect_stdout(said):
            results = long_inputs.cached_runs(CONFIGS)
        models = {label: long_inputs.load_model(c, device="cpu") for label, c in CONFIGS.items()}
        decoded = {label: {"single": translate_all(model, [en for en, _ in corpus.split.test]),
                           "groups": translate_all(model, [en for en, _, _ in
                                                           long_inputs.test_groups(c)])}
                   for (label, c), model in zip(CONFIGS.items(), models.values())}
        out = tmp_path_factory.mktemp("release")
        (out / f"{long_inputs.NAME}-0000000000000000").mkdir()  # another key's run
        (out / "manifest.json").write_text("{}")  # the reference model's release
        manifests = release.write_runs(out, CONFIGS)
        files = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in out.rglob("*.*")}
        again = release.write_runs(out, CONFIGS)  # cached and written: nothing changes
        kept = files == {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in out.rglob("*.*")}
        weights = {label: long_inputs.weights_path(c).read_bytes()
                   for label, c in CONFIGS.items()}
        (out / "manifest.json").unlink()
        yield {"out": out, "results": results, "weights": weights, "said": said.getvalue(),
               "manifests": manifests, "corpus": corpus, "again": again, "kept": kept,
               "models": models, "decoded": decoded}


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
def _run(config: ScratchConfig) -> chapter_models.Run:
    """long_inputs.cached_run(config), worked out once (its keys hash the corpus)."""
    return long_inputs.cached_run(config)


def _refuse_training(monkeypatch):
    def refuse(config):
        raise AssertionError("long_inputs.run must not run here")

    monkeypatch.setattr(long_inputs, "run", refuse)


def _compute_here(monkeypatch):
    """A fast stand-in for long_inputs.run: saves an untrained model, says it ran here."""
    def here(config):
        model = with_attention(BASE(), config.attention, config.max_len, config.seed)
        checkpoint.save(model, long_inputs.weights_path(config))
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


def test_the_published_key_hashes_config_recipe_data_corpus_torch_and_version(monkeypatch):
    """Like the reference model's key: what training does, not the code's text. The models are
    trained from scratch, so the reference model is no part of it."""
    key = long_inputs.cached_run(ScratchConfig()).key
    assert re.fullmatch(r"[0-9a-f]{16}", key)
    assert long_inputs.cached_run(ScratchConfig()).tag == f"attention-models-{key}"
    assert long_inputs.cached_run(ScratchConfig(steps=100)).key != key
    assert long_inputs.cached_run(ScratchConfig(hidden_size=64)).key != key
    assert long_inputs.cached_run(ScratchConfig(attention=True)).key != key
    monkeypatch.setattr(reference, "DATA",
                        dataclasses.replace(reference.DATA, seed=reference.DATA.seed + 1))
    assert long_inputs.cached_run(ScratchConfig()).key != key
    monkeypatch.undo()
    monkeypatch.setattr(reference, "TRAIN", dataclasses.replace(reference.TRAIN, ema=0.99))
    assert long_inputs.cached_run(ScratchConfig()).key != key  # the recipe fit takes
    monkeypatch.undo()
    monkeypatch.setattr(long_inputs, "corpus_sha256", lambda path: "0" * 64)  # another corpus
    assert long_inputs.cached_run(ScratchConfig()).key != key
    monkeypatch.undo()
    monkeypatch.setattr(training, "TRAINING_TORCH", "9.9.9")
    assert long_inputs.cached_run(ScratchConfig()).key != key
    monkeypatch.undo()
    monkeypatch.setattr(training, "TRAINING_VERSION", training.TRAINING_VERSION + 1)
    assert long_inputs.cached_run(ScratchConfig()).key != key
    monkeypatch.undo()
    monkeypatch.setattr(reference, "reference_key", lambda data_sha256=None: "f" * 16)
    assert long_inputs.cached_run(ScratchConfig()).key == key
    first = chapter_models.published_key("x", {"n": 1})
    assert chapter_models.published_key("x", {"n": 1}) == first
    assert chapter_models.published_key("x", {"n": 2}) != first
    assert chapter_models.published_key("y", {"n": 1}) != first


def test_the_published_key_ignores_the_runtime_torch_that_memos_key_holds(monkeypatch,
                                                                          tmp_path):
    """Colab's torch is not the one the runs were trained with: it must still find them."""
    monkeypatch.setenv("SEQ2SEQ_CACHE", str(tmp_path))
    run = long_inputs.cached_run(ScratchConfig(attention=True))
    here = run.key, run.result
    monkeypatch.setattr(torch, "__version__", "2.99.0+cu999")
    colab = long_inputs.cached_run(ScratchConfig(attention=True))
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
    assert [r["steps"] for r in results.values()] == [2, 2]
    groups = long_inputs.test_groups(CONFIGS["attention"], published["corpus"].split)
    assert 1 < len(groups) < TEST_SENTENCES
    assert all(len(r["hypotheses"]) == len(groups) for r in results.values())
    assert all(len(r["single_hypotheses"]) == TEST_SENTENCES for r in results.values())


def test_each_run_trains_its_model_from_scratch_and_decodes_every_test_source(published):
    """run(): a new model of the config's sizes, trained config.steps steps; its result holds
    what the saved weights decode greedily, for every single test sentence and every joined
    group, in order."""
    corpus = published["corpus"]
    for label, config in CONFIGS.items():
        result, model = published["results"][label], published["models"][label]
        assert result["single_hypotheses"] == published["decoded"][label]["single"]
        assert result["hypotheses"] == published["decoded"][label]["groups"]
        assert all(isinstance(h, str) for h in result["single_hypotheses"])
        assert result["curve"]["step"] and len(result["curve"]["step"]) == len(
            result["curve"]["loss"]) and max(result["curve"]["step"]) <= config.steps
        assert (model.config.emb_dim, model.config.hidden_size, model.config.num_layers) == (
            8, 16, 1)
        assert model.attends == model.config.attention == config.attention
        assert not model.training
        assert model.config.max_src_len == model.config.max_tgt_len == config.max_len
        start = new_model(corpus, config.seed, **config.sizes())
        assert start.state_dict().keys() == model.state_dict().keys()
        assert not _same_weights(start, model)  # trained, from those initial weights


def test_release_writes_one_folder_per_run_with_the_cached_files(published):
    out = published["out"]
    assert sorted(p.name for p in out.iterdir()) == sorted(m["tag"] for m in published[
        "manifests"])
    for (label, config), manifest in zip(CONFIGS.items(), published["manifests"]):
        run = _run(config)
        folder = out / run.tag
        assert json.loads((folder / "manifest.json").read_text()) == manifest
        assert manifest["key"] == run.key and manifest["tag"] == run.tag
        assert manifest["settings"] == {"data": dataclasses.asdict(reference.DATA),
                                        "corpus": corpus_sha256(corpus_path()),
                                        "recipe": reference.TRAIN.to_dict(),
                                        **dataclasses.asdict(config)}
        assert manifest["torch"] == training.TRAINING_TORCH
        names = [f"{run.tag}.pt", f"{run.tag}.json"]  # every run has its weights
        assert [f["file"] for f in manifest["files"]] == names
        assert sorted(p.name for p in folder.iterdir()) == sorted(names + ["manifest.json"])
        for entry in manifest["files"]:
            path = folder / entry["file"]
            assert entry["sha256"] == sha256_of(path) and entry["bytes"] == path.stat().st_size
        assert json.loads((folder / f"{run.tag}.json").read_text()) == \
            published["results"][label]
        assert (folder / f"{run.tag}.pt").read_bytes() == published["weights"][label]
        assert label in manifest["description"]


def test_release_again_keeps_the_current_runs_and_drops_other_keys(published):
    assert published["again"] == published["manifests"] and published["kept"]
    assert not (published["out"] / "attention-models-0000000000000000").exists()


def test_a_run_that_is_not_cached_is_not_released(tmp_path, monkeypatch):
    monkeypatch.setenv("SEQ2SEQ_CACHE", str(tmp_path / "cache"))
    run = long_inputs.cached_run(ScratchConfig(attention=True))
    with pytest.raises(FileNotFoundError, match=r"attention-models is not cached \(.*\.pt, "
                                                r".*\.json missing\): run it first"):
        chapter_models.write_release(run, tmp_path / "out", "a run")
    assert not (tmp_path / "out").exists()


def test_the_release_publishes_the_chapters_own_models():
    """The chapter runs long_inputs.MODELS (cached_runs() and lib.pretrained(attention=True)
    take them by default), and the release publishes those: two models alike but for the
    decoder's context."""
    chapter = (ROOT / "book" / "attention.md").read_text(encoding="utf-8")
    calls = re.findall(r"long_inputs\.cached_runs\((.*?)\)", chapter)
    assert calls and all(args == "" for args in calls), calls
    assert "lib.pretrained(attention=True)" in chapter
    assert release.CHAPTER_RUNS is CHAPTER_MODELS  # the module's own, not the tests' tiny ones
    assert CHAPTER_MODELS == {"fixed vector": ScratchConfig(),
                              "attention": ScratchConfig(attention=True)}


# --- the reader: download instead of training ----------------------------------------------


def test_a_reader_downloads_the_published_runs_instead_of_training(published, reader,
                                                                   monkeypatch, capsys):
    _, requests = reader
    _refuse_training(monkeypatch)
    assert long_inputs.cached_runs(CONFIGS) == published["results"]
    assert requests == _requests(CONFIGS)
    assert capsys.readouterr().out == ""
    for label, config in CONFIGS.items():
        assert long_inputs.weights_path(config).read_bytes() == published["weights"][label]
        model = long_inputs.load_model(config, device="cpu")
        assert _same_weights(model, published["models"][label]) and not model.training
        assert model.attends == config.attention
    assert long_inputs.cached_runs(CONFIGS) == published["results"]  # the cache, no network
    assert len(requests) == len(_requests(CONFIGS))
    assert not list(long_inputs.weights_path(CONFIGS["fixed vector"]).parent.glob("*.part-*"))
    # a result without its weights is stale
    long_inputs.weights_path(CONFIGS["fixed vector"]).unlink()
    assert long_inputs.cached_runs(CONFIGS) == published["results"]
    assert requests[len(_requests(CONFIGS)):] == _requests(
        {"fixed vector": CONFIGS["fixed vector"]})


@pytest.mark.parametrize("damage", [b"", b'{"cut short', b"\xff\xfe"])
def test_a_cached_result_that_cannot_be_read_is_downloaded_again(published, reader,
                                                                 monkeypatch, capsys, damage):
    _, requests = reader
    _refuse_training(monkeypatch)
    assert long_inputs.cached_runs(CONFIGS) == published["results"]
    run = _run(CONFIGS["fixed vector"])
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
    assert got["fixed vector"] == published["results"]["fixed vector"]
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
    # Each manifest answers after 2 s; the one deadline is 3 s. Seconds, not tenths: a busy
    # machine (a second test process, a kernel) must not eat the margins.
    for config in CONFIGS.values():
        (root / _run(config).tag / "manifest.json.slow").write_text("2.0")
    _compute_here(monkeypatch)
    runs = {label: long_inputs.cached_run(c) for label, c in CONFIGS.items()}
    start = time.monotonic()
    got = chapter_models.cached(runs, lambda label: long_inputs.run(CONFIGS[label]), WHAT,
                                deadline=3.0)
    assert time.monotonic() - start < 12
    # 2 s: within the deadline
    assert got["fixed vector"] == published["results"]["fixed vector"]
    assert got["attention"] == {"computed": "here", "steps": 2}
    # the second manifest had only what the first left of the one deadline (under 1 s), not a
    # second deadline of 3 s
    said = capsys.readouterr().out
    left = re.search(r"manifest\.json exceeded its deadline of ([0-9.]+) s", said)
    assert left and 0 < float(left.group(1)) < 1.0, said


def test_recompute_downloads_nothing(published, reader, monkeypatch):
    _, requests = reader
    monkeypatch.setenv("SEQ2SEQ_RECOMPUTE", "1")
    _compute_here(monkeypatch)
    assert long_inputs.cached_runs(CONFIGS)["fixed vector"] == {"computed": "here",
                                                                 "steps": 2}
    assert requests == []


# --- download=False, train=False and lib.pretrained(attention=True) --------------------------


def test_train_false_names_every_missing_run_and_asks_no_server(published, reader,
                                                                monkeypatch, capsys):
    """download=False and train=False together: nothing cached, so a FileNotFoundError that
    names each missing run and its result file, before any request."""
    _, requests = reader
    _refuse_training(monkeypatch)
    with pytest.raises(FileNotFoundError) as error:
        long_inputs.cached_runs(CONFIGS, download=False, train=False)
    message = str(error.value)
    for label, config in CONFIGS.items():
        assert f"{label!r} ({long_inputs.cached_run(config).result})" in message, message
    assert message.startswith(f"{WHAT}: no cached run ") and "train=False" in message
    assert requests == [] and capsys.readouterr().out == ""
    assert not any(long_inputs.cached_run(c).result.exists() for c in CONFIGS.values())


def test_train_false_downloads_what_it_can_and_refuses_the_rest_by_name(published, reader,
                                                                        monkeypatch, capsys):
    """chapter_models.cached(train=False): a run that cannot be downloaded is not computed;
    the error names that run and why its download failed, and the run downloaded before it
    stays cached."""
    root, requests = reader
    _break_attention_pt(root, "sha256")
    _refuse_training(monkeypatch)
    runs = {label: long_inputs.cached_run(c) for label, c in CONFIGS.items()}
    with pytest.raises(FileNotFoundError, match=r"has sha256 .*, expected 0{64}") as error:
        chapter_models.cached(runs, lambda label: long_inputs.run(CONFIGS[label]), WHAT,
                              train=False)
    message = str(error.value)
    assert f"'attention' ({runs['attention'].result})" in message and "train=False" in message
    assert "'fixed vector'" not in message
    assert runs["fixed vector"].complete() and not runs["attention"].complete()
    assert capsys.readouterr().out == ""  # no "Computing the run ..."
    assert requests == _requests(CONFIGS)[:5]  # all but the attention run's result


def test_train_false_with_no_server_is_a_file_not_found_error(published, reader, monkeypatch):
    monkeypatch.setenv(links.RELEASE_ENV, f"http://127.0.0.1:{_closed_port()}")
    _refuse_training(monkeypatch)
    with pytest.raises(FileNotFoundError, match="no cached run 'fixed vector' .*train=False"):
        long_inputs.cached_runs(CONFIGS, train=False)


def test_download_false_trains_without_asking_the_release_server(published, reader,
                                                                 monkeypatch, capsys):
    _, requests = reader
    _compute_here(monkeypatch)
    got = long_inputs.cached_runs(CONFIGS, download=False)
    assert got == {label: {"computed": "here", "steps": 2} for label in CONFIGS}
    assert requests == []
    said = capsys.readouterr().out.splitlines()
    assert [line.split("'")[1] for line in said] == list(CONFIGS)
    assert all("(downloading is turned off (download=False))" in line for line in said), said


def test_download_false_and_train_false_read_what_is_cached(published, reader, monkeypatch,
                                                            capsys):
    _, requests = reader
    _refuse_training(monkeypatch)
    assert long_inputs.cached_runs(CONFIGS) == published["results"]  # downloaded
    assert long_inputs.cached_runs(CONFIGS, download=False, train=False) == published["results"]
    assert requests == _requests(CONFIGS) and capsys.readouterr().out == ""


def test_lib_pretrained_attention_is_the_attention_run(published, reader, monkeypatch, capsys):
    """lib.pretrained(attention=True): the chapter's attention model, its published weights
    (both runs are fetched together), in eval mode; later from the cache alone."""
    _, requests = reader
    _refuse_training(monkeypatch)
    model = lib.pretrained(attention=True, device="cpu")
    assert _same_weights(model, published["models"]["attention"])
    assert model.attends and not model.training
    assert requests == _requests(CONFIGS) and capsys.readouterr().out == ""
    again = lib.pretrained(attention=True, device="cpu", download=False, train=False)
    assert _same_weights(again, model) and len(requests) == len(_requests(CONFIGS))


def test_lib_pretrained_attention_without_download_or_training_names_the_runs(
        published, reader, monkeypatch):
    _, requests = reader
    _refuse_training(monkeypatch)
    monkeypatch.setattr(reference, "pretrained",
                        lambda **kwargs: pytest.fail("asked for the reference model"))
    with pytest.raises(FileNotFoundError, match="no cached run 'fixed vector' .*'attention'"):
        lib.pretrained(attention=True, download=False, train=False)
    assert requests == []


def test_a_second_process_waits_then_reads_what_the_first_left(published, reader, monkeypatch,
                                                               capsys):
    """While another process holds the runs' lock, cached_runs waits and says so; it then
    finds the runs cached and neither downloads nor trains them."""
    root, requests = reader
    _refuse_training(monkeypatch)
    results = long_inputs.weights_path(CONFIGS["fixed vector"]).parent
    results.mkdir(parents=True)
    holder = reference.CacheLock(results / long_inputs.NAME, "is downloading", WHAT).__enter__()
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
    config = ScratchConfig(attention=True)
    run = long_inputs.cached_run(config)
    assert run.result == memo.result_path("attention-models", run.settings)
    assert run.weights == long_inputs.weights_path(config) == run.result.with_suffix(".pt")
    assert list(run.files().values()) == [run.weights, run.result]
    bare = chapter_models.Run("toys", {"n": 1})  # a run nothing loads weights of
    assert bare.files() == {f"{bare.tag}.json": bare.result}


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
