"""The website's Playground: the reference model exported for ONNX Runtime Web.

The Playground page (book/playground.md) translates what a reader types in the browser, with no
server: ONNX Runtime Web runs two graphs that `torch.onnx` exports from the reference model,

    encoder.onnx       src (1, S) ids -> states (L, S, H): every layer's state after each token
    decoder_step.onnx  prev (N,), state (L, N, H), context (N, H) -> log P (N, V), state (L, N, H)

(one `Decoder.step`, then log-softmax), and the page's own JavaScript runs greedy and beam search
on them with the rules of `lib.search`. `vocab.json` holds both vocabularies and the settings the
JavaScript needs (special ids, length caps, search defaults).

A second model, the attention chapter's attention model (`lib.experiments.long_inputs`, config
`ATTENTION`, `lib.pretrained(attention=True)`), is exported beside it into <key>/attention/
when its weights are cached (the chapter trains them; `make playground` runs before the
chapters, so a cold build exports it when the site build finishes, scripts/playground_site.py).
The same export gives its graphs (EncoderGraph and StepGraph read whether the model attends)
two more outputs and other source inputs:

    encoder.onnx       src (1, S) -> states (L, S, H), keys (S, A): W_h h_j, once per sentence
    decoder_step.onnx  prev (N,), state (L, N, H), memory (S, H), keys (S, A)
                       -> log P (N, V), state (L, N, H), weights (N, S): one attention step

(one sentence, so no padding and no mask; the N hypotheses share its memory).

The chapters' live views on the website (web/playground/live.js: the hidden-state explorer, the
decoder stepper, the beam explorer and the attention explorer redrawn for a sentence the reader
types) run these same files and need nothing more: the encoder's states are every layer's at
every token (the heatmaps and the PCA of the encoder), each step returns every layer's state
(the decoder's) and log P over the whole vocabulary (the stepper's top k and ranks, the beam's
candidates), and the attention model's steps their weights; the page's JavaScript builds the
views' data from them as lib.widgets does.

Size: the float32 weights would be four times the page's 15 MB budget, so every weight matrix is
stored as int8 with one float32 scale per row (symmetric, per output unit) and an ONNX
`DequantizeLinear` in front of the node that reads it: the runtime computes in float32 with the
dequantized weights. `page_model(model)` is the same model in PyTorch (the same rows rounded the
same way), the oracle the page is tested against; `manifest.json` records its BLEU next to the
float model's on the test split.

The export is keyed like the reference model: `export_key()` hashes the reference cache key,
EXPORT_VERSION (bumped when the exported files change) and the torch/onnx versions, and
`python -m lib.course.playground --out _build/playground` writes _build/playground/<key>/ once
(`make playground`).
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import hashlib
import json
import shutil
import time
import warnings
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from lib import search
from lib.attention import Memory
from lib.course import checkpoint, reference
from lib.course.memo import load_corpus
from lib.data import EOS, PAD, SOS, SPECIALS, UNK
from lib.evaluate import evaluate_bleu
from lib.experiments import long_inputs
from lib.widgets.layers import one_layer

OPSET = 17
FILES = ("encoder.onnx", "decoder_step.onnx", "vocab.json", "manifest.json")
ATTENTION_DIR = "attention"  # the attention model's export, inside the reference model's
QUANT_MIN_SIZE = 4096  # float initializers at least this big (the weight matrices) go to int8
INT8_MAX = 127
# Bump when the exported files change for the same model: the graphs, their int8 weights,
# vocab.json's settings or manifest.json's fields. The export key includes it.
EXPORT_VERSION = 1
# The attention model: the attention chapter's (book/attention.md, lib.pretrained(attention=True)).
ATTENTION = long_inputs.MODELS["attention"]


# ---------------------------------------------------------------------------------------------
# int8 weights, the same in PyTorch and in the ONNX graphs
# ---------------------------------------------------------------------------------------------


def row_scales(w: torch.Tensor, axis: int) -> torch.Tensor:
    """One symmetric int8 scale per slice along `axis`: max |w| / 127 (1 for all-zero slices)."""
    dims = [d for d in range(w.dim()) if d != axis]
    amax = w.abs().amax(dim=dims) if dims else w.abs()  # (w.size(axis),)
    return torch.where(amax > 0, amax / INT8_MAX, torch.ones_like(amax))


def quantize(w: torch.Tensor, axis: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """w float32 -> (int8 values, float32 scales along `axis`): w ~ q * scale."""
    w = w.detach().float()
    scale = row_scales(w, axis)  # (n,)
    shape = [1] * w.dim()
    shape[axis] = -1
    q = torch.round(w / scale.view(shape)).clamp(-INT8_MAX, INT8_MAX).to(torch.int8)
    return q, scale


def dequantize(q: torch.Tensor, scale: torch.Tensor, axis: int = 0) -> torch.Tensor:
    """What ONNX DequantizeLinear computes: float(q) * scale, in float32."""
    shape = [1] * q.dim()
    shape[axis] = -1
    return q.float() * scale.view(shape)


def _weight_matrices(model: nn.Module) -> list[tuple[nn.Module, str]]:
    """(module, name) of every 2-D parameter: embeddings, GRU weight_ih/hh, the head's W_p."""
    out = []
    for module in model.modules():
        for name, p in module.named_parameters(recurse=False):
            if p.dim() == 2:
                out.append((module, name))
    return out


def page_model(model: nn.Module) -> nn.Module:
    """A copy of `model` whose weight matrices are rounded to int8 per row, as the page has them.

    Each row is one output unit (a token's embedding, a gate unit of a GRU, a word of the head),
    so a row's scale follows its own range. Biases stay float32 (they are small).
    """
    page = copy.deepcopy(model).cpu().eval()
    with torch.no_grad():
        for module, name in _weight_matrices(page):
            w = getattr(module, name)
            w.copy_(dequantize(*quantize(w, 0), 0))
    if hasattr(page.encoder.rnn, "flatten_parameters"):
        page.encoder.rnn.flatten_parameters()
        page.decoder.rnn.flatten_parameters()
    return page


# ---------------------------------------------------------------------------------------------
# The two graphs
# ---------------------------------------------------------------------------------------------

# The graphs' inputs and outputs, as the page's JavaScript names them, by whether the model
# attends; AXES gives each name's dynamic axes (S source tokens, N hypotheses).
ENCODER_IO = {False: (["src"], ["states"]), True: (["src"], ["states", "keys"])}
STEP_IO = {False: (["prev", "state", "context"], ["logp", "next_state"]),
           True: (["prev", "state", "memory", "keys"], ["logp", "next_state", "weights"])}
AXES = {"src": {1: "S"}, "states": {1: "S"}, "keys": {0: "S"}, "memory": {0: "S"},
        "prev": {0: "N"}, "state": {1: "N"}, "context": {0: "N"}, "logp": {0: "N"},
        "next_state": {1: "N"}, "weights": {0: "N", 1: "S"}}


class EncoderGraph(nn.Module):
    """src (1, S) -> states (L, S, H): each layer's outputs, the input of the layer above; and
    for an attention model keys (S, A) too: W_h h_j of the top layer's states, which every step
    of its decoder reads (`AdditiveAttention.memory`), computed once per sentence.

    One sentence, no padding: the encoder's unpacked path. The last layer's states are
    `model.encode`'s output states, and states[:, -1] its hidden states (the decoder's s_0).
    """

    def __init__(self, model: nn.Module):
        super().__init__()
        encoder = model.encoder
        self.embedding = encoder.embedding
        self.layers = nn.ModuleList(one_layer(encoder.rnn, i)
                                    for i in range(encoder.rnn.num_layers))
        self.W_h = model.decoder.attention.W_h if model.attends else None

    def forward(self, src: torch.Tensor):
        x = self.embedding(src)  # (1, S, E)
        states = []
        for rnn in self.layers:
            x, _ = rnn(x)  # (1, S, H)
            states.append(x[0])
        states = torch.stack(states)  # (L, S, H)
        return states if self.W_h is None else (states, self.W_h(states[-1]))  # keys (S, A)


class StepGraph(nn.Module):
    """One `Decoder.step` for N hypotheses and the log-softmax: the log-probabilities every
    search ranks by. What the step reads from the source is the decoder's:

        no attention  context (N, H)               -> log P (N, V), state (L, N, H)
        attention     memory (S, H), keys (S, A)   -> log P (N, V), state (L, N, H), weights (N, S)

    With attention the N hypotheses share one sentence's memory and keys; one sentence has no
    padding, so every position is real (the mask is all True).
    """

    def __init__(self, decoder: nn.Module):
        super().__init__()
        self.decoder = decoder

    def forward(self, prev: torch.Tensor, state: torch.Tensor, *source: torch.Tensor):
        if self.decoder.attention is None:
            logits, state = self.decoder.step(prev, state, *source)  # source: (context,)
            return F.log_softmax(logits.float(), dim=-1), state
        memory, keys = source  # (S, H), (S, A)
        n = prev.size(0)
        mask = torch.ones_like(prev, dtype=torch.bool).unsqueeze(1) & \
            torch.ones_like(keys[:, 0], dtype=torch.bool).unsqueeze(0)  # (N, S)
        mem = Memory(memory.unsqueeze(0).expand(n, -1, -1), keys.unsqueeze(0).expand(n, -1, -1),
                     mask)  # (N, S, H), (N, S, A), (N, S)
        logits, state, weights = self.decoder.step(prev, state, mem, return_attention=True)
        return F.log_softmax(logits.float(), dim=-1), state, weights


def _onnx_export(module: nn.Module, args: tuple, path: Path, io: tuple[list, list]) -> None:
    """The TorchScript exporter, chosen on purpose (its deprecation warning is silenced): the
    torch.export-based one does not yet export a GRU over a source of any length (why, measured:
    docs/decisions.md, "The Playground's ONNX exporter")."""
    inputs, outputs = io
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "You are using the legacy TorchScript-based ONNX",
                                DeprecationWarning)
        torch.onnx.export(module, args, path, dynamo=False, opset_version=OPSET,
                          input_names=inputs, output_names=outputs,
                          dynamic_axes={name: AXES[name] for name in inputs + outputs})


def export_graphs(model: nn.Module, out: Path) -> None:
    """Write encoder.onnx and decoder_step.onnx (float32) for `model` into `out`: their inputs
    and outputs are ENCODER_IO's and STEP_IO's for `model.attends`."""
    model = model.cpu().eval()
    L, H = model.config.num_layers, model.config.hidden_size
    encoder, step = EncoderGraph(model).eval(), StepGraph(model.decoder).eval()
    src = torch.tensor([[4, 5, 6]])  # (1, S)
    prev, state = torch.tensor([SOS, SOS]), torch.zeros(L, 2, H)  # (N,), (L, N, H)
    with torch.no_grad():
        _onnx_export(encoder, (src,), out / "encoder.onnx", ENCODER_IO[model.attends])
        if model.attends:
            states, keys = encoder(src)  # (L, S, H), (S, A)
            source = (states[-1], keys)
        else:
            source = (torch.zeros(2, H),)  # context (N, H)
        _onnx_export(step, (prev, state, *source), out / "decoder_step.onnx",
                     STEP_IO[model.attends])


def int8_initializers(path: Path) -> dict:
    """Store the big float initializers of an ONNX file as int8 + per-row scales, in place.

    The graph of an already rounded model (`page_model`) holds weights that are exactly
    q * scale along one axis (rows of W_p, gate units of a GRU's W and R, which torch.onnx
    reorders but does not mix); that axis is found as the one where re-quantizing changes
    least. Each becomes `DequantizeLinear(q, scale, axis)` under the initializer's old name.
    Returns {name: (axis, max change)}.
    """
    # onnx: the build's dependency (requirements.txt), not the package's (pyproject.toml)
    import onnx
    from onnx import helper, numpy_helper

    m = onnx.load(str(path))
    graph, report, nodes = m.graph, {}, []
    for init in list(graph.initializer):
        if init.data_type != onnx.TensorProto.FLOAT:
            continue
        w = torch.from_numpy(numpy_helper.to_array(init).copy())
        if w.dim() < 2 or w.numel() < QUANT_MIN_SIZE:
            continue
        best = None
        for axis in range(w.dim()):
            if w.size(axis) == 1:
                continue
            q, scale = quantize(w, axis)
            err = float((dequantize(q, scale, axis) - w).abs().max())
            if best is None or err < best[0]:
                best = (err, axis, q, scale)
        err, axis, q, scale = best
        graph.initializer.remove(init)
        graph.initializer.extend([
            numpy_helper.from_array(q.numpy().astype(np.int8), init.name + "_int8"),
            numpy_helper.from_array(scale.numpy().astype(np.float32), init.name + "_scale"),
        ])
        nodes.append(helper.make_node("DequantizeLinear", [init.name + "_int8",
                                                           init.name + "_scale"],
                                      [init.name], axis=axis, name=init.name + "_dequantize"))
        report[init.name] = (axis, err)
    for node in reversed(nodes):
        graph.node.insert(0, node)
    onnx.checker.check_model(m)
    onnx.save(m, str(path))
    return report


# ---------------------------------------------------------------------------------------------
# What the page's JavaScript needs besides the graphs
# ---------------------------------------------------------------------------------------------


def page_settings(model) -> dict:
    """Vocabularies, special ids and the search rules of lib.search, for vocab.json: the page
    fills its form with the search defaults from here, so they are written once, in lib.search."""
    return {
        "src_itos": model.src_vocab.itos,
        "tgt_itos": model.tgt_vocab.itos,
        "specials": {"pad": PAD, "unk": UNK, "sos": SOS, "eos": EOS, "names": list(SPECIALS)},
        "never_generated": list(search.NEVER_GENERATED),
        "attention": model.attends,
        "num_layers": model.config.num_layers,
        "hidden_size": model.config.hidden_size,
        "max_src_len": model.config.max_src_len,
        "max_tgt_len": model.config.max_tgt_len,
        "source_cap": list(search.SOURCE_CAP),
        "default_alpha": search.DEFAULT_ALPHA,
        "default_margin": search.DEFAULT_MARGIN,
        "default_beam": search.DEFAULT_BEAM,
    }


# ---------------------------------------------------------------------------------------------
# The keyed export
# ---------------------------------------------------------------------------------------------


def _key(model_key: str) -> str:
    """An export's key: what its files depend on, and nothing else (not this file's comments)."""
    import onnx  # the build's dependency (requirements.txt), not the package's

    h = hashlib.sha256()
    h.update(f"model {model_key} export {EXPORT_VERSION} "
             f"torch {torch.__version__} onnx {onnx.__version__}".encode())
    return h.hexdigest()[:16]


def export_key() -> str:
    """The reference model's export key: its cache key, EXPORT_VERSION and the exporter's
    versions."""
    return _key(reference.reference_key())


def is_complete(directory: Path) -> bool:
    return all((directory / f).is_file() for f in FILES)


def bleu_on_test(model, page, sentences: int | None = None) -> dict:
    """BLEU on the test split of the float model and of the page's int8 model (greedy, and beam
    search with the default beam size)."""
    pairs = load_corpus().split.test[:sentences]
    out = {"sentences": len(pairs)}
    for name, m in (("float32", model), ("int8", page)):
        for beam in (1, search.DEFAULT_BEAM):
            out[f"{name}_beam{beam}"] = round(evaluate_bleu(m, pairs, beam_size=beam), 2)
    return out


def _write(model, tmp: Path, bleu: bool, **fields) -> dict:
    """The page's files for `model` in `tmp`: the int8 graphs, vocab.json and manifest.json."""
    start = time.perf_counter()
    model = model.cpu().eval()
    page = page_model(model)
    export_graphs(page, tmp)
    report = {f: int8_initializers(tmp / f) for f in ("encoder.onnx", "decoder_step.onnx")}
    (tmp / "vocab.json").write_text(json.dumps(page_settings(model), ensure_ascii=False),
                                    encoding="utf-8")
    manifest = {
        **fields,
        "weights": "int8, one float32 scale per row (DequantizeLinear)",
        "requantization_error": {f: max(e for _, e in r.values()) for f, r in report.items()},
        "bytes": {f: (tmp / f).stat().st_size for f in FILES[:3]},
        "bleu": bleu_on_test(model, page) if bleu else None,
    }
    manifest["export_seconds"] = round(time.perf_counter() - start, 1)
    (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    return manifest


def export(out_root: Path, model=None, bleu: bool = True, force: bool = False,
           attention_weights: Path | None = None) -> Path:
    """Write <out_root>/<export_key()>/ (the FILES) unless it is already complete, and the
    attention model into its attention/ when its weights are cached (`export_attention`)."""
    key = export_key()
    target = Path(out_root) / key
    if not is_complete(target) or force:
        if model is None:
            model = reference.pretrained(progress=False)
        tmp = Path(out_root) / f".{key}.partial"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        _write(model, tmp, bleu, key=key, reference_key=reference.reference_key())
        shutil.rmtree(target, ignore_errors=True)
        tmp.rename(target)
        for old in Path(out_root).iterdir():  # keep only the current key's export
            if old.is_dir() and old.name != key:
                shutil.rmtree(old, ignore_errors=True)
    export_attention(target, attention_weights, bleu=bleu, force=force)
    return target


def attention_key(weights: Path | None = None) -> str | None:
    """The attention model's export key: the name of its weights (the chapter's cached copy,
    `lib.experiments.long_inputs.weights_path(ATTENTION)`, unless given; named by its own key),
    EXPORT_VERSION and the exporter's versions; None when those weights are not there."""
    weights = Path(weights) if weights else long_inputs.weights_path(ATTENTION)
    if not weights.is_file():
        return None
    return _key(f"attention {weights.name}")


def attention_export(target: Path) -> Path | None:
    """The attention model's export inside `target`, or None if there is none.

    When the chapter's current weights are cached the export must be theirs; when they are not
    (the code they are keyed on changed and the chapter has not run since), an export made
    from earlier weights stays: its manifest names them.
    """
    directory = Path(target) / ATTENTION_DIR
    if not is_complete(directory):
        return None
    manifest = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
    current_key = attention_key()
    return directory if current_key is None or manifest.get("key") == current_key else None


def export_attention(target: Path, weights: Path | None = None, bleu: bool = True,
                     force: bool = False) -> Path | None:
    """Write <target>/attention/ from the attention chapter's cached model (or the
    checkpoint `weights`); when there are no such weights, leave things as they are and return
    `attention_export(target)`: the build never trains the copy for the Playground."""
    weights = Path(weights) if weights else long_inputs.weights_path(ATTENTION)
    key, directory = attention_key(weights), Path(target) / ATTENTION_DIR
    if key is None:
        return attention_export(target)
    if not force and is_complete(directory) and json.loads(
            (directory / "manifest.json").read_text(encoding="utf-8")).get("key") == key:
        return directory
    model = checkpoint.load(weights, device="cpu")
    if not model.attends:
        raise ValueError(f"{weights} holds a model without attention: the Playground's "
                         "attention model must have ModelConfig.attention=True")
    tmp = Path(target) / f".{ATTENTION_DIR}.partial"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    _write(model, tmp, bleu, key=key, checkpoint=weights.name,
           config=dataclasses.asdict(ATTENTION))
    shutil.rmtree(directory, ignore_errors=True)
    tmp.rename(directory)
    return directory


def current(out_root: Path) -> Path:
    """The export for the current key; an error naming `make playground` if it is missing."""
    target = Path(out_root) / export_key()
    if not is_complete(target):
        raise FileNotFoundError(f"the Playground's model for key {export_key()} is not in "
                                f"{out_root}: run `make playground`")
    return target


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("_build/playground"))
    parser.add_argument("--force", action="store_true", help="export even if up to date")
    parser.add_argument("--no-bleu", action="store_true", help="skip the BLEU measurement")
    parser.add_argument("--attention-weights", type=Path, default=None,
                        help="export the attention model from this checkpoint instead of the "
                             "attention chapter's cached copy")
    args = parser.parse_args(argv)
    target = export(args.out, bleu=not args.no_bleu, force=args.force,
                    attention_weights=args.attention_weights)
    print(f"Playground model: {target}")
    print((target / "manifest.json").read_text(encoding="utf-8"))
    attention = attention_export(target)
    print(f"Attention model: {attention}" if attention else
          "Attention model: not exported (the attention chapter has not cached its weights yet; "
          "the site build exports it when the chapter has run)")
    if attention:
        print((attention / "manifest.json").read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
