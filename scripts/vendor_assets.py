"""Sphinx extension: serve MathJax 3, RequireJS and the Jupyter widget manager from the site.

Jupyter Book 1.x would load these from CDNs, so a built site would show raw LaTeX and dead
widgets without internet. `npm ci` installs them from package.json / package-lock.json into
node_modules/; this extension copies the files a page needs into `_build/html/_static/npm/`
at the end of every HTML build, and our own scripts/widgets-setup.js (which tells the widget
manager where its fonts are and lets it typeset with MathJax 3) into `_static/course/`.
`_config.yml` points `mathjax_path` and `nb_ipywidgets_js` at those copies (paths relative to
`_static/`).

They are deliberately *not* kept in a `_static/` source folder: Jupyter Book 1 adds every
.js file found there to every page.

Loaded through `sphinx: local_extensions:` in `_config.yml` as `scripts.vendor_assets`.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

ROOT = Path(__file__).resolve().parent.parent
NODE_MODULES = ROOT / "node_modules"

# Our own files: destination under _static/ -> source.
OWN_FILES = {"course/widgets-setup.js": ROOT / "scripts" / "widgets-setup.js"}

# npm package -> files to serve, as globs inside the package ("dir/" = the whole folder).
# `_static/npm/` mirrors the needed part of node_modules/, so each package's files keep their
# relative layout: MathJax loads fonts and TeX extensions on demand from beside its loader, and
# the widget manager finds its icon fonts under @jupyter-widgets/html-manager/dist/.
ASSETS: dict[str, list[str]] = {
    "mathjax": ["es5/", "LICENSE", "package.json"],
    "requirejs": ["require.js", "package.json"],  # licence (MIT) in the file header
    "@jupyter-widgets/html-manager": [
        "dist/embed-amd.js",
        "dist/embed.js.LICENSE.txt",
        "dist/*.woff2",
        "dist/*.woff",
        "dist/*.ttf",
        "dist/*.eot",
        "dist/*.svg",
        "package.json",  # name, version and licence (BSD-3-Clause)
    ],
}


def missing_packages(node_modules: Path = NODE_MODULES) -> list[str]:
    """npm packages of ASSETS that are not installed in `node_modules`."""
    return [p for p in ASSETS if not (node_modules / p / "package.json").is_file()]


def copy_assets(static: Path, node_modules: Path = NODE_MODULES) -> list[Path]:
    """Copy the vendored files into `static/npm/` and ours into `static/` (the site's _static).

    Returns the copied files. Raises FileNotFoundError if a source is missing.
    """
    copied: list[Path] = []
    for rel, source in OWN_FILES.items():
        (static / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, static / rel)
        copied.append(static / rel)
    for package, patterns in ASSETS.items():
        src_root = node_modules / package
        dst_root = static / "npm" / package
        for pattern in patterns:
            if pattern.endswith("/"):
                tree = src_root / pattern
                if not tree.is_dir():
                    raise FileNotFoundError(tree)
                shutil.copytree(tree, dst_root / pattern, dirs_exist_ok=True)
                copied.extend(p for p in (dst_root / pattern).rglob("*") if p.is_file())
                continue
            matches = sorted(src_root.glob(pattern))
            if not matches:
                raise FileNotFoundError(src_root / pattern)
            for path in matches:
                target = dst_root / path.relative_to(src_root)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, target)
                copied.append(target)
    return copied


def configured_local_js(config) -> list[str]:
    """The site-relative script paths (under `_static/`) that the configuration loads."""
    paths = [config.mathjax_path] + list(getattr(config, "nb_ipywidgets_js", {}) or {})
    return [p for p in paths if p and "://" not in p and not p.startswith("//")]


def _check_installed(app: Sphinx, config) -> None:
    missing = missing_packages()
    if missing:
        raise ExtensionError(
            "vendored JavaScript is not installed (missing in node_modules/: "
            + ", ".join(missing)
            + "). Run `npm ci` in the repository root, or `make book`."
        )


def _copy_on_finish(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    static = Path(app.outdir) / "_static"
    copy_assets(static)
    absent = [p for p in configured_local_js(app.config) if not (static / p).is_file()]
    if absent:
        raise ExtensionError(
            "_config.yml loads scripts that the site does not contain: " + ", ".join(absent)
        )


def setup(app: Sphinx) -> dict:
    app.connect("config-inited", _check_installed)
    app.connect("build-finished", _copy_on_finish)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
