"""Keep the result of a slow, seeded computation on disk, keyed by everything it depends on.

"Teacher forcing" trains three small models to compare teacher-forcing ratios. Each run is
seeded and always gives the same numbers for the same settings, data and training code, so the
page keeps them after its first execution and reads them back afterwards:

    result = memo.cached("tf-ratio", {"ratio": 0.5, "steps": 240, ...}, lambda: run(0.5),
                         modules=(lib.train, lib.model))

The key is the settings (`key`, any JSON value), the code of `modules` (without comments and
docstrings, which do not change what it computes) and the torch version: change any of them and
the computation runs again. Results are JSON, stored in
`lib.download.cache_dir()/results/`; delete that folder, or set SEQ2SEQ_RECOMPUTE=1, to
recompute everything.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import json
import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path


def _code(module) -> str:
    """The module's code as a syntax tree, without docstrings: comments and prose may change."""
    tree = ast.parse(inspect.getsource(module))
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(body, list) and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree)


def fingerprint(key, modules=()) -> str:
    """A hex digest of the settings `key`, the code of `modules` and the torch version."""
    import torch

    try:
        settings = json.dumps(key, sort_keys=True)
    except (TypeError, ValueError) as e:
        raise TypeError(f"key must be JSON (dicts, lists, strings, numbers): {e}") from None
    h = hashlib.sha256(settings.encode())
    for module in modules:
        if not inspect.ismodule(module):
            raise TypeError(f"modules must be modules (e.g. lib.train), got "
                            f"{type(module).__name__}")
        h.update(module.__name__.encode())
        h.update(_code(module).encode())
    h.update(torch.__version__.encode())
    return h.hexdigest()


def result_path(name: str, key, modules=()) -> Path:
    """Where `cached` keeps the result of `name` for these settings and this code."""
    from lib.download import cache_dir

    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise ValueError(f"name must be letters, digits, '.', '_' or '-', got {name!r}")
    return cache_dir() / "results" / f"{name}-{fingerprint(key, modules)[:20]}.json"


def cached(name: str, key, compute: Callable[[], object], modules=()):
    """`compute()`'s JSON result, from the disk when the same settings and code ran before.

    The file is written whole or not at all (a temporary file renamed into place), so an
    interrupted run leaves nothing half-written for the next one to read.
    """
    path = result_path(name, key, modules)
    if path.is_file() and not os.environ.get("SEQ2SEQ_RECOMPUTE"):
        return json.loads(path.read_text(encoding="utf-8"))
    value = compute()
    try:
        text = json.dumps(value)
    except (TypeError, ValueError) as e:
        raise TypeError(f"compute() must return JSON (dicts, lists, strings, numbers) to be "
                        f"cached: {e}") from None
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return json.loads(text)  # the same value as a cache hit gives (tuples become lists)
