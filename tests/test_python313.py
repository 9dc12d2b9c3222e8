"""Nothing a reader runs uses what Python 3.13 removed (Colab's Python; this machine has 3.11).

Every .py under lib/ and scripts/ and every code cell of the chapters is parsed with `ast` and
checked against the removals of "What's New In Python 3.13" (section "Removed"): the PEP 594
"dead batteries", lib2to3, tkinter.tix, the typing.io and typing.re namespaces, and the removed
functions, classes, attributes and parameters listed in REMOVED_NAMES, REMOVED_METHODS and
REMOVED_KEYWORDS. A static check: it sees imports, `module.name` through an imported module,
method names and keyword arguments, not names reached in other ways (getattr, __import__).
docs/decisions.md ("What the Colab-shaped test models") says why this stands in for a run.
"""

from __future__ import annotations

import ast

import pytest
from conftest import ROOT

from scripts import toc

REMOVED_MODULES = {
    # PEP 594
    "aifc", "audioop", "cgi", "cgitb", "chunk", "crypt", "imghdr", "mailcap", "msilib", "nis",
    "nntplib", "ossaudiodev", "pipes", "sndhdr", "spwd", "sunau", "telnetlib", "uu", "xdrlib",
    # other modules and namespaces
    "lib2to3", "tkinter.tix", "typing.io", "typing.re",
}
# (module, name): a function, class or constant of the module that 3.13 removed
REMOVED_NAMES = {
    ("configparser", "LegacyInterpolation"),
    ("locale", "resetlocale"),
    ("opcode", "is_pseudo"), ("opcode", "MIN_PSEUDO_OPCODE"), ("opcode", "MAX_PSEUDO_OPCODE"),
    ("opcode", "ENABLE_SPECIALIZATION"),
    ("re", "template"), ("re", "TEMPLATE"), ("re", "T"),
    ("typing", "io"), ("typing", "re"),
    ("unittest", "findTestCases"), ("unittest", "makeSuite"), ("unittest", "getTestCaseNames"),
    ("webbrowser", "MacOSX"),
}
# methods removed from a class, found by their name on any object
REMOVED_METHODS = {"settiltangle", "usageExit"}
# (function name, keyword): parameters removed from a function, found by the called name
REMOVED_KEYWORDS = {("urlopen", "cafile"), ("urlopen", "capath"), ("urlopen", "cadefault")}


def _removed_module(name: str) -> str | None:
    """`name` or the package above it that 3.13 removed, or None."""
    parts = name.split(".")
    for i in range(1, len(parts) + 1):
        if ".".join(parts[:i]) in REMOVED_MODULES:
            return ".".join(parts[:i])
    return None


def _called_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def removed_uses(source: str, filename: str = "<code>") -> list[str]:
    """'line: what' for each use in `source` of something Python 3.13 removed."""
    tree = ast.parse(source, filename)
    modules: dict[str, str] = {}  # local name -> module it is bound to by an import
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _removed_module(alias.name):
                    found.append(f"{node.lineno}: import {alias.name}")
                # `import a.b` binds a; `import a.b as c` binds c to a.b
                local = alias.asname or alias.name.split(".")[0]
                modules[local] = alias.name if alias.asname else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if _removed_module(node.module):
                found.append(f"{node.lineno}: from {node.module} import ...")
                continue
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if (node.module, alias.name) in REMOVED_NAMES or _removed_module(full):
                    found.append(f"{node.lineno}: from {node.module} import {alias.name}")
                elif alias.name != "*":
                    modules[alias.asname or alias.name] = full
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id in modules:
                module = modules[node.value.id]
                if (module, node.attr) in REMOVED_NAMES or _removed_module(
                        f"{module}.{node.attr}"):
                    found.append(f"{node.lineno}: {module}.{node.attr}")
            if node.attr in REMOVED_METHODS:
                found.append(f"{node.lineno}: .{node.attr}()")
        elif isinstance(node, ast.Call):
            name = _called_name(node.func)
            for keyword in node.keywords:
                if (name, keyword.arg) in REMOVED_KEYWORDS:
                    found.append(f"{node.lineno}: {name}({keyword.arg}=...)")
            if name == "TypedDict" and any(k.arg not in (None, "total") for k in node.keywords):
                found.append(f"{node.lineno}: TypedDict(name, field=type) (keyword fields)")
    return sorted(set(found), key=lambda line: int(line.split(":")[0]))


def _cell_code(source: str) -> str:
    """A code cell as Python: IPython's magics and shell escapes become plain calls."""
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(source)


def python_sources() -> list[tuple[str, str]]:
    """(name, code) of every .py under lib/ and scripts/ and every chapter code cell."""
    sources = [(str(path.relative_to(ROOT)), path.read_text(encoding="utf-8"))
               for folder in ("lib", "scripts") for path in sorted((ROOT / folder).rglob("*.py"))]
    for page in toc.notebooks():
        nb = toc.read(toc.source(page))
        sources += [(f"{page} cell {i}", _cell_code(cell.source))
                    for i, cell in enumerate(nb.cells) if cell.cell_type == "code"]
    return sources


def test_nothing_uses_what_python_313_removed():
    sources = python_sources()
    names = {name for name, _ in sources}
    assert {"lib/model.py", "lib/course/checkpoint.py", "scripts/colab_env.py"} <= names
    assert any(" cell " in name for name, _ in sources), "no chapter code cells were read"
    problems = [f"{name}:{use}" for name, code in sources for use in removed_uses(code, name)]
    assert not problems, "Python 3.13 (Colab's) removed these:\n" + "\n".join(problems)


MADE_UP = """\
import cgi
import os, xml.dom
import lib2to3.pgen2 as pg
import locale
import locale as loc
import typing
import unittest
from telnetlib import Telnet
from typing.io import IO
from typing import re as typing_re, Any
from re import template
from tkinter import tix
from urllib.request import urlopen

locale.resetlocale()
loc.resetlocale()
locale.setlocale(locale.LC_ALL, "")
x: typing.io.IO
unittest.makeSuite(object)
turtle.settiltangle(3)
urlopen("https://example.org", cafile="ca.pem")
urlopen("https://example.org", timeout=3)
Movie = typing.TypedDict("Movie", name=str)
Point = typing.TypedDict("Point", {"x": int}, total=False)
"""


def test_the_checker_finds_each_kind_of_use():
    assert removed_uses(MADE_UP) == [
        "1: import cgi",
        "3: import lib2to3.pgen2",
        "8: from telnetlib import ...",
        "9: from typing.io import ...",
        "10: from typing import re",
        "11: from re import template",
        "12: from tkinter import tix",
        "15: locale.resetlocale",
        "16: locale.resetlocale",
        "18: typing.io",
        "19: unittest.makeSuite",
        "20: .settiltangle()",
        "21: urlopen(cafile=...)",
        "23: TypedDict(name, field=type) (keyword fields)",
    ]


@pytest.mark.parametrize("code", [
    "import os\nos.path.join('a', 'b')\n",
    "from typing import IO, Pattern\nimport re\nre.compile('x', re.I)\n",
    "import locale\nlocale.setlocale(locale.LC_ALL, '')\n",
    "def template(): ...\ntemplate()\n",
])
def test_the_checker_passes_what_313_keeps(code):
    assert removed_uses(code) == []


def test_magics_become_python():
    code = _cell_code("%matplotlib inline\n!pip list\nimport pipes\n")
    assert removed_uses(code) == ["3: import pipes"]
