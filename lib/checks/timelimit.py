"""Stop a learner's function after a time limit, whatever it does to escape.

Each call runs in the calling thread, not in a process of its own: a checker passes the
learner's function its own objects, often the chapter's model, and Colab's GPU runtime keeps
that model on CUDA (Apple machines on MPS): a forked process cannot use CUDA ("Cannot
re-initialize CUDA in forked subprocess"), a spawned one would need the function pickled (a
function defined in a notebook cell is not), and the function's prints, its changes to its
arguments and its result (with the autograd graph a checker follows) would live in another
process, at the cost of a fork per call. So `run` stops the function with three guards that
work alike in Jupyter and Colab:

1. An alarm (SIGALRM from `setitimer`, which Linux and macOS deliver to the main thread, where
   notebooks run their cells) raises `TimeUp` inside the function at the deadline: a Python
   loop stops between two bytecodes and a `time.sleep` or blocking read is interrupted. It
   repeats every `REPEAT` seconds.
2. From the deadline on, a trace function follows the function's frames and raises `TimeUp`
   again on the first line of any `except` clause that caught it, so that a bare
   `except: pass` (or `except BaseException`) cannot swallow the stop: the second one is
   raised outside the `try`. `finally:` blocks and `with` exits still run.
3. A watchdog thread keeps its own clock: if the function switched the alarm off
   (`signal.alarm(0)`, `setitimer`, a SIGALRM handler of its own), it re-arms the timer where
   our handler is still installed, and raises `TimeUp` in the function's thread either way
   (`PyThreadState_SetAsyncExc`: the hook an alarm uses too, checked between two bytecodes).

What none of them can do: stop one long C call (a huge matmul finishes first), or code that
ignores SIGALRM, switches the trace off (`sys.settrace(None)`) or swallows the stop outside an
`except` (`finally: continue`, `contextlib.suppress(BaseException)`). Hence the backstop,
`isolated`: on Linux a whole checker runs in a forked process, which its parent kills when a
call outlives its limit by `GRACE` seconds; everything the checker compares stays in that
process, and only its verdict comes back (a checker that needs CUDA runs again here, with the
three guards alone).

Where no alarm is possible (Windows, a checker called from another thread, or a timer someone
else armed), the function runs in a daemon thread that the caller stops waiting for at the
deadline (`TimeUp.still_running`): Python cannot kill a thread, so it only gets `TimeUp`
raised in it.
"""

from __future__ import annotations

import contextlib
import ctypes
import dis
import functools
import os
import pickle
import random
import select
import signal
import struct
import sys
import threading
import time

import torch

REPEAT = 0.25  # seconds between two stops once the deadline has passed


class TimeUp(BaseException):
    """Raised inside the learner's code when its time is up.

    A BaseException, so that a learner's `except Exception:` cannot swallow it.
    `still_running` is True when the function could not be stopped and was abandoned.
    """

    def __init__(self, still_running: bool = False):
        super().__init__()
        self.still_running = still_running


def run(fn, args: tuple, limit: float):
    """`fn(*args)`, stopped after `limit` seconds by raising `TimeUp` from this call.

    The function's own exceptions pass through; if its time ran out, `TimeUp` is raised
    whatever it did afterwards (returned a value, raised something else).
    """
    if not _alarm_usable():
        return _run_in_thread(fn, args, limit)
    stopper = _Stopper(limit, sys._getframe())
    try:
        stopper.start()
        try:
            result = fn(*args)
        finally:
            stopper.running = False  # first, before any call: see _Stopper.stop
            while True:
                try:
                    stopper.stop()
                    break
                except TimeUp:
                    stopper.expired = True
    except TimeUp:
        raise TimeUp() from None
    except BaseException:
        if stopper.expired:
            raise TimeUp() from None
        raise
    if stopper.expired:
        raise TimeUp()
    return result


def _alarm_usable() -> bool:
    return (hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
            and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0))


def raise_in_thread(thread_id: int, exc: type[BaseException]) -> None:
    """Raise `exc` in the thread `thread_id` when it next checks for signals (between two
    bytecodes). Never to cancel one: on Python 3.11 a cancel leaves the interpreter checking on
    every bytecode from then on, and a trace function then loops forever."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), ctypes.py_object(exc))


def _checkpoint() -> None:
    """Nothing: calling a Python function is a point where a pending TimeUp is raised."""


class _Stopper:
    """The three guards of one call (see the module's docstring); `home` is the frame that
    calls the learner's function: the frames below it are the learner's."""

    def __init__(self, limit: float, home):
        self.limit, self.home = limit, home
        self.deadline = time.monotonic() + limit
        self.running = False  # the learner's function is running: the guards may act
        self.expired = False  # a TimeUp was raised in it
        self.thread_id = threading.get_ident()
        self.lock = threading.Lock()  # the watchdog acts only while `running`
        self.done = threading.Event()
        self.watchdog = threading.Thread(target=self._watch, daemon=True,
                                         name="checker-watchdog")

    def start(self) -> None:
        self.previous_handler = signal.signal(signal.SIGALRM, self._on_alarm)
        self.previous_trace = sys.gettrace()
        self.running = True
        signal.setitimer(signal.ITIMER_REAL, self.limit, REPEAT)
        self.watchdog.start()

    def stop(self) -> None:
        """Disarm everything (idempotent). The caller sets `running` to False first, with no
        call before it (a call is where a pending TimeUp lands), and calls this again if a
        TimeUp lands inside: once `running` is False no guard raises a new one, and at most
        the one the watchdog was raising meanwhile is still on its way."""
        with self.lock:  # the watchdog has finished raising, if it was
            self.running = False
        _checkpoint()  # where that one lands, if it has not yet
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, self.previous_handler)
        if sys.gettrace() is not self.previous_trace:
            sys.settrace(self.previous_trace)
        self.done.set()

    # 1. the alarm
    def _on_alarm(self, signum, frame) -> None:
        if not self.running:
            return
        self.expired = True
        self._follow(frame)
        raise TimeUp

    # 2. the trace function that stops an `except` clause from swallowing the stop
    def _follow(self, frame) -> None:
        """Trace the learner's frames, from `frame` up to `home`, and every new one."""
        sys.settrace(self._trace)
        while frame is not None and frame is not self.home:
            frame.f_trace = self._trace
            frame = frame.f_back

    def _trace(self, frame, event, arg):
        if not self.running:
            return None
        if (event == "line" and frame.f_lasti in _except_clause_starts(frame.f_code)
                and isinstance(sys.exc_info()[1], TimeUp)):
            raise TimeUp  # (Python then switches this trace off: the next alarm restores it)
        return self._trace

    # 3. the watchdog
    def _watch(self) -> None:
        wait = self.deadline - time.monotonic() + REPEAT
        while not self.done.wait(max(wait, 0.0)):
            with self.lock:
                if not self.running:
                    return
                if signal.getsignal(signal.SIGALRM) == self._on_alarm:
                    left = signal.getitimer(signal.ITIMER_REAL)[0]
                    if not 0 < left <= REPEAT:  # switched off or pushed back: re-arm
                        signal.setitimer(signal.ITIMER_REAL, REPEAT, REPEAT)
                self.expired = True
                raise_in_thread(self.thread_id, TimeUp)
            wait = REPEAT


@functools.lru_cache(maxsize=256)
def _except_clause_starts(code) -> frozenset:
    """Offsets where a line event means "an `except` clause starts handling the exception".

    Python 3.11+: the POP_TOP after PUSH_EXC_INFO of a bare `except:`, the instructions of an
    `except SomeError:` line. Python 3.9 and 3.10: a handler (the target of SETUP_FINALLY, or
    of the previous clause's JUMP_IF_NOT_EXC_MATCH) that starts with POP_TOP (bare) or DUP_TOP
    (a type to match); a `finally:` handler starts with its own code, a `with` has its own
    opcodes."""
    ins = list(dis.get_instructions(code))
    at = {i.offset: i for i in ins}
    starts = set()
    for k, i in enumerate(ins):
        if i.opname in ("SETUP_FINALLY", "JUMP_IF_NOT_EXC_MATCH") and \
                getattr(at.get(i.argval), "opname", "") in ("POP_TOP", "DUP_TOP"):
            starts.add(i.argval)
        elif i.opname == "POP_TOP" and k and ins[k - 1].opname == "PUSH_EXC_INFO":
            starts.add(i.offset)
        elif i.opname in ("CHECK_EXC_MATCH", "CHECK_EG_MATCH"):
            line = i.positions.lineno if i.positions else None
            j = k
            while j >= 0 and ins[j].opname != "PUSH_EXC_INFO" and (
                    ins[j].positions is None or ins[j].positions.lineno == line):
                starts.add(ins[j].offset)
                j -= 1
    return frozenset(starts)


def _run_in_thread(fn, args: tuple, limit: float):
    """The fallback without an alarm: the function in a daemon thread, abandoned at the limit.

    Grad mode is per thread: the caller's is carried over."""
    grad = torch.is_grad_enabled()
    box: dict = {}

    def work():
        try:
            with torch.set_grad_enabled(grad):
                box["result"] = fn(*args)
        except BaseException as e:  # re-raised in the caller's thread below
            box["error"] = e

    worker = threading.Thread(target=work, daemon=True, name="learner-function")
    worker.start()
    worker.join(limit)
    if worker.is_alive():
        raise_in_thread(worker.ident, TimeUp)  # stops a Python loop; a sleep sleeps on
        raise TimeUp(still_running=True)
    if "error" in box:
        raise box["error"]
    return box["result"]


# ---------------------------------------------------------------------------------------------
# The backstop: a checker in a process of its own
# ---------------------------------------------------------------------------------------------

GRACE = 1.0  # seconds past a call's limit before the checker's process is killed


class Unavailable(Exception):
    """No forked process here: the caller runs the checker in this one."""


_channel: int | None = None  # in a checker's process: the pipe's end that writes to the parent


def isolated(work):
    """`work()`, a whole checker, in a forked copy of this process, which the parent kills when
    a call inside it (announced by `watched`) outlives its limit by `GRACE`: the guards above
    stop almost every runaway function, but not one that ignores SIGALRM, switches the trace
    off and swallows the stop in `finally: continue`; a killed process stops them all.

    The whole checker, not the one call, so that it sees what the learner's function does to
    its arguments, gradients included; its output is forwarded as it comes, and the random
    generators' states come back as if it had run here. Returns ("done", value),
    ("overran", report) with the report that `watched` was given, or ("ended", how) when the
    process ended without an answer; an exception of `work` is raised here. Raises
    `Unavailable` where there is no fork (Windows), where fork is unsafe (macOS) and inside
    such a process already."""
    if _channel is not None or not hasattr(os, "fork") or not sys.platform.startswith("linux"):
        raise Unavailable
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    read, write, states = *os.pipe(), _generators()
    pid = os.fork()
    if pid == 0:  # pragma: no cover (the child ends in os._exit; coverage does not see it)
        os.close(read)
        _child(work, write, states)
    os.close(write)
    try:
        outcome = _listen(read)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        os.close(read)
    if outcome[0] == "raised":
        _put_generators(outcome[2])
        raise outcome[1]
    if outcome[0] == "done":
        _put_generators(outcome[2])
        return outcome[:2]
    if outcome[0] == "ended":
        return ("ended", _how_it_ended(status))
    return outcome


@contextlib.contextmanager
def watched(limit: float, report):
    """Tell the parent of a checker's process that a call with this time limit runs; `report`
    is what `isolated` returns if the process is killed for it. Nothing outside such a
    process."""
    if _channel is None:
        yield
        return
    _send(("call", limit, report))
    try:
        yield
    finally:
        _send(("back",))


def _child(work, channel: int, states):
    global _channel
    try:
        _channel = channel
        _put_generators(states)  # (`random` reseeds itself in a forked process)
        with contextlib.suppress(Exception):  # ends with the parent, even a SIGKILLed one
            ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        torch.set_num_threads(1)  # the parent's OpenMP threads are not in this process
        sys.stdout, sys.stderr = _Forward("stdout"), _Forward("stderr")
        try:
            message = ("done", work(), _generators())
        except BaseException as e:
            message = ("raised", _portable(e), _generators())
        try:
            _send(message)
        except Exception as e:  # a value that does not pickle
            _send(("raised", RuntimeError(f"the check's answer could not be sent: {e}"),
                   _generators()))
    finally:
        os._exit(0)


def _send(message) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    data = struct.pack("<Q", len(data)) + data
    while data:
        data = data[os.write(_channel, data):]


class _Forward:
    """sys.stdout or sys.stderr of a checker's process: sent to the parent, which prints it. In
    pieces under PIPE_BUF bytes, which one write puts in the pipe whole, even when the stop
    lands in the learner's printing loop."""

    def __init__(self, name: str):
        self.name = name

    def write(self, text: str) -> int:
        for i in range(0, len(text), 1000):
            data = pickle.dumps(("out", self.name, text[i:i + 1000]))
            os.write(_channel, struct.pack("<Q", len(data)) + data)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def _listen(read: int):
    """Forward the child's output until its answer comes, or a call overruns, or it ends."""
    buffer, deadline, report = b"", None, None
    while True:
        wait = None if deadline is None else max(deadline - time.monotonic(), 0.0)
        if not select.select([read], [], [], wait)[0]:
            return ("overran", report)
        chunk = os.read(read, 1 << 16)
        if not chunk:
            return ("ended",)
        buffer += chunk
        while len(buffer) >= 8 and len(buffer) >= 8 + struct.unpack("<Q", buffer[:8])[0]:
            size = struct.unpack("<Q", buffer[:8])[0]
            message, buffer = pickle.loads(buffer[8:8 + size]), buffer[8 + size:]
            if message[0] == "out":
                getattr(sys, message[1]).write(message[2])
            elif message[0] == "call":
                deadline, report = time.monotonic() + message[1] + GRACE, message[2]
            elif message[0] == "back":
                deadline = None
            else:
                return message


def _portable(e: BaseException) -> BaseException:
    """`e`, if it survives pickling, else a RuntimeError that names it."""
    try:
        return pickle.loads(pickle.dumps(e))
    except Exception:
        return RuntimeError(f"{type(e).__name__}: {e}")


def _generators():
    return torch.get_rng_state(), random.getstate()


def _put_generators(states) -> None:
    torch.set_rng_state(states[0])
    random.setstate(states[1])


def _how_it_ended(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"killed by signal {signal.Signals(os.WTERMSIG(status)).name}"
    return f"exit status {os.WEXITSTATUS(status)}"
