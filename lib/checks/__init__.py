"""Checkers for the exercises: run a learner's function against the reference and explain.

Every chapter's exercises call a checker from a module here named after the chapter's concept
(`lib.checks.encoder`, `lib.checks.bleu`, ...). A checker never raises on a wrong answer: it
returns a `CheckResult` that prints what is wrong in words (wrong shape, wrong values at step t,
padding not masked...), so a notebook keeps running; tests use `.ok`. An unfinished skeleton
(`raise NotImplementedError`) is reported as "not done yet", not as a failure.
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
