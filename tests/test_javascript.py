"""The course's own JavaScript: ESLint's configuration (eslint.config.mjs) catches what it should
(`make lint` runs ESLint on the code); every view's script and style files exist and define the
view its Python class names.

ESLint comes from package.json (devDependencies, `npm ci`). Without Node.js the test is skipped
on a reader's machine, but fails in continuous integration (CI set), where it must run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from lib.widgets import render
from lib.widgets.beam import BeamView
from lib.widgets.bleu_view import BleuView
from lib.widgets.hidden import HiddenView
from lib.widgets.map_view import ContextMapView
from lib.widgets.stepper import StepperView

ROOT = Path(__file__).resolve().parents[1]
ESLINT = ROOT / "node_modules" / ".bin" / "eslint"
STATIC = ROOT / "lib" / "widgets" / "static"
VIEWS = [HiddenView, ContextMapView, BeamView, StepperView, BleuView]


def eslint(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    if shutil.which("node") is None:
        message = "Node.js is not installed: ESLint cannot run (apt-get install nodejs npm)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    if not ESLINT.exists():
        pytest.fail("ESLint is not installed: run `npm ci` (make setup) to install package.json")
    return subprocess.run([str(ESLINT), "--no-warn-ignored", *args], cwd=ROOT, input=stdin,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("code, rule", [
    ("S2S.views.x = function (root) { undefinedName(root); };\n", "no-undef"),
    ("S2S.views.x = function (root) { if (root == 1) { return; } };\n", "eqeqeq"),
    ("S2S.views.x = function (root) { var q = 1; return root; };\n", "no-unused-vars"),
    ("var leaked = 1;\n", "no-implicit-globals"),
    ("S2S.views.x = (root) => root;\n", "Parsing error"),  # ES5: no build step to lower it
])
def test_eslint_catches_mistakes_in_a_view(code, rule):
    """The oracle: a view file with one known mistake fails, naming it."""
    result = eslint("--stdin", "--stdin-filename", "lib/widgets/static/probe.js",
                    stdin="/* global S2S */\n" + code)
    assert result.returncode == 1 and rule in result.stdout, result.stdout + result.stderr


@pytest.mark.parametrize("view", VIEWS, ids=lambda v: v.__name__)
def test_each_view_names_files_that_define_it(view):
    assert view.scripts and view.styles
    for name in view.scripts:
        source = (STATIC / f"{name}.js").read_text(encoding="utf-8")
        assert f"S2S.views.{name} = function (root, data, kit)" in source
    for name in view.styles:
        assert (STATIC / f"{name}.css").is_file()


@pytest.mark.parametrize("view", VIEWS, ids=lambda v: v.__name__)
def test_every_view_is_drawn_by_javascript(view):
    """One drawing per picture: S2S.draw.<name> draws each view from its data (render.py's
    docstring names them; the Playground calls the hidden and beam ones too)."""
    source = (STATIC / f"{view.kind}.js").read_text(encoding="utf-8")
    assert f"S2S.draw.{view.kind} = function (data)" in source
    assert f"S2S.draw.{view.kind}" in render.__doc__


def test_static_files_are_package_data():
    """pyproject.toml ships static/*.js and *.css: nothing else may live there."""
    assert {p.suffix for p in STATIC.iterdir()} <= {".js", ".css"}
    assert "lib.widgets\" = [\"static/*.js\", \"static/*.css\"]" in \
        (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert render.asset("common.js").startswith("/*")
