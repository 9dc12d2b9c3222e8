"""The views' dark colours follow the dark theme of every host that shows them: the website,
JupyterLab and Google Colab, each of which marks its theme on the page in its own way.

The rule is common.css's; the test asks a CSS selector engine (soupsieve, through BeautifulSoup)
whether it matches a view inside each host's markup, dark and light.
"""

from __future__ import annotations

import re

import pytest
from bs4 import BeautifulSoup

from lib.widgets import render

DARK_BG = "#111827"


def _dark_selector() -> str:
    """The selector list of common.css's rule that gives a view its dark background."""
    css = re.sub(r"/\*.*?\*/", "", render.asset("common.css"), flags=re.S)
    rules = re.findall(r"([^{}]+)\{([^{}]*)\}", css)
    found = [selector for selector, body in rules if re.search(rf"--bg:\s*{DARK_BG}", body)]
    assert len(found) == 1, f"expected one rule setting --bg: {DARK_BG}, found {found}"
    return " ".join(found[0].split())


def _page(html_attrs: str = "", body_attrs: str = "") -> BeautifulSoup:
    return BeautifulSoup(f'<html {html_attrs}><body {body_attrs}><div class="output">'
                         f'<div class="s2sw">view</div></div></body></html>', "html.parser")


HOSTS = {
    # pydata-sphinx-theme, the website's theme: data-theme on <html>
    "website": ('data-theme="{}"', "", {"dark": "dark", "light": "light"}),
    # JupyterLab: data-jp-theme-light on <body>
    "JupyterLab": ("", 'data-jp-theme-light="{}"', {"dark": "false", "light": "true"}),
    # Google Colab: theme on the <html> of the frame an output is drawn in
    "Colab": ('theme="{}"', "", {"dark": "dark", "light": "light"}),
}


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize("scheme", ["dark", "light"])
def test_a_view_is_dark_exactly_where_its_host_is(host, scheme):
    html_attrs, body_attrs, values = HOSTS[host]
    page = _page(html_attrs.format(values[scheme]), body_attrs.format(values[scheme]))
    dark = [e.get_text() for e in page.select(_dark_selector())]
    assert dark == (["view"] if scheme == "dark" else []), (host, scheme, _dark_selector())


def test_a_host_that_says_nothing_gets_the_light_view():
    """The classic Notebook, a saved HTML view, a Colab session before its theme is known."""
    assert _page().select(_dark_selector()) == []
