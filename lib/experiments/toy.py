"""A toy "model" whose next-token probabilities come from a hand-set table.

    model = TableModel({(): {"A": 0.5, "B": 0.4, "<eos>": 0.1},
                        ("A",): {"C": 0.4, "D": 0.35, "<eos>": 0.25}})

The table maps a prefix (a tuple of tokens written so far) to the distribution of the next
token. A prefix missing from the table ends for sure: P(<eos>) = 1. The object has the interface
the search functions use (`encode`, `decoder.step`, `config.max_tgt_len`, `tgt_vocab`), so
greedy, beam and exhaustive search run on it unchanged while every score can be worked out by
hand. Its decoder "state" is simply the number of the prefix read so far, which is all a real
decoder state has to summarise too.
"""

from __future__ import annotations

import math
import random
from types import SimpleNamespace

import torch

from lib import train as tr
from lib.data import EOS, SOS, SPECIALS, UNK, Vocab
from lib.model import ModelConfig, Seq2Seq

EOS_TEXT = SPECIALS[EOS]


class TableModel:
    """A stand-in for `Seq2Seq` whose step distributions are a table keyed by the prefix."""

    attends = False  # as Seq2Seq.attends: no attention weights to record

    def __init__(self, table: dict[tuple[str, ...], dict[str, float]], max_len: int = 10):
        words = set()
        for prefix, row in table.items():
            if not isinstance(prefix, tuple) or EOS_TEXT in prefix:
                raise ValueError(f"table keys must be tuples of tokens without {EOS_TEXT}, "
                                 f"got {prefix!r}")
            bad = [w for w in row if w in ("<pad>", "<sos>")]
            if bad or any(p < 0 for p in row.values()):
                raise ValueError(f"row {prefix!r}: probabilities must be >= 0 and <pad>/<sos> "
                                 f"cannot be generated")
            if abs(sum(row.values()) - 1) > 1e-6:
                raise ValueError(f"row {prefix!r} sums to {sum(row.values())}, not 1")
            words.update(prefix)
            words.update(row)
        words -= set(SPECIALS)
        self.tgt_vocab = self.src_vocab = Vocab(list(SPECIALS) + sorted(words))
        self.config = SimpleNamespace(max_tgt_len=max_len)
        self.decoder = _TableDecoder(self)
        V = len(self.tgt_vocab)
        self._logits = {}  # prefix ids -> (V,) log-probabilities
        for prefix, row in table.items():
            logits = torch.full((V,), float("-inf"))
            for w, p in row.items():
                logits[self.tgt_vocab.stoi[w]] = math.log(p) if p > 0 else float("-inf")
            self._logits[tuple(self.tgt_vocab.encode(list(prefix)))] = logits
        self._end = torch.full((V,), float("-inf"))
        self._end[EOS] = 0.0
        self._prefixes: list[tuple[int, ...]] = [()]  # state value -> prefix
        self._number = {(): 0}  # prefix -> state value

    def ids(self, tokens: list[str]) -> list[int]:
        """Token strings ("<eos>" included) -> ids of the target vocabulary."""
        return [self.tgt_vocab.stoi[w] for w in tokens]

    def inputs(self, batch: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
        """A dummy source batch (the table ignores the source): src (B, 1), lengths (B,)."""
        return torch.full((batch, 1), UNK, dtype=torch.long), torch.ones(batch, dtype=torch.long)

    def encode(self, src: torch.Tensor, src_lengths: torch.Tensor):
        """Every sentence starts from the empty prefix: state (1, B, 1) = 0, context (B, 1)."""
        B = src.size(0)
        return None, torch.zeros(1, B, 1, device=src.device), torch.zeros(B, 1, device=src.device)

    def _step(self, prev: torch.Tensor, state: torch.Tensor):
        rows, numbers = [], []
        for token, number in zip(prev.tolist(), state[0, :, 0].long().tolist()):
            prefix = self._prefixes[number]
            if token != SOS:
                prefix = prefix + (token,)
            if prefix not in self._number:
                self._number[prefix] = len(self._prefixes)
                self._prefixes.append(prefix)
            numbers.append(self._number[prefix])
            rows.append(self._logits.get(prefix, self._end))
        new_state = torch.tensor(numbers, dtype=torch.float).view(1, -1, 1)  # (1, N, 1)
        return torch.stack(rows).to(prev.device), new_state.to(prev.device)  # (N, V)


class _TableDecoder:
    def __init__(self, model: TableModel):
        self._model = model

    def step(self, prev: torch.Tensor, state: torch.Tensor, context: torch.Tensor):
        """prev (N,), state (1, N, 1) -> logits (N, V) = log P(next | prefix), new state."""
        return self._model._step(prev, state)


def walkthrough_table() -> dict[tuple[str, ...], dict[str, float]]:
    """The chapter's k = 2, three-step example: A and C, then AB and CE, then ABD and CED.

    Step 2 also finishes A <eos> and C <eos> and step 3 AB <eos> and CE <eos>; at the length
    cap 3, ABD and CED count as finished. The answer is the best of those six, which depends
    on alpha: A <eos> (p = .16) for alpha = 0.6, AB <eos> (p = .07) for alpha = 1.
    """
    return {
        (): {"A": 0.4, "C": 0.3, "B": 0.1, "D": 0.08, "E": 0.07, "<eos>": 0.05},
        ("A",): {"<eos>": 0.4, "B": 0.35, "C": 0.1, "D": 0.1, "E": 0.05},
        ("C",): {"<eos>": 0.5, "E": 0.4, "A": 0.05, "B": 0.05},
        ("A", "B"): {"<eos>": 0.5, "D": 0.4, "C": 0.1},
        ("C", "E"): {"<eos>": 0.5, "D": 0.45, "A": 0.05},
    }


def greedy_loses_table() -> dict[tuple[str, ...], dict[str, float]]:
    """Greedy picks A (0.5) then C: P(A C) = 0.5 * 0.4 = 0.2. But P(B C) = 0.4 * 0.9 = 0.36:
    the product of the maxima is not the maximum of the products. Beam k = 2 finds B C."""
    return {
        (): {"A": 0.5, "B": 0.4, "<eos>": 0.1},
        ("A",): {"C": 0.4, "D": 0.35, "<eos>": 0.25},
        ("B",): {"C": 0.9, "<eos>": 0.1},
    }


def pruning_table() -> dict[tuple[str, ...], dict[str, float]]:
    """After one token B (0.24) is far behind A (0.76), yet B <eos> (0.24) beats every
    continuation of A (the best is A C <eos>, 0.76 * 0.6 * 0.5 = 0.228). Beam k = 3 finds
    B <eos>; with a pruning margin of 1 (0.24 < 0.76 / e) B leaves the beam at step 1 and the
    answer is A C <eos>; the default margin (search.DEFAULT_MARGIN, 1.5) keeps B
    (0.24 > 0.76 / e^1.5)."""
    return {
        (): {"A": 0.76, "B": 0.24},
        ("B",): {"<eos>": 1.0},
        ("A",): {"C": 0.6, "D": 0.4},
        ("A", "C"): {"<eos>": 0.5, "E": 0.3, "F": 0.2},
        ("A", "D"): {"E": 0.5, "F": 0.5},
    }


def tiny_model(seed: int = 0, *, src_words: int = 12, tgt_words: int = 6, emb_dim: int = 8,
               hidden: int = 16, layers: int = 2, dropout: float = 0.0, feed_context: bool = True,
               attention: bool = False, max_src_len: int = 40, max_tgt_len: int = 40,
               scale: float = 1.0,
               eos_bias: float = 0.0, shared_words: int | None = None,
               src_vocab: Vocab | None = None, tgt_vocab: Vocab | None = None):
    """A small random (untrained) `Seq2Seq` over made-up words `en0…`/`fr0…`, for checkers,
    tests and benchmarks that need a real model whose every answer is cheap to recompute. The
    one builder of such models: a user with settings of its own binds them once
    (`functools.partial`), so every tiny model is built here.

    `shared_words` gives both sides one vocabulary `w0…` of that many words instead (a checker
    can then feed the model's output back as its input); `src_vocab`/`tgt_vocab` give real ones.
    `attention=True` gives the decoder additive attention (`lib.attention`) over the encoder's
    states; every other layer starts from the same weights as without it (same seed).

    `scale` multiplies every weight: above 1 the next-token distributions differ more from
    sentence to sentence, yet stay far from a trained model's (at 3 the top token of a 4-word
    head has about a quarter to a half of the probability, and the most likely output is mostly
    <eos> alone or cut by the length cap; `briefly_trained` avoids both). `eos_bias` is added
    to the head's bias for <eos>, so greedy decoding ends early on some sentences and hits the
    cap on others. The model is in eval mode unless `dropout` is set, when it is left in
    training mode.
    """
    if shared_words is not None:
        src_vocab = tgt_vocab = Vocab(list(SPECIALS) + [f"w{i}" for i in range(shared_words)])
    src_vocab = src_vocab or Vocab(list(SPECIALS) + [f"en{i}" for i in range(src_words)])
    tgt_vocab = tgt_vocab or Vocab(list(SPECIALS) + [f"fr{i}" for i in range(tgt_words)])
    torch.manual_seed(seed)
    config = ModelConfig(len(src_vocab), len(tgt_vocab), emb_dim=emb_dim, hidden_size=hidden,
                         num_layers=layers, dropout=dropout, feed_context=feed_context,
                         attention=attention, max_src_len=max_src_len, max_tgt_len=max_tgt_len)
    model = Seq2Seq(config, src_vocab, tgt_vocab)
    model.train(dropout > 0)
    with torch.no_grad():
        if scale != 1.0:
            for p in model.parameters():
                p.mul_(scale)
        if eos_bias:
            model.decoder.head.proj.bias[EOS] += eos_bias
    return model


def class_pairs(n: int, seed: int = 0, *, src_words: int = 20, tgt_words: int = 4,
                noise: float = 0.3, max_words: int = 5) -> list[tuple[list[int], list[int]]]:
    """n made-up (source ids, target ids) pairs over `tiny_model`'s words, for `briefly_trained`.

    A source has 3 to 8 words en0…; its target writes, for each of the first ⌈L/2⌉ source
    words en_i, the word's class fr_(i mod tgt_words). `noise` keeps the task uncertain: with
    that probability the target is one word longer or shorter (1 to `max_words` words), and
    each target word is drawn at random instead of copied.
    """
    if not 0 <= noise <= 1 or n < 0 or max_words < 1:
        raise ValueError(f"need n >= 0, 0 <= noise <= 1 and max_words >= 1, got {n}, {noise}, "
                         f"{max_words}")
    rng, first = random.Random(seed), len(SPECIALS)
    pairs = []
    for _ in range(n):
        src = [rng.randrange(src_words) for _ in range(rng.randint(3, 8))]
        m = (len(src) + 1) // 2 + (rng.choice((-1, 1)) if rng.random() < noise else 0)
        m = max(1, min(max_words, m))
        tgt = [rng.randrange(tgt_words) if rng.random() < noise else i % tgt_words
               for i in src[:m]]
        pairs.append(([first + i for i in src], [first + j for j in tgt]))
    return pairs


def briefly_trained(seed: int = 0, *, pairs: int = 2000, epochs: float = 1.0, noise: float = 0.3,
                    **sizes):
    """`tiny_model(seed, **sizes)` after `epochs` passes of `lib.train` over `class_pairs(pairs,
    seed, noise=noise)` (batches of 32, learning rate 0.01), on the CPU, in eval mode.

    Unlike an untrained one, whose most likely output is mostly <eos> alone or a sequence cut
    by the length cap, such a model has learned when to write <eos>, and one pass leaves its
    next-token distributions far from certain. The beam-search chapter counts its misses
    against exhaustive search on it.
    """
    model = tiny_model(seed, **sizes)
    config = tr.TrainConfig(epochs=epochs, batch_size=32, lr=1e-2, warmup_steps=5, seed=seed)
    examples = class_pairs(pairs, seed, src_words=len(model.src_vocab) - len(SPECIALS),
                           tgt_words=len(model.tgt_vocab) - len(SPECIALS), noise=noise,
                           max_words=model.config.max_tgt_len - 1)
    tr.train(model, examples, config, device="cpu", progress=False)
    return model.eval()
