"""Widgets that show what the model does: hidden states, beam search, decoding steps, BLEU.

Two layers. *Static* views are drawn from a captured trace as self-contained HTML with inline
JavaScript (no network, no require.js): they work in Jupyter, in Colab and on the website.
*Live* widgets wrap them in ipywidgets controls (7.x and 8.x) that recompute with the model.

    from lib import widgets
    widgets.hidden_state_explorer(model, "I am cold.", map_sentences=test_sentences)
    widgets.beam_explorer(model, "I am cold.", beam_size=3)
    widgets.decoder_stepper(model, "I am cold.", prefix="Je suis")
    widgets.bleu_explorer("Le chat est sur le tapis.", ["Le chat est assis sur le tapis."])
    widgets.attention_explorer(attention_model, "I am cold.")   # ModelConfig.attention=True
    widgets.live_beam(model)        # and live_hidden, live_stepper, live_bleu, live_attention

Every view has `save_html(path)`. Importing this package imports nothing heavy: each name is
loaded from its module on first use (ipywidgets only when a live widget is built).

The modules: `trace` (capture records; with `runtime`, `layers`, `decode`, `pca`), one module
per view (`hidden`, `map_view`, `beam`, `stepper`, `bleu_view`, `attention_view`), each
computing its view's data for `render`, whose JavaScript (in `static/`) draws it, and `live`
(the ipywidgets controls; `attention_view` holds its own live widget).
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    # static views
    "hidden_state_explorer": "hidden", "HiddenView": "hidden",
    "context_map": "map_view", "ContextMapView": "map_view",
    "beam_explorer": "beam", "BeamView": "beam",
    "decoder_stepper": "stepper", "StepperView": "stepper",
    "bleu_explorer": "bleu_view", "bleu_breakdown": "bleu_view", "BleuView": "bleu_view",
    "BleuTrace": "bleu_view",
    "attention_explorer": "attention_view", "AttentionView": "attention_view",
    # live widgets
    "live_beam": "live", "live_hidden": "live", "live_stepper": "live", "live_bleu": "live",
    "live_attention": "attention_view",
    # captured data
    "capture_hidden": "trace", "capture_steps": "trace", "capture_beam": "trace",
    "capture_contexts": "trace", "HiddenTrace": "trace", "StepTrace": "trace",
    "BeamCapture": "trace", "ContextMap": "trace",
    "capture_attention": "attention_view", "AttentionTrace": "attention_view",
    "View": "render",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        module = importlib.import_module(f"{__name__}.{_EXPORTS[name]}")
        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return __all__
