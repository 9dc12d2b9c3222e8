"""Decoding: turn the decoder's one-step distributions into a sentence.

We want the most likely *sequence*, argmax_y log P(y | x). Greedy search takes the most likely
*token* at every step; beam search keeps the k most likely partial sequences; exhaustive search
(`lib.exhaustive`) scores every sequence (|V|^T of them, so only for toy vocabularies) and is
the oracle the other two are tested against. All of them run on `Decoder.step`, so they also run
unchanged on any object with the same interface, such as `lib.experiments.toy.TableModel` (a
hand-set probability table), and on an attention model (`ModelConfig.attention`), whose
`context` is the `lib.attention.Memory` of the source: its rows are selected, per sentence and
per hypothesis, as a context's are.

Conventions shared by every function here:

* Outputs are id tensors (B, T): each row holds the tokens, then <eos> if the sentence ended
  (rather than reaching the length cap), then <pad>.
* `max_len` caps the number of generated tokens, <eos> included; it defaults to
  `model.config.max_tgt_len`.
* <pad> and <sos> are never generated: their log-probabilities are set to -inf after the
  softmax. The other tokens keep the model's own log-probabilities, so scores are true log P.
* Length normalisation (Wu et al. 2016 use ((5 + L) / 6)^alpha; we use the plain form):

      score(y) = log P(y | x) / L^alpha        L = number of generated tokens, <eos> included

  alpha = 0 means no normalisation, which favours short outputs (every token multiplies the
  probability by a number < 1); alpha = 1 is the mean log-probability per token.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F

from lib.data import EOS, PAD, SOS
from lib.validate import as_int, check_ids, is_int, is_number

# Length normalisation: alpha = 0 (none). On the reference model's validation sentences at beam
# 5, alpha = 0.6 or 1 scored no higher beyond the bootstrap noise, whether BLEU counts <unk> as
# three tokens (13a) or one; the beam-search chapter measures it (bench/decoding.py, alpha too).
DEFAULT_ALPHA = 0.0
# Relative threshold pruning (Freitag & Al-Onaizan 2017): a hypothesis whose log-probability is
# more than MARGIN below the best candidate of its step leaves the beam even if it is among the
# k best. 1.5 is a trade-off: it about halves beam 5's decoder rows, and its validation BLEU is
# within the bootstrap noise of the beam without pruning (the beam-search chapter measures both;
# bench/decoding.py BLEU and time by margin).
DEFAULT_MARGIN = 1.5
DEFAULT_BEAM = 5  # the beam size wherever none is chosen: the reports, the release, the Playground
# With source_cap=True a hypothesis may hold at most 2 * S + 6 tokens (<eos> included) for a
# source of S tokens: every pair of the corpus fits, the longest exactly (tests/test_data.py),
# and a hypothesis caught in a loop stops there instead of at max_len (fairseq's max_len_a/_b).
SOURCE_CAP = (2, 6)
# A beam of k ranks k * min(2k, |V|) candidates per sentence at every step: beam_size is refused
# above this many (k = 1,000 on the course's vocabulary; a beam of 5 to 10 is usual).
MAX_BEAM_CANDIDATES = 2_000_000
MAX_LEN = 10**9  # the largest length cap accepted: far beyond any output, and it fits int64
# Without source_cap nothing but <eos> stops a hypothesis before max_len, and an untrained or
# looping model may never emit it: such a cap is at most ten times the longest any chapter
# decodes (the attention chapter's joined sources, 100 tokens).
MAX_FREE_LEN = 1_000
MAX_ALPHA = 10.0  # the largest length-normalisation exponent (usual values are 0 to 1)
NEVER_GENERATED = (PAD, SOS)
NEG_INF = float("-inf")


# ---------------------------------------------------------------------------------------------
# Checks and small helpers
# ---------------------------------------------------------------------------------------------


def check_max_len(model, max_len, bounded: bool = False) -> int:
    """The length cap to decode with: max_len, or the model's max_tgt_len when it is None.

    Raises ValueError unless it is an integer >= 1 and at most MAX_LEN, and, unless something
    else bounds the work (`bounded`: a source cap, which stops each output at 2 * S + 6 tokens
    as translate() does, or exhaustive search's count), at most MAX_FREE_LEN: every decoder and
    widget checks it here.
    """
    max_len = model.config.max_tgt_len if max_len is None else as_int(max_len)
    if not is_int(max_len) or max_len < 1:
        raise ValueError(f"max_len (the length cap) must be an integer >= 1, got {max_len!r}")
    max_len = int(max_len)
    if max_len > MAX_LEN:
        raise ValueError(f"max_len (the length cap) must be at most MAX_LEN={MAX_LEN:,}, got "
                         f"{max_len:,}: no output comes near it")
    if not bounded and max_len > MAX_FREE_LEN:
        raise ValueError(f"max_len (the length cap) must be at most MAX_FREE_LEN="
                         f"{MAX_FREE_LEN:,} without source_cap, got {max_len:,}: only <eos> "
                         f"would stop the decoding before it; pass source_cap=True to stop "
                         f"each output at {SOURCE_CAP[0]} * S + {SOURCE_CAP[1]} tokens, as "
                         f"translate() does")
    return max_len


def _check_alpha(alpha) -> float:
    alpha = DEFAULT_ALPHA if alpha is None else alpha
    if not is_number(alpha, finite=True) or alpha < 0:
        raise ValueError(f"alpha (the length-normalisation exponent) must be a finite number "
                         f">= 0, got {alpha!r}; use 0 for no normalisation")
    if alpha > MAX_ALPHA:
        raise ValueError(f"alpha (the length-normalisation exponent) must be >= 0 and at most "
                         f"MAX_ALPHA={MAX_ALPHA:g}, got {alpha!r}: L^alpha would overflow a "
                         f"float, and usual values are 0 to 1")
    return float(alpha)


def _check_margin(margin) -> float:
    margin = math.inf if margin is None else margin
    if not is_number(margin) or math.isnan(margin) or margin < 0:
        raise ValueError(f"margin (the pruning threshold in log-probability) must be a number "
                         f">= 0, got {margin!r}; use None for no pruning")
    return float(margin)


def check_beam(model, beam_size, n_best: int = 1) -> int:
    """The beam size to search with; raises ValueError unless it is an integer >= 1 (not a
    bool or a float) whose candidates per step, k * min(2k, |V|), are at most
    MAX_BEAM_CANDIDATES, and n_best is an integer from 1 to beam_size."""
    beam_size, n_best = as_int(beam_size), as_int(n_best)
    if not is_int(beam_size) or beam_size < 1:
        raise ValueError(f"beam_size must be an integer >= 1, got {beam_size!r}")
    V = len(model.tgt_vocab)
    ranked = beam_size * min(2 * beam_size, V)
    if ranked > MAX_BEAM_CANDIDATES:
        raise ValueError(f"beam_size={beam_size:,} is too wide for a target vocabulary of "
                         f"{V:,} words: each step would rank {beam_size:,} x "
                         f"{min(2 * beam_size, V):,} = {ranked:,} candidates per sentence, more "
                         f"than MAX_BEAM_CANDIDATES={MAX_BEAM_CANDIDATES:,}; a beam of 5 to 10 "
                         f"is usual")
    if not is_int(n_best) or not 1 <= n_best <= beam_size:
        raise ValueError(f"n_best must be an integer from 1 to beam_size={beam_size}, got "
                         f"{n_best!r}: a beam of {beam_size} cannot rank more hypotheses")
    return beam_size


def _check_batch(src, src_lengths) -> None:
    if src.dim() != 2 or src_lengths.dim() != 1 or src_lengths.numel() != src.size(0):
        raise ValueError(f"expected src (B, S) and src_lengths (B,), got {tuple(src.shape)} "
                         f"and {tuple(src_lengths.shape)}")


def log_probs(logits: torch.Tensor) -> torch.Tensor:
    """logits (N, V) -> log P(next token) (N, V), with <pad> and <sos> forbidden (-inf)."""
    logp = F.log_softmax(logits.float(), dim=-1)  # (N, V)
    logp[:, list(NEVER_GENERATED)] = NEG_INF
    return logp


def length_caps(src_lengths: torch.Tensor, max_len: int, source_cap: bool) -> torch.Tensor:
    """The length cap of each sentence (B,): max_len, or min(max_len, 2 * S + 6) by source."""
    caps = torch.full_like(src_lengths, max_len)
    if source_cap:
        a, b = SOURCE_CAP
        caps = torch.clamp(a * src_lengths + b, max=max_len)
    return caps


def top_candidates(logits: torch.Tensor, m: int) -> tuple[torch.Tensor, torch.Tensor]:
    """logits (N, V) -> the m most likely next tokens of each row: log P (N, m), ids (N, m).

    Equal to `log_probs(logits).topk(m)`, without writing the (N, V) log-probabilities: the
    top m logits minus the softmax normaliser log Z (<pad> and <sos> count in Z, as in
    log_probs, but are never chosen).
    """
    logits = logits.float()
    log_z = torch.logsumexp(logits, dim=-1, keepdim=True)  # (N, 1)
    never = torch.tensor(NEVER_GENERATED, device=logits.device)
    allowed = logits.index_fill(1, never, NEG_INF)  # (N, V)
    top, ids = allowed.topk(min(m, logits.size(-1)), dim=-1)  # (N, m)
    return top - log_z, ids


def normalize(raw, length, alpha: float):
    """Length-normalised score raw / length^alpha (floats or tensors)."""
    return raw / (length ** alpha) if alpha else raw


# ---------------------------------------------------------------------------------------------
# Greedy search and the probability of a given output
# ---------------------------------------------------------------------------------------------


def _step(model, prev: torch.Tensor, state, context, tok: torch.Tensor | None = None):
    """One decoder step after tokens prev (N,) -> (next token (N,), its log P (N,), state).

    tok=None takes the most likely token (greedy); a given tok (N,) is scored (teacher forcing).
    Both read log P as `top_candidates` does (logit minus log Z), so the score greedy returns
    equals `sequence_log_prob` of its output, and beam search with k = 1 equals greedy.
    """
    logits, state = model.decoder.step(prev, state, context)  # (N, V), (L, N, H)
    if tok is None:
        lp, tok = top_candidates(logits, 1)  # (N, 1), (N, 1)
        return tok[:, 0], lp[:, 0], state
    logits = logits.float()
    lp = logits.gather(1, tok.unsqueeze(1))[:, 0] - torch.logsumexp(logits, dim=-1)  # (N,)
    never = (tok == PAD) | (tok == SOS)  # (N,) never generated: probability zero
    return tok, lp.masked_fill(never, NEG_INF), state


@torch.no_grad()
def greedy_with_scores(model, src: torch.Tensor, src_lengths: torch.Tensor,
                       max_len: int | None = None, source_cap: bool = False
                       ) -> tuple[torch.Tensor, torch.Tensor]:
    """Batched greedy decoding -> ids (B, T) and their log-probabilities log P(y | x) (B,).

    Every sentence stops at its own <eos> or at its length cap (max_len; with source_cap, at
    most 2 * S + 6 tokens for a source of S). A finished sentence leaves the batch, so the
    decoder only steps on sentences still being written.
    """
    _check_batch(src, src_lengths)
    max_len = check_max_len(model, max_len, bounded=source_cap)
    _, state, context = model.encode(src, src_lengths)  # (L, B, H), (B, H) or Memory
    B, dev = src.size(0), src.device
    cap = length_caps(src_lengths.to(dev), max_len, source_cap)  # (A,)
    raw = torch.zeros(B, device=dev)  # (B,)
    active = torch.arange(B, device=dev)  # (A,) sentences still being written
    prev = torch.full((B,), SOS, dtype=torch.long, device=dev)  # (A,)
    columns = []  # one (B,) column of ids per step: memory follows the output, not max_len
    for t in range(max_len):
        tok, lp, state = _step(model, prev, state, context)  # (A,), (A,), (L, A, H)
        columns.append(torch.full((B,), PAD, dtype=torch.long, device=dev).index_put_(
            (active,), tok))  # (B,)
        raw[active] += lp
        going = (tok != EOS) & (cap > t + 1)  # (A,)
        if not bool(going.all()):
            active, tok, cap = active[going], tok[going], cap[going]  # (A',)
            state, context = state[:, going], context[going]  # (L, A', H), (A', H)
            if active.numel() == 0:
                break
        prev = tok
    return torch.stack(columns, 1), raw  # (B, T), (B,)


def greedy(model, src: torch.Tensor, src_lengths: torch.Tensor, max_len: int | None = None,
           source_cap: bool = False) -> torch.Tensor:
    """Batched greedy decoding -> ids (B, T): the most likely token at every step."""
    return greedy_with_scores(model, src, src_lengths, max_len, source_cap)[0]


@torch.no_grad()
def sequence_log_prob(model, src: torch.Tensor, src_lengths: torch.Tensor, tgt: torch.Tensor
                      ) -> torch.Tensor:
    """log P(y | x) (B,) of given outputs tgt (B, T), read as the search functions write them.

    Teacher-forced: the decoder steps on y itself. Tokens count up to and including the first
    <eos>; <pad> is ignored. This is how we compare greedy's and beam's answers.
    """
    _check_batch(src, src_lengths)
    check_ids(tgt, len(model.tgt_vocab), "tgt")
    _, state, context = model.encode(src, src_lengths)  # (L, B, H), (B, H) or Memory
    B, T = tgt.shape
    total = torch.zeros(B, device=tgt.device)  # (B,)
    live = torch.ones(B, dtype=torch.bool, device=tgt.device)  # (B,) before the first <eos>
    prev = torch.full((B,), SOS, dtype=torch.long, device=tgt.device)  # (B,)
    for t in range(T):
        tok, lp, state = _step(model, prev, state, context, tgt[:, t])  # (B,), (B,)
        counts = live & (tok != PAD)  # (B,)
        total += torch.where(counts, lp, torch.zeros_like(lp))  # (B,)
        live &= tok != EOS
        prev = tok
    return total


# ---------------------------------------------------------------------------------------------
# Beam search: results and traces
# ---------------------------------------------------------------------------------------------


@dataclass
class TraceNode:
    """One candidate hypothesis: `parent` plus `token`. The root (id 0) is <sos>.

    status: "kept" (it stays in the beam), "pruned" (considered, then dropped) or "finished"
    (it ended with <eos>, or it was in the beam when the length cap was reached).
    `score` is `raw` normalised as if the hypothesis ended here: raw / step^alpha.
    `attention` (attention models only) holds the weights over the source tokens with which
    the decoder scored `token`, read from its parent's state; None otherwise.
    """

    id: int
    parent: int | None
    step: int
    token: int
    text: str
    raw: float
    score: float
    status: str
    attention: list[float] | None = None


@dataclass
class BeamTrace:
    """What one sentence's beam search considered: the data the beam widget draws.

    `nodes` holds the root and, for every step, the 2k best candidates (fewer if some have
    probability zero) with their status; `winner` and `nbest` are node ids; `margin` is the
    pruning margin (None: no pruning). Plain lists and numbers only, so `to_dict()` is
    JSON-serialisable and `from_dict` reads it back.
    """

    source: list[str]
    beam_size: int
    alpha: float
    max_len: int
    nodes: list[TraceNode]
    winner: int
    nbest: list[int]
    margin: float | None = None

    def to_dict(self) -> dict:
        d = asdict(self)
        for node in d["nodes"]:  # a model without attention: no "attention" key at all
            if node["attention"] is None:
                del node["attention"]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> BeamTrace:
        return cls(**{**d, "nodes": [TraceNode(**n) for n in d["nodes"]]})

    def node(self, node_id: int) -> TraceNode:
        return next(n for n in self.nodes if n.id == node_id)

    def path(self, node_id: int) -> list[int]:
        """Token ids from the root (excluded) down to `node_id` (included)."""
        by_id = {n.id: n for n in self.nodes}
        tokens = []
        while by_id[node_id].parent is not None:
            tokens.append(by_id[node_id].token)
            node_id = by_id[node_id].parent
        return tokens[::-1]

    def steps(self) -> list[list[TraceNode]]:
        """Nodes grouped by step; steps()[0] is [root]."""
        out: list[list[TraceNode]] = [[] for _ in range(1 + max(n.step for n in self.nodes))]
        for n in self.nodes:
            out[n.step].append(n)
        return out


@dataclass
class BeamResult:
    """The answer of a search for a batch of B sentences."""

    tokens: torch.Tensor  # (B, T) best hypothesis of each sentence: ids, <eos>, then <pad>
    scores: torch.Tensor  # (B,) its length-normalised score
    raw_scores: torch.Tensor  # (B,) its log-probability log P(y | x)
    nbest: list[list[tuple[list[int], float, float]]]  # per sentence: (ids, score, raw), best first
    traces: list[BeamTrace] | None = None  # per sentence, with trace=True

    @property
    def trace(self) -> BeamTrace | None:
        """The trace of a one-sentence search (use `.traces` for a batch)."""
        if self.traces is None:
            return None
        if len(self.traces) != 1:
            raise ValueError(f"{len(self.traces)} sentences were searched: use .traces[i]")
        return self.traces[0]


def _node_ids(t: int, k: int, device) -> torch.Tensor:
    """Trace ids of the 2k candidates of step t (the same in every sentence; root = 0)."""
    return 1 + (t - 1) * 2 * k + torch.arange(2 * k, device=device)  # (2k,)


class _Pool:
    """The n best finished hypotheses of every sentence, by normalised score, as tensors.

    `seq` grows with the longest hypothesis added, so memory follows the outputs, not max_len.
    """

    def __init__(self, B: int, n: int, device):
        self.n = n
        self.seq = torch.full((B, n, 0), PAD, dtype=torch.long, device=device)  # (B, n, T) ids
        self.score = torch.full((B, n), NEG_INF, device=device)  # (B, n) best first
        self.raw = torch.full((B, n), NEG_INF, device=device)  # (B, n)
        self.length = torch.zeros((B, n), dtype=torch.long, device=device)  # (B, n)
        self.id = torch.zeros((B, n), dtype=torch.long, device=device)  # (B, n) trace node ids

    def add(self, rows, seq, raw, score, ids, mask) -> None:
        """Merge candidates seq (A, c, t) where mask (A, c) into the pools of sentences rows (A,).

        A stable sort keeps the earlier-found hypothesis first when scores tie.
        """
        A, c, t = seq.shape
        if t > self.seq.size(2):
            self.seq = F.pad(self.seq, (0, t - self.seq.size(2)), value=PAD)  # (B, n, t)
        T = self.seq.size(2)
        seq = F.pad(seq, (0, T - t), value=PAD)  # (A, c, T)
        score = torch.cat([self.score[rows], score.masked_fill(~mask, NEG_INF)], 1)  # (A, n+c)
        order = score.sort(dim=1, descending=True, stable=True).indices[:, :self.n]  # (A, n)
        self.score[rows] = score.gather(1, order)  # (A, n)
        raw = torch.cat([self.raw[rows], raw.masked_fill(~mask, NEG_INF)], 1)  # (A, n+c)
        self.raw[rows] = raw.gather(1, order)  # (A, n)
        length = torch.full_like(mask, t, dtype=torch.long)  # (A, c)
        length = torch.cat([self.length[rows], length], 1)  # (A, n+c)
        self.length[rows] = length.gather(1, order)  # (A, n)
        self.id[rows] = torch.cat([self.id[rows], ids.expand(A, c)], 1).gather(1, order)  # (A, n)
        seqs = torch.cat([self.seq[rows], seq], 1)  # (A, n+c, T)
        order = order.unsqueeze(-1).expand(-1, -1, T)  # (A, n, T)
        self.seq[rows] = seqs.gather(1, order)  # (A, n, T)

    def result(self, traces=None) -> BeamResult:
        T = int(self.length[:, 0].max())
        nbest = []
        for b, (seqs, lens, scores, raws) in enumerate(zip(
                self.seq.tolist(), self.length.tolist(), self.score.tolist(), self.raw.tolist())):
            nbest.append([(s[:n], sc, r) for s, n, sc, r in zip(seqs, lens, scores, raws)
                          if sc > NEG_INF])
            if traces is not None:
                traces[b].winner = self.id[b, 0].item()
                traces[b].nbest = self.id[b, :len(nbest[-1])].tolist()
        return BeamResult(tokens=self.seq[:, 0, :T], scores=self.score[:, 0],
                          raw_scores=self.raw[:, 0], nbest=nbest, traces=traces)


class _Recorder:
    """Collects a BeamTrace per sentence (only with trace=True: it loops in Python)."""

    def __init__(self, model, src, src_lengths, k: int, alpha: float, caps: list[int],
                 margin: float):
        self.k, self.itos = k, model.tgt_vocab.itos
        self.lengths = src_lengths.tolist()
        src_vocab = getattr(model, "src_vocab", None)
        self.traces = []
        for row, n, max_len in zip(src.tolist(), src_lengths.tolist(), caps):
            source = [src_vocab.itos[i] if src_vocab else str(i) for i in row[:n]]
            root = TraceNode(0, None, 0, SOS, self.itos[SOS], 0.0, 0.0, "kept")
            self.traces.append(BeamTrace(source, k, alpha, max_len, [root], 0, [],
                                         None if math.isinf(margin) else margin))

    def record(self, t, active, parent_id, tok, raw, score, finishing, kept,
               attention=None) -> None:
        """All arguments but t and active (A,) are (A, 2k) tensors over the step's candidates;
        attention, if given, (A, 2k, S) holds each candidate's weights over the source."""
        ids = _node_ids(t, self.k, "cpu").tolist()
        columns = [x.tolist() for x in (parent_id, tok, raw, score, finishing, kept)]
        weights = attention.tolist() if attention is not None else [None] * active.numel()
        for b, a_rows, *rows in zip(active.tolist(), weights, *columns):
            n = self.lengths[b]
            for c, (node_id, p, w, r, s, f, kp) in enumerate(zip(ids, *rows)):
                if r == NEG_INF:  # probability zero: not a real candidate
                    continue
                status = "finished" if f else "kept" if kp else "pruned"
                a = a_rows[c][:n] if a_rows is not None else None  # the real source tokens
                self.traces[b].nodes.append(TraceNode(node_id, p, t, w, self.itos[w], r, s, status,
                                                      a))


# ---------------------------------------------------------------------------------------------
# Beam search
# ---------------------------------------------------------------------------------------------


def _extend(alive: torch.Tensor, filled: torch.Tensor, lp: torch.Tensor, tk: torch.Tensor,
            k: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The 2k best one-token extensions of each sentence's live hypotheses, best first.

    alive (A, width): log P of each beam slot (-inf: empty); filled (A*width,): the slots that
    ran through the decoder, whose 2k best next tokens are lp, tk (N, m). Only these N*m
    extensions can rank in the 2k best: a (width * m)-wide topk per sentence.
    Returns raw log P (A, 2k), the slot extended (A, 2k) and the token added (A, 2k).
    """
    A, width = alive.shape
    m = lp.size(1)  # min(2k, V)
    top_lp = lp.new_full((A * width, m), NEG_INF)  # (A*width, m): -inf for empty slots
    top_lp[filled] = lp
    top_tok = tk.new_full((A * width, m), PAD)
    top_tok[filled] = tk
    cand = (alive.unsqueeze(-1) + top_lp.view(A, width, m)).view(A, width * m)
    if width * m < 2 * k:  # tiny vocabularies: pad with impossible candidates
        cand = F.pad(cand, (0, 2 * k - width * m), value=NEG_INF)
    raw, flat = cand.topk(2 * k, dim=1)  # (A, 2k) best first
    flat = flat.clamp(max=width * m - 1)  # padding columns (raw -inf) point anywhere real
    return raw, flat // m, top_tok.view(A, width * m).gather(1, flat)


def _sort_out(raw: torch.Tensor, tok: torch.Tensor, k: int, margin: float,
              at_cap: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Which of the 2k candidates (A, 2k) finish, and which stay in the beam (beam_search).

    Returns keep (A, k): the positions of the k best candidates not ending in <eos>, best
    first; kept (A, 2k): those of them that stay (not pruned by `margin`, which is relative to
    the step's best); finishing (A, 2k): <eos> among the k best, or kept at the length cap.
    """
    rank = torch.arange(raw.size(1), device=raw.device)  # (2k,)
    possible = raw > NEG_INF  # (A, 2k)
    is_eos = tok == EOS  # (A, 2k)
    keep = (rank + 2 * k * is_eos).topk(k, dim=1, largest=False).indices  # (A, k)
    kept = torch.zeros_like(is_eos).scatter_(1, keep, True) & ~is_eos  # (A, 2k)
    kept &= possible & (raw >= raw[:, :1] - margin)  # relative threshold pruning
    finishing = (is_eos & (rank < k)) | (kept & at_cap.unsqueeze(1))  # (A, 2k)
    return keep, kept, finishing & possible


@torch.no_grad()
def beam_search(model, src: torch.Tensor, src_lengths: torch.Tensor,
                beam_size: int = DEFAULT_BEAM,
                max_len: int | None = None, alpha: float | None = DEFAULT_ALPHA, n_best: int = 1,
                trace: bool = False, source_cap: bool = False,
                margin: float | None = DEFAULT_MARGIN) -> BeamResult:
    """Beam search batched over sentences x beams: one decoder call per step for all of them.

    Each step scores the k*V one-token extensions of the (at most k) live hypotheses of each
    sentence and takes the 2k best (one `topk` per sentence):

    * a candidate ending in <eos> is finished and set aside in the sentence's pool, if it is
      among the k best (what a plain k-best beam would keep; this makes k = 1 with alpha = 0
      exactly greedy, while alpha > 0 may search on for a longer, better-normalised answer);
    * the k best other candidates stay in the beam (there are always k: at most k of the 2k
      end in <eos>, one per live hypothesis), except those whose log-probability is more than
      `margin` below the best candidate of the step (relative threshold pruning, Freitag &
      Al-Onaizan 2017; None: no pruning, the plain k-best beam). So a sentence may have fewer
      than k live hypotheses, and only those run through the decoder;
    * at the length cap (max_len; with source_cap, at most 2 * S + 6 tokens for a source of S)
      the hypotheses still in the beam count as finished.

    Finished hypotheses never occupy the beam, and the pool keeps the n_best best of them by
    normalised score (module docstring; alpha=None means DEFAULT_ALPHA). A sentence stops when
    its pool holds n_best hypotheses and no live hypothesis can beat the n_best-th: extending
    a prefix with log-prob r can at best reach r / cap^alpha (r <= 0 only decreases, the
    divisor at most grows to cap^alpha). So stopping early never changes the answer.
    A stopped sentence leaves the batch.

    Three savings keep the work near greedy's: the first step runs one row per sentence
    (the k beams would all be the same <sos>), pruned hypotheses run no decoder rows, and each
    row passes on only its 2k best tokens (`top_candidates`), so the (rows, V) log-probabilities
    are never written and the 2k best of a sentence come from a (k * 2k)-wide ranking.
    """
    _check_batch(src, src_lengths)
    beam_size, n_best = check_beam(model, beam_size, n_best), as_int(n_best)
    max_len, k = check_max_len(model, max_len, bounded=source_cap), beam_size
    alpha = _check_alpha(alpha)
    margin = _check_margin(margin)
    _, state, context = model.encode(src, src_lengths)  # (L, B, H), (B, H) or Memory
    B, dev = src.size(0), src.device
    cap = length_caps(src_lengths.to(dev), max_len, source_cap)  # (A,)
    # Every sentence starts with one live hypothesis, <sos>, in a beam of `width` slots (k after
    # step 1). An empty slot has log P = -inf; the decoder only runs on the N filled ones.
    width = 1
    prev = torch.full((B,), SOS, dtype=torch.long, device=dev)  # (N,) filled slots, in order
    alive = torch.zeros((B, 1), device=dev)  # (A, width) log P of the live hypotheses
    seqs = torch.empty((B, 1, 0), dtype=torch.long, device=dev)  # (A, width, t) their tokens
    alive_id = torch.zeros((B, 1), dtype=torch.long, device=dev)  # (A, width) their trace ids
    active = torch.arange(B, device=dev)  # (A,) sentences still searching
    pool = _Pool(B, n_best, dev)
    recorder = _Recorder(model, src, src_lengths, k, alpha, cap.tolist(), margin) \
        if trace else None
    # with trace=True an attention model's weights are recorded with every candidate
    attend = recorder is not None and model.attends
    for t in range(1, max_len + 1):
        A = active.numel()
        filled = alive.view(-1) > NEG_INF  # (A*width,) slots holding a hypothesis
        if attend:
            logits, state, weights = model.decoder.step(prev, state, context,
                                                        return_attention=True)  # ..., (N, S)
        else:
            logits, state = model.decoder.step(prev, state, context)  # (N, V), (L, N, H)
        raw, parent, tok = _extend(alive, filled, *top_candidates(logits, 2 * k), k)  # (A, 2k)
        row_of = torch.cumsum(filled, 0) - 1  # (A*width,) decoder row of each filled slot
        at_cap = cap <= t  # (A,) the cap ends the hypotheses still in the beam
        keep, kept, finishing = _sort_out(raw, tok, k, margin, at_cap)
        prefix = seqs.gather(1, parent.unsqueeze(-1).expand(-1, -1, t - 1))  # (A, 2k, t-1)
        cand_seq = torch.cat([prefix, tok.unsqueeze(-1)], dim=2)  # (A, 2k, t)
        score = normalize(raw, t, alpha)  # (A, 2k)
        ids = _node_ids(t, k, dev)  # (2k,)
        pool.add(active, cand_seq, raw, score, ids, finishing)
        if recorder:
            attention = None
            if attend:  # each candidate's weights are its parent's row's: (A, 2k, S)
                parent_row = row_of.view(A, width).gather(1, parent).clamp(min=0)  # (A, 2k)
                attention = weights[parent_row]
            recorder.record(t, active, alive_id.gather(1, parent), tok, raw, score, finishing,
                            kept, attention)

        live = kept.gather(1, keep)  # (A, k) slots of the next beam that hold a hypothesis
        alive = raw.gather(1, keep).masked_fill(~live, NEG_INF)  # (A, k)
        bound = normalize(alive.max(1).values, cap, alpha)  # (A,) best any live one can do
        go = (pool.score[active, -1] < bound) & ~at_cap  # (A,) sentences that go on
        rows = row_of.view(A, width).gather(1, parent.gather(1, keep))  # (A, k) parents' rows
        live = live[go]  # (A', k)
        rows = rows[go][live]  # (N',) decoder rows that continue, in slot order
        state, context = state.index_select(1, rows), context.index_select(0, rows)
        active, alive, cap = active[go], alive[go], cap[go]  # (A',), (A', k), (A',)
        seqs = cand_seq.gather(1, keep.unsqueeze(-1).expand(-1, -1, t))[go]  # (A', k, t)
        alive_id = ids[keep][go]  # (A', k)
        prev = tok.gather(1, keep)[go][live]  # (N',)
        width = k
        if active.numel() == 0:
            break
    return pool.result(recorder.traces if recorder else None)


@torch.no_grad()
def beam_search_one(model, src: torch.Tensor, beam_size: int = DEFAULT_BEAM,
                    max_len: int | None = None,
                    alpha: float | None = DEFAULT_ALPHA, n_best: int = 1,
                    margin: float | None = DEFAULT_MARGIN
                    ) -> list[tuple[list[int], float, float]]:
    """The same beam search for ONE sentence src (S,), written to be read rather than fast.

    Hypotheses are a Python list of (tokens, log P, decoder state), each stepped on its own.
    Same rules and answers as `beam_search` (which makes one decoder call per step for all
    sentences and beams); this is the baseline of bench/decoding.py.
    Returns the n-best list [(ids, score, raw log P)], best first.
    """
    beam_size, n_best = check_beam(model, beam_size, n_best), as_int(n_best)
    max_len, alpha, k = check_max_len(model, max_len), _check_alpha(alpha), beam_size
    margin = _check_margin(margin)
    src = src.view(1, -1)  # (1, S)
    _, state, context = model.encode(src, torch.tensor([src.size(1)]))  # (L, 1, H), (1, H)
    beams = [([], torch.zeros((), device=src.device), state)]  # live: (tokens, log P, state)
    finished = []  # (score, raw, tokens)
    for t in range(1, max_len + 1):
        candidates = []  # (log P, tokens, state after reading the last token)
        for tokens, raw, state in beams:
            prev = torch.tensor([tokens[-1] if tokens else SOS], device=src.device)  # (1,)
            logits, state = model.decoder.step(prev, state, context)  # (1, V)
            logp = log_probs(logits)[0]  # (V,)
            # only a beam's own 2k best tokens can be among the 2k best candidates overall
            top, words = logp.topk(min(2 * k, logp.numel()))  # (2k,)
            for lp, w in zip(raw + top, words.tolist()):
                candidates.append((lp, tokens + [w], state))
        candidates.sort(key=lambda c: -c[0].item())
        beams, best = [], candidates[0][0]
        for r, (lp, tokens, state) in enumerate(candidates[:2 * k]):
            if lp.item() == NEG_INF:
                break
            if tokens[-1] == EOS:
                if r < k:
                    finished.append((normalize(lp, t, alpha).item(), lp.item(), tokens))
            elif len(beams) < k and lp >= best - margin:  # pruned: too far below the best
                beams.append((tokens, lp, state))
        if t == max_len:
            finished += [(normalize(lp, t, alpha).item(), lp.item(), tokens)
                         for tokens, lp, _ in beams]
        finished.sort(key=lambda f: -f[0])  # stable: ties keep the earlier-found first
        if not beams:
            break
        best_live = max(lp for _, lp, _ in beams)
        if len(finished) >= n_best and \
                finished[n_best - 1][0] >= normalize(best_live, max_len, alpha).item():
            break
    return [(tokens, score, raw) for score, raw, tokens in finished[:n_best]]
