"""Hidden-state explorer: heatmaps of the encoder's and decoder's states, their PCA trajectory,
and where the sentence lands on a map of many sentences' context vectors (map_view.py).

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

from lib.device import one_thread
from lib.validate import as_int, is_int
from lib.widgets.map_view import map_data
from lib.widgets.pca import pca2
from lib.widgets.render import View, esc, num
from lib.widgets.trace import ContextMap, HiddenTrace, capture_contexts, capture_hidden

UNITS = 48  # heatmap rows shown by default: the most varying units
PCA_DIGITS = 6  # significant digits of the map's PCA in the data (it places a typed sentence)


# ---------------------------------------------------------------------------------------------
# The numbers static/hidden.js draws (web/playground/playground.js computes them the same way)
# ---------------------------------------------------------------------------------------------


def pick_units(states: torch.Tensor, units: int | None) -> torch.Tensor:
    """Rows to show for states (T, H): the `units` most varying over time, sorted by their
    final value (so the last column, for the encoder the context, reads as a gradient)."""
    T, H = states.shape
    units = units if units is None else as_int(units)
    if units is not None and (not is_int(units) or units < 1):
        raise ValueError(f"units (rows per heatmap) must be an integer >= 1 or None (all), "
                         f"got {units!r}")
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
# The views
# ---------------------------------------------------------------------------------------------

class HiddenView(View):
    """The hidden-state explorer of one sentence (see `hidden_state_explorer`).

    Drawn by static/hidden.js from `data` (the Playground draws its own sentences with the same
    script), and the context map under it, when there is one, by static/map.js.
    """

    kind = "hidden"
    scripts = ("hidden", "map")  # static/hidden.js, static/map.js
    styles = ("hidden",)

    def __init__(self, trace: HiddenTrace, units: int | None = UNITS,
                 cmap: ContextMap | None = None, mode: str = "enc", layer: int | None = None):
        with one_thread():  # small tensors: see lib.widgets.runtime
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
        layer = L if layer is None else as_int(layer)
        if not is_int(layer) or not 1 <= layer <= L:
            raise ValueError(f"layer must be an integer between 1 and {L}, got {layer!r}")
        panels = {f"{m}{lay}": panel_data(states[lay - 1], units)
                  for lay in range(1, L + 1) for m, states in (("enc", enc), ("dec", dec))}
        data = {"S": S, "T": T, "L": L, "H": H, "mode": mode, "layer": layer,
                "sentence": trace.sentence, "translation": trace.translation,
                "decoding": "greedy decoding", "source": trace.source,
                "unknown": trace.unknown, "output": trace.output, "panels": panels,
                "trajectories": [trajectory_data(enc[i], dec[i]) for i in range(L)],
                "map": None}
        if cmap is not None:  # the sentence's own context, placed on the map
            data["map"] = map_data(cmap, [(f"«{trace.sentence}»",
                                           enc[cmap.layer - 1, -1].tolist())])
            # the map's PCA: the website places a sentence the reader types on the same map
            # (web/playground/playground.js, placeOnMap)
            data["map"]["pca"] = {"mean": [num(x, PCA_DIGITS) for x in cmap.mean],
                                  "components": [[num(x, PCA_DIGITS) for x in row]
                                                 for row in cmap.components]}
        body = (f'<noscript><p class="s2s-note">Inside the model: «{esc(trace.sentence)}» → '
                f"«{esc(trace.translation)}». JavaScript is off: the heatmaps of the {L} layers' "
                "states, their trajectory and the map are drawn by JavaScript.</p></noscript>")
        return body, data


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
