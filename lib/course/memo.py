"""Keep the result of a slow, seeded computation on disk, keyed by everything it depends on.

"Teacher forcing" trains three small models to compare teacher-forcing ratios. Each run is
seeded and always gives the same numbers for the same settings, data and training code, so the
page keeps them after its first execution and reads them back afterwards:

    result = memo.cached("tf-ratio", {"ratio": 0.5, "steps": 240, ...}, lambda: run(0.5),
                         modules=(lib.train, lib.model))

The key is the settings (`key`, any JSON value), the code of `modules` (without comments and
docstrings, which do not change what it computes) and the torch version: change any of them and
the computation runs again. Results are JSON, stored in
`lib.course.download.cache_dir()/results/`; delete that folder, or set SEQ2SEQ_RECOMPUTE=1, to
recompute everything. A result file that cannot be read as JSON (empty, cut short, damaged) counts
as missing: it is computed and written again.

`cached_all` does the same for several settings of one computation (three ratios, two wirings):
the missing ones run side by side in worker processes, one thread each, so that a fresh runtime
with two cores trains two small models in the time of one. Each run is seeded and runs on one
thread either way, so its numbers do not depend on whether it ran alone or beside another.
A worker dies with the process that forked it (a restarted kernel, SIGTERM or SIGKILL): it is
never left computing for no one. An interrupt (KeyboardInterrupt in a kernel that stays alive)
or any other error in the parent ends and reaps every worker before it propagates.

`load_corpus` is `lib.data.build_corpus` kept this way: a chapter reads the split, vocabularies
and encoded pairs back in a fraction of the time it takes to tokenise the corpus again.
"""

from __future__ import annotations

import ast
import ctypes
import dataclasses
import hashlib
import inspect
import json
import multiprocessing
import os
import re
import signal
import sys
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path

import torch

import lib.data
from lib.course.download import cache_dir
from lib.data import Corpus, DataConfig


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
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise ValueError(f"name must be letters, digits, '.', '_' or '-', got {name!r}")
    return cache_dir() / "results" / f"{name}-{fingerprint(key, modules)[:20]}.json"


def cached(name: str, key, compute: Callable[[], object], modules=()):
    """`compute()`'s JSON result, from the disk when the same settings and code ran before.

    The file is written whole or not at all (a temporary file renamed into place), so an
    interrupted run leaves nothing half-written for the next one to read.
    """
    return cached_all(name, {0: key}, lambda _: compute(), modules)[0]


def cached_all(name: str, keys: dict, compute: Callable[[object], object], modules=(),
               workers: int | None = None) -> dict:
    """{label: compute(label)'s JSON result} for every `keys[label]`, like `cached` for each.

    The labels whose results are not on disk are computed side by side, each in its own
    process with one thread, at most `workers` at a time. By default all of them at once
    when the machine has more than one core: a page has two or three, and three one-thread
    runs on two cores finish sooner together than two and then one. Where processes cannot
    be forked (Windows, macOS), on one core, or with `workers=1`, one after another in this
    process.
    """
    paths = {label: result_path(name, key, modules) for label, key in keys.items()}
    fresh = not os.environ.get("SEQ2SEQ_RECOMPUTE")
    found = {label: _read(path) for label, path in paths.items()} if fresh else {}
    missing = [label for label in paths if found.get(label, _MISSING) is _MISSING]
    if workers is None:
        workers = max(1, len(missing)) if (os.cpu_count() or 1) > 1 else 1
    texts = _side_by_side(name, missing, compute, workers)
    for label, text in zip(missing, texts):
        _store(paths[label], text)
        found[label] = json.loads(text)  # the value a later cache hit reads (tuples -> lists)
    return {label: found[label] for label in paths}


_MISSING = object()


def _read(path: Path):
    """The result stored at `path`, or _MISSING: no file, or one that is not JSON (empty or
    cut short by a full disk or a crash of another writer), which is then computed again
    instead of failing every later call."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # ValueError: JSONDecodeError and UnicodeDecodeError
        return _MISSING


def readable(path: Path) -> bool:
    """Whether `path` holds a result that `cached` would read back (else it computes anew)."""
    return _read(path) is not _MISSING


def _json(value) -> str:
    try:
        return json.dumps(value)
    except (TypeError, ValueError) as e:
        raise TypeError(f"compute() must return JSON (dicts, lists, strings, numbers) to be "
                        f"cached: {e}") from None


def _side_by_side(name: str, labels: list, compute, workers: int) -> list[str]:
    """compute(label) as JSON text for each label: in forked one-thread processes if possible."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a whole number >= 1, got {workers!r}")
    fork = "fork" in multiprocessing.get_all_start_methods() and sys.platform == "linux"
    if len(labels) < 2 or workers == 1 or not fork:
        return [_json(compute(label)) for label in labels]
    ctx, texts, running = multiprocessing.get_context("fork"), {}, []
    pending = list(labels)
    try:
        while pending or running:
            while pending and len(running) < workers:
                label = pending.pop(0)
                receive, send = ctx.Pipe(duplex=False)
                proc = ctx.Process(target=_worker, args=(compute, label, send, os.getpid()),
                                   daemon=True)
                proc.start()
                send.close()
                running.append((label, proc, receive))
            # results arrive in any order; read in turn. The worker stays in `running` until
            # it has been joined, so an interrupt while waiting on it ends it too.
            label, proc, receive = running[0]
            try:
                ok, text = receive.recv()
            except EOFError:  # the worker died without a word (killed, out of memory)
                proc.join()  # its exit code is known only once it has been reaped
                ok, text = False, f"the worker process ended with exit code {proc.exitcode}"
            proc.join()
            running.pop(0)
            receive.close()
            if not ok:
                raise RuntimeError(f"{name} for {label!r} failed in its worker process:\n{text}")
            texts[label] = text
    finally:  # on any exception (an interrupt included), no worker is left computing
        for _, proc, _ in running:
            proc.terminate()
        for _, proc, receive in running:
            proc.join()
            receive.close()
    return [texts[label] for label in labels]


def _die_with(parent: int) -> None:
    """Have Linux kill this process when its parent dies (prctl PR_SET_PDEATHSIG, SIGKILL): a
    parent killed by SIGTERM or SIGKILL runs no cleanup, and `daemon=True` alone would leave
    the worker computing. A parent gone already (before the prctl) means exit now."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # no prctl: only the check below
        pass
    if os.getppid() != parent:
        os._exit(1)


def _worker(compute, label, send, parent: int) -> None:
    _die_with(parent)
    torch.set_num_threads(1)  # one thread per worker: workers share the machine
    try:
        send.send((True, _json(compute(label))))
    except BaseException:  # reported by the parent, which raises
        send.send((False, traceback.format_exc()))
    finally:
        send.close()


def _store(path: Path, text: str) -> None:
    """Write `text` to `path` whole or not at all."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_corpus(config: DataConfig | None = None, path=None) -> Corpus:
    """`lib.data.build_corpus(config, path)`, kept on disk (`cached`), keyed by `config`
    (default `DataConfig()`), the corpus file's sha256 and lib.data's code: a change of any of
    the three builds it anew."""
    config = DataConfig() if config is None else config
    file = Path(path) if path is not None else lib.data.corpus_path()
    key = {"config": dataclasses.asdict(config), "corpus": lib.data.corpus_sha256(file)}
    stored = cached("corpus", key,
                    lambda: lib.data.corpus_to_json(lib.data.build_corpus(config, file)),
                    modules=(lib.data,))
    return lib.data.corpus_from_json(stored)
