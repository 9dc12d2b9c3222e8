"""Teacher-forced training with a seeded, deterministic loop and a history the chapters plot."""

from __future__ import annotations

import math
import random
import time
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, dataclass, field

import torch
from tqdm.auto import tqdm

from lib.data import Batch, make_batches
from lib.device import pick_device
from lib.evaluate import evaluate_bleu
from lib.head import masked_cross_entropy, shortlist_cross_entropy
from lib.model import ModelConfig, Seq2Seq

# What a published model's key says about the code that trained it (lib.course.reference.
# training_key). Bump TRAINING_VERSION with any change of what training computes from the same
# settings: the data pipeline, the model's layers or initialisation, the loss, the optimiser, the
# schedule. tests/test_training_golden.py trains a small model and fails, naming this constant,
# when the result moves while the version stays; a refactor that keeps the result needs no bump.
TRAINING_VERSION = 1
# The torch release the published models are trained with (requirements.txt pins it; a test
# checks that the two agree). Colab's torch differs, and still downloads the published model.
TRAINING_TORCH = "2.13.0"


@dataclass(frozen=True)
class TrainConfig:
    """How to train; stored with the reference model so its cache key changes with it."""

    epochs: float = 10.0  # may be fractional: training stops after that share of the last epoch
    batch_size: int = 128
    lr: float = 2e-3
    warmup_steps: int = 100
    final_lr_fraction: float = 0.05  # cosine decay from lr to lr * this at the last step
    clip: float = 1.0  # gradient-norm clipping: keeps one bad batch from exploding the GRU
    weight_decay: float = 0.0
    teacher_forcing: float = 1.0  # probability of feeding the true previous token
    label_smoothing: float = 0.0  # share of each target's probability spread over all tokens
    shortlist: int = 0  # softmax over the N most frequent words + the batch's (head.py); 0: all
    samples: int = 0  # rare words drawn into that softmax at each step (sampled softmax)
    ema: float = 0.0  # decay of a moving average of the weights, evaluated and returned; 0: off
    seed: int = 0
    eval_every: int = 0  # steps between validation BLEU checks; 0: at the end of each epoch
    eval_sentences: int = 500  # validation sentences used for those checks

    def __post_init__(self):
        for name in ("shortlist", "samples"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be an int >= 0 (0: off), got {value!r}")
        if self.samples and not self.shortlist:
            raise ValueError("samples (rare words drawn into the shortlist softmax) needs a "
                             "shortlist > 0")

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class History:
    """What happened during training, one entry per logged step; chapters plot it."""

    step: list[int] = field(default_factory=list)
    loss: list[float] = field(default_factory=list)  # running mean per target token
    tokens: list[int] = field(default_factory=list)  # target tokens seen so far
    seconds: list[float] = field(default_factory=list)  # wall time since the start
    lr: list[float] = field(default_factory=list)
    eval_step: list[int] = field(default_factory=list)
    eval_seconds: list[float] = field(default_factory=list)
    valid_bleu: list[float] = field(default_factory=list)

    @property
    def tokens_per_second(self) -> float:
        return self.tokens[-1] / self.seconds[-1] if self.seconds else float("nan")

    def log(self, step: int, loss: float, tokens: int, seconds: float, lr: float) -> None:
        self.step.append(step)
        self.loss.append(loss)
        self.tokens.append(tokens)
        self.seconds.append(seconds)
        self.lr.append(lr)

    def log_eval(self, step: int, seconds: float, bleu: float) -> None:
        self.eval_step.append(step)
        self.eval_seconds.append(seconds)
        self.valid_bleu.append(bleu)

    def to_dict(self) -> dict:
        return asdict(self)


class WeightAverage:
    """An exponential moving average of a model's parameters (Polyak & Juditsky 1992).

    With a high learning rate the weights jitter around a good point; their average sits
    closer to it, so it usually scores higher than the last weights, at no extra training.
    After update n: avg <- d * avg + (1 - d) * weights, with d = min(decay, (1 + n) / (10 + n))
    so that the first updates follow the fast-changing early weights closely.
    """

    def __init__(self, model, decay: float):
        if not 0.0 < decay < 1.0:
            raise ValueError(f"ema (the weight-average decay) must be in (0, 1), got {decay!r}")
        self.decay, self.updates = decay, 0
        self.params = list(model.parameters())
        self.average = [p.detach().clone() for p in self.params]

    @torch.no_grad()
    def update(self) -> None:
        self.updates += 1
        d = min(self.decay, (1 + self.updates) / (10 + self.updates))
        for a, p in zip(self.average, self.params):
            a.lerp_(p, 1.0 - d)  # a + (1 - d) * (p - a)

    @torch.no_grad()
    def copy_to_model(self) -> None:
        for a, p in zip(self.average, self.params):
            p.copy_(a)

    @contextmanager
    def applied(self):
        """Temporarily put the averaged weights into the model (e.g. to evaluate it)."""
        saved = [p.detach().clone() for p in self.params]
        self.copy_to_model()
        try:
            yield
        finally:
            with torch.no_grad():
                for s, p in zip(saved, self.params):
                    p.copy_(s)


def new_model(corpus, seed: int, **sizes):
    """A new model for `corpus`'s vocabularies, initialised from `seed`: the same every time.

    `sizes` are ModelConfig fields (emb_dim, hidden_size, ...). Seeding here, right before the
    layers draw their initial weights, is part of what training computes.
    """
    config = ModelConfig(len(corpus.src_vocab), len(corpus.tgt_vocab), **sizes)
    torch.manual_seed(seed)
    return Seq2Seq(config, corpus.src_vocab, corpus.tgt_vocab)


def seed_everything(seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)


def lr_at(step: int, total: int, cfg: TrainConfig) -> float:
    """Linear warm-up, then cosine decay to `final_lr_fraction * lr`."""
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    progress = (step - cfg.warmup_steps) / max(1, total - cfg.warmup_steps)
    floor = cfg.final_lr_fraction
    return cfg.lr * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * min(1.0, progress))))


def batch_loss(model, batch: Batch, teacher_forcing: float = 1.0,
               generator: torch.Generator | None = None,
               label_smoothing: float = 0.0, shortlist: int = 0, samples: int = 0
               ) -> torch.Tensor:
    """Mean cross-entropy per target token of one batch.

    With teacher_forcing == 1 the whole target runs through the decoder GRU in one call.
    Below 1 the decoder must step: at each step and for each sentence, a coin with
    P(heads) = teacher_forcing decides between the true previous token and the model's own
    previous prediction. With `shortlist` > 0 the softmax runs over the shortlist (plus
    `samples` rare words drawn at random: `lib.head.shortlist_cross_entropy`); the model's own
    predictions still use every word.
    """
    head = model.decoder.head
    _, state, context = model.encode(batch.src, batch.src_lengths)
    if teacher_forcing >= 1.0:
        states, _ = model.decoder.features(batch.tgt_in, state, context)  # (B, T, H)
    else:
        B, T = batch.tgt_in.shape
        prev = batch.tgt_in[:, :1]  # (B, 1) all <sos>
        steps = []
        for t in range(T):
            s, state = model.decoder.features(prev, state, context)  # (B, 1, H)
            steps.append(s)
            if t + 1 < T:
                coin = torch.rand(B, generator=generator, device="cpu") < teacher_forcing
                with torch.no_grad():
                    own = head(s).argmax(-1)  # (B, 1) the model's own next word
                prev = torch.where(coin.to(own.device).unsqueeze(1),
                                   batch.tgt_in[:, t + 1:t + 2], own)
        states = torch.cat(steps, dim=1)  # (B, T, H)
    if shortlist:
        return shortlist_cross_entropy(head, states, batch.tgt_out, shortlist,
                                       label_smoothing=label_smoothing, samples=samples)
    return masked_cross_entropy(head(states), batch.tgt_out, label_smoothing=label_smoothing)


def make_optimizer(model, config: TrainConfig, device: torch.device) -> torch.optim.Adam:
    """Adam over every parameter. The fused kernel updates all parameters in one pass instead
    of one per tensor: on a CPU the optimizer is a large share of a training step."""
    fused = {"fused": True} if device.type in ("cpu", "cuda") else {}
    return torch.optim.Adam(model.parameters(), lr=config.lr, weight_decay=config.weight_decay,
                            **fused)


def set_lr(opt: torch.optim.Optimizer, lr: float) -> None:
    for group in opt.param_groups:
        group["lr"] = lr


def train_step(model, batch: Batch, opt: torch.optim.Optimizer, config: TrainConfig,
               coin_gen: torch.Generator, average: WeightAverage | None) -> float:
    """One update: the batch's loss, its gradient, clipped, one Adam step; returns the loss."""
    model.train()
    loss = batch_loss(model, batch, config.teacher_forcing, coin_gen, config.label_smoothing,
                      config.shortlist, config.samples)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), config.clip)
    opt.step()
    if average is not None:
        average.update()
    return loss.item()


def validate(model, valid_pairs, config: TrainConfig, average: WeightAverage | None) -> float:
    """Validation BLEU of the weights training returns (the average, when there is one)."""
    with average.applied() if average is not None else nullcontext():
        return evaluate_bleu(model, valid_pairs[:config.eval_sentences])


def train(model, train_examples, config: TrainConfig = TrainConfig(), valid_pairs=None,
          device=None, progress: bool = True, log_every: int = 20, on_eval=None) -> History:
    """Train `model` in place on encoded (src ids, tgt ids) examples; return the history.

    Same seed, same data, same device and thread count -> bit-identical weights on the CPU.
    `on_eval(model, history)` is called after each validation check (e.g. to log or snapshot).
    With `config.ema` > 0 the validation checks, `on_eval` and the returned model use the
    moving average of the weights (`WeightAverage`) instead of the last weights.
    """
    device = pick_device(device)
    model.to(device)
    seed_everything(config.seed)
    coin_gen = torch.Generator().manual_seed(config.seed + 1)  # teacher forcing's coins
    per_epoch = math.ceil(len(train_examples) / config.batch_size)
    total = int(round(config.epochs * per_epoch))  # steps; the last epoch may be partial
    opt = make_optimizer(model, config, device)
    average = WeightAverage(model, config.ema) if config.ema else None
    hist = History()
    step, seen, running = 0, 0, None
    start = time.perf_counter()
    bar = tqdm(total=total, desc="training", disable=not progress, unit="batch")
    for epoch in range(math.ceil(config.epochs)):
        batches = make_batches(train_examples, config.batch_size, shuffle=True,
                               seed=config.seed * 1000 + epoch)
        for batch in batches:
            if step >= total:
                break
            lr = lr_at(step, total, config)
            set_lr(opt, lr)
            batch = batch.to(device)
            value = train_step(model, batch, opt, config, coin_gen, average)
            step += 1
            seen += batch.n_tokens
            running = value if running is None else 0.95 * running + 0.05 * value
            if step % log_every == 0 or step == total:
                hist.log(step, running, seen, time.perf_counter() - start, lr)
                bar.set_postfix(loss=f"{running:.3f}")
            bar.update(1)
            end_of_epoch = step % per_epoch == 0 or step == total
            due = step % config.eval_every == 0 if config.eval_every else end_of_epoch
            if valid_pairs and due:
                bleu = validate(model, valid_pairs, config, average)
                hist.log_eval(step, time.perf_counter() - start, bleu)
                bar.set_postfix(loss=f"{running:.3f}", bleu=f"{bleu:.1f}")
                if on_eval is not None:
                    with average.applied() if average is not None else nullcontext():
                        on_eval(model, hist)
    bar.close()
    if average is not None:
        average.copy_to_model()
    model.eval()
    return hist
