"""The course's figures, drawn as SVG from this file (book/figures/<name>.svg).

Each figure is a function that draws on a small SVG writer (`Svg`); the walk-through of beam
search and the BLEU example are computed with `lib` (`lib.search.beam_search` on
`lib.experiments.toy.walkthrough_table`, `lib.bleu.clipped_matches` and `brevity_penalty`), so
their numbers
are the ones the chapters print. The output is deterministic: the same source gives the same
bytes, and tests/test_figures.py fails when a committed SVG differs from what this file draws.

Every figure paints its own light, rounded panel, so it reads the same on the website's light
and dark themes and in Colab or JupyterLab, where an <img> cannot see the page's colours.

    python -m scripts.figures            # write book/figures/*.svg
    python -m scripts.figures --check    # exit 1 if a committed figure is stale
"""

from __future__ import annotations

import argparse
import html
import math
import re
import sys
from pathlib import Path

from lib import bleu, search
from lib.experiments.toy import TableModel, walkthrough_table

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "book" / "figures"

SANS = "'DejaVu Sans', 'Helvetica Neue', Arial, sans-serif"
MONO = "'DejaVu Sans Mono', Menlo, Consolas, monospace"
SERIF = "'DejaVu Serif', 'Times New Roman', serif"

# Colours that contrast with the figure's own light panel (WCAG AA for the text colours).
PANEL, PANEL_EDGE = "#fcfcfd", "#c4c9d2"
INK, MUTED = "#1f2328", "#555d68"
ENC = ("#dbeafe", "#1d4ed8")  # (fill, stroke): encoder, blue
DEC = ("#ffedd5", "#b45309")  # decoder, orange
HEAD = ("#dcfce7", "#15803d")  # prediction head, green
CTX = ("#ede9fe", "#6d28d9")  # context, purple
TOK = ("#f3f4f6", "#6b7280")  # tokens, grey
BAD = ("#fee2e2", "#b91c1c")  # dropped / unmatched, red


def _n(value: float) -> str:
    """A coordinate, rounded so the output does not depend on float noise."""
    text = f"{round(value, 1):.1f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _attrs(**attrs) -> str:
    out = []
    for key, value in attrs.items():
        if value is None:
            continue
        key = key.rstrip("_").replace("_", "-")
        if isinstance(value, float | int) and not isinstance(value, bool):
            value = _n(value)
        out.append(f'{key}="{html.escape(str(value), quote=True)}"')
    return " ".join(out)


_SCRIPT = re.compile(r"([_^])(\{[^{}]*\}|.)")


class Svg:
    """A minimal SVG writer: shapes, arrows and text with TeX-like sub/superscripts."""

    def __init__(self, width: int, height: int, title: str, desc: str):
        self.width, self.height = width, height
        self.title, self.desc = title, desc
        self.items: list[str] = []
        self._marker_colours: set[str] = set()  # arrowheads are markers, one per colour
        self.rect(1, 1, width - 2, height - 2, PANEL, PANEL_EDGE, rx=14)
        self._groups = 0

    def shift(self, dx: float, dy: float):
        """Draw what follows moved by (dx, dy)."""
        self.items.append(f'<g transform="translate({_n(dx)} {_n(dy)})">')
        self._groups += 1

    # --- shapes ------------------------------------------------------------------------------

    def rect(self, x, y, w, h, fill, stroke, rx=6, width=1.5, dash=None):
        attrs = _attrs(x=x, y=y, width=w, height=h, rx=rx, fill=fill, stroke=stroke,
                       stroke_width=width, stroke_dasharray=dash)
        self.items.append(f"<rect {attrs}/>")

    def box(self, cx, cy, w, h, colours, label="", font=SANS, size=14, rx=6, dash=None,
            weight=None, width=1.5):
        """A rounded box centred on (cx, cy), with a centred label."""
        self.rect(cx - w / 2, cy - h / 2, w, h, colours[0], colours[1], rx=rx, dash=dash,
                  width=width)
        if label:
            self.text(cx, cy + size * 0.35, label, font=font, size=size, weight=weight,
                      scripts=False)

    def line(self, x1, y1, x2, y2, colour=INK, width=1.5, dash=None, arrow=True):
        self.path(f"M{_n(x1)} {_n(y1)} L{_n(x2)} {_n(y2)}", colour, width, dash, arrow)

    def path(self, d, colour=INK, width=1.5, dash=None, arrow=True):
        marker = None
        if arrow:
            marker = f"url(#arrow-{colour[1:]})"
            self._marker_colours.add(colour)
        attrs = _attrs(d=d, fill="none", stroke=colour, stroke_width=width,
                       stroke_dasharray=dash, marker_end=marker)
        self.items.append(f"<path {attrs}/>")

    # --- text --------------------------------------------------------------------------------

    def text(self, x, y, content: str, size=14, anchor="middle", font=SANS, fill=INK,
             weight=None, italic=False, scripts=True):
        """Text at baseline y; with `scripts`, `_x`, `_{xy}`, `^x`, `^{xy}` are sub- and
        superscripts (a superscript right after a subscript stacks above it, as in h_t^i)."""
        # SVG collapses runs of spaces and drops a space at a tspan's edge: no-break spaces keep
        # the spacing as written (xml:space and CSS white-space are not honoured everywhere)
        content = content.replace(" ", "\u00a0")
        spans = self._spans(content, size, stack=italic) if scripts else html.escape(content)
        attrs = _attrs(x=x, y=y, font_family=font, font_size=size, text_anchor=anchor,
                       fill=fill, font_weight=weight, font_style="italic" if italic else None)
        self.items.append(f"<text {attrs}>{spans}</text>")

    def math(self, x, y, content: str, size=15, anchor="middle", fill=INK):
        self.text(x, y, content, size=size, anchor=anchor, font=SERIF, fill=fill, italic=True)

    @staticmethod
    def _spans(content: str, size: float, stack: bool) -> str:
        out, pos, shift = [], 0, 0.0
        small = size * 0.72
        last_sub = ""
        for match in _SCRIPT.finditer(content):
            plain = content[pos:match.start()]
            if plain:
                dy = -shift
                out.append(f"<tspan {_attrs(dy=dy)}>{html.escape(plain)}</tspan>" if dy else
                           html.escape(plain))
                shift, last_sub = 0.0, ""
            kind, body = match.group(1), match.group(2).strip("{}") if len(
                match.group(2)) > 1 else match.group(2)
            target = size * 0.3 if kind == "_" else -size * 0.42
            attrs = {"dy": target - shift, "font_size": small}
            if stack and kind == "^" and len(last_sub) == 1 and match.start() == pos:
                # stack over a one-letter subscript, as TeX does (h_t^i)
                attrs["dx"] = -0.5 * small
            out.append(f"<tspan {_attrs(**attrs)}>{html.escape(body)}</tspan>")
            shift = target
            last_sub = body if kind == "_" else ""
            pos = match.end()
        rest = content[pos:]
        if rest:
            out.append(f"<tspan {_attrs(dy=-shift)}>{html.escape(rest)}</tspan>" if shift else
                       html.escape(rest))
        return "".join(out)

    # --- output ------------------------------------------------------------------------------

    def render(self) -> str:
        markers = "".join(
            f'<marker id="arrow-{c[1:]}" viewBox="0 0 10 10" refX="9" refY="5" '
            f'markerWidth="9" markerHeight="9" markerUnits="userSpaceOnUse" '
            f'orient="auto-start-reverse">'
            f'<path d="M0 0 L10 5 L0 10 z" fill="{c}"/></marker>'
            for c in sorted(self._marker_colours))
        head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width}" '
                f'height="{self.height}" viewBox="0 0 {self.width} {self.height}" role="img" '
                f'aria-labelledby="title desc">\n'
                f'<title id="title">{html.escape(self.title)}</title>\n'
                f'<desc id="desc">{html.escape(self.desc)}</desc>\n'
                f"<defs>{markers}</defs>\n")
        return head + "\n".join(self.items + ["</g>"] * self._groups) + "\n</svg>\n"


# ---------------------------------------------------------------------------------------------
# 1. intro: the whole model
# ---------------------------------------------------------------------------------------------


def intro_model() -> Svg:
    svg = Svg(1000, 545, "The RNN encoder-decoder translating We won.",
              "The English sentence We won. is split into the tokens We, won and the full stop; "
              "each is embedded as x_t and read by a two-layer GRU encoder, one column per "
              "token. Each decoder layer starts from the encoder's final state of the same "
              "layer (s_0^1 = h_3^1, s_0^2 = h_3^2). The last layer's final state is also the "
              "context c = h_3^2, which enters the decoder's first layer at every step, next to "
              "the previous token. The decoder starts from <sos>; each input token y_t-1 is "
              "embedded as e(y_t-1) (e(y_0) for <sos>, then e(y_1) to e(y_4)), as the encoder's "
              "are as x_t, and at each step its top state "
              "s_t^2 goes through the prediction head (W_p and a softmax) to pick the next "
              "token, which is fed back as the next input: Nous, avons, gagné, the full stop, "
              "and finally <eos>, which ends the translation.")
    svg.text(30, 34, "encoder", size=16, anchor="start", weight="bold", fill=ENC[1])
    svg.text(452, 34, "decoder", size=16, anchor="start", weight="bold", fill=DEC[1])
    svg.text(436, 150, "prediction head", size=14, anchor="end", weight="bold", fill=HEAD[1])
    rows = {1: 340, 2: 240}  # layer -> y of its GRU boxes, shared by encoder and decoder
    svg.text(22, rows[1] + 5, "layer 1", size=12, anchor="start", fill=MUTED)
    svg.text(22, rows[2] + 5, "layer 2", size=12, anchor="start", fill=MUTED)
    # encoder: sentence -> tokens -> two GRU layers
    xs = [110, 200, 290]
    svg.text(200, 505, "“We won.”", size=16, font=SERIF)
    svg.line(200, 488, 200, 437, MUTED)
    svg.text(210, 470, "tokenise", size=12, anchor="start", fill=MUTED)
    for t, (x, tok) in enumerate(zip(xs, ["We", "won", "."]), start=1):
        svg.box(x, 420, 64, 30, TOK, tok, font=MONO)
        svg.line(x, 405, x, 364, MUTED)
        svg.math(x + 8, 390, f"x_{t}", size=14, anchor="start")
        for layer, y in rows.items():
            svg.box(x, y, 74, 44, ENC, "")
            svg.text(x, y - 5, "GRU", size=12, fill=ENC[1])
            svg.math(x, y + 15, f"h_{t}^{layer}", size=15)
            if t < 3:
                svg.line(x + 37, y, xs[t] - 39, y, ENC[1])
        svg.line(x, rows[1] - 22, x, rows[2] + 24, ENC[1])
    # each decoder layer starts from the encoder's final state of the same layer (eq. 3)
    dx = [495, 600, 705, 810, 915]
    for layer, y in rows.items():
        svg.line(327, y, dx[0] - 39, y, ENC[1])
        svg.math(405, y - 8, f"s_0^{layer} = h_3^{layer}", size=13)
    # the context c = h_3^2, fed to the decoder's first layer at every step
    svg.path(f"M352 {rows[2]} L352 470 L366 470", CTX[1])
    svg.box(390, 470, 44, 30, CTX, "")
    svg.math(390, 476, "c", size=17)
    svg.math(330, 475, "c = h_3^2", size=13, anchor="end")
    svg.text(390, 503, "context", size=11, fill=CTX[1])
    svg.line(412, 470, dx[-1] + 28, 470, CTX[1], arrow=False)
    # decoder loop
    inputs = ["<sos>", "Nous", "avons", "gagné", "."]
    outputs = ["Nous", "avons", "gagné", ".", "<eos>"]
    for t, x in enumerate(dx):
        svg.box(x - 12, 420, 66, 30, TOK, inputs[t], font=MONO, size=13)
        svg.line(x - 12, 405, x - 12, 364, MUTED)
        svg.math(x + 8, 392, f"e(y_{t})", size=12)
        svg.line(x + 28, 470, x + 28, 364, CTX[1])
        for layer, y in rows.items():
            svg.box(x, y, 74, 44, DEC, "")
            svg.text(x, y - 5, "GRU", size=12, fill=DEC[1])
            svg.math(x, y + 15, f"s_{t + 1}^{layer}", size=15)
            if t + 1 < len(dx):
                svg.line(x + 37, y, dx[t + 1] - 39, y, DEC[1])
        svg.line(x, rows[1] - 22, x, rows[2] + 24, DEC[1])
        svg.line(x, rows[2] - 22, x, 167, DEC[1])
        svg.box(x, 145, 78, 40, HEAD, "", size=12)
        svg.math(x, 142, "W_p", size=14)
        svg.text(x, 158, "softmax", size=11, fill=HEAD[1])
        svg.line(x, 125, x, 87, HEAD[1])
        last = t == len(dx) - 1
        svg.box(x, 70, 74, 30, BAD if last else TOK, outputs[t], font=MONO, size=13,
                weight="bold" if last else None)
        if t + 1 < len(dx):
            nxt = dx[t + 1] - 12
            svg.path(f"M{x + 37} 70 L{x + 52} 70 L{x + 52} 392 L{nxt} 392 L{nxt} 403", MUTED,
                     dash="5 4")
    svg.text(915, 44, "stop", size=12, anchor="middle", fill=BAD[1])
    svg.text(985, 532, "┄ each chosen token is fed back as the next input;  "
             "— c enters layer 1 at every step", size=12, anchor="end", fill=MUTED)
    return svg


# ---------------------------------------------------------------------------------------------
# 2. encoder: the layer x time grid
# ---------------------------------------------------------------------------------------------


def encoder_grid() -> Svg:
    tokens = ["I", "am", "cold", "."]
    S, L = len(tokens), 3
    svg = Svg(900, 500, "The encoder's grid of states, layer by time step",
              f"A grid of GRU states h_t^i for {S} source tokens (I, am, cold, full stop; "
              f"t = 1 to S = {S}) and L = {L} layers. Each state reads the state to its left "
              "(the same layer at the previous step, starting from zero) and the state below "
              "it (layer i reads layer i-1; layer 1 reads the embedding x_t), as in eq. 1. The "
              "top row is marked as the output states, one per source token, shape (B, S, H); "
              "the last column is marked as the hidden states, one per layer, shape (L, B, H), "
              "which are the decoder's initial states; the top one, h_S^L, is also the context "
              "c fed to the decoder at every step. The top-right state belongs to both.")
    x0, dx, y_top, dy = 230, 130, 110, 95
    xs = [x0 + dx * t for t in range(S)]
    ys = [y_top + dy * (L - 1 - i) for i in range(L)]  # layer 1 at the bottom
    # the two slices, behind the states
    svg.rect(xs[0] - 58, ys[-1] - 34, xs[-1] - xs[0] + 116, 68, "#eff6ff", ENC[1], rx=12,
             dash="6 4")
    svg.rect(xs[-1] - 50, ys[-1] - 42, 100, ys[0] - ys[-1] + 84, "#f5f3ff", CTX[1], rx=12,
             dash="6 4")
    svg.text(xs[0] - 58, ys[-1] - 46, "output states  [h_1^L … h_S^L]  (B, S, H)", size=14,
             anchor="start", fill=ENC[1], weight="bold")
    svg.text(xs[-1] + 62, ys[1] - 24, "hidden states", size=14, anchor="start", fill=CTX[1],
             weight="bold")
    svg.text(xs[-1] + 62, ys[1] - 4, "[h_S^1 … h_S^L]", size=14, anchor="start", fill=CTX[1])
    svg.text(xs[-1] + 62, ys[1] + 16, "(L, B, H)", size=14, anchor="start", fill=CTX[1])
    svg.text(xs[-1] + 62, ys[1] + 38, "= the decoder's", size=14, anchor="start", fill=CTX[1])
    svg.text(xs[-1] + 62, ys[1] + 56, "initial states", size=14, anchor="start", fill=CTX[1])
    svg.text(xs[-1] + 62, ys[-1] - 4, "c = h_S^L", size=14, anchor="start", fill=CTX[1])
    for i, y in enumerate(ys):
        name = f"layer {i + 1}" + (" = L" if i == L - 1 else "")
        svg.text(28, y + 5, name, size=13, anchor="start", fill=MUTED)
        svg.line(xs[0] - 80, y, xs[0] - 37, y, MUTED, dash="4 3")
        svg.text(xs[0] - 86, y + 5, "0", size=13, anchor="end", fill=MUTED)
        for t, x in enumerate(xs):
            svg.box(x, y, 72, 44, ENC, "", rx=8)
            step = "S" if t == S - 1 else str(t + 1)
            svg.math(x - 4, y + 6, f"h_{step}^{i + 1}", size=18)
            if t + 1 < S:
                svg.line(x + 36, y, xs[t + 1] - 38, y, ENC[1])
            if i + 1 < L:
                svg.line(x, y - 22, x, ys[i + 1] + 24, ENC[1])
    # inputs
    y_in = ys[0] + 95
    for t, (x, tok) in enumerate(zip(xs, tokens)):
        svg.box(x, y_in + 22, 60, 28, TOK, tok, font=MONO)
        svg.line(x, y_in + 8, x, ys[0] + 24, MUTED)
        svg.math(x + 10, y_in - 12, f"x_{t + 1}", size=14, anchor="start")
    svg.text(30, y_in + 27, "tokens", size=13, anchor="start", fill=MUTED)
    # eq. 1 on one state
    # eq. 1 on the arrows into h_2^2
    svg.text(xs[1] + 8, (ys[0] + ys[1]) / 2 + 4, "layer i reads layer i − 1", size=12,
             anchor="start", fill=ENC[1])
    svg.text((xs[0] + xs[1]) / 2, ys[0] + 17, "t − 1 → t", size=12, fill=ENC[1])
    svg.text(40, 470, "eq. 1:", size=13, anchor="start", weight="bold")
    svg.math(90, 470, "h_t^1 = GRU(x_t, h_{t−1}^1),   h_t^i = GRU(h_t^{i−1}, h_{t−1}^i)", size=15,
             anchor="start")
    svg.text(40, 490, "eq. 2: each h_t^i summarises x_1 … x_t; the states before step 1 are 0",
             size=13, anchor="start")
    return svg


# ---------------------------------------------------------------------------------------------
# 3. decoder: unrolled, two ways to give it the context
# ---------------------------------------------------------------------------------------------


def _decoder_panel(svg: Svg, x0: float, feed: bool):
    title = ("context at every step too (after Cho et al. 2014)" if feed
             else "context as the initial state only (Sutskever et al. 2014)")
    svg.text(x0 + 230, 36, title, size=14, weight="bold", fill=DEC[1])
    svg.text(x0 + 230, 56, f"ModelConfig(feed_context={feed})", size=12, font=MONO,
             fill=MUTED, scripts=False)
    # encoder's final states -> s_0
    svg.box(x0 + 48, 190, 76, 56, ENC, "")
    svg.text(x0 + 48, 186, "encoder", size=12, fill=ENC[1])
    svg.math(x0 + 48, 205, "h_S^i", size=15)
    svg.line(x0 + 87, 190, x0 + 118, 190, ENC[1])
    svg.math(x0 + 103, 178, "s_0^i", size=13)
    xs = [x0 + 170, x0 + 290, x0 + 410]
    ins = ["<sos>", "y_1", "y_2"]
    outs = ["y_1", "y_2", "y_3"]
    for t, x in enumerate(xs):
        svg.box(x, 190, 92, 44, DEC, "GRU", size=13)
        svg.math(x + 26, 228, f"s_{t + 1}", size=13, anchor="start")
        if t + 1 < len(xs):
            svg.line(x + 46, 190, xs[t + 1] - 48, 190, DEC[1])
        # input token
        if t == 0:
            svg.box(x, 330, 70, 28, TOK, "<sos>", font=MONO, size=13)
        else:
            svg.box(x, 330, 70, 28, TOK, "")
            svg.math(x, 335, ins[t], size=14)
        svg.line(x, 316, x, 214, MUTED)
        svg.math(x - 8, 300, f"e(y_{t})", size=13, anchor="end")
        # head and output
        svg.line(x, 168, x, 137, DEC[1])
        svg.box(x, 120, 76, 32, HEAD, "", size=12)
        svg.text(x, 125, "head", size=12, fill=HEAD[1])
        svg.line(x, 104, x, 90, HEAD[1])
        svg.box(x, 74, 60, 28, TOK, "")
        svg.math(x, 79, outs[t], size=14)
        if t + 1 < len(xs):
            nxt = xs[t + 1]
            svg.path(f"M{x + 30} 74 L{x + 58} 74 L{x + 58} 360 L{nxt} 360 L{nxt} 346",
                     MUTED, dash="5 4")
        if feed:
            svg.path(f"M{x0 + 30} 390 L{x - 26} 390 L{x - 26} 212", CTX[1])
    if feed:
        # c = h_S^L, the top encoder layer's last state
        svg.line(x0 + 30, 218, x0 + 30, 377, CTX[1])
        svg.math(x0 + 37, 300, "c = h_S^L", size=13, anchor="start")
        svg.box(x0 + 30, 390, 36, 26, CTX, "")
        svg.math(x0 + 30, 396, "c", size=16)
        svg.text(x0 + 230, 418, "layer 1 reads [e(y_{t−1}); c] at every step (eq. 4)",
                 size=12, fill=CTX[1])
    else:
        svg.text(x0 + 230, 418, "layer 1 reads e(y_{t−1}) alone: the source enters only "
                 "through s_0", size=12, fill=MUTED)
    svg.text(x0 + 250, 444, "s_0^i = h_S^i,  y_0 = <sos>  (eq. 3);  ┄ ŷ_t fed back as the next "
             "input", size=12, fill=MUTED)


def decoder_unrolled() -> Svg:
    svg = Svg(1000, 462, "The decoder unrolled, with the context fed in two ways",
              "Two unrolled decoders side by side, three steps each. In both, each decoder "
              "layer starts from the encoder's final state of the same layer (s_0^i = h_S^i, "
              "eq. 3), the first input is <sos>, and at every step the GRU state goes through "
              "the prediction head to produce the next token y_t, which is fed back as the next "
              "input. Left (a variant of Cho et al. 2014, feed_context=True): the context "
              "c = h_S^L, the top encoder layer's last state (an arrow from the encoder), also "
              "enters the first layer at every step, next to the embedding e(y_t-1). Right "
              "(Sutskever et al. 2014, feed_context=False): the context enters only through the "
              "initial state.")
    _decoder_panel(svg, 10, True)
    svg.line(500, 24, 500, 440, PANEL_EDGE, arrow=False)
    _decoder_panel(svg, 510, False)
    return svg


# ---------------------------------------------------------------------------------------------
# 4. prediction head: state -> logits -> probabilities -> argmax / loss
# ---------------------------------------------------------------------------------------------

# candidates for a sentence's first word: capitalised, as the vocabulary keeps capitals
HEAD_WORDS = ["Je", "Nous", "Il", "<eos>", "…"]
HEAD_LOGITS = [2.1, 0.9, -0.4, -1.6, 0.2]  # illustrative logits of five words


def _bars(svg: Svg, x, y_base, values, scale, colour, labels, fmt):
    """Vertical bars around a baseline at y_base (positive up)."""
    w = 26
    svg.line(x - 8, y_base, x + len(values) * (w + 8), y_base, MUTED, width=1, arrow=False)
    for k, (value, label) in enumerate(zip(values, labels)):
        bx = x + k * (w + 8)
        h = value * scale
        svg.rect(bx, y_base - max(h, 0), w, abs(h), colour[0], colour[1], rx=2, width=1.2)
        if h >= 0:
            svg.text(bx + w / 2, y_base - h - 5, fmt(value), size=11)
            svg.text(bx + w / 2, y_base + 14, label, size=11, font=MONO, fill=MUTED)
        else:
            svg.text(bx + w / 2, y_base - h + 13, fmt(value), size=11)
            svg.text(bx + w / 2, y_base - 5, label, size=11, font=MONO, fill=MUTED)


def prediction_head() -> Svg:
    z = HEAD_LOGITS
    top = max(z)
    exps = [math.exp(v - top) for v in z]
    probs = [e / sum(exps) for e in exps]
    svg = Svg(1000, 300, "The prediction head: from a decoder state to a token or a loss",
              "The top decoder state s_t^L, a vector of H numbers, is multiplied by W_p and "
              "b_p is added (eq. 6), giving one logit z_t per word of the French vocabulary. "
              "A softmax (eq. 8) turns the logits into probabilities that sum to one. Decoding "
              "takes the argmax of the logits, the most likely word (the same word as the "
              "argmax of the probabilities), so its arrow starts from the logits; training "
              "reads the probability of the reference word and adds -log P(y*_t | y*_<t, x) to "
              "the loss (eq. 7). Bars illustrate five candidates for the first word of a "
              "sentence, capitalised as the vocabulary keeps them: Je, Nous, Il, <eos> and the "
              "rest.")
    svg.shift(0, -50)
    # state
    svg.rect(40, 120, 30, 130, ENC[0], DEC[1], rx=4)
    for k in range(1, 6):
        svg.line(40, 120 + k * 130 / 6, 70, 120 + k * 130 / 6, DEC[1], width=0.8, arrow=False)
    svg.math(55, 108, "s_t^L", size=17)
    svg.text(55, 274, "(H,)", size=12, fill=MUTED)
    svg.text(55, 294, "decoder state", size=12, fill=MUTED)
    # W_p
    svg.line(76, 185, 130, 185, INK)
    svg.box(180, 185, 96, 76, HEAD, "")
    svg.math(180, 182, "W_p , b_p", size=16)
    svg.text(180, 204, "(|V|, H)", size=12, fill=MUTED)
    svg.math(180, 300, "z_t = W_p s_t^L + b_p", size=14)
    svg.line(230, 185, 282, 185, INK)
    svg.text(256, 176, "eq. 6", size=12, weight="bold", fill=HEAD[1])
    # logits
    svg.text(375, 80, "logits", size=13, weight="bold")
    svg.math(375, 100, "z_t  (|V|,)", size=13)
    _bars(svg, 295, 200, z, 30, TOK, HEAD_WORDS, lambda v: f"{v:+.1f}")
    # softmax
    svg.line(470, 185, 540, 185, INK)
    svg.text(505, 158, "softmax", size=13, weight="bold", fill=HEAD[1])
    svg.text(505, 176, "eq. 8", size=12, weight="bold", fill=HEAD[1])
    svg.math(505, 300, "exp(z_{t,v}) / Σ_w exp(z_{t,w})", size=13)
    # probabilities
    svg.text(630, 80, "probabilities", size=13, weight="bold")
    svg.math(630, 100, "P(y_t = v | y_{<t}, x)", size=13)
    _bars(svg, 552, 240, probs, 150, HEAD, HEAD_WORDS, lambda v: f"{v:.2f}")
    # argmax / loss
    # decoding's argmax is taken over the logits (the same word as over the probabilities)
    # (the arrow leaves the top of the largest logit, Je's)
    svg.path("M324 131 L340 113 L792 113", INK)
    svg.text(786, 131, "argmax", size=12, weight="bold", fill=INK, anchor="end")
    svg.text(786, 146, "same word as", size=11, fill=MUTED, anchor="end")
    svg.text(786, 160, "over the probabilities", size=11, fill=MUTED, anchor="end")
    svg.path("M752 205 L792 240", INK)
    svg.text(790, 266, "eq. 7", size=12, weight="bold", fill=BAD[1], anchor="end")
    svg.box(880, 112, 170, 58, TOK, "")
    svg.text(880, 106, "decoding: argmax", size=13, weight="bold")
    best = HEAD_WORDS[probs.index(max(probs))]
    svg.text(880, 128, f"ŷ_t = {best}", size=14, font=MONO)
    svg.box(880, 262, 170, 70, BAD, "")
    svg.text(880, 250, "training: loss", size=13, weight="bold")
    svg.math(880, 272, "− log P(y*_t | y*_{<t}, x)", size=13)
    svg.text(880, 290, "summed over t (eq. 7)", size=12, fill=MUTED)
    return svg


# ---------------------------------------------------------------------------------------------
# 5. teacher forcing: training against inference
# ---------------------------------------------------------------------------------------------


def teacher_forcing() -> Svg:
    # the chapter's training pair (the first French line of "Nice to meet you." in the split)
    ref = ["Je", "suis", "heureux", "de", "vous", "rencontrer", "."]
    free = ["Je", "suis", "heureux", "de", "te", "voir", "."]  # illustrative: slips at step 5
    svg = Svg(1000, 540, "Teacher forcing in training against free running at translation time",
              "Two rows of the same decoder on the source Nice to meet you. Top, training "
              "with teacher forcing: the inputs are the reference shifted right by one "
              "(<sos>, Je, suis, heureux, de, vous, rencontrer, full stop) and the targets are "
              "the reference followed by <eos>; even where the model's prediction differs from "
              "the target (te instead of vous, in red) the next input is the reference word "
              "vous. Bottom, translation: there is no reference, so each step's input is the "
              "model's own previous output; after the same slip (te, in red) the model reads "
              "its own word and goes on from there (voir instead of rencontrer, also red).")
    svg.text(30, 32, "source: “Nice to meet you.”   reference: “Je suis heureux de vous "
             "rencontrer.”", size=14, anchor="start")
    xs = [150 + 112 * t for t in range(8)]

    def row(y0, title, inputs, preds, targets, fed_back):
        svg.text(30, y0 - 8, title, size=14, anchor="start", weight="bold", fill=DEC[1])
        for t, x in enumerate(xs):
            svg.box(x, y0 + 170, 94, 28, TOK, inputs[t], font=MONO, size=13)
            svg.line(x, y0 + 156, x, y0 + 127, MUTED)
            svg.box(x, y0 + 105, 94, 40, DEC, "decoder", size=12)
            if t + 1 < len(xs):
                svg.line(x + 47, y0 + 105, xs[t + 1] - 49, y0 + 105, DEC[1])
            svg.line(x, y0 + 85, x, y0 + 58, DEC[1])
            # one rule in both rows: red where the output is not the reference's token
            differs = preds[t] != (ref + ["<eos>"])[t]
            svg.box(x, y0 + 42, 94, 28, BAD if differs else HEAD, preds[t], font=MONO, size=13)
            if targets is not None:
                svg.text(x, y0 + 14, targets[t], size=12, font=MONO, fill=MUTED)
            if fed_back and t + 1 < len(xs):
                nxt = xs[t + 1]
                svg.path(f"M{x + 47} {y0 + 42} L{x + 56} {y0 + 42} L{x + 56} {y0 + 148} "
                         f"L{nxt - 30} {y0 + 148} L{nxt - 30} {y0 + 154}", MUTED, dash="5 4")
        if targets is not None:
            svg.text(30, y0 + 18, "target", size=12, anchor="start", fill=MUTED)
        svg.text(30, y0 + 46, "output", size=12, anchor="start", fill=MUTED)
        svg.text(30, y0 + 175, "input", size=12, anchor="start", fill=MUTED)

    shifted = ["<sos>"] + ref
    preds = ["Je", "suis", "heureux", "de", "te", "rencontrer", ".", "<eos>"]
    row(66, "training (teacher forcing): the inputs are the reference, shifted by one",
        shifted, preds, ref + ["<eos>"], fed_back=False)
    row(300, "translation: each input is the model's own previous output",
        ["<sos>"] + free, free + ["<eos>"], None, fed_back=True)
    svg.text(500, 508, "red: the output differs from the reference's token at that step",
             size=12, fill=MUTED)
    svg.text(500, 528, "┄ the model's output is fed back (no reference at translation time)",
             size=12, fill=MUTED)
    return svg


# ---------------------------------------------------------------------------------------------
# 6. beam search: the k = 2 walk-through, computed by lib
# ---------------------------------------------------------------------------------------------


def beam_walk() -> Svg:
    walk = TableModel(walkthrough_table(), max_len=3)
    src, lengths = walk.inputs()
    alpha = 1.0
    trace = search.beam_search(walk, src, lengths, beam_size=2, alpha=alpha, trace=True).trace
    nodes = {n.id: n for n in trace.nodes}
    children: dict[int, list[int]] = {}
    for n in trace.nodes:
        if n.parent is not None:
            children.setdefault(n.parent, []).append(n.id)
    root = next(n.id for n in trace.nodes if n.parent is None)
    answer = trace.winner
    on_answer_path = set()
    k = trace.winner
    while k is not None:
        on_answer_path.add(k)
        k = nodes[k].parent
    rows: dict[int, float] = {}

    def place(node_id: int, next_row: list[int]) -> float:
        kids = children.get(node_id, [])
        if not kids:
            rows[node_id] = next_row[0]
            next_row[0] += 1
        else:
            rows[node_id] = sum(place(c, next_row) for c in kids) / len(kids)
        return rows[node_id]

    place(root, [0])
    n_rows = max(rows.values()) + 1
    row_h, top = 52, 70
    height = int(top + n_rows * row_h + 70)
    def words(node_id: int) -> str:
        return " ".join(walk.tgt_vocab.itos[i] for i in trace.path(node_id))

    said = []
    for step in range(1, max(n.step for n in trace.nodes) + 1):
        parts = []
        for status, verb in (("finished", "finishes"), ("kept", "keeps"), ("pruned", "drops")):
            found = [f"{words(n.id)} (P = {math.exp(n.raw):.3f})" for n in trace.nodes
                     if n.step == step and n.status == status]
            if found:
                parts.append(f"{verb} {' and '.join(found)}")
        said.append(f"Step {step} " + "; ".join(parts) + ".")
    svg = Svg(1000, height, "Beam search with k = 2 on the chapter's walk-through table",
              f"A search tree drawn from lib's beam search on the chapter's walk-through (beam "
              f"size k = 2, outputs capped at {walk.config.max_tgt_len} tokens, finished "
              f"hypotheses ranked by log P / L with alpha = {alpha:g}). " + " ".join(said)
              + f" The answer is the best finished hypothesis, {words(answer)}, highlighted.")
    xs = [70, 300, 540, 780]
    for step, x in enumerate(xs):
        svg.text(x, 40, "start" if step == 0 else f"step {step}", size=14, weight="bold",
                 fill=MUTED)

    def y_of(node_id):
        return top + rows[node_id] * row_h + 20

    style = {"kept": (ENC, "kept"), "pruned": (BAD, "dropped"), "finished": (HEAD, "finished")}
    for n in trace.nodes:
        x, y = xs[n.step], y_of(n.id)
        if n.parent is not None:
            px, py = xs[n.step - 1], y_of(n.parent)
            colour = MUTED if n.status == "pruned" else INK
            start = px + (46 if n.parent == root else 81)
            svg.path(f"M{start} {py} C{start + 50} {py} {x - 130} {y} {x - 84} {y}", colour,
                     width=2.5 if n.id in on_answer_path else 1.2,
                     dash="4 3" if n.status == "pruned" else None)
        if n.parent is None:
            svg.box(x, y, 90, 34, TOK, "<sos>", font=MONO, size=13)
            continue
        colours, label = style[n.status]
        svg.box(x, y, 160, 42, colours, "", width=3 if n.id == answer else 1.5,
                dash="5 3" if n.status == "pruned" else None)
        svg.text(x - 72, y - 3, words(n.id), size=14, font=MONO, anchor="start",
                 weight="bold" if n.id == answer else None)
        detail = f"P = {math.exp(n.raw):.3f}"
        if n.status == "finished":
            detail += f"   score {search.normalize(n.raw, n.step, alpha):.3f}"
        svg.text(x - 72, y + 15, detail, size=12, anchor="start", fill=INK)
        svg.text(x + 76, y - 5, label, size=11, anchor="end", fill=colours[1])
    # legend
    ly = height - 30
    svg.text(30, ly, "score = log P / L (α = 1)   kept: stays in the beam   dropped: not among "
             "the k = 2 best   finished: ends with <eos> or reaches the cap", size=12,
             anchor="start", fill=MUTED)
    svg.text(30, ly + 18, "answer: the best finished score, "
             f"{words(answer)} (thick)",
             size=12, anchor="start", fill=INK, weight="bold")
    return svg


# ---------------------------------------------------------------------------------------------
# 7. BLEU: clipped 1- and 2-gram matches and the brevity penalty
# ---------------------------------------------------------------------------------------------

BLEU_HYP = "le chat chat dort."
BLEU_REFS = ("le chat dort sur le tapis.", "un chat dort sur le canapé du salon.")


def bleu_example() -> Svg:
    hyp = bleu.tokenize(BLEU_HYP)
    refs = [bleu.tokenize(r) for r in BLEU_REFS]
    one, two = (bleu.clipped_matches(hyp, refs, n) for n in (1, 2))
    c = len(hyp)
    r = bleu.closest_ref_length(c, [len(x) for x in refs])
    bp = bleu.brevity_penalty(c, r)
    svg = Svg(1000, 440, "BLEU's clipped n-gram matches and brevity penalty on one example",
              f"The hypothesis '{BLEU_HYP}' against two references, '{BLEU_REFS[0]}' and "
              f"'{BLEU_REFS[1]}'. Unigrams: {one.matches} of {one.total} match after clipping "
              "(chat occurs twice in the hypothesis but at most once in a reference, so it is "
              f"credited once). Bigrams: {two.matches} of {two.total} match. The hypothesis has "
              f"c = {c} tokens and the closest reference r = {r}, so the brevity penalty is "
              f"exp(1 - r/c) = {bp:.3f}.")
    svg.text(30, 40, "hypothesis", size=13, anchor="start", weight="bold")
    x0, w = 160, 78

    def tokens(y, toks, colours):
        for k, (tok, col) in enumerate(zip(toks, colours)):
            svg.box(x0 + k * (w + 6) + w / 2, y, w, 30, col, tok, font=MONO, size=13)

    # unigram status of each hypothesis token, in order (credited until the clip is used up)
    left = {d.ngram: d.clipped for d in one.details}
    status = []
    for tok in hyp:
        if left[(tok,)] > 0:
            left[(tok,)] -= 1
            status.append(HEAD)
        else:
            status.append(BAD)
    tokens(35, hyp, status)
    ref_words = set(sum(refs, []))
    for j, ref in enumerate(refs):
        svg.text(30, 95 + 42 * j, f"reference {j + 1}", size=13, anchor="start")
        tokens(90 + 42 * j, ref, [TOK if t in hyp and t in ref_words else TOK for t in ref])
    # the two tables
    def table(x, y, counts, n):
        svg.text(x, y, f"{n}-grams of the hypothesis", size=13, anchor="start", weight="bold")
        svg.text(x, y + 22, "n-gram", size=12, anchor="start", fill=MUTED)
        svg.text(x + 190, y + 22, "count", size=12, anchor="end", fill=MUTED)
        svg.text(x + 270, y + 22, "max in a ref", size=12, anchor="end", fill=MUTED)
        svg.text(x + 340, y + 22, "credited", size=12, anchor="end", fill=MUTED)
        for k, d in enumerate(counts.details):
            yy = y + 44 + 20 * k
            fill = HEAD[1] if d.clipped == d.count else BAD[1]
            svg.text(x, yy, " ".join(d.ngram), size=12, anchor="start", font=MONO)
            svg.text(x + 190, yy, str(d.count), size=12, anchor="end")
            svg.text(x + 270, yy, str(d.max_ref_count), size=12, anchor="end")
            svg.text(x + 340, yy, str(d.clipped), size=12, anchor="end", fill=fill,
                     weight="bold")
        yy = y + 44 + 20 * len(counts.details) + 8
        svg.text(x, yy, f"p_{n} = {counts.matches} / {counts.total} = "
                 f"{counts.matches / counts.total:.2f}", size=14, anchor="start",
                 weight="bold")
    table(40, 200, one, 1)
    table(420, 200, two, 2)
    svg.box(880, 300, 170, 150, CTX, "")
    svg.text(880, 250, "brevity penalty", size=13, weight="bold", fill=CTX[1])
    svg.text(880, 274, f"c = {c} (hypothesis)", size=12)
    svg.text(880, 294, f"r = {r} (closest ref)", size=12)
    svg.text(880, 322, "c < r:  BP = e^{1 − r/c}" if c < r else "c ≥ r:  BP = 1", size=12)
    svg.text(880, 348, f"BP = {bp:.3f}", size=15, weight="bold")
    svg.text(500, 420, "green: credited   red: over the clip (chat counts once) or in no "
             "reference", size=12, fill=MUTED)
    return svg


# ---------------------------------------------------------------------------------------------
# 8. attention: one decoder step with additive attention
# ---------------------------------------------------------------------------------------------

ATTN_WORDS = ["the", "station", "is", "far", ".", "<pad>"]
ATTN_WEIGHTS = [0.06, 0.7, 0.1, 0.08, 0.06, 0.0]  # illustrative weights for writing "gare"


def attention_step() -> Svg:
    svg = Svg(940, 440, "One step of an attention decoder",
              "One decoder step t with additive attention, for a source of five tokens and one "
              "padding position. Bottom: the source tokens and the encoder's output states h_1 "
              "to h_5 (blue). Each state gets a score e_t,j = v^T tanh(W_s s_t-1 + W_h h_j) "
              "from the decoder's previous state s_t-1 (orange, right). A masked softmax over "
              "the positions turns the scores into weights alpha_t,j (purple bars); the padding "
              "position's score is minus infinity, so its weight is exactly zero. The weighted "
              "sum of the output states is the context c_t, which the decoder's GRU reads with "
              "the embedding of the previous token e(y_t-1) and its previous state; the new "
              "state s_t goes through the prediction head to the next word y_t.")
    xs = [110 + 95 * j for j in range(len(ATTN_WORDS))]
    svg.text(24, 30, "one attention decoder step t", size=15, weight="bold", anchor="start",
             fill=DEC[1])
    for j, (x, word, a) in enumerate(zip(xs, ATTN_WORDS, ATTN_WEIGHTS)):
        pad = word == "<pad>"
        svg.box(x, 392, 78, 26, TOK, word, font=MONO, size=12, dash="4 3" if pad else None)
        svg.line(x, 378, x, 344, MUTED if pad else ENC[1])
        svg.box(x, 325, 60, 34, TOK if pad else ENC, "", dash="4 3" if pad else None)
        svg.math(x, 331, f"h_{j + 1}" if not pad else "–", size=15)
        svg.line(x, 307, x, 268, MUTED if pad else ENC[1])
        svg.box(x, 251, 66, 30, TOK, "")
        svg.math(x, 257, "−∞" if pad else f"e_{{t,{j + 1}}}", size=14)
        svg.line(x, 235, x, 216, MUTED)
        height = 60 * a
        if a > 0:
            svg.rect(x - 14, 168 - height, 28, height, CTX[0], CTX[1], rx=2)
            svg.line(x, 166 - height, x, 92, CTX[1], width=1.2)
        svg.text(x, 182, f"{a:.2f}".rstrip("0").rstrip(".") if a else "0", size=11,
                 fill=CTX[1] if a else MUTED)
    svg.box(345, 202, 560, 26, TOK, "")
    svg.text(345, 207, "masked softmax over j: the <pad> score is −∞, so its weight is exactly 0",
             size=12, scripts=False)
    svg.math(40, 150, "α_{t,j}", size=14)
    svg.math(40, 257, "e_{t,j}", size=14)
    svg.box(365, 74, 590, 34, CTX, "")
    svg.text(365, 80, "c_t = Σ_j α_{t,j} h_j   (a weighted mean of the output states)", size=13)
    # the decoder's previous state scores every position, then enters the GRU
    svg.box(735, 251, 64, 34, DEC, "")
    svg.math(735, 257, "s_{t−1}", size=15)
    svg.line(703, 251, xs[-1] + 35, 251, DEC[1])
    svg.text(660, 242, "W_s s_{t−1}", size=11, fill=DEC[1])
    svg.text(660, 271, "to every j", size=11, fill=DEC[1])
    svg.text(24, 428, "e_{t,j} = v^T tanh(W_s s_{t−1} + W_h h_j);  W_h h_j is computed once "
             "per sentence", size=12, fill=MUTED, anchor="start")
    svg.box(720, 74, 48, 30, CTX, "")
    svg.math(720, 80, "c_t", size=15)
    svg.line(660, 74, 694, 74, CTX[1])
    svg.path("M720 90 L720 172 L792 172", CTX[1])
    svg.box(840, 172, 92, 44, DEC, "GRU", size=13)
    svg.path("M767 251 L820 251 L820 196", DEC[1])
    svg.box(880, 330, 80, 28, TOK, "")
    svg.math(880, 336, "e(y_{t−1})", size=13)
    svg.line(880, 316, 866, 196, MUTED)
    svg.math(894, 150, "s_t", size=13, anchor="start")
    svg.line(840, 150, 840, 122, DEC[1])
    svg.box(840, 106, 76, 30, HEAD, "")
    svg.text(840, 111, "head", size=12, fill=HEAD[1])
    svg.line(840, 91, 840, 64, HEAD[1])
    svg.box(840, 48, 60, 28, TOK, "")
    svg.math(840, 53, "y_t", size=14)
    svg.text(916, 428, "the GRU reads [e(y_{t−1}); c_t]", size=12, fill=MUTED, anchor="end")
    return svg


# ---------------------------------------------------------------------------------------------

FIGURES = {
    "intro_model": intro_model,
    "encoder_grid": encoder_grid,
    "decoder_unrolled": decoder_unrolled,
    "prediction_head": prediction_head,
    "teacher_forcing": teacher_forcing,
    "beam_walk": beam_walk,
    "bleu_example": bleu_example,
    "attention_step": attention_step,
}


def render_all() -> dict[str, str]:
    """{file name: SVG text} of every figure."""
    return {f"{name}.svg": draw().render() for name, draw in FIGURES.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 when a file in book/figures/ differs from its source")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    stale = []
    for name, text in render_all().items():
        path = args.out / name
        if args.check:
            if not path.is_file() or path.read_text("utf-8") != text:
                stale.append(str(path))
            continue
        args.out.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(path)
    if stale:
        print("stale figures (run python -m scripts.figures):\n" + "\n".join(stale),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
