"""Checkers for the exercises: run a learner's function against the reference and explain.

Every chapter's exercises call a checker from a module here named after the chapter's concept
(`lib.checks.encoder`, `lib.checks.bleu`, ...). A checker never raises on a wrong answer: it
returns a `CheckResult` that prints what is wrong in words (wrong shape, wrong values at step t,
padding not masked...), so a notebook keeps running; tests use `.ok`. An unfinished skeleton
(`raise NotImplementedError`) is reported as "not done yet", not as a failure.

Every checker runs the learner's function through `call`, which stops it after `TIME_LIMIT`
seconds (a notebook cell never hangs on an endless loop) and names any argument it changed in
place (the checker passes its own objects, not copies, and compares them with a snapshot).
"""

from __future__ import annotations

from dataclasses import dataclass, field


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

    def _repr_html_(self) -> str:
        import html

        colour = "#1b7f3b" if self.ok else ("#8a6d00" if not self.done else "#b3261e")
        return (f'<pre style="color:{colour};white-space:pre-wrap;margin:0">'
                f"{html.escape(str(self))}</pre>")

    def __bool__(self) -> bool:
        return self.ok


def run_checks(title: str, *checks) -> CheckResult:
    """Run zero-argument check functions in order; the first Mismatch stops and is reported.

    Each check function raises `Mismatch("what is wrong")` or returns a short note of what
    passed. NotImplementedError from the learner's code means the skeleton is unfinished.
    """
    notes = []
    for check in checks:
        try:
            note = check()
        except NotImplementedError:
            return CheckResult(title, ok=False, done=False)
        except Mismatch as e:
            return CheckResult(title, ok=False, messages=notes + [str(e)])
        except Exception as e:  # the learner's code crashed: say where, not a traceback
            return CheckResult(title, ok=False, messages=notes + [
                f"your function raised {type(e).__name__}: {e}"])
        if note:
            notes.append(f"ok: {note}")
    return CheckResult(title, ok=True, messages=notes)


def expect_shape(name: str, got, expected: tuple) -> None:
    shape = tuple(getattr(got, "shape", ()))
    if shape != tuple(expected):
        raise Mismatch(f"{name} has shape {shape}, expected {tuple(expected)}")


def expect_close(name: str, got, expected, atol: float = 1e-5, rtol: float = 1e-4) -> None:
    """Tensors equal up to tolerance; the message names the first position that differs."""
    import torch

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
# Calling the learner's function: a time limit, and inputs that must come back unchanged
# ---------------------------------------------------------------------------------------------

# Seconds one call of the learner's function may take. The checkers' cases are small (the
# slowest, greedy decoding with the course model on a CPU, takes well under a second), so a call
# that runs this long is almost surely a loop that never ends. Tests lower it.
TIME_LIMIT = 20.0

LOOP_HINT = ("the likely cause is a loop that never ends, e.g. a `while` loop whose condition "
             "never becomes false")
DECODING_HINT = ("the likely cause is a decoding loop that never ends: it waits for <eos>, "
                 "which a model is never obliged to write; stop after max_len tokens as well")


class _Timeout(BaseException):
    """Raised inside the learner's code when its time is up.

    A BaseException, so that a learner's `except Exception:` inside the loop cannot swallow it.
    """


def call(fn, *args, names: tuple[str, ...] = (), hint: str = LOOP_HINT, where: str = "",
         limit: float | None = None):
    """`fn(*args)` for a checker: stopped after `limit` seconds, and its arguments verified
    unchanged afterwards; either problem raises a `Mismatch` that says so kindly.

    The checker passes its own objects (no copies), so that a function which changes them in
    place (`h.zero_()`, an in-place softmax, `refs.sort()`) is caught: a snapshot of every
    argument is kept and compared after the call (tensors with torch.equal, lists, dicts and
    objects' public attributes item by item, modules by their weights and train/eval mode).
    `names` are the skeleton's parameter names; the learner's own names win when its signature
    shows them. `where` says which case was running, for the timeout message.

    Time limit. In the main thread on Linux and macOS (Jupyter and Colab run cells there), a
    SIGALRM timer raises `_Timeout` inside the learner's code, which really stops it: the
    handler runs between two Python bytecodes, so a Python loop or `time.sleep` stops at once
    (one long C call, such as a huge matmul, finishes first). The timer repeats every 0.5 s in
    case a bare `except:` swallows the first alarm. A thread with a join timeout was rejected as
    the main mechanism: the cell would return, but the runaway function would keep running and
    burning the CPU until the kernel restarts, since Python cannot kill a thread. It is only the
    fallback where no alarm is possible (Windows, a checker called from another thread, or a
    timer already armed by someone else), and the message then says that the function is still
    running.
    """
    limit = TIME_LIMIT if limit is None else limit
    labels = _arg_names(fn, len(args), names)
    before = [_freeze(a, set()) for a in args]
    if _alarm_usable():
        result = _call_with_alarm(fn, args, limit, where, hint)
    else:
        result = _call_in_thread(fn, args, limit, where, hint)
    for label, arg, frozen in zip(labels, args, before):
        changed = _changed(arg, frozen, label)
        if changed:
            raise Mismatch(changed)
    return result


def _timeout_message(limit: float, where: str, hint: str, still_running: bool) -> str:
    seconds = f"{limit:g} second{'s' if limit != 1 else ''}"
    head = f"your function took longer than {seconds}{' on ' + where if where else ''} and was "
    if still_running:
        return (head + f"abandoned: {hint}. It may still be running in the background; if the "
                f"notebook slows down, restart the kernel")
    return head + f"stopped: {hint}"


def _alarm_usable() -> bool:
    import signal
    import threading

    return (hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
            and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0))


def _call_with_alarm(fn, args, limit: float, where: str, hint: str):
    import signal

    armed = True

    def on_alarm(signum, frame):
        if armed:
            raise _Timeout

    previous = signal.signal(signal.SIGALRM, on_alarm)
    try:
        try:
            signal.setitimer(signal.ITIMER_REAL, limit, 0.5)
            try:
                return fn(*args)
            finally:
                armed = False
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    except _Timeout:
        raise Mismatch(_timeout_message(limit, where, hint, still_running=False)) from None


def _call_in_thread(fn, args, limit: float, where: str, hint: str):
    import threading

    import torch

    grad = torch.is_grad_enabled()  # grad mode is per thread: carry the caller's over
    box: dict = {}

    def run():
        try:
            with torch.set_grad_enabled(grad):
                box["result"] = fn(*args)
        except BaseException as e:  # re-raised in the caller's thread below
            box["error"] = e

    worker = threading.Thread(target=run, daemon=True, name="learner-function")
    worker.start()
    worker.join(limit)
    if worker.is_alive():
        raise Mismatch(_timeout_message(limit, where, hint, still_running=True))
    if "error" in box:
        raise box["error"]
    return box["result"]


def _arg_names(fn, n: int, names: tuple[str, ...]) -> list[str]:
    """The learner's parameter names where its signature shows them, else the skeleton's."""
    import inspect

    try:
        params = [p for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    return [params[i].name if i < len(params) else names[i] if i < len(names)
            else f"argument {i + 1}" for i in range(n)]


# A snapshot is a tuple (kind, ...). Containers keep each item's id, so that an item replaced by
# another object counts as a change of the container, and an item changed in place as a change
# of the item (the message then names the item: `batch.src`, `vocab.stoi`).
_ATOMS = (str, bytes, int, float, complex, bool, type(None), range)
_MAX_DEPTH = 6


def _freeze(x, seen: set, depth: int = 0):
    import torch

    if isinstance(x, _ATOMS):
        return ("atom", x)
    if depth > _MAX_DEPTH or id(x) in seen or isinstance(x, torch.Generator):
        return ("skip",)  # too deep, already seen, or meant to change (a generator draws)
    if torch.is_tensor(x):
        return ("tensor", x.detach().clone())
    seen = seen | {id(x)}
    if isinstance(x, torch.nn.Module):
        return ("module", x.training,
                {k: v.detach().clone() for k, v in x.state_dict(keep_vars=True).items()})
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [(id(v), _freeze(v, seen, depth + 1)) for v in x])
    if isinstance(x, dict):
        return ("dict", {k: (id(v), _freeze(v, seen, depth + 1)) for k, v in x.items()},
                list(x))
    if isinstance(x, (set, frozenset)):
        return ("set", frozenset(x))
    if hasattr(x, "__dict__") and not callable(x):
        public = {k: v for k, v in vars(x).items() if not k.startswith("_")}
        return ("object", {k: (id(v), _freeze(v, seen, depth + 1)) for k, v in public.items()})
    return ("skip",)


def _same_tensor(a, b) -> bool:
    import torch

    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if torch.equal(a, b):
        return True
    return bool(((a == b) | (a.isnan() & b.isnan())).all()) if a.is_floating_point() else False


_HOW = {
    "tensor": ("e.g. {p}.zero_(), {p} += ... or {p}[i] = ...",
               "compute a new tensor instead ({p} = {p} + ... makes one)"),
    "list": ("e.g. {p}.sort(), {p}.append(...), shuffle({p}) or {p}[i] = ...",
             "build a new list instead (sorted({p}), {p} + [...])"),
    "dict": ("e.g. {p}[key] = ..., {p}.pop(key) or {p}.setdefault(...)",
             "build a new dict instead (dict({p}), {{**{p}, key: value}})"),
    "set": ("e.g. {p}.add(...) or {p}.discard(...)", "build a new set instead ({p} | {{...}})"),
    "object": ("e.g. {p}.attribute = ...", "leave it as it was and keep your own variables"),
}


def _message(kind: str, path: str) -> str:
    how, instead = _HOW[kind]
    return (f"your function changed its input `{path}` in place ({how.format(p=path)}); "
            f"{instead.format(p=path)}")


def _changed(x, frozen, path: str) -> str | None:
    """None if `x` still equals its snapshot `frozen`, else the message naming what changed."""
    kind = frozen[0]
    if kind in ("atom", "skip"):
        return None
    if kind == "tensor":
        return None if _same_tensor(x, frozen[1]) else _message("tensor", path)
    if kind == "module":
        if x.training != frozen[1]:
            mode, method = ("training", "train") if x.training else ("evaluation", "eval")
            return (f"your function switched `{path}` to {mode} mode ({path}.{method}()) and "
                    f"left it so; leave the model as you found it (in training mode dropout "
                    f"makes its outputs random)")
        now = x.state_dict(keep_vars=True)
        for key, value in frozen[2].items():
            if key not in now or not _same_tensor(now[key].detach(), value):
                return (f"your function changed the weights of `{path}` in place ({key}); "
                        f"it must only read the model (no optimizer step, no assignment to "
                        f"its parameters)")
        return None
    if kind == "set":
        return None if set(x) == frozen[1] else _message("set", path)
    if kind in ("list", "tuple"):
        items = frozen[1]
        if len(x) != len(items) or any(id(v) != i and not _equal_atom(v, f)
                                       for v, (i, f) in zip(x, items)):
            return _message("list", path)
        for j, (v, (_, f)) in enumerate(zip(x, items)):
            inner = _changed(v, f, f"{path}[{j}]")
            if inner:
                return inner
        return None
    if kind == "dict":
        items, order = frozen[1], frozen[2]
        if list(x) != order or any(id(x[k]) != i and not _equal_atom(x[k], f)
                                   for k, (i, f) in items.items()):
            return _message("dict", path)
        for k, (_, f) in items.items():
            inner = _changed(x[k], f, f"{path}[{k!r}]")
            if inner:
                return inner
        return None
    if kind == "object":
        items = frozen[1]
        now = {k: v for k, v in vars(x).items() if not k.startswith("_")}
        if set(now) != set(items) or any(id(now[k]) != i and not _equal_atom(now[k], f)
                                         for k, (i, f) in items.items()):
            return _message("object", path)
        for k, (_, f) in items.items():
            inner = _changed(now[k], f, f"{path}.{k}")
            if inner:
                return inner
        return None
    return None


def _equal_atom(value, frozen) -> bool:
    """An immutable item replaced by an equal one (ids of equal ints or strings may differ)."""
    return frozen[0] == "atom" and type(value) is type(frozen[1]) and value == frozen[1]
