"""Sphinx extension with the course website's own small fixes and substitutions.

- Substitutions for pages, derived from `repository:` in `_config.yml` (the one place the
  repository URL is written): `{{ repository_link }}` and `{{ colab_link_pattern }}`.
- Repeated <script> tags are dropped: Sphinx 7.4 registers an inline script that an extension
  adds after the builder started (sphinx-thebe's `const THEBE_JS_URL = ...`) twice, once as
  filename None and once as "", so every page declared the same `const` twice and the browser
  logged a SyntaxError.

Loaded through `sphinx: local_extensions:` in `_config.yml`.
"""

from __future__ import annotations

from sphinx.application import Sphinx
from sphinx.config import Config


def _add_substitutions(app: Sphinx, config: Config) -> None:
    theme = config.html_theme_options or {}
    url = str(theme.get("repository_url", "")).rstrip("/")
    branch = theme.get("repository_branch") or "main"
    book = str(theme.get("path_to_docs", "")).strip("/")
    if not url.startswith("https://github.com/"):
        return
    slug = url[len("https://github.com/"):]
    prefix = f"https://colab.research.google.com/github/{slug}/blob/{branch}/"
    prefix += f"{book}/" if book else ""
    config.myst_substitutions = {
        "repository_link": f"[github.com/{slug}]({url})",
        "colab_link_pattern": f"{prefix}book/*chapter*.ipynb",
        **(config.myst_substitutions or {}),
    }


def _unique_scripts(app: Sphinx, pagename, templatename, context, doctree) -> None:
    scripts = context.get("script_files")
    if not scripts:
        return
    seen = set()
    unique = []
    for script in scripts:
        key = (
            getattr(script, "filename", script) or "",
            tuple(sorted(getattr(script, "attributes", {}).items())),
        )
        if key not in seen:
            seen.add(key)
            unique.append(script)
    scripts[:] = unique


def setup(app: Sphinx) -> dict:
    app.connect("config-inited", _add_substitutions)
    # Late priority: after every extension has added its page scripts.
    app.connect("html-page-context", _unique_scripts, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
