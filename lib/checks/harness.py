"""What every checker is built from: results in words, and a safe call of the learner's function.

A checker runs zero-argument checks with `run_checks`; each check calls the learner's function
through `call`, compares what comes back with the reference (`expect_shape`, `expect_close`) and
raises `Mismatch("what is wrong")` on a wrong answer. The result is a `CheckResult`, which prints
the first thing that is wrong and never raises, so a notebook keeps running.

`call` is where the learner's code runs, and it answers for everything that code may do:
an endless loop is stopped after `TIME_LIMIT` seconds (`lib.checks.timelimit`; under
`run_checks` the checker's process is killed if the loop escapes that), an argument changed in
place is named (`lib.checks.snapshot`), a library function replaced or a setting (gradient
tracking, default dtype, recursion limit) left changed is put back and named, and `sys.exit()`
is reported, not obeyed. Only the
exceptions raised by the learner's code are reported as "your function raised ..."; one raised by
the checker's own code is not blamed on the learner.
"""

from __future__ import annotations

import html
import inspect
from dataclasses import dataclass, field

import torch

from lib.checks import snapshot, timelimit

# A verdict paints its own background, so its colours keep their contrast on any output area
# (WCAG AA, 4.5:1, tests/test_accessibility.py): light by default (the classic Notebook, Colab),
# dark on the website's and JupyterLab's dark themes, as the widgets' views do. The symbol and
# the words say the verdict too, for a reader who does not see the colour.
VERDICT_CSS = (
    "pre.s2s-check{white-space:pre-wrap;margin:0;padding:4px 8px;border-radius:4px;"
    "color:var(--s2s-check-fg);background:var(--s2s-check-bg);border:0}"
    ".s2s-check-ok{--s2s-check-fg:#166534;--s2s-check-bg:#f0fdf4}"
    ".s2s-check-todo{--s2s-check-fg:#854d0e;--s2s-check-bg:#fefce8}"
    ".s2s-check-wrong{--s2s-check-fg:#991b1b;--s2s-check-bg:#fef2f2}"
    "html[data-theme=dark] .s2s-check-ok,body[data-jp-theme-light=false] .s2s-check-ok"
    "{--s2s-check-fg:#86efac;--s2s-check-bg:#052e16}"
    "html[data-theme=dark] .s2s-check-todo,body[data-jp-theme-light=false] .s2s-check-todo"
    "{--s2s-check-fg:#fde047;--s2s-check-bg:#422006}"
    "html[data-theme=dark] .s2s-check-wrong,body[data-jp-theme-light=false] .s2s-check-wrong"
    "{--s2s-check-fg:#fca5a5;--s2s-check-bg:#450a0a}"
)


class Mismatch(AssertionError):
    """Raised inside a checker when the learner's answer differs; the message is shown."""


@dataclass
class CheckResult:
    title: str
    ok: bool
    done: bool = True  # False when the learner's function is still a skeleton
    messages: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        if not self.done:
            head = f"… {self.title}: not done yet — fill in the function, then run this again."
        elif self.ok:
            head = f"✓ {self.title}: all checks passed."
        else:
            head = f"✗ {self.title}: not yet right."
        return "\n".join([head] + [f"  - {m}" for m in self.messages])

    def __repr__(self) -> str:
        return str(self)

    @property
    def state(self) -> str:
        """"ok", "todo" (a skeleton still) or "wrong": the verdict's CSS class s2s-check-<state>."""
        return "ok" if self.ok else ("todo" if not self.done else "wrong")

    def _repr_html_(self) -> str:
        return (f'<style>{VERDICT_CSS}</style><pre class="s2s-check s2s-check-{self.state}">'
                f"{html.escape(str(self))}</pre>")

    def __bool__(self) -> bool:
        return self.ok


def run_checks(title: str, *checks) -> CheckResult:
    """Run zero-argument check functions in order; the first Mismatch stops and is reported.

    Each check function raises `Mismatch("what is wrong")` or returns a short note of what
    passed. NotImplementedError from the learner's code means the skeleton is unfinished.
    Where it can, the checker runs in a process of its own (`timelimit.isolated`), killed if the
    learner's function outlives its time limit however it escapes the guards of `call`; a
    checker whose process could not use CUDA (a forked process cannot) runs here again.
    """
    try:
        outcome = timelimit.isolated(lambda: _run_checks(title, checks))
    except timelimit.Unavailable:
        return _run_checks(title, checks)
    if outcome[0] == "overran":
        return CheckResult(title, ok=False, messages=outcome[1])
    if outcome[0] == "ended":
        return CheckResult(title, ok=False, messages=[
            f"your function ended the process that checks it ({outcome[1]}), e.g. with "
            f"os._exit() or a crash in C code; return a value instead"])
    result = outcome[1]
    if any(_NO_CUDA_WHEN_FORKED in m for m in result.messages):
        return _run_checks(title, checks)
    return result


_NO_CUDA_WHEN_FORKED = "Cannot re-initialize CUDA in forked subprocess"
_notes: list[str] = []  # what the checks running now have passed, for a timeout's report


def _run_checks(title: str, checks) -> CheckResult:
    global _notes
    outer, _notes = _notes, []
    try:
        for check in checks:
            try:
                note = check()
            except NotImplementedError:  # (a checker raises it too, for an answer still `...`)
                return CheckResult(title, ok=False, done=False)
            except Mismatch as e:
                return CheckResult(title, ok=False, messages=_notes + [str(e)])
            except Exception as e:  # say where, not a traceback
                message = (f"your function raised {type(e).__name__}: {e}" if _from_learner(e)
                           else _checker_error(e))
                return CheckResult(title, ok=False, messages=_notes + [message])
            if note:
                _notes.append(f"ok: {note}")
        return CheckResult(title, ok=True, messages=_notes)
    finally:
        _notes = outer


def _checker_error(e: Exception) -> str:
    return (f"your answer could not be checked: the check itself raised {type(e).__name__}: "
            f"{e} (look at what your function returns, or at the values you passed)")


def expect_shape(name: str, got, expected: tuple) -> None:
    shape = tuple(getattr(got, "shape", ()))
    if shape != tuple(expected):
        raise Mismatch(f"{name} has shape {shape}, expected {tuple(expected)}")


def tokens_text(model, ids) -> str:
    """Target token ids as the words a message shows ("#7" for an id outside the vocabulary)."""
    return " ".join(model.tgt_vocab.itos[i] if 0 <= i < len(model.tgt_vocab) else f"#{i}"
                    for i in ids) or "(nothing)"


def expect_close(name: str, got, expected, atol: float = 1e-5, rtol: float = 1e-4) -> None:
    """Tensors equal up to tolerance; the message names the first position that differs."""
    got = torch.as_tensor(got, dtype=torch.float64)
    expected = torch.as_tensor(expected, dtype=torch.float64)
    expect_shape(name, got, expected.shape)
    bad = ~torch.isclose(got, expected, atol=atol, rtol=rtol)
    if bool(bad.any()):
        where = tuple(int(i) for i in bad.nonzero()[0])
        raise Mismatch(f"{name} differs at index {where}: got {got[where].item():.6g}, "
                       f"expected {expected[where].item():.6g} ({int(bad.sum())} of "
                       f"{bad.numel()} values differ)")


# ---------------------------------------------------------------------------------------------
# Calling the learner's function
# ---------------------------------------------------------------------------------------------

# Seconds one call of the learner's function may take. The checkers' cases are small (the
# slowest, greedy decoding with the course model on a CPU, takes well under a second), so a call
# that runs this long is almost surely a loop that never ends. Tests lower it.
TIME_LIMIT = 20.0

LOOP_HINT = ("the likely cause is a loop that never ends, e.g. a `while` loop whose condition "
             "never becomes false")
DECODING_HINT = ("the likely cause is a decoding loop that never ends: it waits for <eos>, "
                 "which a model is never obliged to write; stop after max_len tokens as well")

_LEARNER = "_raised_by_learners_code"  # the mark `call` puts on the learner's exceptions


def call(fn, *args, names: tuple[str, ...] = (), hint: str = LOOP_HINT, where: str = "",
         limit: float | None = None):
    """`fn(*args)` for a checker; what the learner's code does wrong raises a `Mismatch` that
    says so kindly:

    - it runs longer than `limit` seconds (TIME_LIMIT by default): it is stopped
      (`lib.checks.timelimit`), and `hint` says what the likely cause is, `where` which case
      was running;
    - it changes an argument in place (the checker passes its own objects, no copies):
      named by `names`, the skeleton's parameter names, unless the learner's signature shows
      their own (`lib.checks.snapshot`);
    - it replaces a library's function or leaves a setting changed (gradient tracking, the
      default dtype or device, the recursion limit): put back, then named;
    - it calls `sys.exit()` (or `exit()`): reported as its exit, which does not end the kernel.

    Its other exceptions pass through, marked as the learner's for `run_checks`.
    """
    if not callable(fn):
        raise Mismatch(f"pass your function itself (e.g. check(my_function)), not a "
                       f"{type(fn).__name__}")
    limit = TIME_LIMIT if limit is None else limit
    labels = _arg_names(fn, len(args), names)
    before = [snapshot.freeze(a) for a in args]
    libraries = snapshot.Globals()
    try:
        with timelimit.watched(limit, _notes + [_timeout_message(limit, where, hint, False)]):
            result = timelimit.run(fn, args, limit)
    except timelimit.TimeUp as e:
        raise Mismatch(_timeout_message(limit, where, hint, e.still_running)) from None
    except SystemExit as e:
        raise Mismatch(f"your function called sys.exit({'' if e.code is None else repr(e.code)})"
                       f", which would end a script; return a value instead (the notebook "
                       f"goes on)") from None
    except Exception as e:
        setattr(e, _LEARNER, True)
        raise
    finally:
        put_back = libraries.restore()
        if put_back:
            raise Mismatch(put_back)  # (replaces the call's own outcome: this explains it)
    for label, arg, frozen in zip(labels, args, before):
        message = snapshot.changed(arg, frozen, label)
        if message:
            raise Mismatch(message)
    return result


def _from_learner(e: BaseException) -> bool:
    return getattr(e, _LEARNER, False)


def _timeout_message(limit: float, where: str, hint: str, still_running: bool) -> str:
    seconds = f"{limit:g} second{'s' if limit != 1 else ''}"
    head = f"your function took longer than {seconds}{' on ' + where if where else ''} and was "
    if still_running:
        return (head + f"abandoned: {hint}. It may still be running in the background; if the "
                f"notebook slows down, restart the kernel")
    return head + f"stopped: {hint}"


def _arg_names(fn, n: int, names: tuple[str, ...]) -> list[str]:
    """The learner's parameter names where its signature shows them, else the skeleton's."""
    try:
        params = [p for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    return [params[i].name if i < len(params) else names[i] if i < len(names)
            else f"argument {i + 1}" for i in range(n)]
