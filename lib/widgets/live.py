"""Live widgets: ipywidgets controls that recompute a view with the model and redraw it.

    live_beam(model)            # sentence, beam size, alpha, length cap
    live_hidden(model)          # sentence (+ a map of many sentences); layers in the view
    live_stepper(model)         # sentence, forced French prefix, top-k
    live_bleu()                 # hypothesis, references

Each returns an ipywidgets VBox (controls above, the view below) whose `.live` attribute is
the controller: `.controls`, `.view` (the current View), `.html` (what `.area`, an HTML widget,
shows), `.seconds` (last redraw).
The model runs on its own device; only the captured numbers come back to the CPU.

Only APIs present in both ipywidgets 7.7.1 (Colab) and 8.x are used; tests/test_widgets.py
scans this file for 8-only names. ipywidgets is imported when a widget is built, not before.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from lib.search import DEFAULT_ALPHA
from lib.widgets.beam import BeamView
from lib.widgets.bleu_view import BleuView, bleu_breakdown
from lib.widgets.hidden import HiddenView
from lib.widgets.render import View, esc
from lib.widgets.stepper import StepperView
from lib.widgets.trace import capture_beam, capture_contexts, capture_hidden, capture_steps

EXAMPLE = "I am cold."


def _ipywidgets():
    import ipywidgets  # lazy: `import lib.widgets` and the static views must not load it

    return ipywidgets


def show_html(area, html: str) -> None:
    """Show `html` (a self-contained fragment, see View.to_html) in the live view's HTML widget.

    An ipywidgets HTML widget, not an Output: every front end draws it the same way (innerHTML,
    then the fragment's <style onload> runs its script, see lib/widgets/static/activate.js). An
    Output depends on the front end's output area: the classic Notebook ran its scripts only
    if the view was already on the page (so a first render stayed inert), widgetsnbextension
    3.6.7 to 3.6.10 cannot create an Output model at all, and capturing displays into one
    stalled nbclient now and then (jupyter/nbclient#312).
    """
    area.value = html


def _error_html(error: Exception) -> str:
    return (f'<div style="color:#b91c1c;font:13px system-ui,sans-serif;padding:6px 0">'
            f"{esc(type(error).__name__)}: {esc(error)}</div>")


class Live:
    """Controls -> `build(**values)` -> a View drawn into an HTML widget, at every change."""

    def __init__(self, controls: dict, build: Callable[..., View], rows: list[list[str]]):
        w = _ipywidgets()
        self.controls, self.build = controls, build
        self.area = w.HTML(layout=w.Layout(width="100%"))
        self.view: View | None = None
        self.html = ""
        self.error: Exception | None = None
        self.seconds = 0.0
        for control in controls.values():
            control.observe(self._changed, names="value")
        lines = [w.HBox([controls[name] for name in row]) for row in rows]
        self.box = w.VBox(lines + [self.area])
        self.box.live = self
        self.update()

    def values(self) -> dict:
        return {name: control.value for name, control in self.controls.items()}

    def _changed(self, change) -> None:
        self.update()

    def update(self) -> None:
        """Recompute and redraw; a bad input (empty sentence, ...) shows its error instead."""
        start = time.perf_counter()
        try:
            self.view, self.error = self.build(**self.values()), None
            self.html = self.view.to_html()
        except (ValueError, TypeError, KeyError) as error:
            self.view, self.error, self.html = None, error, _error_html(error)
        show_html(self.area, self.html)
        self.seconds = time.perf_counter() - start


def _text(value: str, description: str, placeholder: str = "", width: str = "100%"):
    w = _ipywidgets()
    return w.Text(value=value, description=description, placeholder=placeholder,
                  continuous_update=False, layout=w.Layout(width=width),
                  style={"description_width": "initial"})


def _int(value: int, lo: int, hi: int, description: str):
    w = _ipywidgets()
    return w.IntSlider(value=value, min=lo, max=hi, step=1, description=description,
                       continuous_update=False, style={"description_width": "initial"})


# ---------------------------------------------------------------------------------------------
# The four live widgets
# ---------------------------------------------------------------------------------------------


def live_beam(model, sentence: str = EXAMPLE, beam_size: int = 3, alpha: float | None = None,
              max_len: int | None = None):
    """Beam explorer with controls: sentence, beam size k, length-normalisation α, length cap."""
    w = _ipywidgets()
    cap = model.config.max_tgt_len
    controls = {
        "sentence": _text(sentence, "English:"),
        "beam_size": _int(beam_size, 1, 10, "beam size k"),
        "alpha": w.FloatSlider(value=DEFAULT_ALPHA if alpha is None else alpha, min=0.0,
                               max=2.0, step=0.1, description="α", continuous_update=False,
                               readout_format=".1f"),
        "max_len": _int(cap if max_len is None else max_len, 1, max(cap, 1), "max length"),
    }

    def build(sentence, beam_size, alpha, max_len):
        return BeamView(capture_beam(model, sentence, beam_size, alpha, max_len))

    return Live(controls, build, [["sentence"], ["beam_size", "alpha", "max_len"]]).box


def live_hidden(model, sentence: str = EXAMPLE, map_sentences: list[str] | None = None,
                units: int | None = 48, max_len: int | None = None):
    """Hidden-state explorer with a sentence control.

    Encoder/decoder and the layer are chosen inside the view, by its own buttons (every layer
    is in the view already): one set of controls, which switch at once, without asking the
    kernel. The map of `map_sentences` (if any) is computed once; each new sentence is placed
    on it.
    """
    cmap = capture_contexts(model, list(map_sentences)) if map_sentences else None

    def build(sentence):
        return HiddenView(capture_hidden(model, sentence, max_len=max_len), units, cmap)

    return Live({"sentence": _text(sentence, "English:")}, build, [["sentence"]]).box


def live_stepper(model, sentence: str = EXAMPLE, prefix: str = "", top_k: int = 8,
                 max_len: int | None = None):
    """Decoder step-through with controls: sentence, a French prefix to force, top-k."""
    controls = {
        "sentence": _text(sentence, "English:"),
        "prefix": _text(prefix, "force French prefix:", "e.g. Je suis (empty: greedy)"),
        "top_k": _int(top_k, 2, 20, "top k"),
    }

    def build(sentence, prefix, top_k):
        return StepperView(capture_steps(model, sentence, prefix, top_k=top_k,
                                         max_len=max_len))

    return Live(controls, build, [["sentence"], ["prefix"], ["top_k"]]).box


def live_bleu(hypothesis: str = "Le chat est sur le tapis.",
              references: list[str] | None = None, **settings):
    """BLEU explorer with controls: a hypothesis and its references (one per line)."""
    w = _ipywidgets()
    references = references or ["Le chat est assis sur le tapis.", "Il y a un chat sur le tapis."]
    controls = {
        "hypothesis": _text(hypothesis, "hypothesis:"),
        "references": w.Textarea(value="\n".join(references), description="references:",
                                 placeholder="one reference per line", continuous_update=False,
                                 layout=w.Layout(width="100%", height="80px"),
                                 style={"description_width": "initial"}),
    }

    def build(hypothesis, references):
        refs = [r for r in references.splitlines() if r.strip()]
        if not refs:
            raise ValueError("write at least one reference, one per line")
        return BleuView(bleu_breakdown(hypothesis, refs, **settings))

    return Live(controls, build, [["hypothesis"], ["references"]]).box
