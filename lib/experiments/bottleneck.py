"""The single context vector put to a clean test (the attention chapter): reverse a sequence.

The fixed-vector decoder of `lib.model.Seq2Seq` sees its source only through the encoder's final
hidden state, a fixed number of values whatever the source length. To see whether that limits
the model, give it a task whose only difficulty is the length: write a random sequence of digits
backwards (`lib.experiments.reversal`). Every digit is equally likely at every position, so a
sequence of
L digits carries L * log2(8) bits, and all of them must pass through the context vector. An
attention decoder of the same size (`attention=True`) reads every encoder output state instead.
Both train on every length they are tested on, with the same seed, data and number of steps.

    config = BottleneckConfig(attention=True)      # sizes, lengths, training budget, decoder
    model, history = train_reversal(config)        # lib.experiments.reversal's model,
    lib.train.train
    table = accuracy_by_length(model, config)      # {length: Accuracy(sequence, token, n)}

The model and the data are `lib.experiments.reversal`'s and the training loop is `lib.train.train`,
so it
is the same model family and the same code as the course's translator, only smaller.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import NamedTuple

import torch

import lib.train
from lib.attention import attention_weights
from lib.course import memo
from lib.data import EOS, pad
from lib.device import one_thread
from lib.experiments.reversal import reversal_examples, reversal_model
from lib.search import greedy
from lib.train import TrainConfig, train
from lib.validate import is_int


@dataclass(frozen=True)
class BottleneckConfig:
    """One run: the size of the context vector, the lengths, and the training budget."""

    hidden: int = 64  # the context vector's size (one GRU layer)
    min_len: int = 3  # shortest sequence, in digits, in training and in the test
    max_len: int = 24  # longest
    n_train: int = 48_000  # training sequences, lengths uniform in min_len..max_len
    epochs: float = 8.0  # 375 batches an epoch: 3,000 steps
    batch_size: int = 128
    lr: float = 3e-3
    seed: int = 0
    attention: bool = False  # True: the decoder attends over every encoder output state

    def __post_init__(self):
        for name in ("hidden", "min_len", "max_len", "n_train", "batch_size"):
            value = getattr(self, name)
            if not is_int(value) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        if self.min_len > self.max_len:
            raise ValueError(f"min_len ({self.min_len}) must not exceed max_len "
                             f"({self.max_len})")
        if not isinstance(self.attention, bool):
            raise ValueError(f"attention must be True or False, got {self.attention!r}")

    @property
    def steps(self) -> int:
        """Training steps: epochs x batches per epoch (lib.train.train's count)."""
        return int(round(self.epochs * -(-self.n_train // self.batch_size)))


class Accuracy(NamedTuple):
    sequence: float  # share of outputs equal to the target, length included
    token: float  # share of target positions whose digit the output has at that position
    n: int  # sequences scored


def train_reversal(config: BottleneckConfig = BottleneckConfig()):
    """Build `lib.experiments.reversal`'s model and train it with `lib.train.train` on the CPU, in
    one
    thread: a model this small gains nothing from more, and on a busy machine several threads
    wait for each other. Returns (model, History); the same config gives the same weights.
    """
    model = reversal_model(config.seed, hidden=config.hidden, attention=config.attention,
                           max_len=config.max_len + 5)
    examples = reversal_examples(config.n_train, config.seed, config.min_len, config.max_len)
    steps_per_epoch = -(-config.n_train // config.batch_size)
    with one_thread():
        history = train(model, examples,
                        TrainConfig(epochs=config.epochs, batch_size=config.batch_size,
                                    lr=config.lr, warmup_steps=min(50, steps_per_epoch),
                                    seed=config.seed),
                        device="cpu", progress=False)
    return model, history


def score_outputs(outputs: list[list[int]], targets: list[list[int]]) -> Accuracy:
    """Sequence and token accuracy of decoded outputs (ids, <eos> already cut off)."""
    if len(outputs) != len(targets) or not targets:
        raise ValueError(f"need as many outputs as targets (at least one), got "
                         f"{len(outputs)} and {len(targets)}")
    exact = sum(list(o) == list(t) for o, t in zip(outputs, targets))
    right = sum(a == b for o, t in zip(outputs, targets) for a, b in zip(o, t))
    return Accuracy(exact / len(targets), right / sum(len(t) for t in targets), len(targets))


@torch.no_grad()
def decode(model, sources: list[list[int]]) -> list[list[int]]:
    """Greedy outputs (ids, up to the first <eos>) for a list of source id lists."""
    src = pad(sources).to(model.device)  # (B, S)
    lengths = torch.tensor([len(s) for s in sources])  # (B,)
    cap = max(len(s) for s in sources) + 5  # room for <eos> and for a run that overshoots
    ids = greedy(model, src, lengths, max_len=cap).tolist()  # (B, T)
    return [row[:row.index(EOS)] if EOS in row else row for row in ids]


def accuracy_by_length(model, config: BottleneckConfig, n_per_length: int = 100,
                       seed: int = 1) -> dict[int, Accuracy]:
    """{length: Accuracy} of greedy decoding on fresh sequences of each length in the config's
    range (drawn with seeds that training never used)."""
    if not is_int(n_per_length) or n_per_length < 1:
        raise ValueError(f"n_per_length must be an integer >= 1, got {n_per_length!r}")
    model.eval()
    table = {}
    for length in range(config.min_len, config.max_len + 1):
        examples = reversal_examples(n_per_length, 10_000 * seed + length, length, length)
        outputs = decode(model, [s for s, _ in examples])
        table[length] = score_outputs(outputs, [t for _, t in examples])
    return table


def run_test(config: BottleneckConfig, example_len: int = 20) -> dict:
    """Train, then test every length -> a JSON result (what `cached_tests` keeps on disk):
    seconds, steps and final loss of training, the loss curve {"step": [...], "loss": [...]},
    {length: [sequence, token, n]} accuracies, and one sequence of `example_len` digits with
    the model's answer, as text, and (attention models) the weights (T, S) it wrote it with."""
    start = time.perf_counter()
    model, history = train_reversal(config)
    seconds = time.perf_counter() - start
    with one_thread():
        table = accuracy_by_length(model, config)
        src, target = reversal_examples(1, 7, example_len, example_len)[0]
        out = decode(model, [src])[0]
        weights = None
        if config.attention:
            a = attention_weights(model, torch.tensor([src]), torch.tensor([len(src)]),
                                  torch.tensor([out + [EOS]]))  # (1, T, S)
            weights = [[round(w, 5) for w in row] for row in a[0].tolist()]
    return {"seconds": seconds, "steps": history.step[-1], "loss": history.loss[-1],
            "curve": {"step": history.step, "loss": history.loss},
            "table": {str(n): list(a) for n, a in table.items()},
            "example": {"input": " ".join(model.src_vocab.decode(src)),
                        "target": " ".join(model.tgt_vocab.decode(target)),
                        "output": " ".join(model.tgt_vocab.decode(out))},
            "attention": weights}


def bucket_accuracy(table: dict, buckets) -> dict:
    """{(lo, hi): Accuracy} pooled over the lengths lo..hi of `table` ({length: Accuracy}):
    the share of all the bucket's sequences reversed exactly, and of all its positions right."""
    out = {}
    for lo, hi in buckets:
        rows = [(n, a) for n, a in table.items() if lo <= n <= hi]
        if not rows:
            raise ValueError(f"no length of the table falls in {lo}..{hi}")
        count = sum(a.n for _, a in rows)
        positions = sum(n * a.n for n, a in rows)
        out[(lo, hi)] = Accuracy(sum(a.sequence * a.n for _, a in rows) / count,
                                 sum(a.token * n * a.n for n, a in rows) / positions, count)
    return out


def longest_reversed(table: dict, share: float = 0.5) -> int:
    """The longest length L such that at every length up to L at least `share` of the test
    sequences are reversed exactly: where a model breaks (the shortest length minus one when it
    fails at once)."""
    if not 0 < share <= 1:
        raise ValueError(f"share must be above 0 and at most 1, got {share!r}")
    lengths = sorted(table)
    if not lengths:
        raise ValueError("an empty table has no lengths")
    longest = lengths[0] - 1
    for n in lengths:
        if table[n].sequence < share:
            break
        longest = n
    return longest


def cached_tests(configs: dict) -> dict:
    """{label: (table, result)}: `run_test` for each of `configs` ({label: BottleneckConfig}),
    from the disk when the same config ran before, the missing ones side by side
    (`lib.course.memo.cached_all`, keyed by the config and lib.train.TRAINING_VERSION, as the
    course's models are: not the code's text, so a change of what the run computes bumps it).

    table is {length: Accuracy}, result the whole JSON result.
    """
    keys = {label: {**asdict(c), "training_version": lib.train.TRAINING_VERSION}
            for label, c in configs.items()}  # each trains on one thread
    results = memo.cached_all("bottleneck-reversal", keys,
                              lambda label: run_test(configs[label]))
    return {label: ({int(n): Accuracy(s, t, int(k)) for n, (s, t, k) in r["table"].items()}, r)
            for label, r in results.items()}
