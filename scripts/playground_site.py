"""Sphinx extension: put the Playground's runtime and model into the built site.

The Playground page (book/playground.md, which includes web/playground/playground.html) loads
`_static/playground/playground.js`, which loads ONNX Runtime Web and the exported model from
beside it. This extension copies, at the end of every HTML build:

    _static/playground/playground.js, playground.css      web/playground/
    _static/playground/widgets/                            the static widgets' common, hidden
                                                           and beam .js and .css
                                                           (lib/widgets/static/): they draw
                                                           the page's hidden states and tree
    _static/playground/ort/                                onnxruntime-web's wasm build (npm)
    _static/playground/model/                              `make playground`'s export for the
                                                           current key (lib/course/playground.py)
    _static/playground/model/attention/                    the attention chapter's fine-tuned
                                                           copy, exported beside it

`make playground` runs before the chapters, so on a cold build the attention chapter trains its
copy only after that export: at the end of the build this extension exports it then
(`playground.export_attention`, a no-op when it is up to date or its weights are not cached).

Only that page refers to them, so no other page gets heavier. Like vendor_assets, these files are
not kept in a `_static/` source folder: Jupyter Book 1 would add every .js file there to every
page. Loaded through `sphinx: local_extensions:` in `_config.yml` as `scripts.playground_site`.
`mini_site` assembles the page alone, without the website: tests/test_playground.py tests it
before the site is built, and bench/playground.py times it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from lib.course import playground

ROOT = Path(__file__).resolve().parent.parent
WEB = ROOT / "web" / "playground"
PAGE_FILES = ("playground.js", "playground.css")
WIDGETS = ROOT / "lib" / "widgets" / "static"
WIDGET_FILES = tuple(f"{name}.{ext}" for name in ("common", "hidden", "beam")
                     for ext in ("js", "css"))
ORT = ROOT / "node_modules" / "onnxruntime-web"
# The wasm-only build of ONNX Runtime Web: its loader, the module it imports and the wasm binary
# (single-threaded use: the page sets numThreads = 1), and package.json (version, MIT licence).
ORT_FILES = ("dist/ort.wasm.min.js", "dist/ort-wasm-simd-threaded.mjs",
             "dist/ort-wasm-simd-threaded.wasm", "package.json")
EXPORTS = ROOT / "_build" / "playground"


def model_dir(exports: Path = EXPORTS) -> Path:
    """The export for the current key (FileNotFoundError naming `make playground` if absent)."""
    return playground.current(exports)


def assemble(static: Path, model: Path | None = None) -> list[Path]:
    """Copy the page's script and style, the widgets' views, the runtime and the model into
    `static`/playground/."""
    model = model or model_dir()
    dest = static / "playground"
    copied = []
    for name in PAGE_FILES:
        copied.append(_copy(WEB / name, dest / name))
    for name in WIDGET_FILES:
        copied.append(_copy(WIDGETS / name, dest / "widgets" / name))
    for rel in ORT_FILES:
        copied.append(_copy(ORT / rel, dest / "ort" / Path(rel).name))
    shutil.rmtree(dest / "model", ignore_errors=True)
    for path in sorted(model.rglob("*")):
        if path.is_file() and not any(p.startswith(".") for p in path.relative_to(model).parts):
            copied.append(_copy(path, dest / "model" / path.relative_to(model)))
    return copied


def mini_site(root: Path, model: Path | None = None) -> Path:
    """`root`/book/playground.html (the page's markup in a bare document) beside
    `root`/_static/playground/, so the page can run without building the website."""
    assemble(root / "_static", model)
    fragment = (WEB / "playground.html").read_text(encoding="utf-8")
    (root / "book").mkdir(parents=True, exist_ok=True)
    (root / "book" / "playground.html").write_text(
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>Playground</title>'
        f"</head><body>\n{fragment}\n</body></html>\n", encoding="utf-8")
    return root


def _copy(source: Path, target: Path) -> Path:
    if not source.is_file():
        hint = " (run `npm ci`)" if ORT in source.parents else ""
        raise FileNotFoundError(f"{source} is missing{hint}")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source, target)
    return target


def _copy_on_finish(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    model = model_dir()
    playground.export_attention(model)  # the chapter may have just cached its weights
    assemble(Path(app.outdir) / "_static", model)


def setup(app) -> dict:
    app.connect("build-finished", _copy_on_finish)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
