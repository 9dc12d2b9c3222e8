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
from lib.widgets.render import CATEGORICAL, View, esc, header, num, short
from lib.widgets.runtime import one_cpu_thread
from lib.widgets.trace import ContextMap, HiddenTrace, capture_contexts, capture_hidden

WIDTH = 696  # SVG user units of the context map; the SVGs scale down to narrower columns
UNITS = 48  # heatmap rows shown by default: the most varying units

# The map of context vectors (a PCA scatter plot): axes at the left and bottom.
AXIS_LEFT, AXIS_BOTTOM = 26, 24
MAP_HEIGHT, MAP_PAD = 320, 14
LEGEND_WIDTH, LEGEND_ROW = 110, 18  # the map's legend of colour groups, at its right
LEGEND_CHARS = 13  # a group name's characters that fit the legend
MARK_CHARS = 28  # a highlighted sentence's characters beside its ring


# ---------------------------------------------------------------------------------------------
# The numbers static/hidden.js draws (web/playground/playground.js computes them the same way)
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


def panel_data(states: torch.Tensor, units: int | None) -> dict:
    """One heatmap panel's data: states (T, H) of one layer -> the rows shown and their values.

    The values travel as int8 (v * 127) in base64, time-major: 4/3 characters a value, far
    fewer than as JSON numbers (bench/widgets.py weighs each view's page).
    """
    rows = pick_units(states, units)  # (N,)
    q = (states[:, rows].clamp(-1, 1) * 127).round().to(torch.int8)  # (T, N)
    return {"units": rows.tolist(), "vals": base64.b64encode(q.numpy().tobytes()).decode()}


def trajectory_data(enc: torch.Tensor, dec: torch.Tensor) -> dict:
    """enc (S, H) and dec (T, H) states of one layer on their two main directions (PCA)."""
    states = torch.cat([enc, dec])  # (S + T, H)
    pca = pca2(states)
    return {"xy": [[num(x), num(y)] for x, y in pca.project(states).tolist()],
            "explained": [num(e) for e in pca.explained]}


# ---------------------------------------------------------------------------------------------
# The context map's scatter plot (drawn here, in Python)
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
    """The hidden-state explorer of one sentence (see `hidden_state_explorer`).

    Drawn by static/hidden.js from `data` (the Playground draws its own sentences with the same
    script); only the context map, when there is one, is drawn here (`map_panel`).
    """

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
        panels = {f"{m}{lay}": panel_data(states[lay - 1], units)
                  for lay in range(1, L + 1) for m, states in (("enc", enc), ("dec", dec))}
        data = {"S": S, "T": T, "L": L, "H": H, "mode": mode, "layer": layer,
                "sentence": trace.sentence, "translation": trace.translation,
                "decoding": "greedy decoding", "source": trace.source,
                "unknown": trace.unknown, "output": trace.output, "panels": panels,
                "trajectories": [trajectory_data(enc[i], dec[i]) for i in range(L)],
                "map": cmap.sentences if cmap is not None else []}
        you_layer = L if cmap is None else cmap.layer  # 1-based
        you = [(f"«{trace.sentence}»", enc[you_layer - 1, -1].tolist())]
        body = ((map_panel(cmap, you) if cmap is not None else "")
                + f'<noscript><p class="s2s-note">Inside the model: «{esc(trace.sentence)}» → '
                f"«{esc(trace.translation)}». JavaScript is off: the heatmaps of the {L} layers' "
                "states and their trajectory are drawn by JavaScript.</p></noscript>")
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
