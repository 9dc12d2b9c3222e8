"""The attention chapter's real-language test: two copies of the reference model on long inputs.

The reference model trained on Tatoeba's short sentences. Its decoder already reads [e(y); c]
at every step (feed_context), and an attention decoder reads [e(y); c_t]: the same shapes. So
both copies start from the reference model's weights, one with its fixed context c, one with
additive attention (`lib.attention`, the only new, seeded layer), and both are fine-tuned with
the same seed, data and number of steps on joined training pairs (`lib.experiments.joined`), then
scored
by source length on joined held-out groups.

    runs = cached_runs({"fixed": FinetuneConfig(), "attention": FinetuneConfig(attention=True)})
    runs["attention"]["hypotheses"]           # greedy outputs for test_groups(config)
    model = load_copy(FinetuneConfig(attention=True))   # the fine-tuned weights, from disk

The runs are published like the reference model (`lib.course.chapter_models`, `make release`):
`cached_runs` downloads a published run before it fine-tunes one.

What it can show and what it cannot: both copies had the same short budget on long inputs, so a
difference between them is the decoder's; but a budget this small leaves both far from what
longer training would reach, and the joined parts are independent sentences, which a model
can translate one at a time.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from lib import search
from lib.course import chapter_models, checkpoint, memo, reference
from lib.course.memo import load_corpus
from lib.data import encode_pairs, tokenize
from lib.evaluate import sacrebleu_score, translate_all
from lib.experiments.joined import joined_groups, joined_train_pairs
from lib.model import Seq2Seq
from lib.train import train
from lib.validate import is_int, is_number

MAX_SEED = 2**32 - 1  # the largest seed numpy takes; torch and random take it too
MAX_PASSES = 10  # fine-tuning reads at most this many passes' worth of joined pairs
# Source-length buckets, in tokens (lib.data.tokenize): (low, high), high None for "and more".
BUCKETS = ((1, 8), (9, 16), (17, 24), (25, 32), (33, None))


@dataclass(frozen=True)
class FinetuneConfig:
    """One copy of the reference model and its fine-tuning budget on joined pairs."""

    attention: bool = False  # the decoder attends over the source (True) or reads c (False)
    steps: int = 200  # training steps; 0 scores the copy as it starts (no fine-tuning)
    batch_size: int = 64
    lr: float = 1e-3
    k_max: int = 6  # joined pairs and test groups hold 1 .. k_max sentences
    max_len: int = 100  # the copy's longest source and output cap, in tokens
    seed: int = 0

    def __post_init__(self):
        for name in ("steps", "batch_size", "k_max", "max_len"):
            value = getattr(self, name)
            if not is_int(value) or value < (0 if name == "steps" else 1):
                raise ValueError(f"{name} must be an integer >= {0 if name == 'steps' else 1}, "
                                 f"got {value!r}")
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
        if not is_number(self.lr, finite=True) or not 0 < self.lr <= 1:
            raise ValueError(f"lr must be a number > 0 and <= 1, got {self.lr!r}: Adam moves "
                             f"each weight by about lr per step, and a step of 1 is already "
                             f"larger than the weights themselves")


def copy_of(model, attention: bool, max_len: int = 100, seed: int = 0):
    """A copy of `model` with the same weights, its caps raised to `max_len` tokens and, with
    `attention=True`, an additive attention layer (drawn from `seed`) in its decoder.

    The copy's GRU input is [e(y); c] either way, so every weight of `model` fits it; only the
    attention layer's three matrices are new.
    """
    config = dataclasses.replace(model.config, attention=attention, max_src_len=max_len,
                                 max_tgt_len=max_len)
    torch.manual_seed(seed)
    copy = Seq2Seq(config, model.src_vocab, model.tgt_vocab)
    missing, unexpected = copy.load_state_dict(model.state_dict(), strict=False)
    new = [k for k in missing if not k.startswith("decoder.attention.")]
    if unexpected or new:
        raise ValueError(f"the weights do not fit the copy: unexpected {unexpected}, "
                         f"missing {new}")
    return copy.to(model.device)


def test_groups(config: FinetuneConfig, split=None) -> list[tuple[str, list[str], int]]:
    """The held-out joined groups the copies are scored on: (English, [references], k)."""
    split = split or load_corpus().split
    return joined_groups(split.test, k_max=config.k_max, seed=0)


def finetune(model, config: FinetuneConfig, train_pairs, progress: bool = False):
    """Fine-tune `model` in place on (English, French) pairs for exactly config.steps steps.

    The reference model's own recipe (label smoothing, shortlist softmax), a short warm-up, and
    one pass over steps x batch_size pairs. Returns lib.train's History (None for 0 steps).
    """
    if config.steps == 0:
        return None
    n = config.steps * config.batch_size
    if len(train_pairs) < n:
        raise ValueError(f"{config.steps} steps of {config.batch_size} need {n} pairs, got "
                         f"{len(train_pairs)}")
    examples = encode_pairs(train_pairs[:n], model.src_vocab, model.tgt_vocab)
    recipe = dataclasses.replace(reference.TRAIN, epochs=1.0, batch_size=config.batch_size,
                                 lr=config.lr, warmup_steps=max(1, min(30, config.steps // 10)),
                                 ema=0.0, eval_every=0, seed=config.seed)
    history = train(model, examples, recipe, device=model.device, progress=progress,
                    log_every=10)
    for step, loss in zip(history.step, history.loss):
        if not math.isfinite(loss):
            raise FloatingPointError(
                f"fine-tuning's loss became non-finite ({loss}) by step {step} of "
                f"{config.steps} (lr={config.lr}): the weights are no longer usable; a smaller "
                f"lr keeps them finite")
    return history


def _key(config: FinetuneConfig) -> dict:
    """What a run depends on: its settings and the reference model's key (which hashes the
    reference settings, the corpus, the training torch and lib.train.TRAINING_VERSION), not
    the code's text: a change of what fine-tuning computes bumps TRAINING_VERSION."""
    return {"reference": reference.reference_key(), **dataclasses.asdict(config)}


def weights_path(config: FinetuneConfig) -> Path:
    """Where the fine-tuned copy for `config` is kept: named by the same key as its result."""
    result = memo.result_path("long-inputs", _key(config))
    return result.with_suffix(".pt")


def run(config: FinetuneConfig) -> dict:
    """Copy the reference model, fine-tune it, translate the joined test groups greedily.

    Returns JSON: seconds and steps of training, its loss curve, the hypotheses (in the order
    of `test_groups`) and the seconds decoding took; the weights go to `weights_path(config)`.
    """
    corpus = load_corpus()
    base = reference.pretrained(progress=False)
    model = copy_of(base, config.attention, config.max_len, config.seed)
    pairs = joined_train_pairs(corpus.split.train, k_max=config.k_max,
                               n=max(1, config.steps * config.batch_size), seed=config.seed)
    start = time.perf_counter()
    history = finetune(model, config, pairs)
    seconds = time.perf_counter() - start
    model.eval()
    start = time.perf_counter()
    hypotheses = translate_all(model, [en for en, _, _ in test_groups(config, corpus.split)])
    decode_seconds = time.perf_counter() - start
    checkpoint.save(model, weights_path(config), extra={"config": dataclasses.asdict(config)})
    curve = {"step": history.step, "loss": history.loss} if history else {"step": [],
                                                                           "loss": []}
    return {"seconds": seconds, "steps": config.steps, "curve": curve,
            "hypotheses": hypotheses, "decode_seconds": decode_seconds}


def cached_run(config: FinetuneConfig) -> chapter_models.Run:
    """What is cached, published and fetched for `config`: the result and the fine-tuned
    weights (none for 0 steps: those are the reference model's, which `load_copy` copies)."""
    return chapter_models.Run("long-inputs", _key(config),
                              weights_path(config) if config.steps else None)


def cached_runs(configs: dict) -> dict:
    """{label: run(config)} for `configs` ({label: FinetuneConfig}), each from the disk when the
    same config and reference model ran before, else the published run, else run here:
    side by side, one thread each (`lib.course.chapter_models.cached`). A result whose weights
    file is gone counts as missing.
    """
    runs = {label: cached_run(config) for label, config in configs.items()}
    return chapter_models.cached(runs, lambda label: run(configs[label]),
                                 "the attention chapter's fine-tuned copies")


def load_copy(config: FinetuneConfig, device=None):
    """The fine-tuned copy `cached_runs` saved for `config` (0 steps: the copy as it starts)."""
    path = weights_path(config)
    if config.steps == 0 and not path.is_file():  # a downloaded run has no weights of its own
        base = reference.pretrained(device=device, progress=False)
        return copy_of(base, config.attention, config.max_len, config.seed).eval()
    if not path.is_file():
        raise FileNotFoundError(f"no fine-tuned copy at {path}: run cached_runs first")
    return checkpoint.load(path, device=device)


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
