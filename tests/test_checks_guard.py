"""lib.checks.harness.call: every checker runs the learner's function through it, so these tests pin
down the two promises it makes to every exercise: an argument changed in place is named, and
a function that never returns is stopped within the time limit with a kind message."""

from __future__ import annotations

import signal
import sys
import threading
import time
from dataclasses import dataclass

import pytest
import torch
from conftest import assert_rejects

import lib.checks.harness
from lib.checks import decoder as decoder_checks
from lib.checks import search as search_checks
from lib.checks.harness import Mismatch, call, run_checks
from lib.data import EOS, SOS
from lib.experiments import toy
from lib.search import log_probs


@pytest.fixture
def one_second(monkeypatch):
    """Every checker's time limit lowered to 1 s, so that a runaway test ends quickly."""
    monkeypatch.setattr(lib.checks.harness, "TIME_LIMIT", 1.0)


def mismatch(fn, *args, **kwargs) -> str:
    with pytest.raises(Mismatch) as info:
        call(fn, *args, **kwargs)
    return str(info.value)


# --- inputs changed in place ------------------------------------------------------------------


def test_an_untouched_call_returns_the_result_and_leaves_no_timer():
    before = signal.getsignal(signal.SIGALRM)
    h = torch.randn(2, 3)
    assert torch.equal(call(lambda h: h * 2, h), h * 2)
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) is before


def test_a_tensor_changed_in_place_is_named():
    def zero(x, h):
        out = h.tanh()
        h.zero_()
        return out

    message = mismatch(zero, torch.ones(2), torch.ones(2, 3))
    assert "your function changed its input `h` in place (e.g. h.zero_()" in message
    assert "compute a new tensor instead" in message


def test_every_kind_of_input_changed_in_place_is_named():
    assert "`refs` in place (e.g. refs.sort()" in mismatch(
        lambda refs: refs.sort(), ["b", "a"])
    assert "`refs[0]` in place" in mismatch(
        lambda refs: refs[0].append("x"), [["a"], ["b"]])
    assert "`seqs` in place" in mismatch(  # an item replaced by another list
        lambda seqs: seqs.__setitem__(0, [9]), [[1], [2]])
    assert "`counts` in place (e.g. counts[key] = ..." in mismatch(
        lambda counts: counts.update(a=2), {"a": 1})
    assert "`seen` in place (e.g. seen.add(...)" in mismatch(lambda seen: seen.add(3), {1, 2})
    assert "`pair[1]` in place" in mismatch(  # a tensor inside a tuple
        lambda pair: pair[1].add_(1), (torch.zeros(2), torch.zeros(2)))


def test_a_tensor_inside_an_object_is_named_by_its_attribute():
    @dataclass
    class Batch:
        src: torch.Tensor
        tgt_in: torch.Tensor

    def shift(batch):
        batch.tgt_in[:, 0] = SOS

    message = mismatch(shift, Batch(torch.zeros(2, 3), torch.zeros(2, 4)))
    assert "changed its input `batch.tgt_in` in place" in message
    assert "`batch` in place" in mismatch(
        lambda batch: setattr(batch, "src", None), Batch(torch.zeros(1), torch.zeros(1)))


def test_a_model_whose_weights_or_mode_change_is_named():
    model = torch.nn.Linear(3, 2).eval()

    def sgd_step(model):
        model(torch.ones(1, 3)).sum().backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= 0.1 * p.grad

    assert "changed the weights of `model` in place (weight)" in mismatch(sgd_step, model)
    model = torch.nn.Linear(3, 2).eval()
    assert "switched `model` to training mode (model.train())" in mismatch(
        lambda model: model.train(), model)
    model = torch.nn.Linear(3, 2).eval()
    assert "changed the weights of `cells[0]`" in mismatch(
        lambda cells: cells[0].weight.data.zero_(), [model])  # .data escapes autograd's counter


def test_reading_and_rebuilding_are_not_changes():
    g = torch.Generator().manual_seed(0)
    vocab = {"a": 10_000, "b": 2}
    model = torch.nn.Linear(2, 2).eval()

    def harmless(h, tokens, vocab, gen, model):
        h = h + 1  # a new tensor, not an in-place change
        tokens = sorted(tokens)
        vocab["a"] = int("10000")  # the same value again (another int object)
        model(torch.zeros(1, 2)).sum().backward()  # gradients are not weights
        return torch.rand(1, generator=gen), h, tokens

    call(harmless, torch.zeros(2), ["b", "a"], vocab, g, model)
    call(lambda x: x, torch.tensor([float("nan"), float("-inf")]))  # nan == nan here


def test_the_learners_own_parameter_names_come_first():
    assert "`logits`" in mismatch(lambda logits: logits.exp_(), torch.zeros(2), names=("z",))

    def star(*w):
        w[1].zero_()

    assert "`weight_hh`" in mismatch(star, torch.ones(1), torch.ones(1),
                                     names=("weight_ih", "weight_hh"))
    assert "`argument 2`" in mismatch(star, torch.ones(1), torch.ones(1))


def test_errors_and_unfinished_skeletons_pass_through():
    def skeleton(x):
        raise NotImplementedError

    with pytest.raises(NotImplementedError):
        call(skeleton, 1)
    result = run_checks("demo", lambda: call(lambda x: 1 / x, 0))
    assert "ZeroDivisionError" in str(result) and result.done and not result.ok


# --- the time limit ---------------------------------------------------------------------------


def greedy_without_cap(model, src_ids, max_len):
    """A greedy loop that stops only at <eos>, on a model that never writes it."""
    _, state, context = model.encode(torch.tensor([src_ids]), torch.tensor([len(src_ids)]))
    prev, out = torch.tensor([SOS]), []
    while not out or out[-1] != EOS:
        logits, state = model.decoder.step(prev, state, context)
        logits[:, EOS] = float("-inf")  # (as if this model never wrote <eos>)
        prev = log_probs(logits).argmax(-1)
        out.append(int(prev))
    return out


def test_a_decoding_loop_that_never_ends_is_stopped_with_a_kind_message(one_second):
    start = time.monotonic()
    result = decoder_checks.check_greedy_decode(greedy_without_cap)
    elapsed = time.monotonic() - start
    assert elapsed < 15, f"the checker took {elapsed:.1f} s with a 1 s limit"
    assert_rejects(result, "took longer than 1 second on tiny model, 4-token source",
                   "was stopped", "never ends", "<eos>", "max_len")
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


@pytest.mark.parametrize("runaway", [
    lambda *a: time.sleep(10_000),
    lambda *a: [None for _ in iter(int, 1)],  # a pure-Python loop: no system call to interrupt
])
def test_sleeping_and_busy_loops_are_stopped(one_second, runaway):
    start = time.monotonic()
    result = search_checks.check_one_parent_step(runaway)
    assert time.monotonic() - start < 15
    assert_rejects(result, "took longer than 1 second", "a loop that never ends")


def test_a_loop_that_swallows_exceptions_is_still_stopped(one_second):
    def stubborn(*args):
        while True:
            try:
                time.sleep(0.05)
            except Exception:  # the learner's own error handling must not catch the alarm
                pass

    start = time.monotonic()
    assert_rejects(search_checks.check_greedy(stubborn), "took longer than 1 second")
    assert time.monotonic() - start < 15


def test_off_the_main_thread_the_call_is_abandoned_in_time():
    """Where SIGALRM cannot be used, a thread with a join timeout keeps the cell responsive."""
    stop = threading.Event()
    seen = {}

    def runaway(x):
        seen["grad"] = torch.is_grad_enabled()
        while not stop.is_set():
            time.sleep(0.01)

    def checker():
        start = time.monotonic()
        with torch.no_grad():
            try:
                call(runaway, torch.zeros(1), limit=0.5)
            except Mismatch as e:
                seen["message"] = str(e)
        seen["elapsed"] = time.monotonic() - start

    thread = threading.Thread(target=checker)
    thread.start()
    thread.join(20)
    stop.set()  # end the abandoned function: a test must not leave it running
    assert seen["elapsed"] < 10
    assert "took longer than 0.5 seconds" in seen["message"]
    assert "still be running in the background" in seen["message"]
    assert seen["grad"] is False  # the caller's no_grad reached the worker thread


def test_off_the_main_thread_results_errors_and_changes_still_come_back():
    out = {}

    def checker():
        out["value"] = call(lambda x: x + 1, 1)
        try:
            call(lambda x: x.zero_(), torch.ones(1))
        except Mismatch as e:
            out["changed"] = str(e)
        try:
            call(lambda: 1 / 0)
        except ZeroDivisionError:
            out["error"] = True

    thread = threading.Thread(target=checker)
    thread.start()
    thread.join(20)
    assert out == {"value": 2, "changed": out["changed"], "error": True}
    assert "`x` in place" in out["changed"]


# --- a function that fights the time limit -----------------------------------------------


def swallow_with_bare_except(*args):
    while True:
        try:
            time.sleep(0.05)
        except:  # noqa: E722 (the learner's bare except, which caught the stop before)
            pass


def swallow_around_torch(*args):
    x = torch.zeros(3)
    while True:
        try:
            x = (x + 1).tanh()
        except BaseException:
            continue


def switch_the_alarm_off(*args):
    signal.setitimer(signal.ITIMER_REAL, 0)
    while True:
        pass


def ignore_the_alarm(*args):
    signal.signal(signal.SIGALRM, signal.SIG_IGN)
    while True:
        time.sleep(0.05)


def alarm_zero_then_swallow(*args):
    signal.alarm(0)
    while True:
        try:
            sum(range(1000))
        except:  # noqa: E722
            pass


@pytest.mark.parametrize("runaway", [swallow_with_bare_except, swallow_around_torch,
                                     switch_the_alarm_off, ignore_the_alarm,
                                     alarm_zero_then_swallow])
def test_a_function_that_swallows_or_disarms_the_stop_is_still_stopped(one_second, runaway):
    before = signal.getsignal(signal.SIGALRM)
    start = time.monotonic()
    result = search_checks.check_one_parent_step(runaway)
    assert time.monotonic() - start < 15
    assert_rejects(result, "took longer than 1 second", "was stopped")
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) is before  # a handler the function set is undone
    assert sys.gettrace() is None or "coverage" in type(sys.gettrace()).__module__


def test_a_stopped_function_still_runs_its_finally_and_with_exits():
    """Only `except` clauses are denied the stop: cleanup code runs, so the model comes back
    in its own mode and gradient tracking is on again."""
    from lib.widgets.runtime import evaluating

    model = torch.nn.Linear(2, 2).train()
    cleaned = []

    def runaway(model):
        with evaluating(model):  # eval mode and no_grad inside, undone by its `finally`
            try:
                while True:
                    try:
                        time.sleep(0.05)
                    except:  # noqa: E722
                        pass
            finally:
                cleaned.append(True)

    assert "was stopped" in mismatch(runaway, model, limit=0.5)
    assert cleaned == [True] and model.training and torch.is_grad_enabled()


def test_the_time_limit_is_whole_not_per_alarm():
    """A function that finishes after its time ran out, having swallowed the stop, is reported
    as too slow: its late answer is not taken."""
    def late(x):
        try:
            time.sleep(5)
        except BaseException:
            pass
        return x

    assert "took longer than 0.5 seconds" in mismatch(late, 1, limit=0.5)


# --- sys.exit, replaced library functions, gradient mode ------------------------------------


@pytest.mark.parametrize("leave, words", [
    (lambda x: sys.exit(), "called sys.exit()"),
    (lambda x: sys.exit(3), "called sys.exit(3)"),
    (lambda x: exit("bye"), "called sys.exit('bye')"),
])
def test_sys_exit_is_reported_as_the_learners_exit(leave, words):
    result = run_checks("demo", lambda: call(leave, 1))
    assert_rejects(result, words, "return a value instead")


def test_a_replaced_library_function_is_put_back_and_named():
    equal, argmax = torch.equal, torch.Tensor.argmax

    def cheat(x):
        torch.equal = lambda a, b: True
        torch.Tensor.argmax = lambda self, *a, **k: 0
        return x

    message = mismatch(cheat, torch.zeros(2))
    assert "`torch.equal`" in message and "`torch.Tensor.argmax`" in message
    assert "has been put back" in message
    assert torch.equal is equal and torch.Tensor.argmax is argmax
    assert "argmax" not in vars(torch.Tensor)
    assert "`h` in place" in mismatch(lambda h: h.add_(1), torch.zeros(2))  # the check works


def test_a_replaced_course_function_is_put_back():
    import lib.search

    greedy = lib.search.greedy

    def patch(x):
        lib.search.greedy = None

    assert "`lib.search.greedy`" in mismatch(patch, 1)
    assert lib.search.greedy is greedy


@pytest.mark.parametrize("state", [False, True])
def test_gradient_mode_left_switched_is_put_back(state):
    with torch.set_grad_enabled(state):
        message = mismatch(lambda x: torch.set_grad_enabled(not state), 1)
        assert torch.is_grad_enabled() is state
    assert f"switched gradient tracking {'on' if not state else 'off'}" in message


def test_new_names_and_lazily_imported_submodules_are_not_changes():
    def harmless(x):
        import torch.utils.data  # noqa: F401 (a submodule imported on first use)

        return x

    assert call(harmless, 1) == 1


# --- a model's attributes and submodules ----------------------------------------------------


def tiny_seq2seq():
    return toy.tiny_model(0).eval()


def test_a_flipped_model_attribute_is_a_change_of_an_input():
    model = tiny_seq2seq()
    assert model.decoder.feed_context is True

    def flip(model):
        model.decoder.feed_context = False

    message = mismatch(flip, model)
    assert "changed `model.decoder.feed_context` from True to False" in message


def test_a_submodule_left_in_training_mode_is_caught():
    model = tiny_seq2seq()
    message = mismatch(lambda model: model.decoder.train(), model)
    assert "switched `model.decoder` to training mode (model.decoder.train())" in message
    model = tiny_seq2seq()
    assert "`model.encoder.dropout` to training mode" in mismatch(
        lambda model: model.encoder.dropout.train(), model)


def test_a_replaced_submodule_or_added_attribute_is_caught():
    model = tiny_seq2seq()
    assert "replaced or removed the submodule `model.decoder.head`" in mismatch(
        lambda model: setattr(model.decoder, "head", torch.nn.Identity()), model)
    model = tiny_seq2seq()
    assert "added `model.cache`" in mismatch(lambda model: setattr(model, "cache", 1), model)


def test_using_a_model_is_not_a_change():
    model = tiny_seq2seq()

    def translate(model):
        model.train()  # switched, then put back: the model is as it was
        model.eval()
        with torch.no_grad():
            return model.encode(torch.tensor([[4, 5]]), torch.tensor([2]))[1]

    call(translate, model)


# --- whose error it is ----------------------------------------------------------------------


def test_only_the_learners_exceptions_are_blamed_on_the_learner():
    learner = run_checks("demo", lambda: call(lambda x: 1 / x, 0))
    assert "your function raised ZeroDivisionError" in str(learner)

    def checker_trips():
        call(lambda: [1, 2])
        return 1 / 0  # the check's own code fails, not the learner's function

    own = run_checks("demo", checker_trips)
    assert_rejects(own, "could not be checked", "ZeroDivisionError")
    assert "your function raised" not in str(own)


def test_something_else_than_a_function_is_refused_kindly():
    assert "pass your function itself" in mismatch(42)
