"""Capture what the widgets draw: plain records of one run of the model, moved to the CPU.

The widgets never draw from the model directly. A capture function runs the model (on whatever
device it lives) through its public modules, and returns a dataclass of lists and numbers that
`to_json()` serialises and `from_dict()` reads back. The views draw from these records only, so
a record computed once (or loaded from a file) draws the same view anywhere, kernel or not.

    HiddenTrace  encoder states per layer and token, decoder states per layer and output token
    StepTrace    the decoder's top-k next-token probabilities at every step, with a forced prefix
    BeamCapture  lib.search's beam trace plus the greedy path beside it
    ContextMap   the context vectors of many sentences, projected to 2-D by PCA

The pieces they use live beside them: `runtime` (evaluation mode, one CPU thread), `layers`
(every layer's GRU states), `decode` (stepping the decoder with a forced prefix), `pca`.
Layers are numbered from 1, as in the chapters, everywhere a reader passes or reads one.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields

import torch

from lib.data import SOS, UNK, detokenize, tokenize
from lib.device import one_thread
from lib.search import DEFAULT_ALPHA, BeamTrace, beam_search, normalize
from lib.validate import as_int, is_int
from lib.widgets.decode import decode
from lib.widgets.layers import gru_layer_states
from lib.widgets.pca import PCA, nearest_neighbours, pca2
from lib.widgets.runtime import evaluating


class Record:
    """JSON round trip for the capture dataclasses."""

    def to_dict(self) -> dict:
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    @classmethod
    def from_dict(cls, d: dict):
        return cls(**{f.name: d[f.name] for f in fields(cls) if f.name in d})

    @classmethod
    def from_json(cls, text: str):
        return cls.from_dict(json.loads(text))


def _sentence(sentence) -> str:
    if not isinstance(sentence, str):
        raise TypeError(f"expected one sentence as str, got {type(sentence).__name__}")
    return sentence


def _prepare(model, sentence) -> tuple[torch.Tensor, torch.Tensor]:
    """One sentence -> src (1, S), lengths (1,); a toy model (lib.experiments.toy) ignores the
    source."""
    if hasattr(model, "prepare"):
        return model.prepare([_sentence(sentence)])
    if hasattr(model, "inputs"):  # lib.experiments.toy.TableModel: a probability table, no encoder
        return model.inputs(1)
    raise TypeError(f"{type(model).__name__} has neither prepare() (a Seq2Seq) nor inputs() "
                    f"(a lib.experiments.toy.TableModel)")


def _source(model, sentence: str) -> tuple[list[str], list[bool]]:
    tokens = tokenize(sentence)
    return tokens, [i == UNK for i in model.src_vocab.encode(tokens)]


def _text(model, ids: list[int]) -> list[str]:
    return [model.tgt_vocab.itos[i] for i in ids]


# ---------------------------------------------------------------------------------------------
# Hidden states
# ---------------------------------------------------------------------------------------------


@dataclass
class HiddenTrace(Record):
    """The states of one sentence's trip through the model (greedy decoding).

    encoder[l][t] is h_t^{l+1}, layer l+1's state after reading source token t: its last layer
    is `model.encode`'s output states, its last step the hidden states (the context).
    decoder[l][t] is s_{t+1}^{l+1}, the state after reading y_t (y_0 = <sos>), from which the
    head predicted output[t].
    """

    sentence: str
    source: list[str]  # source tokens
    unknown: list[bool]  # the token is not in the source vocabulary (read as <unk>)
    output: list[str]  # greedy output tokens, <eos> included when it was written
    encoder: list  # (L, S, H)
    decoder: list  # (L, T, H)

    def tensors(self) -> tuple[torch.Tensor, torch.Tensor]:
        """encoder (L, S, H) and decoder (L, T, H) states as float tensors."""
        return torch.tensor(self.encoder), torch.tensor(self.decoder)

    @property
    def translation(self) -> str:
        return detokenize([t for t in self.output if t != "<eos>"])


def capture_hidden(model, sentence: str, max_len: int | None = None) -> HiddenTrace:
    """Encode `sentence`, decode it greedily, and keep every layer's state at every step."""
    sentence = _sentence(sentence)
    with evaluating(model):
        src, lengths = model.prepare([sentence])  # (1, S)
        outputs, hidden, _ = model.encode(src, lengths)  # (1, S, H), (L, 1, H)
        emb = model.encoder.embedding(src)  # (1, S, E)
        layers = gru_layer_states(model.encoder.rnn, emb)  # [(1, S, H)] * L
        layers[-1] = outputs  # the last layer is what encode() returns, by construction
        encoder = torch.cat(layers).float().cpu()  # (L, S, H)
        run = decode(model, src, lengths, max_len=max_len)
    source, unknown = _source(model, sentence)
    decoder = torch.stack(run.states, dim=1)  # (L, T, H)
    return HiddenTrace(sentence, source, unknown, _text(model, run.tokens),
                       encoder.tolist(), decoder.tolist())


# ---------------------------------------------------------------------------------------------
# Decoder step-through
# ---------------------------------------------------------------------------------------------


@dataclass
class StepTrace(Record):
    """The decoder's next-token distributions at every step, for a (forced) output.

    steps[t] describes step t+1: the token it read, the top-k tokens with their probabilities,
    the token written (forced, or greedy's choice), its probability and rank.
    """

    sentence: str
    source: list[str]
    unknown: list[bool]
    prefix: list[str]  # the forced prefix as tokens (may hold "<unk>")
    prefix_unknown: list[str]  # prefix words not in the target vocabulary
    steps: list[dict] = field(default_factory=list)
    greedy: list[str] = field(default_factory=list)  # the output without any forcing

    @property
    def output(self) -> list[str]:
        return [s["token"] for s in self.steps]

    @property
    def log_prob(self) -> float:
        """log P(output | source): the sum of the log-probabilities of the written tokens."""
        return sum(s["logp"] for s in self.steps)

    @property
    def translation(self) -> str:
        return detokenize([t for t in self.output if t != "<eos>"])


def capture_steps(model, sentence: str, prefix: str | list[str] = "", top_k: int = 8,
                  max_len: int | None = None) -> StepTrace:
    """Decode `sentence` with the French `prefix` forced (teacher forcing), then greedily.

    `prefix` is text ("Je suis") or tokens; an empty prefix gives plain greedy decoding.
    """
    sentence, top_k = _sentence(sentence), as_int(top_k)
    if not is_int(top_k) or top_k < 1:
        raise ValueError(f"top_k must be an integer >= 1, got {top_k!r}")
    if not isinstance(prefix, (str, list, tuple)) or \
            not all(isinstance(w, str) for w in prefix):
        raise TypeError(f"prefix must be French text or a list of token strings, got {prefix!r}")
    words = tokenize(prefix) if isinstance(prefix, str) else list(prefix)
    forced = model.tgt_vocab.encode(words)
    with evaluating(model):
        src, lengths = model.prepare([sentence])
        run = decode(model, src, lengths, forced=forced, max_len=max_len, top_k=top_k)
        plain = run if not forced else decode(model, src, lengths, max_len=max_len)
    itos = model.tgt_vocab.itos
    steps = []
    for t, (tok, lp, rank, (top_id, top_lp)) in enumerate(
            zip(run.tokens, run.logps, run.ranks, run.tops)):
        steps.append({
            "input": itos[SOS] if t == 0 else itos[run.tokens[t - 1]],
            "token": itos[tok], "forced": t < len(forced), "logp": lp, "rank": rank,
            "top": [[itos[i], p] for i, p in zip(top_id, top_lp)],  # (token, log P) best first
        })
    source, unknown = _source(model, sentence)
    return StepTrace(sentence, source, unknown, _text(model, forced),
                     [w for w, i in zip(words, forced) if i == UNK], steps,
                     _text(model, plain.tokens))


# ---------------------------------------------------------------------------------------------
# Beam search
# ---------------------------------------------------------------------------------------------


@dataclass
class BeamCapture(Record):
    """`lib.search.beam_search(..., trace=True).trace` as a dict, and the greedy path beside it.

    greedy[t] is greedy's token at step t+1 and greedy_logp[t] its log-probability, so the view
    can show where greedy's choice fell out of the beam.
    """

    sentence: str
    trace: dict  # BeamTrace.to_dict(): source, beam_size, alpha, max_len, nodes, winner, nbest
    greedy: list[str]
    greedy_logp: list[float]
    translation: str  # the winner, detokenised: what model.translate(..., beam_size=k) returns
    greedy_translation: str

    def beam_trace(self):
        return BeamTrace.from_dict(self.trace)

    @property
    def greedy_score(self) -> float:
        """Greedy's output scored like a beam hypothesis: log P / length^alpha."""
        return float(normalize(sum(self.greedy_logp), len(self.greedy), self.trace["alpha"]))


def capture_beam(model, sentence: str = "", beam_size: int = 3,
                 alpha: float | None = DEFAULT_ALPHA, max_len: int | None = None) -> BeamCapture:
    """Beam search on one sentence with its trace, and greedy decoding to compare with.

    `model` is a Seq2Seq, or a `lib.experiments.toy.TableModel` (then `sentence` is ignored).
    """
    with evaluating(model):
        src, lengths = _prepare(model, sentence)
        result = beam_search(model, src, lengths, beam_size=beam_size, max_len=max_len,
                             alpha=alpha, trace=True)
        run = decode(model, src, lengths, max_len=max_len)
    trace = result.trace
    winner = model.tgt_vocab.decode(trace.path(trace.winner))
    greedy = _text(model, run.tokens)
    return BeamCapture(sentence, trace.to_dict(), greedy, run.logps, detokenize(winner),
                       detokenize(model.tgt_vocab.decode(run.tokens)))


# ---------------------------------------------------------------------------------------------
# The map of context vectors
# ---------------------------------------------------------------------------------------------


@dataclass
class ContextMap(Record):
    """Context vectors of many sentences, projected on their two main directions.

    `neighbours[i]` lists the sentences closest to sentence i in the full H-dimensional space
    (cosine similarity): the 2-D picture distorts distances, the neighbour list does not.
    """

    sentences: list[str]
    points: list[list[float]]  # (N, 2)
    explained: list[float]  # (2,)
    neighbours: list[list[int]]  # (N, k)
    groups: list[str]  # a label per sentence for the colours
    layer: int  # which layer's final state, from 1 (the last layer's is the context)
    mean: list[float] = field(default_factory=list)  # the PCA, to place new sentences
    components: list[list[float]] = field(default_factory=list)

    def pca(self) -> PCA:
        return PCA(torch.tensor(self.mean, dtype=torch.float64),
                   torch.tensor(self.components, dtype=torch.float64), self.explained)


def sentence_groups(sentences: list[str], by: str = "first word", n: int = 6) -> list[str]:
    """A colour label per sentence: its first word (the n most common; others "other"),
    its end punctuation ("question", "exclamation", "statement") or nothing ("")."""
    if by == "first word":
        firsts = [(tokenize(s) or [""])[0] for s in sentences]
        common = [w for w, _ in sorted(
            ((w, firsts.count(w)) for w in set(firsts)), key=lambda x: (-x[1], x[0]))[:n]]
        return [w if w in common else "other" for w in firsts]
    if by == "punctuation":
        kind = {"?": "question", "!": "exclamation"}
        return [kind.get(s.strip()[-1:], "statement") for s in sentences]
    if by in ("", None):
        return [""] * len(sentences)
    raise ValueError(f"color_by must be 'first word', 'punctuation' or '', got {by!r}")


def check_layer(model, layer: int | None) -> int:
    """A layer number from 1 to the model's number of layers (None: the last, the context)."""
    L = model.config.num_layers
    layer = L if layer is None else as_int(layer)
    if not is_int(layer) or not 1 <= layer <= L:
        raise ValueError(f"layer must be an integer from 1 to {L} (None: the last layer), "
                         f"got {layer!r}")
    return layer


def encode_contexts(model, sentences: list[str], layer: int | None = None,
                    batch_size: int = 256) -> torch.Tensor:
    """The final states of `layer` (from 1; None: the last, the context) for many sentences
    -> (N, H) on the CPU (batched)."""
    layer = check_layer(model, layer)
    rows = []
    with evaluating(model):
        for k in range(0, len(sentences), batch_size):
            src, lengths = model.prepare(sentences[k:k + batch_size])
            _, hidden, _ = model.encode(src, lengths)  # (L, B, H)
            rows.append(hidden[layer - 1].float().cpu())  # (B, H)
    return torch.cat(rows)  # (N, H)


def capture_contexts(model, sentences: list[str], layer: int | None = None,
                     neighbours: int = 3, color_by: str = "first word") -> ContextMap:
    """Context vectors of `sentences` PCA'd to 2-D (repeated, empty or too long ones skipped),
    with each one's `neighbours` nearest others in the full space."""
    layer = check_layer(model, layer)
    if not is_int(neighbours) or neighbours < 1:
        raise ValueError(f"neighbours must be an integer >= 1, got {neighbours!r}")
    limit = model.config.max_src_len
    sentences = [s for s in dict.fromkeys(sentences)  # each sentence once, in order
                 if isinstance(s, str) and 0 < len(tokenize(s)) <= limit]
    if len(sentences) < 2:
        raise ValueError("a map needs at least two usable sentences")
    ctx = encode_contexts(model, sentences, layer)  # (N, H)
    with one_thread():
        return _context_map(ctx, sentences, layer, neighbours, color_by)


def _context_map(ctx: torch.Tensor, sentences: list[str], layer: int, neighbours: int,
                 color_by: str) -> ContextMap:
    pca = pca2(ctx)
    return ContextMap(sentences, pca.project(ctx).tolist(), pca.explained,
                      nearest_neighbours(ctx, neighbours),
                      sentence_groups(sentences, color_by), layer, pca.mean.tolist(),
                      pca.components.tolist())
