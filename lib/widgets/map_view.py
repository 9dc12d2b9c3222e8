"""The map of context vectors: many sentences' contexts on their two principal directions.

    context_map(model, test_sentences, highlight=["I am cold."])

Similar sentences land together; hovering a dot names its sentence and rings its nearest
neighbours in the full space (the 2-D picture distorts distances, the neighbour lists do not).
Python computes the map (`lib.widgets.trace.capture_contexts`: the PCA, the neighbours, the
colour groups) and `map_data` puts it in the view; static/map.js draws it, here and inside the
hidden-state explorer, which places its own sentence on the map. (The module is not named
`context_map`: that name is the function, which `lib.widgets` exports.)
"""

from __future__ import annotations

import torch

from lib.device import one_thread
from lib.widgets.render import View, num
from lib.widgets.trace import ContextMap, capture_contexts, encode_contexts


def map_data(cmap: ContextMap, marks: list[tuple[str, list[float]]] | None = None,
             standalone: bool = False) -> dict:
    """What static/map.js draws: each sentence's point, colour group and neighbours, and the
    `marks` (label, context (H,)) placed with the map's own PCA."""
    marks = list(marks or [])
    placed = []
    if marks:
        with one_thread():
            vectors = torch.tensor([v for _, v in marks], dtype=torch.float64)  # (n, H)
            placed = cmap.pca().project(vectors).tolist()  # (n, 2)
    groups = sorted(set(cmap.groups), key=lambda g: (g == "other", g))
    index = {g: i for i, g in enumerate(groups)}
    return {"sentences": cmap.sentences, "xy": [[num(x), num(y)] for x, y in cmap.points],
            "explained": [num(e) for e in cmap.explained],
            "groups": [] if groups == [""] else groups,
            "group": [index[g] for g in cmap.groups], "nn": cmap.neighbours,
            "layer": cmap.layer, "standalone": standalone,
            "marks": [{"label": label, "xy": [num(x), num(y)]}
                      for (label, _), (x, y) in zip(marks, placed)]}


class ContextMapView(View):
    """A map of many sentences' context vectors (see `context_map`), drawn by static/map.js."""

    kind = "map"
    scripts = ("map",)
    styles = ("hidden",)

    def __init__(self, cmap: ContextMap, highlight: list[tuple[str, list[float]]] | None = None):
        body = (f'<noscript><p class="s2s-note">A map of the context vectors of '
                f"{len(cmap.sentences)} sentences. JavaScript is off: the map is drawn by "
                "JavaScript.</p></noscript>")
        super().__init__(body, {"map": map_data(cmap, highlight, standalone=True)},
                         f"Context vectors of {len(cmap.sentences)} sentences", cmap)


def context_map(model, sentences: list[str], highlight: list[str] | None = None,
                color_by: str = "first word", layer: int | None = None) -> ContextMapView:
    """A map of the context vectors of `sentences` (e.g. 300 test sentences): similar
    sentences land together. `highlight` sentences are placed on it with a ring and a label.
    `layer` (from 1; None: the last) is the layer whose final state is mapped."""
    cmap = capture_contexts(model, list(sentences), layer=layer, color_by=color_by)
    marks = []
    if highlight:
        vecs = encode_contexts(model, list(highlight), cmap.layer)  # (n, H)
        marks = [(f"«{s}»", v.tolist()) for s, v in zip(highlight, vecs)]
    return ContextMapView(cmap, marks)

