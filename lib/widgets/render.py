"""Self-contained HTML for the widgets: one fragment = style + markup + data + script.

Each fragment carries its own `<style>` and `<script>`, its data as JSON and fresh element ids,
because Colab renders every output in its own frame and a notebook may show a view twice.
Nothing is loaded from anywhere: no CDN, no require.js, no URL at all.

Who draws what. Python computes every view's numbers (tokens, states, unit selection, PCA
coordinates, the search's nodes and scores, BLEU's counts) and puts them in `data`; JavaScript
draws every view from that data alone, one drawing per picture (the Playground page calls the
hidden and beam drawings with data it computes in the browser, and on the website a chapter's
hidden-state, stepper, beam and attention views are drawn again, by the same drawings, for a
sentence the reader types: web/playground/live.js):

    hidden (HiddenView)       static/hidden.js, S2S.draw.hidden: heatmaps, trajectories, controls
    map (ContextMapView)      static/map.js, S2S.draw.map: the map of many sentences' contexts
                              (also under a HiddenView made with a map)
    beam (BeamView)           static/beam.js, S2S.draw.beam: the tree, captions, summary, table
    stepper (StepperView)     static/stepper.js, S2S.draw.stepper: token chips and top-k bars
    bleu (BleuView)           static/bleu.js, S2S.draw.bleu: marked tokens, counts, formula
    attention (AttentionView) static/attention.js, S2S.draw.attention: the weights' heatmap,
                              built up step by step, and the step buttons

Without JavaScript a view shows a short <noscript> text in its place (its sentence and result,
and that JavaScript draws it): the website, Colab and Jupyter all run JavaScript, and a saved
view is a page that runs its own scripts.

The JavaScript and CSS are real files in lib/widgets/static/ (package data, linted by ESLint:
`make lint`, tests/test_javascript.py), inlined into each fragment by `View.to_html`:

    common.css, common.js   shared by every view: colours, the markup helpers (header, buttons,
                            slider, the scatter plots' fit and axes), the toolkit
                            `S2S.kit(root)`, the save buttons, `S2S.mount(root, names, data)`
                            (draw, then wire) and `S2S.start(uid, names)` (mounts a fragment)
    <name>.js               one view: `S2S.draw.<name> = function (data)` (its markup) and
                            `S2S.views.<name> = function (root, data, kit)` (its interaction);
                            root is the view's element (class "s2sw")
    <name>.css              that view's style
    activate.js             the fragment's <style onload> handler (runs a script inserted as
                            inert markup, e.g. by an ipywidgets HTML widget)

A page that is not a notebook output loads them like this (the Playground does,
scripts/playground_site.py copies the files): the CSS files in a <link> or <style>, common.js
and the view's files with <script> tags, then `S2S.mount(element, [name], data)` on an element
with classes "s2sw s2sw-<name>". The files are plain ES5 scripts with no build step and no
templating: all a view's numbers reach it as `data`. "Save HTML" saves the fragment as it was
before its script ran (style, data, scripts), so the saved page draws the view again.
"""

from __future__ import annotations

import functools
import html
import json
import uuid
from importlib import resources
from pathlib import Path

# ---------------------------------------------------------------------------------------------
# Small text helpers
# ---------------------------------------------------------------------------------------------


def esc(text) -> str:
    """Escape text for HTML content and attribute values."""
    return html.escape(str(text), quote=True)


def num(x: float, digits: int = 4) -> float:
    """Round to `digits` significant digits: keeps the embedded data small."""
    x = float(x)
    if x == 0 or x != x or x in (float("inf"), float("-inf")):
        return x
    return float(f"{x:.{digits}g}")


def script_json(data) -> str:
    """JSON that is safe inside <script>: no "</script>" or "<!--" can appear in it."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


# ---------------------------------------------------------------------------------------------
# The style and scripts (lib/widgets/static/, package data)
# ---------------------------------------------------------------------------------------------

STATIC = "static"


@functools.lru_cache(maxsize=None)
def asset(name: str) -> str:
    """The text of lib/widgets/static/<name> (a .js or .css file shipped with the package)."""
    return (resources.files(__package__) / STATIC / name).read_text(encoding="utf-8")


@functools.lru_cache(maxsize=None)
def activate_handler() -> str:
    """static/activate.js as one line for the fragment's <style onload>, comment lines dropped."""
    lines = (line.strip() for line in asset("activate.js").splitlines())
    return " ".join(line for line in lines if line and not line.startswith("//"))


def inline_styles(names: tuple[str, ...]) -> str:
    """common.css and the views' own CSS files, for one <style>."""
    return "".join(asset(f"{name}.css") for name in ("common", *names)).strip()


def inline_scripts(names: tuple[str, ...]) -> str:
    """common.js and the views' own files: the fragment's script, before its start-up line."""
    return "".join(asset(f"{name}.js") for name in ("common", *names))


# ---------------------------------------------------------------------------------------------
# The view object
# ---------------------------------------------------------------------------------------------


class View:
    """A drawn view: shows itself in Jupyter and Colab, saves itself as a standalone page.

    `body` is the markup written in Python (its <noscript> text) and `data` the JSON its scripts
    draw from. `scripts` names the view's files in static/ (a `<name>.js` that defines
    `S2S.draw.<name>` and `S2S.views.<name>`), `styles` its CSS files. `trace` keeps the
    captured data the view was drawn from.
    """

    kind = "view"
    scripts: tuple[str, ...] = ()
    styles: tuple[str, ...] = ()

    def __init__(self, body: str, data: dict, title: str, trace=None):
        self.body, self.data, self.title, self.trace = body, data, title, trace

    def to_html(self) -> str:
        """The fragment a notebook output shows; fresh ids at every call."""
        uid = f"s2s-{self.kind}-{uuid.uuid4().hex[:10]}"
        data = {**self.data, "title": self.title, "name": f"seq2seq-{self.kind}"}
        start = f"S2S.start({json.dumps(uid)}, {json.dumps(list(self.scripts))});"
        return (
            f'<div class="s2sw-out" id="{uid}-out">'
            f'<style onload="{esc(activate_handler())}">{inline_styles(self.styles)}</style>\n'
            f'<div class="s2sw s2sw-{self.kind}" id="{uid}">\n{self.body}\n</div>\n'
            f'<script type="application/json" id="{uid}-data">{script_json(data)}</script>\n'
            f'<script>(function () {{ "use strict";\n{inline_scripts(self.scripts)}{start}\n}})();'
            f"</script></div>"
        )

    def _repr_html_(self) -> str:
        return self.to_html()

    def html_document(self) -> str:
        """A complete page: open it in a browser, no kernel and no network needed."""
        return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
                f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
                f"<title>{esc(self.title)}</title></head>\n"
                f'<body style="margin:16px">\n{self.to_html()}\n</body></html>\n')

    def save_html(self, path) -> Path:
        """Write the standalone page to `path` (e.g. "beam.html") and return the path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.html_document(), encoding="utf-8")
        return path

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.title}>"
