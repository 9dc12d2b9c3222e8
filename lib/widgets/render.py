"""Self-contained HTML for the widgets: one fragment = style + markup + data + script.

Every view is drawn in Python as plain HTML and SVG, so it already makes sense with JavaScript
off (the static fallback is the view itself); a small inline script then adds the interaction
(sliders, toggles, hover, "save"). Nothing is loaded from anywhere: no CDN, no require.js, no
URL at all. Each fragment carries its own `<style>` and `<script>` and fresh element ids,
because Colab renders every output in its own frame and a notebook may show a view twice.
"""

from __future__ import annotations

import base64
import html
import json
import struct
import uuid
import zlib
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


def short(token: str, width: int = 11) -> str:
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
# Style and script shared by every view
# ---------------------------------------------------------------------------------------------

CSS = """
.s2sw{--fg:#1f2937;--muted:#6b7280;--bg:#fff;--panel:#f8fafc;--line:#e2e8f0;--accent:#2563eb;
--keep:#2563eb;--keep-bg:#eff6ff;--prune:#94a3b8;--prune-bg:#f8fafc;--fin:#7c3aed;
--fin-bg:#f5f3ff;--win:#047857;--win-bg:#d1fae5;--greedy:#ea580c;--good:#16a34a;
--good-bg:#bbf7d0;--warn:#d97706;--warn-bg:#fde68a;
font:13px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
color:var(--fg);background:var(--bg);border:1px solid var(--line);border-radius:8px;
padding:10px 12px;margin:6px 0;max-width:720px;box-sizing:border-box;text-align:left}
html[data-theme=dark] .s2sw,body[data-jp-theme-light=false] .s2sw{--fg:#e5e7eb;
--muted:#9ca3af;--bg:#111827;--panel:#1f2937;--line:#374151;--keep-bg:#1e3a8a;
--prune-bg:#1f2937;--fin-bg:#3b0764;--win-bg:#065f46;--good-bg:#166534;--warn-bg:#92400e}
.s2sw *{box-sizing:border-box}
.s2sw h4{margin:0 0 2px;font-size:14px;font-weight:600;color:var(--fg)}
.s2sw .s2s-sub{color:var(--muted);font-size:12px;margin:0 0 6px}
.s2sw .s2s-bar{display:flex;flex-wrap:wrap;align-items:center;gap:6px 12px;margin:4px 0 8px}
.s2sw .s2s-tools{margin-left:auto;display:flex;gap:4px;flex-shrink:0;white-space:nowrap}
.s2sw .s2s-head{display:flex;align-items:flex-start;gap:10px}
.s2sw .s2s-head h4{margin-top:2px}
.s2sw button{font:inherit;font-size:12px;color:var(--fg);background:var(--panel);
border:1px solid var(--line);border-radius:4px;padding:2px 9px;cursor:pointer;line-height:1.5}
.s2sw button:hover{border-color:var(--accent)}
.s2sw button[aria-pressed=true]{background:var(--accent);border-color:var(--accent);color:#fff}
.s2sw .s2s-group{display:inline-flex;gap:0}
.s2sw .s2s-group button{border-radius:0;margin-left:-1px}
.s2sw .s2s-group button:first-child{border-radius:4px 0 0 4px;margin-left:0}
.s2sw .s2s-group button:last-child{border-radius:0 4px 4px 0}
.s2sw label{color:var(--muted);font-size:12px;display:inline-flex;align-items:center;gap:4px}
.s2sw input[type=range]{width:180px;accent-color:var(--accent)}
.s2sw .s2s-readout{font-size:12px;color:var(--fg);min-height:18px}
.s2sw .s2s-note{color:var(--muted);font-size:12px;margin:6px 0 0}
.s2sw .s2s-err{color:#b91c1c;font-weight:600}
.s2sw svg{display:block;max-width:100%;height:auto;overflow:visible}
.s2sw svg text{fill:var(--fg);font-family:inherit}
.s2sw .s2s-scroll{overflow-x:auto;max-width:100%}
.s2sw table{border-collapse:collapse;font-size:12px;margin:4px 0}
.s2sw th,.s2sw td{border-bottom:1px solid var(--line);padding:2px 8px;text-align:right}
.s2sw th{color:var(--muted);font-weight:600}
.s2sw td.l,.s2sw th.l{text-align:left}
.s2sw .s2s-mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.s2sw:not(.js) .s2s-js{display:none}
.s2sw .s2s-key{display:inline-flex;align-items:center;gap:4px;margin-right:10px;font-size:12px}
.s2sw .s2s-dot{width:10px;height:10px;border-radius:50%;display:inline-block}
.s2sw .s2s-legend{display:inline-block;width:90px;height:9px;border-radius:2px;
vertical-align:middle;margin:0 4px}
"""

# The script shared by every view. It finds its own elements by the fragment's unique id,
# keeps the pristine markup (before any change) for "save HTML", and hands a small toolkit
# to the view's own script.
JS_COMMON = r"""
var out = document.getElementById(UID + "-out"), root = document.getElementById(UID);
if (!out || !root || root.getAttribute("data-ready")) return;
var pristine = out.outerHTML;
root.setAttribute("data-ready", "1");
root.classList.add("js");
var data = JSON.parse(document.getElementById(UID + "-data").textContent);
function esc(s) {
  return String(s).replace(/[&<>"]/g, function (c) {
    return {"&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;"}[c];
  });
}
function qa(sel, el) { return Array.prototype.slice.call((el || root).querySelectorAll(sel)); }
function q(sel, el) { return (el || root).querySelector(sel); }
function press(group, value) {
  qa("button", group).forEach(function (b) {
    b.setAttribute("aria-pressed", String(b.getAttribute("data-value") === String(value)));
  });
}
function download(name, blob) {
  var a = document.createElement("a");
  a.href = URL.createObjectURL(blob); a.download = name;
  document.body.appendChild(a); a.click();
  setTimeout(function () { URL.revokeObjectURL(a.href); a.remove(); }, 2000);
}
var STYLE_PROPS = ["fill", "fill-opacity", "stroke", "stroke-width", "stroke-dasharray",
  "stroke-opacity", "opacity", "display", "font-size", "font-weight", "font-family",
  "font-style", "text-anchor", "dominant-baseline", "image-rendering"];
function savePng(svg, name) {
  var copy = svg.cloneNode(true), src = [svg].concat(qa("*", svg)),
      dst = [copy].concat(qa("*", copy));
  src.forEach(function (el, i) {
    var cs = getComputedStyle(el);
    STYLE_PROPS.forEach(function (p) { dst[i].style.setProperty(p, cs.getPropertyValue(p)); });
  });
  var box = svg.viewBox.baseVal, scale = 2;
  copy.setAttribute("width", box.width); copy.setAttribute("height", box.height);
  var bg = getComputedStyle(root).backgroundColor;
  var img = new Image();
  img.onload = function () {
    var c = document.createElement("canvas");
    c.width = box.width * scale; c.height = box.height * scale;
    var ctx = c.getContext("2d");
    ctx.fillStyle = bg; ctx.fillRect(0, 0, c.width, c.height);
    ctx.drawImage(img, 0, 0, c.width, c.height);
    c.toBlob(function (b) { download(name + ".png", b); }, "image/png");
  };
  var text = new XMLSerializer().serializeToString(copy);
  img.src = URL.createObjectURL(new Blob([text], {type: "image/svg+xml"}));
}
qa("[data-save]").forEach(function (b) {
  b.addEventListener("click", function () {
    if (b.getAttribute("data-save") === "html") {
      var doc = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" +
        data.title.replace(/</g, "&lt;") + "</title></head><body>\n" + pristine +
        "\n</body></html>\n";
      download(data.name + ".html", new Blob([doc], {type: "text/html"}));
    } else {
      var svgs = qa("svg.s2s-fig").filter(function (s) { return s.getClientRects().length; });
      if (svgs.length) savePng(svgs[0], data.name);
    }
  });
});
"""


# Runs the fragment's script where it was inserted without running: an ipywidgets HTML widget
# sets innerHTML, which never runs scripts, and the classic Notebook's output area runs them only
# if it is already on the page. A <style> fires `load` once it is in the document, so this
# handler runs then; where the script did run, the root is marked ready and nothing happens.
# The copy goes to <head> and is removed at once: it runs on insertion and leaves the fragment
# (which "Save HTML" copies) untouched.
ACTIVATE = ("var o=this.parentNode,r=o&&o.querySelector('.s2sw'),c=o&&"
            "o.querySelector('script:not([type])');if(r&&c&&!r.getAttribute('data-ready')){"
            "var s=document.createElement('script');s.text=c.text;"
            "document.head.appendChild(s);s.remove()}")


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

    `body` is the server-drawn markup (the whole view, readable without JavaScript), `script`
    the view's own JavaScript (run with `root`, `data`, `q`, `qa`, `press` in scope) and
    `data` what that script needs. `trace` keeps the captured data the view was drawn from.
    """

    kind = "view"

    def __init__(self, body: str, script: str, data: dict, title: str, trace=None,
                 css: str = ""):
        self.body, self.script, self.data, self.title = body, script, data, title
        self.trace, self.css = trace, css

    def to_html(self) -> str:
        """The fragment a notebook output shows; fresh ids at every call."""
        uid = f"s2s-{self.kind}-{uuid.uuid4().hex[:10]}"
        data = {**self.data, "title": self.title, "name": f"seq2seq-{self.kind}"}
        style = (CSS + self.css).strip()  # newlines are whitespace in CSS: keep them
        return (
            f'<div class="s2sw-out" id="{uid}-out">'
            f'<style onload="{esc(ACTIVATE)}">{style}</style>\n'
            f'<div class="s2sw s2sw-{self.kind}" id="{uid}">\n{self.body}\n</div>\n'
            f'<script type="application/json" id="{uid}-data">{script_json(data)}</script>\n'
            f'<script>(function () {{ "use strict"; var UID = "{uid}";\n{JS_COMMON}\n'
            f"{self.script}\n}})();</script></div>"
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
