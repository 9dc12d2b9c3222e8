"""A chapter is read in one sitting: on the built page, the prose a reader meets without opening
anything (a dropdown, a solution, an aside, a code cell) is at most 4,000 words, and no sentence
the build generated from a number (a glued text) is over 40 words."""

from __future__ import annotations

import re
from html.parser import HTMLParser

MAX_WORDS = 4000
MAX_GLUED_WORDS = 40
# Pages that are not chapters read in one sitting: the Playground is a tool, the references a list.
NOT_CHAPTERS = {"playground", "references"}
# Folded or not prose: what a reader opens, code, maths and drawings.
FOLDED_TAGS = {"details", "pre", "script", "style", "math", "svg"}
FOLDED_CLASSES = ("dropdown", "solution", "cell_output", "cell_input", "toggle-hidden")
VOID_TAGS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
             "track", "wbr"}


class MainPath(HTMLParser):
    """Counts the words of the article outside folded parts, and collects each glued text."""

    def __init__(self):
        super().__init__()
        self.stack: list[tuple[str, bool, bool, bool]] = []  # (tag, folded, glued, article)
        self.words, self.glued, self._glue_text = 0, [], ""

    def _inside(self, i: int) -> bool:
        return any(entry[i] for entry in self.stack)

    def handle_starttag(self, tag, attrs):
        if tag in VOID_TAGS:
            return
        a = dict(attrs)
        cls = a.get("class") or ""
        folded = tag in FOLDED_TAGS or any(c in cls for c in FOLDED_CLASSES)
        glued = "pasted" in cls and not self._inside(2)
        article = tag == "main" or "bd-article" in cls
        self.stack.append((tag, folded, glued, article))

    def handle_endtag(self, tag):
        # A void tag written <br/> ends here too, and a stray end tag closes nothing: neither may
        # pop the open elements (the article's among them) off the stack.
        if tag in VOID_TAGS or all(entry[0] != tag for entry in self.stack):
            return
        while self.stack:
            name, _, glued, _ = self.stack.pop()
            if glued:
                self.glued.append(self._glue_text.strip())
                self._glue_text = ""
            if name == tag:
                break

    def handle_data(self, data):
        if self._inside(3) and not self._inside(1):
            self.words += len(re.findall(r"\w+", data))
        if self._inside(2):
            self._glue_text += data


def measure(html: str) -> tuple[int, int, str]:
    """(words on the main path, words of the longest glued text, that text)."""
    page = MainPath()
    page.feed(html)
    longest = max(page.glued, key=lambda s: len(s.split()), default="")
    return page.words, len(longest.split()), longest


def test_the_measure_counts_only_what_is_open():
    html = """<html><body><div class="sidebar">Menu words here</div>
    <main><article class="bd-article"><p>One two three <span class="pasted-text">four five
    six</span>.</p><details><summary>Hidden</summary><p>not counted at all</p></details>
    <div class="cell_input"><pre>x = 1 + 2</pre></div><div class="cell_output">printed 3</div>
    <div class="admonition dropdown"><p>folded words</p></div><img src="a.png">
    <p>Seven <math><mi>x</mi></math> eight.</p></article></main></body></html>"""
    assert measure(html) == (8, 3, "four five\n    six")


def test_a_self_closed_void_tag_or_a_stray_end_tag_keeps_counting():
    html = """<main><article class="bd-article"><p>One<br/>two <img src="a.png"/> three</p>
    </span><p>four five</p></article></main><p>outside</p>"""
    assert measure(html)[0] == 5


def _chapters(site_dir):
    pages = sorted((site_dir / "book").glob("*.html"))
    return [p for p in pages if p.stem not in NOT_CHAPTERS]


def test_each_chapter_is_read_in_one_sitting(site_dir):
    chapters = _chapters(site_dir)
    assert len(chapters) >= 10
    over = {}
    for page in chapters:
        words, longest, text = measure(page.read_text(encoding="utf-8"))
        if words > MAX_WORDS or longest > MAX_GLUED_WORDS:
            over[page.stem] = (words, longest, text[:120])
    assert not over, f"pages over {MAX_WORDS} words or with a glued text over " \
                     f"{MAX_GLUED_WORDS} words: {over}"
