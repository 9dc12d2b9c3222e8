"""scripts/course_site.py: the line that ends every page of the website, inviting questions and
corrections on GitHub, is built from the repository of _config.yml."""

from __future__ import annotations

import html.parser
import urllib.parse
from pathlib import Path
from types import SimpleNamespace

from docutils import nodes

from scripts import colab_setup, course_site, toc

ROOT = Path(__file__).resolve().parent.parent


class _Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.links: list[tuple[str, str]] = []  # (href, text)
        self._href: str | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self._href = dict(attrs).get("href")
            self.links.append((self._href, ""))

    def handle_data(self, data):
        if self._href is not None:
            href, text = self.links[-1]
            self.links[-1] = (href, text + data)

    def handle_endtag(self, tag):
        if tag == "a":
            self._href = None


def _links(markup: str) -> list[tuple[str, str]]:
    parser = _Links()
    parser.feed(markup)
    return parser.links


def _config(tmp_path: Path) -> Path:
    config = tmp_path / "_config.yml"
    config.write_text("repository:\n  url: https://github.com/Some-Owner/my-course.git\n"
                      "  branch: dev\n")
    return config


def test_the_link_opens_an_issue_of_the_configured_repository_naming_the_page(tmp_path):
    title = 'Tensors & "shapes" <b>é</b>'
    markup = course_site.discussion_html("book/tensors", title, _config(tmp_path))
    [(href, text)] = _links(markup)
    assert text == "Open an issue about this page on GitHub"
    parts = urllib.parse.urlsplit(href)
    assert f"{parts.scheme}://{parts.netloc}{parts.path}" == (
        "https://github.com/Some-Owner/my-course/issues/new")
    query = urllib.parse.parse_qs(parts.query)
    assert query["title"] == [f"book/tensors: {title}"]
    assert query["body"][0].startswith(
        "Page: https://some-owner.github.io/my-course/book/tensors.html")
    # The title's markup characters are percent-encoded in the URL and escaped in the HTML.
    for raw in ("<b>", '"shapes"', " & "):
        assert raw not in markup
    assert markup.count("&amp;") == 1  # the one between title= and body=


def test_the_default_is_the_repository_of_config_yml():
    url, _ = colab_setup.load_repository()
    assert course_site.discussion_url("book/encoder", "The encoder").startswith(
        f"{url}/issues/new?title=book%2Fencoder%3A%20The%20encoder&")


def _render(pagename: str, titles: dict[str, str]) -> str:
    app = SimpleNamespace(
        confdir=str(ROOT),
        env=SimpleNamespace(titles={p: nodes.title(text=t) for p, t in titles.items()}))
    context = {"body": "<section>text</section>"}
    course_site._discussion_line(app, pagename, "page.html", context, doctree=nodes.document(
        None, None))
    return context["body"]


def test_every_chapter_page_gets_the_line_and_the_references_page_does_not():
    chapters = toc.notebooks()
    titles = {p: f"Title of {p}" for p in toc.pages()}
    for page in chapters:
        body = _render(page, titles)
        assert body.startswith("<section>text</section>")
        [(href, _)] = _links(body)
        title = urllib.parse.parse_qs(urllib.parse.urlsplit(href).query)["title"]
        assert title == [f"{page}: Title of {page}"]
    assert "book/references" in toc.pages()
    assert _links(_render("book/references", titles)) == []
    assert _links(_render("genindex", titles)) == []  # no page of _toc.yml


def test_each_page_numbers_its_own_exercises_from_one():
    # Sphinx's book-wide numbers, as sphinx-exercise gets them: 1-2 on one page, 3-5 on the next
    numbers = {"book/a": {"exercise": {"a-ex-2": (2,), "a-ex-1": (1,)}, "figure": {"f": (1,)}},
               "book/b": {"exercise": {"b-x": (4,), "b-y": (3,), "b-z": (5,)}},
               "book/c": {"figure": {"g": (2,)}}}
    assert course_site.exercises_per_page(numbers) == ["book/b"]
    assert numbers["book/a"]["exercise"] == {"a-ex-1": (1,), "a-ex-2": (2,)}
    assert numbers["book/b"]["exercise"] == {"b-y": (1,), "b-x": (2,), "b-z": (3,)}
    assert numbers["book/a"]["figure"] == {"f": (1,)}  # figures keep their numbers
    assert numbers["book/c"] == {"figure": {"g": (2,)}}
    assert course_site.exercises_per_page(numbers) == []  # already per page: nothing changes
