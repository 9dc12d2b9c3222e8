"""Capture what the widgets draw: plain records of one run of the model, moved to the CPU.

The widgets never draw from the model directly. A capture function runs the model (on whatever
device it lives) through its public modules, and returns a dataclass of lists and numbers that
`to_json()` serialises and `from_dict()` reads back. The views draw from these records only, so
a record computed once (or loaded from a file) draws the same view anywhere, kernel or not.

    HiddenTrace  encoder states per layer and token, decoder states per layer and output token
    StepTrace    the decoder's top-k next-token probabilities at every step, with a forced prefix
    BeamCapture  lib.search's beam trace plus the greedy path beside it
    ContextMap   the context vectors of many sentences, projected to 2-D by PCA
"""

from __future__ import annotations

import contextlib
import json
import warnings
from dataclasses import asdict, dataclass, field, fields

import torch
from torch import nn

from lib.data import EOS, SOS, UNK, detokenize, tokenize
from lib.search import DEFAULT_ALPHA, beam_search, log_probs, normalize


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


def _on_cpu(model) -> bool:
    params = model.parameters() if isinstance(model, nn.Module) else iter(())
    return next(params, torch.empty(0)).device.type == "cpu"


@contextlib.contextmanager
def one_cpu_thread(active: bool = True):
    """Run the CPU work inside on one intra-op thread, then restore the setting.

    The widgets' tensors are small (one sentence, a few hundred vectors): one thread computes
    them about as fast as several, while on a busy machine extra threads mostly wait for each
    other. On this project's shared 2-core machine a beam redraw took 50 ms on one thread and
    1.8 s on two.
    """
    threads = torch.get_num_threads()
    if active:
        torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@contextlib.contextmanager
def evaluating(model):
    """Dropout off and no gradients while we look inside, then the model's own mode back
    (and, on the CPU, one thread: see `one_cpu_thread`)."""
    module = isinstance(model, nn.Module)
    was_training = module and model.training
    if module:
        model.eval()
    try:
        with torch.no_grad(), one_cpu_thread(_on_cpu(model)):
            yield
    finally:
        if module:
            model.train(was_training)


def _sentence(sentence) -> str:
    if not isinstance(sentence, str):
        raise TypeError(f"expected one sentence as str, got {type(sentence).__name__}")
    return sentence


def _prepare(model, sentence) -> tuple[torch.Tensor, torch.Tensor]:
    """One sentence -> src (1, S), lengths (1,); a toy model (lib.toy) ignores the source."""
    if hasattr(model, "prepare"):
        return model.prepare([_sentence(sentence)])
    if hasattr(model, "inputs"):  # lib.toy.TableModel: a probability table, no encoder
        return model.inputs(1)
    raise TypeError(f"{type(model).__name__} has neither prepare() (a Seq2Seq) nor inputs() "
                    f"(a lib.toy.TableModel)")


def _max_len(model, max_len) -> int:
    max_len = model.config.max_tgt_len if max_len is None else max_len
    if not isinstance(max_len, int) or isinstance(max_len, bool) or max_len < 1:
        raise ValueError(f"max_len must be an integer >= 1, got {max_len!r}")
    return max_len


def _source(model, sentence: str) -> tuple[list[str], list[bool]]:
    tokens = tokenize(sentence)
    return tokens, [i == UNK for i in model.src_vocab.encode(tokens)]


# ---------------------------------------------------------------------------------------------
# Per-layer encoder states
# ---------------------------------------------------------------------------------------------

_TEMPLATES: dict[tuple, nn.GRU] = {}


def _one_layer(rnn: nn.GRU, layer: int) -> tuple[nn.GRU, dict]:
    """A weightless 1-layer GRU and the parameters of `layer` of `rnn` under its names."""
    input_size = rnn.input_size if layer == 0 else rnn.hidden_size
    key = (input_size, rnn.hidden_size, rnn.bias, rnn.batch_first)
    if key not in _TEMPLATES:
        _TEMPLATES[key] = nn.GRU(input_size, rnn.hidden_size, 1, bias=rnn.bias,
                                 batch_first=rnn.batch_first, device="meta")
    template = _TEMPLATES[key]
    params = {name: getattr(rnn, name.replace("_l0", f"_l{layer}"))
              for name, _ in template.named_parameters()}
    return template, params


def gru_layer_states(rnn: nn.GRU, inputs: torch.Tensor, h0: torch.Tensor | None = None
                     ) -> list[torch.Tensor]:
    """Run a stacked GRU one layer at a time -> every layer's outputs [(B, S, H)] * L.

    nn.GRU returns only the last layer's states over time; the widget also shows the lower
    layers. Layer i > 1 reads the states of layer i-1 (eq. 1), so we feed each layer the
    previous one's outputs, using the module's own weights (no copy) and the same kernel.
    inputs (B, S, I) (batch_first), h0 (L, B, H) or None for zeros.
    """
    from torch.func import functional_call

    outs, x = [], inputs
    for layer in range(rnn.num_layers):
        template, params = _one_layer(rnn, layer)
        hx = None if h0 is None else h0[layer:layer + 1]  # (1, B, H)
        with warnings.catch_warnings():  # cuDNN warns that the weights are not one flat chunk
            warnings.simplefilter("ignore", UserWarning)
            x, _ = functional_call(template, params, (x, hx) if hx is not None else (x,))
        outs.append(x)  # (B, S, H)
    return outs


# ---------------------------------------------------------------------------------------------
# Stepping the decoder: greedy, optionally after a forced prefix
# ---------------------------------------------------------------------------------------------


@dataclass
class _Run:
    tokens: list[int]  # written tokens, <eos> included if it was written
    logps: list[float]  # log P of each written token
    states: list[torch.Tensor]  # (L, H) decoder state after each step
    tops: list[tuple[list[int], list[float]]]  # per step: top-k ids and log-probabilities
    ranks: list[int]  # per step: rank of the written token (1 = most likely)


def decode(model, src: torch.Tensor, lengths: torch.Tensor, forced: list[int] | None = None,
           max_len: int | None = None, top_k: int = 0) -> _Run:
    """Step `model.decoder.step` on one sentence: forced tokens first, then greedy.

    Greedy picks exactly as `lib.search.greedy` does (the max of `log_probs`, where <pad> and
    <sos> are forbidden), so with no forced prefix the tokens are greedy's output.
    src (1, S), lengths (1,).
    """
    forced = list(forced or [])
    max_len = _max_len(model, max_len)
    if len(forced) >= max_len:
        raise ValueError(f"the forced prefix has {len(forced)} tokens; the length cap "
                         f"max_len={max_len} leaves no step to continue")
    _, state, context = model.encode(src, lengths)  # (L, 1, H), (1, H)
    prev = torch.full((1,), SOS, dtype=torch.long, device=src.device)  # (1,)
    run = _Run([], [], [], [], [])
    for t in range(max_len):
        logits, state = model.decoder.step(prev, state, context)  # (1, V), (L, 1, H)
        logp = log_probs(logits)[0]  # (V,)
        best_lp, best = logp.max(-1)  # the greedy choice, as lib.search.greedy makes it
        tok = forced[t] if t < len(forced) else int(best)
        lp = logp[tok]
        run.tokens.append(tok)
        run.logps.append(float(lp))
        run.states.append(state[:, 0].float().cpu())  # (L, H)
        run.ranks.append(int((logp > lp).sum()) + 1)
        if top_k:
            top_lp, top_id = logp.topk(min(top_k, logp.numel()))  # (k,)
            run.tops.append((top_id.tolist(), top_lp.tolist()))
        if tok == EOS:
            break
        prev = torch.full((1,), tok, dtype=torch.long, device=src.device)
    return run


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
    sentence = _sentence(sentence)
    if not isinstance(top_k, int) or top_k < 1:
        raise ValueError(f"top_k must be an integer >= 1, got {top_k!r}")
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
        from lib.search import BeamTrace

        return BeamTrace.from_dict(self.trace)

    @property
    def greedy_score(self) -> float:
        """Greedy's output scored like a beam hypothesis: log P / length^alpha."""
        return float(normalize(sum(self.greedy_logp), len(self.greedy), self.trace["alpha"]))


def capture_beam(model, sentence: str = "", beam_size: int = 3,
                 alpha: float | None = DEFAULT_ALPHA, max_len: int | None = None) -> BeamCapture:
    """Beam search on one sentence with its trace, and greedy decoding to compare with.

    `model` is a Seq2Seq, or a `lib.toy.TableModel` (then `sentence` is ignored).
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
# PCA and the map of context vectors
# ---------------------------------------------------------------------------------------------


@dataclass
class PCA:
    """A 2-D principal-component projection fitted on some vectors."""

    mean: torch.Tensor  # (H,)
    components: torch.Tensor  # (2, H) unit directions of largest variance
    explained: list[float]  # share of the variance along each direction

    def project(self, x: torch.Tensor) -> torch.Tensor:
        """x (N, H) -> (N, 2)."""
        return (x.double().cpu() - self.mean) @ self.components.T


def pca2(x: torch.Tensor) -> PCA:
    """Fit a 2-D PCA to x (N, H) by SVD (in float64 on the CPU: small, deterministic).

    Each direction's sign is fixed so that its largest loading is positive; otherwise the
    picture could flip between two runs on the same data.
    """
    x = x.detach().double().cpu()  # (N, H)
    mean = x.mean(0)  # (H,)
    _, s, vh = torch.linalg.svd(x - mean, full_matrices=False)  # (r,), (r, H)
    comps = torch.zeros(2, x.size(1), dtype=torch.float64)  # (2, H)
    n = min(2, vh.size(0))
    comps[:n] = vh[:n]
    idx = comps.abs().argmax(1, keepdim=True)  # (2, 1)
    comps *= torch.where(comps.gather(1, idx) < 0, -1.0, 1.0)
    total = float((s ** 2).sum())
    explained = [float(s[i] ** 2) / total if i < n and total > 0 else 0.0 for i in range(2)]
    return PCA(mean, comps, explained)


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
    layer: int  # which layer's final state (0-based; -1 is the context)
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


def encode_contexts(model, sentences: list[str], layer: int = -1, batch_size: int = 256
                    ) -> torch.Tensor:
    """The final states of `layer` for many sentences -> (N, H) on the CPU (batched)."""
    rows = []
    with evaluating(model):
        for k in range(0, len(sentences), batch_size):
            src, lengths = model.prepare(sentences[k:k + batch_size])
            _, hidden, _ = model.encode(src, lengths)  # (L, B, H)
            rows.append(hidden[layer].float().cpu())
    return torch.cat(rows)  # (N, H)


def capture_contexts(model, sentences: list[str], layer: int = -1, neighbours: int = 3,
                     color_by: str = "first word") -> ContextMap:
    """Context vectors of `sentences` PCA'd to 2-D (repeated, empty or too long ones skipped)."""
    limit = model.config.max_src_len
    sentences = [s for s in dict.fromkeys(sentences)  # each sentence once, in order
                 if isinstance(s, str) and 0 < len(tokenize(s)) <= limit]
    if len(sentences) < 2:
        raise ValueError("a map needs at least two usable sentences")
    ctx = encode_contexts(model, sentences, layer)  # (N, H)
    with one_cpu_thread():
        return _context_map(ctx, sentences, layer, neighbours, color_by)


def _context_map(ctx: torch.Tensor, sentences: list[str], layer: int, neighbours: int,
                 color_by: str) -> ContextMap:
    pca = pca2(ctx)
    unit = nn.functional.normalize(ctx.double(), dim=1)  # (N, H)
    sim = unit @ unit.T  # (N, N) cosine similarity
    sim.fill_diagonal_(-2.0)
    k = min(neighbours, len(sentences) - 1)
    nn_idx = sim.topk(k, dim=1).indices.tolist()  # (N, k)
    return ContextMap(sentences, pca.project(ctx).tolist(), pca.explained, nn_idx,
                      sentence_groups(sentences, color_by), layer, pca.mean.tolist(),
                      pca.components.tolist())
