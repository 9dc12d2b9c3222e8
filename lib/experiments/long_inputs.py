"""The attention chapter's real-language models: a fixed-vector and an attention decoder,
trained from scratch side by side on joined sentences, then scored by source length.

Both have the same small size (one GRU layer of 128 units, small enough to train on a CPU; the
fixed-vector model underfits joined data at this size), seed, data and steps; the only
difference is the decoder's context: the encoder's last state c at every step, or a new c_t from
additive attention (`lib.attention`). They train on joined training pairs
(`lib.experiments.joined`, 1 to k_max sentences each) with the reference model's recipe, and are
scored greedily on the 2,000 single test sentences and on the chapter's joined test sources.

    runs = cached_runs(MODELS)              # {"fixed vector": {...}, "attention": {...}}
    runs["attention"]["hypotheses"]         # greedy outputs for test_groups(config)
    model = load_model(MODELS["attention"])  # from disk: lib.pretrained(attention=True)

The runs are published like the reference model (`lib.course.chapter_models`, `make release`):
`cached_runs` downloads a published run before it trains one.
"""

from __future__ import annotations

import dataclasses
import math
import random
import time
from dataclasses import dataclass
from pathlib import Path

from lib import search
from lib.bleu import resampled_bleu, sentence_stats
from lib.course import chapter_models, checkpoint, memo, reference
from lib.course.memo import load_corpus
from lib.data import corpus_path, corpus_sha256, encode_pairs, tokenize
from lib.evaluate import sacrebleu_score, translate_all
from lib.experiments.joined import joined_groups, joined_train_pairs
from lib.train import new_model, train
from lib.validate import is_int, is_number

MAX_SEED = 2**32 - 1  # the largest seed numpy takes; torch and random take it too
MAX_PASSES = 40  # training reads at most this many passes' worth of joined pairs (in memory)
# Source-length buckets, in tokens (lib.data.tokenize): (low, high), high None for "and more".
BUCKETS = ((1, 8), (9, 16), (17, 24), (25, 32), (33, None))
NAME = "attention-models"  # memo's name for the runs, and their releases' tags


@dataclass(frozen=True)
class ScratchConfig:
    """One model of the attention chapter, trained from scratch on joined pairs."""

    attention: bool = False  # the decoder attends over the source (True) or reads c (False)
    emb_dim: int = 128
    hidden_size: int = 128
    num_layers: int = 1
    dropout: float = 0.1
    steps: int = 4600  # training steps of batch_size joined pairs
    batch_size: int = 128
    lr: float = 2e-3
    k_max: int = 6  # joined pairs and test groups hold 1 .. k_max sentences
    max_len: int = 100  # the model's longest source and output cap, in tokens
    seed: int = 0

    def __post_init__(self):
        for name in ("emb_dim", "hidden_size", "num_layers", "steps", "batch_size", "k_max",
                     "max_len"):
            value = getattr(self, name)
            if not is_int(value) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        if not isinstance(self.attention, bool):
            raise ValueError(f"attention must be True or False, got {self.attention!r}")
        pairs, test = reference.DATA.limit, reference.DATA.n_test
        for name, high, why in (
                ("batch_size", pairs, f"a batch holds at most the corpus's {pairs:,} pairs"),
                ("k_max", test, f"a joined test group holds at most the {test:,} held-out "
                                f"sentences"),
                ("max_len", search.MAX_FREE_LEN, "the longest cap lib.search decodes to "
                                                 "(MAX_FREE_LEN)"),
                ("seed", MAX_SEED, "the seeds every generator here takes")):
            value = getattr(self, name)
            if not is_int(value) or not (0 if name == "seed" else 1) <= value <= high:
                raise ValueError(f"{name} must be an integer from {0 if name == 'seed' else 1} "
                                 f"to {high:,} ({why}), got {value!r}")
        if self.steps * self.batch_size > MAX_PASSES * pairs:
            raise ValueError(f"steps x batch_size = {self.steps * self.batch_size:,} joined pairs, "
                             f"more than {MAX_PASSES} passes over the corpus's {pairs:,} pairs: "
                             f"they are all built in memory first")
        if not is_number(self.dropout, finite=True) or not 0 <= self.dropout < 1:
            raise ValueError(f"dropout must be a number from 0 to below 1, got {self.dropout!r}")
        if not is_number(self.lr, finite=True) or not 0 < self.lr <= 1:
            raise ValueError(f"lr must be a number > 0 and <= 1, got {self.lr!r}: Adam moves "
                             f"each weight by about lr per step, and a step of 1 is already "
                             f"larger than the weights themselves")

    def sizes(self) -> dict:
        """The ModelConfig fields of this model (the vocabulary sizes come from the corpus)."""
        return dict(emb_dim=self.emb_dim, hidden_size=self.hidden_size,
                    num_layers=self.num_layers, dropout=self.dropout, feed_context=True,
                    attention=self.attention, max_src_len=self.max_len,
                    max_tgt_len=self.max_len)


# The chapter's two models: the same in everything but the decoder's context.
MODELS = {"fixed vector": ScratchConfig(), "attention": ScratchConfig(attention=True)}


def test_groups(config: ScratchConfig, split=None) -> list[tuple[str, list[str], int]]:
    """The held-out joined groups the models are scored on: (English, [references], k)."""
    split = split or load_corpus().split
    return joined_groups(split.test, k_max=config.k_max, seed=0)


def fit(model, config: ScratchConfig, train_pairs, progress: bool = False):
    """Train `model` in place on (English, French) pairs for exactly config.steps steps.

    The reference model's recipe (warm-up, cosine decay, label smoothing, shortlist softmax,
    weight averaging) at this config's batch size and learning rate, one pass over
    steps x batch_size pairs. Returns lib.train's History.
    """
    n = config.steps * config.batch_size
    if len(train_pairs) < n:
        raise ValueError(f"{config.steps} steps of {config.batch_size} need {n} pairs, got "
                         f"{len(train_pairs)}")
    examples = encode_pairs(train_pairs[:n], model.src_vocab, model.tgt_vocab)
    recipe = dataclasses.replace(reference.TRAIN, epochs=1.0, batch_size=config.batch_size,
                                 lr=config.lr, warmup_steps=max(1, min(100, config.steps // 10)),
                                 eval_every=0, seed=config.seed)
    history = train(model, examples, recipe, device=model.device, progress=progress,
                    log_every=50)
    for step, loss in zip(history.step, history.loss):
        if not math.isfinite(loss):
            raise FloatingPointError(
                f"training's loss became non-finite ({loss}) by step {step} of "
                f"{config.steps} (lr={config.lr}): the weights are no longer usable; a smaller "
                f"lr keeps them finite")
    return history


def _key(config: ScratchConfig) -> dict:
    """What a run depends on: its settings, the recipe `fit` takes from the reference model's
    (`reference.TRAIN`), the data settings and the corpus (the published key adds the training
    torch and lib.train.TRAINING_VERSION), not the code's text: a change of what training
    computes bumps TRAINING_VERSION."""
    return {"data": dataclasses.asdict(reference.DATA), "corpus": corpus_sha256(corpus_path()),
            "recipe": reference.TRAIN.to_dict(), **dataclasses.asdict(config)}


def weights_path(config: ScratchConfig) -> Path:
    """Where the trained model for `config` is kept: named by the same key as its result."""
    return memo.result_path(NAME, _key(config)).with_suffix(".pt")


def run(config: ScratchConfig) -> dict:
    """Train a model from scratch, translate the single and the joined test sources greedily.

    Returns JSON: seconds and steps of training, its loss curve, the hypotheses for
    `test_groups` and for the single test sentences, and the seconds decoding took; the weights
    go to `weights_path(config)`.
    """
    corpus = load_corpus(reference.DATA)
    model = new_model(corpus, config.seed, **config.sizes())
    pairs = joined_train_pairs(corpus.split.train, k_max=config.k_max,
                               n=config.steps * config.batch_size, seed=config.seed)
    start = time.perf_counter()
    history = fit(model, config, pairs)
    seconds = time.perf_counter() - start
    model.eval()
    start = time.perf_counter()
    hypotheses = translate_all(model, [en for en, _, _ in test_groups(config, corpus.split)])
    singles = translate_all(model, [en for en, _ in corpus.split.test])
    decode_seconds = time.perf_counter() - start
    checkpoint.save(model, weights_path(config),
                    extra={"config": dataclasses.asdict(config), "minutes": seconds / 60})
    return {"seconds": seconds, "steps": config.steps,
            "curve": {"step": history.step, "loss": history.loss},
            "hypotheses": hypotheses, "single_hypotheses": singles,
            "decode_seconds": decode_seconds}


def cached_run(config: ScratchConfig) -> chapter_models.Run:
    """What is cached, published and fetched for `config`: the result and the weights."""
    return chapter_models.Run(NAME, _key(config), weights_path(config))


def cached_runs(configs: dict | None = None, download: bool = True, train: bool = True
                ) -> dict:
    """{label: run(config)} for `configs` ({label: ScratchConfig}, default MODELS), each from
    the disk when the same config ran before, else the published run, else trained here: side
    by side, one thread each (`lib.course.chapter_models.cached`). A result whose weights file
    is gone counts as missing.
    """
    configs = MODELS if configs is None else configs
    runs = {label: cached_run(config) for label, config in configs.items()}
    return chapter_models.cached(runs, lambda label: run(configs[label]),
                                 "the attention chapter's models", download=download,
                                 train=train)


def load_model(config: ScratchConfig, device=None):
    """The model `cached_runs` saved for `config`, in eval mode."""
    path = weights_path(config)
    if not path.is_file():
        raise FileNotFoundError(f"no trained model at {path}: run cached_runs first")
    return checkpoint.load(path, device=device).eval()


def pretrained(device=None, download: bool = True, train: bool = True):
    """The chapter's attention model (`lib.pretrained(attention=True)`): cached, else
    downloaded, else trained here together with its fixed-vector twin."""
    cached_runs(MODELS, download=download, train=train)
    return load_model(MODELS["attention"], device=device)


def source_length(sentence: str) -> int:
    """A source's length in the model's tokens (lib.data.tokenize, punctuation included)."""
    return len(tokenize(sentence))


def bucket_label(bucket: tuple) -> str:
    lo, hi = bucket
    return f"≥ {lo}" if hi is None else f"{lo}–{hi}"


def bucket_of(length: int, buckets=BUCKETS) -> tuple:
    """The bucket (lo, hi) that holds a source of `length` tokens."""
    for lo, hi in buckets:
        if length >= lo and (hi is None or length <= hi):
            return (lo, hi)
    raise ValueError(f"no bucket holds length {length}")


def bleu_by_bucket(hypotheses: list[str], groups, buckets=BUCKETS) -> list[tuple]:
    """[(bucket, sentences, corpus BLEU)] of `hypotheses` against each group's references,
    one corpus BLEU (sacrebleu, all references) per source-length bucket."""
    if len(hypotheses) != len(groups):
        raise ValueError(f"{len(hypotheses)} hypotheses for {len(groups)} groups")
    rows = []
    for bucket in buckets:
        idx = [i for i, (en, _, _) in enumerate(groups)
               if bucket_of(source_length(en), buckets) == bucket]
        score = sacrebleu_score([hypotheses[i] for i in idx],
                                [groups[i][1] for i in idx]).score if idx else float("nan")
        rows.append((bucket, len(idx), score))
    return rows


def lead_growth(better: list[str], worse: list[str], references: list[list[str]],
                short: list[int], long: list[int], rounds: int = 1000, seed: int = 0
                ) -> tuple[float, float, float]:
    """How much `better`'s corpus-BLEU lead over `worse` grows from the sources at `short` to
    those at `long` (indices into the three lists): (growth, 95 % low, high).

    Each round resamples the short and the long sources, each set on its own (they are
    disjoint), the same draw for both systems within a set (paired), and takes the long lead
    minus the short one. Two intervals that overlap can still differ: this is the test of
    whether the lead grows, not a comparison of the two leads' intervals.
    """
    if not len(better) == len(worse) == len(references):
        raise ValueError("need as many hypotheses of each system as references")
    if not short or not long or set(short) & set(long):
        raise ValueError("short and long must be non-empty and share no source")
    if not is_int(rounds) or rounds < 100:
        raise ValueError(f"rounds must be an integer >= 100, got {rounds!r}")
    a, b = sentence_stats(better, references), sentence_stats(worse, references)

    def lead(idx):
        return resampled_bleu(a, idx) - resampled_bleu(b, idx)

    growth = lead(long) - lead(short)
    rng = random.Random(seed)
    draws = sorted(lead(rng.choices(long, k=len(long))) - lead(rng.choices(short, k=len(short)))
                   for _ in range(rounds))
    return growth, draws[int(0.025 * rounds)], draws[int(0.975 * rounds) - 1]
