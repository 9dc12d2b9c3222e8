"""Sphinx extension: put the Playground's runtime and model into the built site.

The Playground page (book/playground.md, which includes web/playground/playground.html) loads
`_static/playground/playground.js`, which loads ONNX Runtime Web and the exported model from
beside it. This extension copies, at the end of every HTML build:

    _static/playground/playground.js, playground.css      web/playground/
    _static/playground/live.js, live.css                  web/playground/: the chapters' live
                                                           views (below)
    _static/playground/widgets/                            the static widgets' common, hidden,
                                                           map, beam, stepper and attention .js
                                                           and .css (lib/widgets/static/): they
                                                           draw the page's hidden states and
                                                           tree, and the chapters' live views
    _static/playground/ort/                                onnxruntime-web's wasm build (npm)
    _static/playground/model/                              `make playground`'s export for the
                                                           current key (lib/course/playground.py)
    _static/playground/model/attention/                    the attention chapter's
                                                           attention model, exported beside it

`make playground` runs before the chapters, so on a cold build the attention chapter trains its
copy only after that export: at the end of the build this extension exports it then
(`playground.export_attention`, a no-op when it is up to date or its weights are not cached).

Live views. A chapter page that shows a hidden-state, stepper, beam or attention view also gets
`<script defer src=".../_static/playground/live.js">` in its head (`add_live_script`): a small
script that puts a text box above each such view and loads the Playground's engine and model
only when the reader uses one, so no page's first paint waits for a model. No other page refers
to these files. Like vendor_assets, these files are
not kept in a `_static/` source folder: Jupyter Book 1 would add every .js file there to every
page. Loaded through `sphinx: local_extensions:` in `_config.yml` as `scripts.playground_site`.
`mini_site` assembles the page alone, without the website: tests/test_playground.py tests it
before the site is built, and bench/playground.py times it; `live_site` does the same for
chapter views (tests/test_live_views.py).
"""

from __future__ import annotations

import argparse
import os
import shutil
from pathlib import Path

from lib.course import playground

ROOT = Path(__file__).resolve().parent.parent
WEB = ROOT / "web" / "playground"
PAGE_FILES = ("playground.js", "playground.css", "live.js", "live.css")
LIVE_SCRIPT = "live.js"
# The views live.js gives a text box (the class of a rendered view's element, render.View)
LIVE_VIEWS = ("s2sw s2sw-hidden", "s2sw s2sw-stepper", "s2sw s2sw-beam", "s2sw s2sw-attention")
WIDGETS = ROOT / "lib" / "widgets" / "static"
WIDGET_FILES = tuple(f"{name}.{ext}" for name in ("common", "hidden", "beam", "stepper",
                                                   "attention") for ext in ("js", "css")) + \
    ("map.js",)
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


def live_script_tag(page: Path, static: Path) -> str:
    """The deferred <script> that loads live.js into `page`, by a path relative to it."""
    rel = Path(os.path.relpath(static / "playground" / LIVE_SCRIPT, page.parent)).as_posix()
    return f'<script defer="defer" src="{rel}"></script>'


def add_live_script(site: Path) -> list[Path]:
    """Add live.js to every page of the built `site` that shows a view it makes live (once;
    the Playground page has its own script). Returns the pages that load it."""
    static, pages = site / "_static", []
    for page in sorted(site.rglob("*.html")):
        if "_static" in page.relative_to(site).parts or page.name == "playground.html":
            continue
        text = page.read_text(encoding="utf-8")
        if not any(f'class="{view}"' in text for view in LIVE_VIEWS):
            continue
        tag = live_script_tag(page, static)
        if tag not in text:
            page.write_text(text.replace("</head>", f"{tag}\n</head>", 1), encoding="utf-8")
        pages.append(page)
    return pages


def live_site(root: Path, views: dict[str, list[str]], model: Path | None = None) -> Path:
    """`root`/book/<name>.html for each {name: [view fragments (View.to_html)]}, with live.js,
    beside `root`/_static/playground/: the chapters' live views without building the website."""
    assemble(root / "_static", model)
    (root / "book").mkdir(parents=True, exist_ok=True)
    for name, fragments in views.items():
        body = "\n".join(fragments)
        (root / "book" / f"{name}.html").write_text(
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{name}</title></head><body><main>\n{body}\n</main></body></html>\n",
            encoding="utf-8")
    add_live_script(root)
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
    add_live_script(Path(app.outdir))


def setup(app) -> dict:
    app.connect("build-finished", _copy_on_finish)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}


def main(argv=None) -> None:
    """Redo what the build does at its end in an already built site: the Playground's files
    and live.js in the chapter pages, without executing the chapters again."""
    parser = argparse.ArgumentParser(description=main.__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=ROOT / "_build" / "html")
    args = parser.parse_args(argv)
    model = model_dir()
    playground.export_attention(model)
    assemble(args.site / "_static", model)
    for page in add_live_script(args.site):
        print(f"live views: {page.relative_to(args.site)}")


if __name__ == "__main__":
    main()
