"""Self-contained HTML for the widgets: one fragment = style + markup + data + script.

Every view is drawn in Python as plain HTML and SVG, so it already makes sense with JavaScript
off (the static fallback is the view itself); a small script then adds the interaction
(sliders, toggles, hover, "save"). Nothing is loaded from anywhere: no CDN, no require.js, no
URL at all. Each fragment carries its own `<style>` and `<script>` and fresh element ids,
because Colab renders every output in its own frame and a notebook may show a view twice.

The JavaScript and CSS are real files in lib/widgets/static/ (package data, linted by ESLint:
`make lint`, tests/test_javascript.py), inlined into each fragment by `View.to_html`:

    common.css, common.js   shared by every view: colours, the toolkit `S2S.kit(root)`, the
                            save buttons, `S2S.start(uid, names)` (starts a rendered fragment)
    <name>.js               one view's interaction: `S2S.views.<name> = function (root, data,
                            kit)`; root is the view's element (class "s2sw"), data its JSON
    <name>.css              that view's style
    activate.js             the fragment's <style onload> handler (runs a script inserted as
                            inert markup, e.g. by an ipywidgets HTML widget)

A page that is not a notebook output (a website page with its own script) loads them like this:
put the CSS files in a <style> or <link>, the view's markup (`View.body`) in an element with
class "s2sw", then load common.js and the view's files with <script> tags and call
`S2S.views.<name>(element, data, S2S.kit(element))`. The files are plain ES5 scripts with no
build step and no templating: all a view's numbers reach it as `data` or in its markup. The
markup itself is drawn here, in Python (each view's module); a page with no Python behind it
reuses a view's script only with markup of the same classes and data attributes.
"""

from __future__ import annotations

import base64
import functools
import html
import json
import struct
import uuid
import zlib
from importlib import resources
from pathlib import Path

import torch

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


def fmt(x: float, decimals: int = 2) -> str:
    """A score for display, with a real minus sign."""
    if x == float("-inf"):
        return "−∞"
    return f"{x:.{decimals}f}".replace("-", "−")


TOKEN_CHARS = 14  # a token label's characters before it is cut (the full token is a tooltip)


def short(token: str, width: int = TOKEN_CHARS) -> str:
    """Cut long tokens so they fit a box; the full token goes in a tooltip."""
    return token if len(token) <= width else token[:width - 1] + "…"


def script_json(data) -> str:
    """JSON that is safe inside <script>: no "</script>" or "<!--" can appear in it."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


# ---------------------------------------------------------------------------------------------
# Colours and a tiny PNG writer (heatmaps are images: compact, and drawn without JavaScript)
# ---------------------------------------------------------------------------------------------

# A diverging blue-white-red scale for GRU states, which lie in (-1, 1) (ColorBrewer RdBu).
DIVERGING = [(33, 102, 172), (103, 169, 207), (247, 247, 247), (239, 138, 98), (178, 24, 43)]
# Distinct colours for groups of points (Tableau 10, readable on white and on dark grey).
CATEGORICAL = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1",
               "#ff9da7", "#9c755f", "#bab0ac"]


def diverging_rgb(values: torch.Tensor, limit: float = 1.0) -> torch.Tensor:
    """values (...,) in [-limit, limit] -> uint8 colours (..., 3) on the diverging scale."""
    stops = torch.tensor(DIVERGING, dtype=torch.float32)  # (5, 3)
    pos = (values.detach().float().cpu().clamp(-limit, limit) / limit + 1) / 2 * (len(stops) - 1)
    lo = pos.floor().long().clamp(max=len(stops) - 2)  # (...,) lower stop
    frac = (pos - lo).unsqueeze(-1)  # (..., 1)
    rgb = stops[lo] * (1 - frac) + stops[lo + 1] * frac  # (..., 3)
    return rgb.round().to(torch.uint8)


def css_gradient() -> str:
    """The same scale as a CSS gradient, for the legend."""
    return "linear-gradient(to right, " + ", ".join(
        f"rgb{c}" for c in DIVERGING) + ")"


def png_data_uri(rgb: torch.Tensor) -> str:
    """rgb (height, width, 3) uint8 -> a data: URI of a PNG (no image library needed)."""
    h, w, _ = rgb.shape
    rows = rgb.contiguous().numpy().reshape(h, w * 3)
    raw = b"".join(b"\x00" + row.tobytes() for row in rows)  # filter byte 0 per row

    def chunk(tag: bytes, payload: bytes) -> bytes:
        crc = zlib.crc32(tag + payload) & 0xFFFFFFFF
        return struct.pack(">I", len(payload)) + tag + payload + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)  # 8-bit RGB
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 6))
           + chunk(b"IEND", b""))
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


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


def tools(png: bool = True) -> str:
    """The "save" buttons (shown only with JavaScript, which they need)."""
    buttons = '<button type="button" data-save="html" title="Download this view as a ' \
              'self-contained HTML page">Save HTML</button>'
    if png:
        buttons += '<button type="button" data-save="png" title="Download the figure as a ' \
                   'PNG image">PNG</button>'
    return f'<span class="s2s-tools s2s-js">{buttons}</span>'


def header(title_html: str, png: bool = True) -> str:
    """The view's title line, with the save buttons at its right."""
    return f'<div class="s2s-head"><h4>{title_html}</h4>{tools(png)}</div>'


def button_group(name: str, options: list[tuple[str, str]], pressed: str, label: str = "") -> str:
    """A row of toggle buttons; the view's script listens to clicks on [data-group=name]."""
    buttons = "".join(
        f'<button type="button" data-value="{esc(v)}" aria-pressed="{str(v == pressed).lower()}"'
        f'>{esc(text)}</button>' for v, text in options)
    head = f"<label>{esc(label)}</label>" if label else ""
    return f'<span class="s2s-js">{head}<span class="s2s-group" data-group="{name}">' \
           f'{buttons}</span></span>'


def slider(name: str, lo: int, hi: int, value: int, label: str) -> str:
    return (f'<label class="s2s-js">{esc(label)} <input type="range" data-slider="{name}" '
            f'min="{lo}" max="{hi}" step="1" value="{value}"></label>')


# ---------------------------------------------------------------------------------------------
# The view object
# ---------------------------------------------------------------------------------------------


class View:
    """A drawn view: shows itself in Jupyter and Colab, saves itself as a standalone page.

    `body` is the server-drawn markup (the whole view, readable without JavaScript) and `data`
    the JSON its scripts read. `scripts` names the view's files in static/ (a `<name>.js` that
    defines `S2S.views.<name>`), `styles` its CSS files. `trace` keeps the captured data the
    view was drawn from.
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
