"""Checkers for the exercises: run a learner's function against the reference and explain.

Every chapter's exercises call a checker from the module here named after the chapter's concept
(`lib.checks.encoder`, `lib.checks.bleu`, ...). A checker never raises on a wrong answer: it
returns a `CheckResult` that prints what is wrong in words (wrong shape, wrong values at step t,
padding not masked...), so a notebook keeps running; tests use `.ok`. An unfinished skeleton
(`raise NotImplementedError`) is reported as "not done yet", not as a failure.

The checkers are built from `lib.checks.harness`: `run_checks`, `Mismatch`, and `call`, which
runs the learner's function under a time limit (`timelimit`) and names what it changed
(`snapshot`).
"""
