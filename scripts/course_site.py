"""Sphinx extension with the course website's own small fixes and substitutions.

- Substitutions for pages, derived from `repository:` in `_config.yml` (the one place the
  repository URL is written): `{{ repository_link }}` and `{{ colab_link_pattern }}`.
- Every chapter page's Colab button opens the chapter's *reader notebook* on the repository's
  notebooks branch (`scripts.colab_setup.colab_url`). sphinx-book-theme would link the
  chapter's MyST Markdown source, which Colab cannot open.
- The page's download menu offers that same reader notebook as .ipynb: once the build has
  finished (every chapter executed, its glued values stored), `scripts.reader` writes
  it over the executed copy the theme put in `_sources/`, so a downloaded notebook is the
  one that runs in Colab and Jupyter, not a MyST one.
- Every page of `_toc.yml` but the bibliography ends with a line inviting questions and
  corrections: a link to a new issue of the repository, its title naming the page.
- Each page numbers its own exercises from 1 (sphinx-exercise numbers them like figures, and
  in a toctree without section numbers Sphinx counts figures across the whole book).
- Repeated <script> tags are dropped: Sphinx 7.4 registers an inline script that an extension
  adds after the builder started (sphinx-thebe's `const THEBE_JS_URL = ...`) twice, once as
  filename None and once as "", so every page declared the same `const` twice and the browser
  logged a SyntaxError.

Loaded through `sphinx: local_extensions:` in `_config.yml` as `scripts.course_site`.
"""

from __future__ import annotations

import html
import urllib.parse
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.config import Config

from scripts import colab_setup, reader, toc

COLAB_PREFIX = "https://colab.research.google.com/"
# Pages without the discussion line: a list of references is no page to discuss.
NO_DISCUSSION = {"book/references"}


def _add_substitutions(app: Sphinx, config: Config) -> None:
    url, _ = colab_setup.load_repository()
    slug = url.removeprefix("https://github.com/")
    config.myst_substitutions = {
        "repository_link": f"[github.com/{slug}]({url})",
        "colab_link_pattern": colab_setup.colab_url("CHAPTER").replace("CHAPTER", "*chapter*"),
        **(config.myst_substitutions or {}),
    }


def _chapters(app: Sphinx) -> set[str]:
    """The pages that are notebooks (book/x), read once per build."""
    if not hasattr(app, "_course_chapters"):
        app._course_chapters = set(toc.notebooks(Path(app.confdir) / "_toc.yml"))
    return app._course_chapters


def _colab_button(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """Point the launch menu's Colab entry at the reader notebook of this chapter."""
    buttons = [b for group in context.get("header_buttons", [])
               if group.get("label") == "launch-buttons" for b in group.get("buttons", [])]
    colab = [b for b in buttons if str(b.get("url", "")).startswith(COLAB_PREFIX)]
    if not colab:
        return
    if pagename not in _chapters(app):
        raise RuntimeError(f"{pagename} has a Colab button but is no chapter of _toc.yml")
    for button in colab:
        button["url"] = colab_setup.colab_url(pagename)


def discussion_url(page: str, title: str, config_path: Path = colab_setup.CONFIG) -> str:
    """A new issue of the repository of `_config.yml`, its title and body naming the page
    (`page` is book/x, `title` its plain-text title)."""
    repository, _ = colab_setup.load_repository(config_path)
    website = colab_setup.website_url(config_path)
    query = urllib.parse.urlencode(
        {"title": f"{page}: {title}", "body": f"Page: {website}{page}.html\n\n"},
        quote_via=urllib.parse.quote)
    return f"{repository}/issues/new?{query}"


def discussion_html(page: str, title: str, config_path: Path = colab_setup.CONFIG) -> str:
    """The line that ends a page: questions and mistakes go to a new issue on GitHub."""
    url = html.escape(discussion_url(page, title, config_path))
    return ('\n<p class="course-discuss">Questions about this page, or a mistake in it? '
            f'<a class="reference external" href="{url}">Open an issue about this page on '
            "GitHub</a>.</p>\n")


def _discussion_line(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """Append the discussion line to the body of every page of _toc.yml but NO_DISCUSSION."""
    if doctree is None or "body" not in context or pagename in NO_DISCUSSION:
        return
    if not hasattr(app, "_course_pages"):
        app._course_pages = set(toc.pages(Path(app.confdir) / "_toc.yml"))
    if pagename not in app._course_pages:
        return
    title = app.env.titles[pagename].astext() if pagename in app.env.titles else pagename
    context["body"] += discussion_html(pagename, title)


def _reader_downloads(app: Sphinx, exception) -> None:
    """Replace each chapter's downloadable .ipynb with its reader notebook."""
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    site = reader.load_site(outdir.parent)
    for page, text in reader.render_all(site, Path(app.confdir) / "_toc.yml").items():
        target = outdir / "_sources" / f"{page}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


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


def exercises_per_page(toc_fignumbers: dict) -> list[str]:
    """Renumber each page's exercises 1, 2, ... in their order on the page, in place, in
    Sphinx's {page: {figtype: {node id: number}}}; returns the pages whose numbers changed."""
    changed = []
    for page, numbers in toc_fignumbers.items():
        exercises = numbers.get("exercise")
        if not exercises:
            continue
        in_order = sorted(exercises, key=exercises.get)  # the book-wide numbers keep page order
        own = {node_id: (i,) for i, node_id in enumerate(in_order, start=1)}
        if own != exercises:
            numbers["exercise"] = own
            changed.append(page)
    return changed


def _exercises_per_page(app: Sphinx, env) -> list[str]:
    return exercises_per_page(env.toc_fignumbers)


def setup(app: Sphinx) -> dict:
    # After Sphinx's own figure numbering (the toctree collector, priority 500).
    app.connect("env-get-updated", _exercises_per_page, priority=900)
    app.connect("config-inited", _add_substitutions)
    # Late priority: after sphinx-book-theme (501) built the header buttons and every extension
    # added its page scripts.
    app.connect("html-page-context", _colab_button, priority=900)
    app.connect("html-page-context", _unique_scripts, priority=900)
    app.connect("html-page-context", _discussion_line)
    app.connect("build-finished", _reader_downloads)
    return {"version": "1.1", "parallel_read_safe": True, "parallel_write_safe": True}
