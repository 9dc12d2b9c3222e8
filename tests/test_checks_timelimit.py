"""lib.checks.timelimit.isolated, under lib.checks.harness.run_checks: a checker runs in a forked
process that is killed when the learner's function outlives its time limit, so that no function
can hang the notebook, whatever it does to the signals, the trace function or the exceptions.
Each case runs in a subprocess of its own with a timeout, so that a regression fails, not hangs."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap

import pytest
import torch

from lib.checks import timelimit
from lib.checks.harness import call, run_checks

PROBES = {
    "alarm ignored, bare except": """
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        while True:
            try:
                sum(range(1000))
            except:
                pass
    """,
    "suppress in a loop": """
        while True:
            with contextlib.suppress(BaseException):
                time.sleep(0.01)
    """,
    "finally continues": """
        while True:
            try:
                sum(range(1000))
            finally:
                continue
    """,
    "trace switched off": """
        while True:
            sys.settrace(None)
            try:
                sum(range(1000))
            except BaseException:
                pass
    """,
}

SCRIPT = """
import contextlib, signal, sys, time
import lib.checks.harness as harness
harness.TIME_LIMIT = 1.0

def runaway(x):
{body}

start = time.monotonic()
result = harness.run_checks("demo", lambda: "a first case", lambda: harness.call(runaway, 1))
print(str(result))
print("seconds", round(time.monotonic() - start, 1))
"""


@pytest.mark.parametrize("body", PROBES.values(), ids=PROBES.keys())
def test_a_function_that_defeats_every_guard_in_its_process_is_still_stopped(body):
    script = SCRIPT.format(body=textwrap.indent(textwrap.dedent(body), "    "))
    try:
        run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                             timeout=90)
    except subprocess.TimeoutExpired:
        pytest.fail("the checker hung")
    assert run.returncode == 0, run.stderr
    assert "✗ demo: not yet right." in run.stdout
    assert "ok: a first case" in run.stdout  # the notes of the checks that passed come back
    assert "your function took longer than 1 second and was stopped" in run.stdout
    seconds = float(run.stdout.split("seconds")[-1])
    assert seconds < 10, run.stdout


@pytest.fixture
def bounded():
    """Fail a test after 60 s instead of hanging (the checker's own process has no timer)."""
    def expire(signum, frame):
        raise TimeoutError("the checker hung")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, 60)
    yield
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, previous)


needs_fork = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork: Linux only")


@needs_fork
def test_output_random_states_and_gradients_come_back_from_the_checkers_process(bounded, capsys):
    torch.manual_seed(0)
    random.seed(0)
    leaf = torch.ones(3, requires_grad=True)

    def learner(x):
        print("working on", x.tolist())
        return (x * 2).sum()

    def check():
        out = call(learner, leaf)
        out.backward()  # the graph of the learner's answer, in the checker's process
        assert leaf.grad.tolist() == [2.0, 2.0, 2.0]
        assert random.random() == 0.8444218515250481  # the seed set here holds there
        torch.rand(1)
        return f"pid {os.getpid()}"

    result = run_checks("demo", check)
    assert result.ok, str(result)
    assert f"pid {os.getpid()}" not in str(result)  # it did run in another process
    assert "working on [1.0, 1.0, 1.0]" in capsys.readouterr().out
    after = torch.rand(1), random.random()
    torch.manual_seed(0)
    random.seed(0)
    torch.rand(1), random.random()
    assert after == (torch.rand(1), random.random())  # the draws there count as if here


@needs_fork
def test_a_function_that_ends_the_process_is_reported(bounded):
    result = run_checks("demo", lambda: call(lambda x: os._exit(3), 1))
    assert not result.ok
    assert "ended the process that checks it (exit status 3)" in str(result)


@needs_fork
def test_a_checker_that_needs_cuda_runs_again_here(bounded):
    """A forked process cannot use CUDA, which the checker's own process then does."""
    def learner(x):
        if timelimit._channel is not None:  # (as torch says in a forked process)
            raise RuntimeError("Cannot re-initialize CUDA in forked subprocess. To use CUDA...")
        return x

    result = run_checks("demo", lambda: f"got {call(learner, 1)} in {os.getpid()}")
    assert result.ok and f"got 1 in {os.getpid()}" in str(result)


def test_without_fork_the_checker_runs_here(monkeypatch, bounded):
    monkeypatch.setattr(sys, "platform", "darwin")
    assert f"in {os.getpid()}" in str(run_checks("demo", lambda: f"in {os.getpid()}"))
