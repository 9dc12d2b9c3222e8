"""The house's layers: the taught core imports none of the course's machinery, and no module of
`lib` or `bench` imports itself back through others (function-level imports count: a lazy
import only postpones a cycle). Read from the source with `ast`, nothing is imported."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conftest import ROOT

PACKAGES = ("lib", "bench")
CORE = {f"lib.{name}" for name in ("data", "gru", "encoder", "attention", "decoder", "head",
                                   "model", "train", "search", "exhaustive", "bleu", "evaluate",
                                   "subword", "device", "validate")}
MAX_LINES = 700  # a module longer than this holds more than one thing a reader looks for
ABOVE_CORE = ("lib.course", "lib.experiments", "lib.checks", "lib.widgets")
# The course's machinery, below the experiments that use it (release and playground, its front
# ends, sit above them).
MACHINERY = {f"lib.course.{name}" for name in ("download", "memo", "checkpoint", "reference",
                                               "chapter_models", "links", "notebook")}


def module_files(root: Path = ROOT) -> dict[str, Path]:
    """{dotted module name: file} for every .py under PACKAGES (a package is its __init__)."""
    found = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports_of(name: str, path: Path, modules) -> set[str]:
    """The modules of `modules` that `name` (at `path`) imports, at any depth of its code."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            # `from a import b`: b itself when it is a module, else a (b is one of a's names)
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                       for alias in node.names]
        else:
            continue
        found.update(t for t in targets if t in modules and t != name)
    return found


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    modules = module_files(root)
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle [a, b, ..., a] in `graph`, or None."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        state[node] = "done"
        stack.pop()
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def _below(target: str, prefixes) -> bool:
    return any(target == p or target.startswith(p + ".") for p in prefixes)


@pytest.fixture(scope="module")
def graph():
    return import_graph()


def test_every_core_module_is_there(graph):
    assert CORE <= set(graph) and MACHINERY <= set(graph)


def test_no_module_imports_itself_back(graph):
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_core_imports_nothing_of_the_course(graph):
    wrong = {name: sorted(t for t in graph[name] if _below(t, ABOVE_CORE)) for name in CORE}
    assert not {name: t for name, t in wrong.items() if t}


def test_the_machinery_imports_no_experiment_and_no_front_end(graph):
    wrong = {name: sorted(t for t in graph[name] if _below(t, ("lib.experiments", "lib.checks",
                                                               "lib.widgets"))
                          or t in {"lib.course.release", "lib.course.playground"})
             for name in MACHINERY}
    assert not {name: t for name, t in wrong.items() if t}


def test_no_module_of_lib_is_longer_than_a_reader_can_hold():
    long = {name: n for name, path in module_files().items()
            if name.startswith("lib") and (n := len(path.read_text("utf-8").splitlines()))
            > MAX_LINES}
    assert not long, f"split these modules (lines): {long}"


# --- the oracle's own checks, on a made-up tree --------------------------------------------------


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


def test_the_graph_reads_every_spelling_of_an_import(tmp_path):
    root = _tree(tmp_path, {
        "lib/__init__.py": "X = 1\n",
        "lib/a.py": "import lib.b\n",
        "lib/b.py": "from lib import c\nfrom lib import X\n",
        "lib/c.py": "def f():\n    from .sub import d  # lazy\n",
        "lib/sub/__init__.py": "from . import e\n",
        "lib/sub/d.py": "from ..a import f\n",
        "lib/sub/e.py": "import os\n",
        "bench/__init__.py": "",
    })
    graph = import_graph(root)
    assert graph["lib.a"] == {"lib.b"}
    assert graph["lib.b"] == {"lib.c", "lib"}
    assert graph["lib.c"] == {"lib.sub.d"}
    assert graph["lib.sub"] == {"lib.sub.e"}
    assert graph["lib.sub.d"] == {"lib.a"}
    assert find_cycle(graph) == ["lib.a", "lib.b", "lib.c", "lib.sub.d", "lib.a"]
    graph["lib.sub.d"] = set()
    assert find_cycle(graph) is None
