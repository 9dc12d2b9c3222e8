"""lib.memo: a result is computed once per settings and code, read back afterwards, recomputed
when the settings, the code or SEQ2SEQ_RECOMPUTE say so; bad input is named."""

from __future__ import annotations

import json
import types

import pytest

import lib.data
import lib.head
from lib import memo


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
