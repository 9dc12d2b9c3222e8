"""Timing training work fairly: the best wall time of a forward and backward pass, in turns.

"The prediction head" times the head's loss over all words against a shortlist, and "Teacher
forcing" times one decoder call against one call per token. Both ask the same question (how long
does this loss take to compute and differentiate?) and both run on machines whose load changes
from moment to moment, so `best_times` measures the candidates in turns and keeps each one's
best time: a busy moment then slows every candidate alike, and the best of a few rounds is the
least disturbed.
"""

from __future__ import annotations

import math
import random
import statistics
import time
from collections.abc import Callable
from typing import NamedTuple

import torch

from lib.data import EOS, SOS
from lib.device import one_thread
from lib.validate import is_int


def _sync() -> None:
    """Wait for the GPU: its kernels run asynchronously, so a clock read would come too early."""
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def best_times(fns: dict[str, Callable[[], torch.Tensor]], rounds: int = 3,
               model: torch.nn.Module | None = None) -> dict[str, float]:
    """Best wall time in seconds of `fn().backward()` for each named fn, measured in turns.

    Each fn takes no argument and returns a scalar loss that requires grad. With `model`, its
    gradients are cleared before every pass and at the end (timing leaves no trace), and on a
    GPU the model runs in training mode while it is timed, because cuDNN's GRU computes
    gradients only in training mode; its own mode is restored afterwards. Only the time is kept.
    """
    if not isinstance(fns, dict) or not fns:
        raise ValueError("fns must be a non-empty dict {name: function returning a loss}")
    for name, fn in fns.items():
        if not callable(fn):
            raise TypeError(f"fns[{name!r}] must be a function, got {type(fn).__name__}")
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise ValueError(f"rounds must be an integer >= 1, got {rounds!r}")
    was_training = model.training if model is not None else None
    if model is not None and torch.cuda.is_available():
        model.train()
    best = {name: math.inf for name in fns}
    try:
        for _ in range(rounds):
            for name, fn in fns.items():  # in turns: a busy moment hits every candidate
                if model is not None:
                    model.zero_grad(set_to_none=True)
                _sync()
                start = time.perf_counter()
                loss = fn()
                if not (torch.is_tensor(loss) and loss.numel() == 1 and loss.requires_grad):
                    raise ValueError(f"fns[{name!r}] must return a scalar loss that requires "
                                     f"grad, got {_describe(loss)}")
                loss.backward()
                _sync()
                best[name] = min(best[name], time.perf_counter() - start)
    finally:
        if model is not None:
            model.zero_grad(set_to_none=True)
            model.train(was_training)
    return best


def _describe(value) -> str:
    if not torch.is_tensor(value):
        return type(value).__name__
    if value.numel() != 1:
        return f"a tensor of shape {tuple(value.shape)}"
    return "a tensor without grad (computed under torch.no_grad, or from detached inputs?)"


# ---------------------------------------------------------------------------------------------
# Time against size: how a decoder step's cost grows with the source length
# ---------------------------------------------------------------------------------------------
#
# "What attention costs" asks whether a step's time grows with the source length S, and by how
# much. On a shared machine one timing can be off by a factor of ten, so `times_by_size` keeps
# every repeat (the median of a few is robust to a busy moment, the minimum is not robust to a
# lucky one), measures on one thread, and times all candidates at all sizes in each repeat, in a
# shuffled order of sizes, so a slow stretch of the machine does not land on one size or one
# candidate. `slope_interval` then fits a line through the medians and bootstraps the repeats.


class Slope(NamedTuple):
    """A least-squares line through the per-size medians, and a bootstrap interval of its slope."""

    slope: float  # seconds per unit of size
    low: float  # the interval's ends, same unit
    high: float
    intercept: float  # seconds at size 0


def times_by_size(make: dict[str, Callable[[int], Callable[[], object]]], sizes,
                  repeats: int = 7, number: int = 5, seed: int = 0
                  ) -> dict[str, list[list[float]]]:
    """Seconds per call of each candidate at each size: times[name][i][r] for sizes[i], repeat r.

    `make[name](size)` prepares what is not to be timed (e.g. encoding a source) and returns a
    function of no argument, which is called `number` times per measurement. Runs on one CPU
    thread (`lib.device.one_thread`); every repeat measures every candidate at
    every size, the
    sizes in a new order drawn from `seed`. One untimed call per candidate and size warms up.
    """
    if not isinstance(make, dict) or not make:
        raise ValueError("make must be a non-empty dict {name: function of the size}")
    for name, fn in make.items():
        if not callable(fn):
            raise TypeError(f"make[{name!r}] must be a function of the size, got "
                            f"{type(fn).__name__}")
    sizes = list(sizes)
    if len(sizes) < 2 or len(set(sizes)) != len(sizes):
        raise ValueError(f"sizes must hold at least two different sizes, each once, got {sizes}")
    for name, value in (("repeats", repeats), ("number", number)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    rng = random.Random(seed)
    with one_thread():
        calls = {(name, i): build(size) for name, build in make.items()
                 for i, size in enumerate(sizes)}
        for fn in calls.values():  # warm-up: first calls allocate and fill caches
            fn()
        times = {name: [[] for _ in sizes] for name in make}
        for _ in range(repeats):
            order = list(range(len(sizes)))
            rng.shuffle(order)
            for i in order:
                for name in make:  # every candidate at this size, back to back
                    fn = calls[name, i]
                    _sync()
                    start = time.perf_counter()
                    for _ in range(number):
                        fn()
                    _sync()
                    times[name][i].append((time.perf_counter() - start) / number)
    return times


def fit_line(xs, ys) -> tuple[float, float]:
    """Least-squares line y = slope * x + intercept -> (slope, intercept)."""
    xs, ys = [float(x) for x in xs], [float(y) for y in ys]
    if len(xs) != len(ys):
        raise ValueError(f"need as many x as y, got {len(xs)} and {len(ys)}")
    if len(set(xs)) < 2:
        raise ValueError(f"a line needs at least two different x, got {xs}")
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = (sum((x - mx) * (y - my) for x, y in zip(xs, ys))
             / sum((x - mx) ** 2 for x in xs))
    return slope, my - slope * mx


def slope_interval(sizes, times: list[list[float]], rounds: int = 1000, level: float = 0.95,
                   seed: int = 0) -> Slope:
    """The line through the median time at each size, with a bootstrap interval of its slope.

    times[i] holds the repeats at sizes[i] (one candidate of `times_by_size`). Each bootstrap
    round draws whole repeats with replacement (a repeat's timings share the machine's state at
    that moment), takes the medians again and refits; the interval holds the middle `level` of
    those slopes.
    """
    sizes = list(sizes)
    if len(times) != len(sizes):
        raise ValueError(f"need one list of repeats per size: {len(sizes)} sizes, "
                         f"{len(times)} lists")
    n = {len(row) for row in times}
    if len(n) != 1 or 0 in n:
        raise ValueError("every size needs the same number of repeats, at least one")
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level!r}")
    repeats = n.pop()

    def fit(draw) -> tuple[float, float]:
        return fit_line(sizes, [statistics.median(row[r] for r in draw) for row in times])

    slope, intercept = fit(range(repeats))
    rng = random.Random(seed)
    slopes = sorted(fit([rng.randrange(repeats) for _ in range(repeats)])[0]
                    for _ in range(rounds))
    tail = (1 - level) / 2
    return Slope(slope, slopes[int(tail * rounds)],
                 slopes[min(rounds - 1, math.ceil((1 - tail) * rounds) - 1)], intercept)


class Crossing(NamedTuple):
    """Where one fitted line reaches twice another: at the point fits, and the range at the ends
    of the two slopes' intervals."""

    at: float  # the point fits' crossing, in units of size
    earliest: float  # with the steepest slope of the one and the flattest of the other
    latest: float  # the other way round; inf when that pair of ends never crosses


def doubling_length(base: Slope, other: Slope) -> Crossing | None:
    """The size at which `other`'s line reaches twice `base`'s: a0 + a1 S = 2 (b0 + b1 S).

    For the attention chapter's decoder steps, `base` is the fixed-vector step and `other` the
    attention step: the source length at which attention's extra time equals a whole fixed step.
    None when the timings give no positive size: `other`'s slope interval is not above zero (its
    growth is not measured), it does not grow faster than twice `base`, or it already takes twice
    as long at size 0. The range keeps the intercepts and moves only the slopes to the ends of
    their intervals; it always holds the point fits' crossing (a bootstrap interval need not hold
    its point fit)."""
    head = 2 * base.intercept - other.intercept  # how far other is below twice base at S = 0
    growth = other.slope - 2 * base.slope  # how fast it closes the gap, per unit of size
    if other.low <= 0 or head <= 0 or growth <= 0:
        return None
    at = head / growth
    steepest = other.high - 2 * base.low
    earliest = min(at, head / steepest) if steepest > 0 else at
    slowest = other.low - 2 * base.high
    latest = max(at, head / slowest) if slowest > 0 else math.inf
    return Crossing(at, earliest, latest)


def _encoded(model, source_len: int, batch: int, seed: int):
    """Random sources (B, S) encoded by `model`: (state (L, B, H), context or Memory, prev (B,))."""
    if model.training:
        raise ValueError("the model is in training mode (dropout would be timed too): call "
                         "model.eval() first")
    for name, value in (("source_len", source_len), ("batch", batch)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    gen = torch.Generator().manual_seed(seed)
    src = torch.randint(4, len(model.src_vocab), (batch, source_len), generator=gen)  # (B, S)
    lengths = torch.full((batch,), source_len)  # (B,)
    with torch.no_grad():
        _, state, context = model.encode(src.to(model.device), lengths)  # (L, B, H), c/Memory
    return state, context, torch.full((batch,), SOS, device=model.device)


def decoder_step(model, source_len: int, batch: int = 16, seed: int = 0) -> Callable[[], None]:
    """One decoder step of `model` for `batch` sources of `source_len` tokens, ready to time.

    The sources (random ids, drawn from `seed`) are encoded here, outside the clock; the
    returned function runs the step from <sos> under no_grad (greedy decoding's step).
    """
    state, context, prev = _encoded(model, source_len, batch, seed)

    def step() -> None:
        with torch.no_grad():
            model.decoder.step(prev, state, context)  # logits (B, V), state (L, B, H)

    return step


def score_tanh(model, source_len: int, batch: int = 16, seed: int = 0) -> Callable[[], None]:
    """Only tanh(W_s s + W_h h_j) of an attention step, ready to time like `decoder_step`: the
    addition and the tanh over (B, S, A) numbers, the part of eq. (9) with no multiply-add."""
    if not model.attends:
        raise ValueError("this model has no attention (ModelConfig.attention=False)")
    state, memory, _ = _encoded(model, source_len, batch, seed)
    with torch.no_grad():
        query = model.decoder.attention.W_s(state[-1]).unsqueeze(1)  # (B, 1, A) W_s s

    def part() -> None:
        with torch.no_grad():
            torch.tanh(query + memory.keys)  # (B, S, A)

    return part


def decoder_step_macs(model, source_len: int) -> dict[str, int]:
    """Multiply-adds of one decoder step for one sentence, counted from the layers' shapes.

    "gru": every GRU layer multiplies its input and its state by its weight matrices
    (weight_ih and weight_hh: 3H x input and 3H x H); "head": W_p, H x V; "attention": W_s s
    (A x H), the score v . tanh(.) at each of the S positions (A each) and the weighted sum
    (H each), 0 without attention. W_h h_j is computed once per sentence, not per step, and
    biases, tanh, exp and additions are not multiply-adds.
    """
    if isinstance(source_len, bool) or not isinstance(source_len, int) or source_len < 1:
        raise ValueError(f"source_len must be an integer >= 1, got {source_len!r}")
    decoder = model.decoder
    gru = sum(p.numel() for name, p in decoder.rnn.named_parameters()
              if name.startswith("weight_"))
    head = decoder.head.proj.weight.numel()
    attention = 0
    if decoder.attention is not None:  # its layers are counted, on any object with a decoder
        a = decoder.attention
        attention = (a.W_s.weight.numel() + source_len * a.v.weight.numel()
                     + source_len * a.W_h.in_features)
    return {"gru": gru, "head": head, "attention": attention}


@torch.no_grad()
def step_seconds(model, source_len: int, batch: int = 32, steps: int = 20,
                 rounds: int = 5) -> float:
    """Best time in seconds of one decoder step for `batch` sentences of `source_len` tokens.

    The encoder runs once, outside the clock; then `steps` decoder steps are timed, `rounds`
    times, and the best round divided by `steps` is kept (a busy moment slows a round, never
    speeds it up).
    """
    for name, value in (("source_len", source_len), ("batch", batch), ("steps", steps),
                        ("rounds", rounds)):
        if not is_int(value) or value < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    gen = torch.Generator().manual_seed(source_len)
    src = torch.randint(4, len(model.src_vocab), (batch, source_len), generator=gen)
    src = src.to(model.device)  # (B, S)
    lengths = torch.full((batch,), source_len)  # (B,)
    _, state0, context = model.encode(src, lengths)
    prev = torch.full((batch,), SOS, device=model.device)  # (B,)
    best = float("inf")
    for _ in range(rounds):
        state = state0
        if model.device.type == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(steps):
            logits, state = model.decoder.step(prev, state, context)  # (B, V)
            prev = logits.argmax(-1).clamp(min=EOS)  # (B,) feed something real
        if model.device.type == "cuda":
            torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - start) / steps)
    return best
