"""lib.course.memo: a result is computed once per settings and code, read back afterwards,
recomputed
when the settings, the code or SEQ2SEQ_RECOMPUTE say so; bad input is named."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest

import lib.data
import lib.head
from lib.course import memo

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SEQ2SEQ_CACHE", str(tmp_path))
    monkeypatch.delenv("SEQ2SEQ_RECOMPUTE", raising=False)
    return tmp_path


def counting(value):
    calls = []

    def compute():
        calls.append(1)
        return value
    return compute, calls


def test_computed_once_then_read_back(cache):
    compute, calls = counting({"loss": [1.5, 1.25], "bleu": 7.0})
    first = memo.cached("run", {"ratio": 0.5}, compute)
    second = memo.cached("run", {"ratio": 0.5}, compute)
    assert first == second == {"loss": [1.5, 1.25], "bleu": 7.0}
    assert len(calls) == 1
    (path,) = (cache / "results").glob("run-*.json")
    assert json.loads(path.read_text()) == first


def test_other_settings_or_code_compute_again():
    compute, calls = counting([1, 2])
    memo.cached("run", {"ratio": 0.5}, compute, modules=(lib.head,))
    memo.cached("run", {"ratio": 0.0}, compute, modules=(lib.head,))
    memo.cached("run", {"ratio": 0.5}, compute, modules=(lib.data,))
    memo.cached("other", {"ratio": 0.5}, compute, modules=(lib.head,))
    assert len(calls) == 4
    memo.cached("run", {"ratio": 0.5}, compute, modules=(lib.head,))
    assert len(calls) == 4


def test_a_changed_module_source_changes_the_key(monkeypatch):
    before = memo.fingerprint({"a": 1}, (lib.head,))
    monkeypatch.setattr(memo.inspect, "getsource", lambda m: "def changed(): pass\n")
    assert memo.fingerprint({"a": 1}, (lib.head,)) != before


def test_comments_and_docstrings_do_not_change_the_key(monkeypatch):
    source = 'def f(x):\n    """Why."""\n    return x + 1  # a comment\n'
    monkeypatch.setattr(memo.inspect, "getsource", lambda m: source)
    before = memo.fingerprint({}, (lib.head,))
    monkeypatch.setattr(memo.inspect, "getsource", lambda m: (
        '"""A module docstring."""\n\n\ndef f(x):\n    """Why, said better."""\n'
        '    # a new comment\n    return x + 1\n'))
    assert memo.fingerprint({}, (lib.head,)) == before
    monkeypatch.setattr(memo.inspect, "getsource", lambda m: "def f(x):\n    return x + 2\n")
    assert memo.fingerprint({}, (lib.head,)) != before


def test_key_order_does_not_matter():
    assert memo.fingerprint({"a": 1, "b": 2}) == memo.fingerprint({"b": 2, "a": 1})


def test_recompute_variable_forces_a_new_run(monkeypatch):
    compute, calls = counting(3)
    memo.cached("run", {}, compute)
    monkeypatch.setenv("SEQ2SEQ_RECOMPUTE", "1")
    memo.cached("run", {}, compute)
    assert len(calls) == 2


def test_a_failed_computation_leaves_nothing(cache):
    def fails():
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError):
        memo.cached("run", {}, fails)
    assert not list(cache.rglob("*.json")) and not list(cache.rglob("*.tmp"))


@pytest.mark.parametrize("call, words", [
    (lambda: memo.cached("run", {"x": object()}, lambda: 1), "key must be JSON"),
    (lambda: memo.cached("run", {}, lambda: {1, 2}), "compute() must return JSON"),
    (lambda: memo.cached("../up", {}, lambda: 1), "name must be"),
    (lambda: memo.cached("run", {}, lambda: 1, modules=("lib.train",)), "must be modules"),
    (lambda: memo.cached("run", {}, lambda: 1, modules=(types.SimpleNamespace(),)),
     "must be modules"),
])
def test_bad_input_is_named(call, words, cache):
    with pytest.raises((TypeError, ValueError)) as error:
        call()
    assert words in str(error.value)
    assert not list(cache.rglob("*.json"))


# --- cached_all: several settings, the missing ones side by side --------------------------------


def _seeded_training(label):
    """A seeded, one-thread computation whose numbers would differ on another thread count or
    seed: what the chapters run in their workers."""
    import os

    import torch

    torch.manual_seed(label)
    layer = torch.nn.GRU(8, 16, batch_first=True)
    opt = torch.optim.Adam(layer.parameters(), lr=1e-2)
    x = torch.randn(4, 7, 8)
    for _ in range(5):
        loss = layer(x)[0].pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return {"loss": loss.item(), "weight": layer.weight_hh_l0[0, :4].tolist(),
            "pid": os.getpid(), "threads": torch.get_num_threads()}


def test_cached_all_runs_the_missing_side_by_side_with_the_same_numbers(cache):
    import os

    import torch

    keys = {0: {"seed": 0}, 1: {"seed": 1}, 2: {"seed": 2}}
    together = memo.cached_all("gru", keys, _seeded_training, workers=2)
    assert list(together) == [0, 1, 2]
    pids = {r["pid"] for r in together.values()}
    assert os.getpid() not in pids and len(pids) == 3  # each in a process of its own
    assert all(r["threads"] == 1 for r in together.values())
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:  # the oracle: the same computation alone, in this process, on one thread
        alone = {label: _seeded_training(label) for label in keys}
    finally:
        torch.set_num_threads(threads)
    for label in keys:
        assert together[label]["loss"] == alone[label]["loss"]  # bit for bit
        assert together[label]["weight"] == alone[label]["weight"]
    assert together[0]["loss"] != together[1]["loss"]  # the seeds matter: not a constant
    # stored like `cached` stores them: the single-setting function reads them back
    assert memo.cached("gru", {"seed": 1}, lambda: pytest.fail("recomputed")) == together[1]


def test_cached_all_computes_only_what_is_missing(cache):
    memo.cached("run", {"r": 1}, lambda: {"r": 1, "from": "before"})
    calls = []

    def compute(label):
        calls.append(label)
        return {"r": label, "from": "now"}
    out = memo.cached_all("run", {1: {"r": 1}, 2: {"r": 2}}, compute, workers=1)
    assert out == {1: {"r": 1, "from": "before"}, 2: {"r": 2, "from": "now"}}
    assert calls == [2]


def _fails(label):
    if label == "bad":
        raise ValueError("the learning rate is negative")
    return {"ok": label}


def _dies(label):
    import os

    if label == "killed":
        os._exit(3)
    return {"ok": label}


@pytest.mark.parametrize("compute, label, words", [
    (_fails, "bad", "ValueError: the learning rate is negative"),
    (_dies, "killed", "exit code 3"),
])
def test_a_failing_worker_is_named_and_nothing_of_it_is_kept(cache, compute, label, words):
    with pytest.raises(RuntimeError, match=f"'{label}'") as err:
        memo.cached_all("run", {"fine": {"x": 1}, label: {"x": 2}}, compute, workers=2)
    assert words in str(err.value)
    assert [p.name for p in (cache / "results").glob("*.tmp")] == []
    assert not memo.result_path("run", {"x": 2}).exists()


@pytest.mark.parametrize("workers", [0, -1, 1.5, True])
def test_cached_all_refuses_a_bad_worker_count(cache, workers):
    with pytest.raises(ValueError, match="workers"):
        memo.cached_all("run", {1: {"a": 1}, 2: {"a": 2}}, _fails, workers=workers)


# --- a damaged result file, and workers whose parent is gone ----------------------------------


@pytest.mark.parametrize("content", [b"", b'{"loss": [1.5', b"\xff\xfe\x00", b"not json"])
def test_an_empty_or_damaged_result_file_counts_as_missing(cache, content):
    """It failed every later call with a JSONDecodeError: now it is computed and written again."""
    compute, calls = counting({"loss": [1.5, 1.25]})
    path = memo.result_path("run", {"ratio": 0.5})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    assert memo.cached("run", {"ratio": 0.5}, compute) == {"loss": [1.5, 1.25]}
    assert len(calls) == 1 and json.loads(path.read_text()) == {"loss": [1.5, 1.25]}
    assert memo.cached("run", {"ratio": 0.5}, compute) == {"loss": [1.5, 1.25]}
    assert len(calls) == 1


def test_cached_all_recomputes_only_the_damaged_result(cache):
    seen = []
    keys = {"a": {"n": 1}, "b": {"n": 2}}
    memo.cached_all("pair", keys, lambda label: seen.append(label) or label * 2, workers=1)
    memo.result_path("pair", keys["b"]).write_text("")
    assert memo.cached_all("pair", keys, lambda label: seen.append(label) or label * 3,
                           workers=1) == {"a": "aa", "b": "bbb"}
    assert seen == ["a", "b", "b"]


_SLEEPY_PARENT = """
import os, sys, time
from lib.course import memo

def compute(label):
    with open(os.path.join(sys.argv[1], f"worker-{label}"), "w") as f:
        f.write(str(os.getpid()))
    time.sleep(300)
    return label

memo.cached_all("sleepy", {"a": 1, "b": 2}, compute, workers=2)
"""


def _alive(pid: int) -> bool:
    """Running (not gone, not a zombie waiting for a reaper)."""
    try:
        stat = open(f"/proc/{pid}/stat", encoding="utf-8").read()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


@pytest.mark.skipif(sys.platform != "linux", reason="workers are forked on Linux only")
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_forked_workers_die_with_their_parent(cache, tmp_path, how):
    """A restarted kernel (SIGTERM, then SIGKILL) left its workers training for no one."""
    env = {**os.environ, "SEQ2SEQ_CACHE": str(cache)}
    parent = subprocess.Popen([sys.executable, "-c", _SLEEPY_PARENT, str(tmp_path)], cwd=ROOT,
                              env=env, stderr=subprocess.DEVNULL)
    files = [tmp_path / "worker-a", tmp_path / "worker-b"]
    workers = []
    try:
        deadline = time.monotonic() + 240  # importing torch on a busy machine is slow
        while not all(f.is_file() and f.read_text() for f in files):
            assert parent.poll() is None and time.monotonic() < deadline, "no workers started"
            time.sleep(0.1)
        workers = [int(f.read_text()) for f in files]
        assert all(_alive(pid) for pid in workers)
        parent.send_signal(how)
        parent.wait(30)
        deadline = time.monotonic() + 20
        while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [pid for pid in workers if _alive(pid)], "workers outlived their parent"
    finally:
        if parent.poll() is None:
            parent.kill()
        for pid in workers:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_the_cached_corpus_is_the_pipeline_s_output_and_follows_its_key(tmp_path, monkeypatch):
    """memo.load_corpus reads the corpus back from the disk: the same values and types as
    building it, and another data setting or corpus file is built anew, never served from the
    cache."""
    monkeypatch.setenv("SEQ2SEQ_CACHE", str(tmp_path))
    small = tmp_path / "fra.txt"
    small.write_text("".join(f"Sentence number {i}.\tPhrase numéro {i}.\n" for i in range(60))
                     + "I am here.\tJe suis là.\nI am here.\tMe voici.\n", encoding="utf-8")
    config = lib.data.DataConfig(min_freq=1, n_valid=5, n_test=5, limit=None)
    built = lib.data.build_corpus(config, small)
    first = memo.load_corpus(config, small)
    again = memo.load_corpus(config, small)
    for corpus in (first, again):
        assert corpus.split == built.split and corpus.train_examples == built.train_examples
        assert corpus.src_vocab == built.src_vocab and corpus.tgt_vocab == built.tgt_vocab
        assert isinstance(corpus.train_examples[0], tuple)
        assert all(isinstance(p, tuple) for p in corpus.split.valid + corpus.split.train)
    assert len(list((tmp_path / "results").glob("corpus-*"))) == 1
    other = memo.load_corpus(lib.data.DataConfig(min_freq=1, n_valid=4, n_test=5, limit=None),
                             small)
    assert len(other.split.valid) == 4
    small.write_text(small.read_text(encoding="utf-8") + "You run.\tTu cours.\n",
                     encoding="utf-8")
    grown = memo.load_corpus(config, small)
    def n_pairs(c):
        return len(c.split.train) + sum(len(refs) for _, refs in c.split.valid + c.split.test)

    assert n_pairs(grown) == n_pairs(built) + 1
    assert len(list((tmp_path / "results").glob("corpus-*"))) == 3


@pytest.mark.skipif(sys.platform != "linux", reason="workers are forked on Linux only")
def test_an_interrupt_ends_every_worker(cache, tmp_path):
    """A KeyboardInterrupt in a kernel that stays alive (Jupyter, Colab) ends every worker,
    the one being waited on included: none is left computing for no one."""
    import multiprocessing
    import threading

    def compute(label):
        (tmp_path / f"worker-{label}").write_text(str(os.getpid()))
        time.sleep(300)
        return label

    files = [tmp_path / "worker-a", tmp_path / "worker-b"]

    def interrupt():
        deadline = time.monotonic() + 60
        while not all(f.is_file() and f.read_text() for f in files):
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGINT)

    # A kernel's Ctrl-C raises KeyboardInterrupt; an earlier test of the session (a notebook
    # client, a browser driver) may have left another SIGINT handler installed in this process.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    threading.Thread(target=interrupt, daemon=True).start()
    try:
        with pytest.raises(KeyboardInterrupt):
            memo.cached_all("sleepy", {"a": 1, "b": 2}, compute, workers=2)
    finally:
        signal.signal(signal.SIGINT, previous)
    workers = [int(f.read_text()) for f in files]
    try:
        assert not [pid for pid in workers if _alive(pid)], "a worker outlived the interrupt"
        assert not multiprocessing.active_children()
    finally:
        for pid in workers:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
