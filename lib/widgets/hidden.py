"""Hidden-state explorer: heatmaps of the encoder's and decoder's states, their PCA trajectory,
and a map of many sentences' context vectors.

    view = hidden_state_explorer(model, "I am cold.", map_sentences=test_sentences)
    view              # in a notebook: the interactive view
    view.save_html("hidden.html")

A heatmap has one row per hidden unit and one column per token; its colours are the state's
values, which a GRU keeps in (-1, 1). A hidden size of 512 makes 512 rows, too many to read,
so by default we show the `units` rows that vary most over the sentence.
"""

from __future__ import annotations

import base64

import torch

from lib.widgets.pca import pca2
from lib.widgets.render import (
    CATEGORICAL,
    View,
    button_group,
    css_gradient,
    diverging_rgb,
    esc,
    header,
    png_data_uri,
    short,
    slider,
)
from lib.widgets.runtime import one_cpu_thread
from lib.widgets.trace import ContextMap, HiddenTrace, capture_contexts, capture_hidden

WIDTH = 696  # SVG user units; the SVGs scale down to narrower columns
ENC, DEC = "#2563eb", "#ea580c"  # encoder blue, decoder orange
UNITS = 48  # heatmap rows shown by default: the most varying units

# Heatmap layout (SVG units). Rows are ROW_HEIGHT high until the map would exceed
# HEAT_MAX_HEIGHT (48 rows), then they shrink; a column is at most COLUMN_MAX wide.
HEAT_LEFT, HEAT_TOP = 40, 6  # room for the "N units" axis label; top margin
COLUMN_MAX = 64.0
ROW_HEIGHT, HEAT_MAX_HEIGHT = 5.0, 240.0
CHAR_WIDTH = 6.8  # about one character of the 12 px token labels
LABEL_GAP = 14  # from the heatmap's bottom to the labels' baseline
LABEL_MAX_HEIGHT = 80  # room for labels rotated when they do not fit their column

# The PCA scatter plots (trajectory and context map): axes at the left and bottom.
AXIS_LEFT, AXIS_BOTTOM = 26, 24
TRAJECTORY_HEIGHT, TRAJECTORY_PAD = 270, 16
MAP_HEIGHT, MAP_PAD = 320, 14
LEGEND_WIDTH, LEGEND_ROW = 110, 18  # the map's legend of colour groups, at its right
LEGEND_CHARS = 13  # a group name's characters that fit the legend
MARK_CHARS = 28  # a highlighted sentence's characters beside its ring



# ---------------------------------------------------------------------------------------------
# Heatmaps
# ---------------------------------------------------------------------------------------------


def pick_units(states: torch.Tensor, units: int | None) -> torch.Tensor:
    """Rows to show for states (T, H): the `units` most varying over time, sorted by their
    final value (so the last column, for the encoder the context, reads as a gradient)."""
    T, H = states.shape
    if units is None or units >= H:
        rows = torch.arange(H)
    else:
        spread = states.var(0, unbiased=False) if T > 1 else states[0].abs()  # (H,)
        rows = spread.topk(units).indices  # (units,)
    return rows[states[-1, rows].argsort(descending=True)]


def heatmap(states: torch.Tensor, labels: list[str], unknown: list[bool], units: int | None,
            key: str, mode: str, layer: int, colour: str) -> tuple[str, dict]:
    """One heatmap panel: states (T, H) of one layer -> (HTML, data for the readout)."""
    T, H = states.shape
    rows = pick_units(states, units)  # (N,)
    shown = states[:, rows].T  # (N, T) units x time
    N = shown.size(0)
    ml, top = HEAT_LEFT, HEAT_TOP
    cw = min(COLUMN_MAX, (WIDTH - ml - 8) / T)
    ch = min(ROW_HEIGHT, HEAT_MAX_HEIGHT / N)
    hw, hh = cw * T, ch * N
    rotate = any(len(t) * CHAR_WIDTH > cw - 4 for t in labels)
    longest = CHAR_WIDTH * max(len(t) for t in labels)
    label_h = LABEL_GAP + (min(LABEL_MAX_HEIGHT, longest) if rotate else 8)
    height = top + hh + label_h
    img = png_data_uri(diverging_rgb(shown))
    parts = [
        f'<svg class="s2s-fig" viewBox="0 0 {WIDTH} {height:.0f}" width="{WIDTH}" '
        f'role="img" aria-label="heatmap of {esc(key)}">',
        f'<image href="{img}" x="{ml}" y="{top}" width="{hw:.2f}" height="{hh:.2f}" '
        f'preserveAspectRatio="none"/>',
        f'<rect x="{ml}" y="{top}" width="{hw:.2f}" height="{hh:.2f}" fill="none" '
        f'stroke="var(--line)"/>',
        f'<text class="axl" transform="translate(14 {top + hh / 2:.0f}) rotate(-90)" '
        f'text-anchor="middle">{N} units</text>',
        f'<rect class="hl" x="0" y="{top - 1}" width="{cw:.2f}" height="{hh + 2:.2f}" '
        f'style="display:none"/>',
        f'<rect class="cur" x="0" y="{top - 1}" width="{cw:.2f}" height="{hh + 2:.2f}" '
        f'style="display:none"/>',
    ]
    y = top + hh + LABEL_GAP
    for t, (tok, unk) in enumerate(zip(labels, unknown)):
        x = ml + cw * (t + 0.5)
        cls = "tok unk" if unk else "tok"
        tip = f"{tok}: not in the vocabulary, read as &lt;unk&gt;" if unk else tok
        pos = (f'transform="translate({x:.1f} {y - 4:.0f}) rotate(-45)" text-anchor="end"'
               if rotate else f'x="{x:.1f}" y="{y:.0f}" text-anchor="middle"')
        parts.append(f'<text class="{cls}" data-col="{t}" {pos} style="fill:{colour}">'
                     f'<title>{esc(tip)}</title>{esc(short(tok))}</text>')
    parts.append("</svg>")
    what = ("h<sub>t</sub><sup>{l}</sup> after reading each source token" if mode == "enc"
            else "s<sub>t</sub><sup>{l}</sup> after each step, under the token it predicted")
    chosen = (f"the {N} of {H} units that vary most over the sentence"
              if N < H else f"all {H} units")
    html = (
        f'<div class="s2s-panel s2s-heat" data-key="{key}" data-mode="{mode}" '
        f'data-layer="{layer}" data-x0="{ml}" data-y0="{top}" data-cw="{cw:.4f}" '
        f'data-ch="{ch:.4f}">'
        f'<h4>{"Encoder" if mode == "enc" else "Decoder"} · layer {layer}</h4>'
        f'<p class="s2s-sub">{what.format(l=layer)}: {chosen}, sorted by their last value. '
        f'−1<span class="s2s-legend" style="background:{css_gradient()}"></span>+1</p>'
        + "".join(parts) + "</div>")
    # values for the readout as int8 (v * 127) in base64: 4/3 characters a value, far fewer
    # than as JSON numbers (bench/widgets.py weighs each view's page)
    q = (shown.T.clamp(-1, 1) * 127).round().to(torch.int8)  # (T, N) column by column
    data = {"units": rows.tolist(), "vals": base64.b64encode(q.numpy().tobytes()).decode(),
            "labels": labels}
    return html, data


# ---------------------------------------------------------------------------------------------
# PCA trajectory of one layer's states
# ---------------------------------------------------------------------------------------------


def _fit(points: torch.Tensor, x0: float, y0: float, w: float, h: float) -> torch.Tensor:
    """Scale points (N, 2) into the box with equal x and y scales (PCA distances are real)."""
    lo, hi = points.min(0).values, points.max(0).values  # (2,)
    span = (hi - lo).clamp(min=1e-9)
    scale = min(w / float(span[0]), h / float(span[1]))
    centre = (lo + hi) / 2
    xy = (points - centre) * scale  # (N, 2) y up
    return torch.stack([x0 + w / 2 + xy[:, 0], y0 + h / 2 - xy[:, 1]], 1)


def _axes(height: int, right: float, explained: list[float]) -> list[str]:
    """The two axes of a PCA scatter plot and their labels (share of the variance)."""
    ml, bottom = AXIS_LEFT, height - AXIS_BOTTOM
    return [f'<line class="axis" x1="{ml}" y1="{bottom}" x2="{right}" y2="{bottom}"/>',
            f'<line class="axis" x1="{ml}" y1="0" x2="{ml}" y2="{bottom}"/>',
            f'<text class="axl" x="{(right + ml) / 2:.0f}" y="{height - 6}" '
            f'text-anchor="middle">PC1 · {explained[0]:.0%} of the variance</text>',
            f'<text class="axl" transform="translate(14 {bottom / 2:.0f}) rotate(-90)" '
            f'text-anchor="middle">PC2 · {explained[1]:.0%}</text>']


def trajectory(trace: HiddenTrace, layer: int, enc: torch.Tensor, dec: torch.Tensor) -> str:
    """enc (S, H) and dec (T, H) states of one layer as a path on their two main directions."""
    S, T = enc.size(0), dec.size(0)
    pca = pca2(torch.cat([enc, dec]))
    height, ml, pad = TRAJECTORY_HEIGHT, AXIS_LEFT, TRAJECTORY_PAD
    xy = _fit(pca.project(torch.cat([enc, dec])), ml + pad, pad, WIDTH - ml - 2 * pad,
              height - AXIS_BOTTOM - 2 * pad).tolist()
    labels = trace.source + trace.output
    parts = [f'<svg class="s2s-fig" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" role="img" '
             f'aria-label="PCA trajectory of layer {layer}">',
             *_axes(height, WIDTH, pca.explained)]
    for i in range(1, S + T):  # segment from state i-1 to state i, shown from step i+1
        colour = ENC if i < S else DEC
        (x1, y1), (x2, y2) = xy[i - 1], xy[i]
        parts.append(f'<line class="seg" data-t="{i + 1}" x1="{x1:.1f}" y1="{y1:.1f}" '
                     f'x2="{x2:.1f}" y2="{y2:.1f}" stroke="{colour}"/>')
    (cx, cy) = xy[S - 1]
    parts.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="9" fill="none" stroke="{ENC}" '
                 f'stroke-dasharray="2 2" data-t="{S}"><title>h_S: the encoder\'s last state, '
                 f'handed to the decoder as its first state</title></circle>')
    for i, ((x, y), tok) in enumerate(zip(xy, labels)):
        colour, who = (ENC, "encoder reads") if i < S else (DEC, "decoder writes")
        parts.append(f'<circle class="pt" data-t="{i + 1}" cx="{x:.1f}" cy="{y:.1f}" r="4" '
                     f'fill="{colour}"><title>step {i + 1}: {who} {esc(tok)}</title></circle>')
        parts.append(f'<text class="pl" data-t="{i + 1}" x="{x + 6:.1f}" y="{y - 6:.1f}" '
                     f'style="fill:{colour}">{esc(short(tok))}</text>')
    parts.append("</svg>")
    return (f'<div class="s2s-panel s2s-traj" data-layer="{layer}">'
            f"<h4>Trajectory of layer {layer}'s state</h4>"
            f'<p class="s2s-sub">Each dot is the state after one step, drawn on the two '
            f"directions along which this sentence's states vary most (PCA).<br>"
            f'<span class="s2s-key"><span class="s2s-dot" style="background:{ENC}"></span>'
            f'encoder reads</span><span class="s2s-key"><span class="s2s-dot" '
            f'style="background:{DEC}"></span>decoder writes</span><span class="s2s-key">'
            f'<span class="s2s-dot" style="border:1.5px dashed {ENC}"></span>the encoder\'s '
            f"last state, where the decoder starts</span></p>"
            + "".join(parts) + "</div>")


# ---------------------------------------------------------------------------------------------
# The map of context vectors
# ---------------------------------------------------------------------------------------------


def map_panel(cmap: ContextMap, you: list[tuple[str, list[float]]] | None = None) -> str:
    """Scatter of the sentences' context vectors; `you` adds (label, state (H,)) markers."""
    height, ml, pad = MAP_HEIGHT, AXIS_LEFT, MAP_PAD
    right = WIDTH - LEGEND_WIDTH  # the plot's right edge; the legend is beyond it
    pts = torch.tensor(cmap.points, dtype=torch.float64)  # (N, 2)
    extra = torch.zeros(0, 2, dtype=torch.float64)
    if you:
        extra = cmap.pca().project(torch.tensor([v for _, v in you], dtype=torch.float64))
    xy = _fit(torch.cat([pts, extra]), ml + pad, pad, right - ml - 2 * pad,
              height - AXIS_BOTTOM - 2 * pad).tolist()
    groups = sorted(set(cmap.groups), key=lambda g: (g == "other", g))
    colour = {g: CATEGORICAL[i % len(CATEGORICAL)] for i, g in enumerate(groups)}
    if "other" in colour:
        colour["other"] = "#9ca3af"
    parts = [f'<svg class="s2s-fig" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" role="img" '
             f'aria-label="map of context vectors">', *_axes(height, right, cmap.explained),
             '<g class="nnlines"></g>']
    for i, ((x, y), s, g, nn) in enumerate(zip(xy, cmap.sentences, cmap.groups,
                                               cmap.neighbours)):
        parts.append(f'<circle class="mp" data-i="{i}" data-nn="{" ".join(map(str, nn))}" '
                     f'cx="{x:.1f}" cy="{y:.1f}" r="3.6" fill="{colour[g]}">'
                     f"<title>{esc(s)}</title></circle>")
    for (label, _), (x, y) in zip(you or [], xy[len(pts):]):
        parts.append(f'<circle class="you" cx="{x:.1f}" cy="{y:.1f}" r="7"/>'
                     f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" fill="var(--fg)"/>'
                     f'<text class="youl" x="{x + 10:.1f}" y="{y + 4:.1f}">'
                     f"{esc(short(label, MARK_CHARS))}</text>")
    ly = 14  # the first legend row's baseline
    for g in groups if groups != [""] else []:
        parts.append(f'<circle cx="{right + 10}" cy="{ly - 4}" r="4.5" fill="{colour[g]}"/>'
                     f'<text x="{right + 20}" y="{ly}" style="font-size:12px">'
                     f"{esc(short(g, LEGEND_CHARS))}</text>")
        ly += LEGEND_ROW
    parts.append("</svg>")
    k = len(cmap.neighbours[0]) if cmap.neighbours else 0
    neighbours = "its nearest neighbour" if k == 1 else f"its {k} nearest neighbours"
    return (f'<div class="s2s-panel s2s-map"><h4>Where {len(cmap.sentences)} sentences land'
            f"</h4><p class=\"s2s-sub\">Each dot is one sentence's context (the final state of "
            f"layer {cmap.layer}), on the two directions along which the contexts vary most. "
            f"Hover a dot to read its sentence and ring {neighbours} in the full space.</p>"
            + "".join(parts) + '<div class="s2s-readout s2s-mapout"></div></div>')


# ---------------------------------------------------------------------------------------------
# The views
# ---------------------------------------------------------------------------------------------

class HiddenView(View):
    """The hidden-state explorer of one sentence (see `hidden_state_explorer`)."""

    kind = "hidden"
    scripts = ("hidden", "map")  # static/hidden.js, static/map.js
    styles = ("hidden",)

    def __init__(self, trace: HiddenTrace, units: int | None = UNITS,
                 cmap: ContextMap | None = None, mode: str = "enc", layer: int | None = None):
        with one_cpu_thread():  # small tensors: see lib.widgets.runtime
            body, data = self._draw(trace, units, cmap, mode, layer)
        super().__init__(body, data, f"Hidden states: {trace.sentence}", trace)

    @staticmethod
    def _draw(trace: HiddenTrace, units: int | None, cmap: ContextMap | None, mode: str,
              layer: int | None) -> tuple[str, dict]:
        if mode not in ("enc", "dec"):
            raise ValueError(f"mode must be 'enc' (encoder) or 'dec' (decoder), got {mode!r}")
        enc, dec = trace.tensors()  # (L, S, H), (L, T, H)
        L, S, H = enc.shape
        T = dec.size(1)
        layer = L if layer is None else layer
        if not 1 <= layer <= L:
            raise ValueError(f"layer must be between 1 and {L}, got {layer}")
        panels, data_panels = [], {}
        for lay in range(1, L + 1):
            for m, states, labels, unknown, colour in (
                    ("enc", enc[lay - 1], trace.source, trace.unknown, ENC),
                    ("dec", dec[lay - 1], trace.output, [False] * T, DEC)):
                key = f"{m}{lay}"
                html, d = heatmap(states, labels, unknown, units, key, m, lay, colour)
                panels.append(html)
                data_panels[key] = d
        trajs = [trajectory(trace, lay, enc[lay - 1], dec[lay - 1]) for lay in range(1, L + 1)]
        controls = (
            button_group("mode", [("enc", "Encoder"), ("dec", "Decoder")], mode)
            + button_group("layer", [(str(i), f"Layer {i}") for i in range(1, L + 1)],
                           str(layer)))
        you_layer = L if cmap is None else cmap.layer  # 1-based
        you = [(f"«{trace.sentence}»", enc[you_layer - 1, -1].tolist())]
        translation = esc(trace.translation) or "(nothing)"
        body = (
            header(f"Inside the model: «{esc(trace.sentence)}» → «{translation}»") +
            f'<p class="s2s-sub">{L} layers of {H} units; greedy decoding wrote {T} tokens.</p>'
            f'<div class="s2s-bar">{controls}</div>'
            + "".join(panels)
            + f'<div class="s2s-bar">{slider("t", 1, S + T, S + T, "time step")}'
            f'<span class="s2s-js s2s-tval"></span></div>'
            f'<div class="s2s-readout s2s-hidout"></div>'
            + "".join(trajs)
            + (map_panel(cmap, you) if cmap is not None else "")
            + '<noscript><p class="s2s-note">JavaScript is off: every layer is shown at the '
            "last step; the buttons, the slider and hovering need JavaScript.</p></noscript>")
        data = {"S": S, "T": T, "mode": mode, "layer": layer, "source": trace.source,
                "output": trace.output, "panels": data_panels,
                "map": cmap.sentences if cmap is not None else []}
        return body, data


class ContextMapView(View):
    """A map of many sentences' context vectors (see `context_map`)."""

    kind = "map"
    scripts = ("map",)
    styles = ("hidden",)

    def __init__(self, cmap: ContextMap, highlight: list[tuple[str, list[float]]] | None = None):
        with one_cpu_thread():
            drawn = map_panel(cmap, highlight)
        body = (header("Context vectors") + drawn
                + '<noscript><p class="s2s-note">JavaScript is off: hovering a dot shows its '
                "sentence; ringing its neighbours needs JavaScript.</p></noscript>")
        super().__init__(body, {"map": cmap.sentences},
                         f"Context vectors of {len(cmap.sentences)} sentences", cmap)


def hidden_state_explorer(model, sentence: str, units: int | None = UNITS,
                          map_sentences: list[str] | None = None, cmap: ContextMap | None = None,
                          mode: str = "enc", layer: int | None = None,
                          max_len: int | None = None) -> HiddenView:
    """The hidden-state explorer of `sentence`: heatmaps per layer of the encoder's and the
    decoder's states, the PCA trajectory of the states, and (with `map_sentences`, or a
    precomputed `cmap`) where the sentence's context lands among many others.

    `units`: rows per heatmap (the most varying units; None for all). `mode` ("enc"/"dec")
    and `layer` (1-based) pick the panel shown first.
    """
    if cmap is None and map_sentences:
        cmap = capture_contexts(model, list(map_sentences))
    return HiddenView(capture_hidden(model, sentence, max_len=max_len), units, cmap, mode, layer)


def context_map(model, sentences: list[str], highlight: list[str] | None = None,
                color_by: str = "first word", layer: int | None = None) -> ContextMapView:
    """A map of the context vectors of `sentences` (e.g. 300 test sentences): similar
    sentences land together. `highlight` sentences are placed on it with a ring and a label.
    `layer` (from 1; None: the last) is the layer whose final state is mapped."""
    from lib.widgets.trace import encode_contexts

    cmap = capture_contexts(model, list(sentences), layer=layer, color_by=color_by)
    marks = []
    if highlight:
        vecs = encode_contexts(model, list(highlight), cmap.layer)  # (n, H)
        marks = [(f"«{s}»", v.tolist()) for s, v in zip(highlight, vecs)]
    return ContextMapView(cmap, marks)
