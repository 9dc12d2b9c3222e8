"""Does a model align? Measures of attention weights over many outputs, not one heatmap.

One heatmap shows one decoding; whether a model aligns output words with source words is a claim
about all of its outputs. These functions take the weights a_{t,j} with which each output row t
was written (`lib.attention.attention_weights`, one (T, S) tensor per source) and measure every
row against what uniform weights, a_{t,j} = 1/S, would give:

- **peak**: the weight on the row's strongest column; uniform weights give 1/S;
- **entropy**: -sum_j a_{t,j} log a_{t,j}, as a share of log S, the entropy of uniform
  weights (1: uniform, 0: all the weight on one column);
- **last**: whether the strongest column is the last source token, whose state is the summary
  a fixed-vector decoder reads (if the strongest column fell anywhere at random, 1/S of rows);
- **block**: on a source joined from sentences (`lib.experiments.joined`), the weight on the
sentence the row
  draws on most; uniform weights put the largest sentence's share of the columns there;
- **current**: on a joined source, whether that sentence is the one being translated, judged by
  the row's place in the output: row t of T sits at source column floor((t + 1/2) S / T), and
  the sentence holding that column is the current one (a sentence drawn at random: 1/k of rows
  for k sentences). A model that translates the sentences in order, one at a time, scores high;
  one whose strongest sentence is always the same scores about 1/k;
- **last part**: whether that sentence is the last one of the source.

And one measure with a right answer: where a row looks while it writes a name or a number it
copies from the source (`copy_alignment`): on that word's column, the one after it, or elsewhere.

    weights = greedy_weights(model, sources)                   # [(T, S)], one per source
    parts = [part_lengths(p) for p in group_parts(held_out, groups, k_max)]
    stats = summarize(weights, parts)                          # Alignment: means over all rows
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import torch

from lib import search
from lib.attention import attention_weights
from lib.data import EOS, PAD, tokenize
from lib.experiments.joined import joined_groups
from lib.validate import is_int

# ---------------------------------------------------------------------------------------------
# One source: measures per row of its weights (T, S)
# ---------------------------------------------------------------------------------------------


def _check_weights(weights: torch.Tensor) -> None:
    if not torch.is_tensor(weights) or weights.dim() != 2 or 0 in weights.shape:
        raise ValueError(f"weights must be a (T, S) tensor with at least one row and column, got "
                         f"{getattr(weights, 'shape', type(weights).__name__)}")


def _check_distribution(weights: torch.Tensor) -> None:
    """The measures compare with a uniform row, so each row must be a distribution over S."""
    _check_weights(weights)
    w = weights.detach().to(torch.float64)
    if not torch.isfinite(w).all():
        raise ValueError("weights hold NaN or infinite values: each row must be a distribution")
    if (w < 0).any():
        raise ValueError("weights hold negative values: each row must be a distribution")
    sums = w.sum(-1)
    off = (sums - 1).abs() > 1e-2  # room for half-precision rounding
    if off.any():
        row = int(off.nonzero()[0])
        raise ValueError(f"weights row {row} sums to {float(sums[row]):.4g}, not 1: each row "
                         f"must be a distribution over the source")


def row_peak(weights: torch.Tensor) -> torch.Tensor:
    """weights (T, S) -> (T,) the weight on each row's strongest column."""
    _check_weights(weights)
    return weights.max(dim=-1).values


def row_entropy(weights: torch.Tensor) -> torch.Tensor:
    """weights (T, S) -> (T,) each row's entropy -sum_j a_j log a_j in nats (0 log 0 = 0)."""
    _check_weights(weights)
    return -torch.special.xlogy(weights, weights).sum(dim=-1)


def entropy_ratio(weights: torch.Tensor) -> torch.Tensor:
    """weights (T, S) -> (T,) each row's entropy as a share of log S, uniform weights' entropy:
    1 for uniform weights, 0 for all the weight on one column. Needs S >= 2."""
    _check_weights(weights)
    if weights.size(1) < 2:
        raise ValueError("a source of one token has only one way to spread its weight: "
                         "entropy_ratio needs S >= 2")
    return row_entropy(weights) / math.log(weights.size(1))


def strongest_is_last(weights: torch.Tensor) -> torch.Tensor:
    """weights (T, S) -> (T,) bool: whether each row's strongest column is the last one."""
    _check_weights(weights)
    return weights.argmax(dim=-1) == weights.size(1) - 1


def _check_parts(part_lengths, S: int) -> None:
    if not part_lengths or any(isinstance(n, bool) or not isinstance(n, int) or n < 1
                               for n in part_lengths):
        raise ValueError(f"part_lengths must be token counts >= 1, got {part_lengths!r}")
    if sum(part_lengths) != S:
        raise ValueError(f"the parts hold {sum(part_lengths)} tokens, the weights {S} columns")


def block_mass(weights: torch.Tensor, part_lengths: list[int]) -> torch.Tensor:
    """weights (T, S), the token counts of the source's parts in order (summing to S) -> (T,)
    the weight each row puts on the part it draws on most."""
    _check_weights(weights)
    _check_parts(part_lengths, weights.size(1))
    per_part = torch.stack([chunk.sum(dim=-1)
                            for chunk in weights.split(list(part_lengths), dim=-1)], dim=-1)
    return per_part.max(dim=-1).values  # (T,)


def _top_part(weights: torch.Tensor, part_lengths: list[int]) -> torch.Tensor:
    per_part = torch.stack([chunk.sum(dim=-1)
                            for chunk in weights.split(list(part_lengths), dim=-1)], dim=-1)
    return per_part.argmax(dim=-1)  # (T,) the part each row draws on most (the first on a tie)


def positional_columns(T: int, S: int) -> torch.Tensor:
    """(T,) the source column a reader by position alone would pick for each of T output rows:
    row t sits at column floor((t + 1/2) S / T), the diagonal of a T x S map."""
    if T < 1 or S < 1:
        raise ValueError(f"need at least one row and one column, got T={T}, S={S}")
    return ((torch.arange(T, dtype=torch.float64) + 0.5) * S / T).floor().long()


def current_part(T: int, part_lengths: list[int]) -> torch.Tensor:
    """(T,) the part being translated at each of T output rows, by the row's place in the output:
    row t sits at source column floor((t + 1/2) S / T), and the part holding that column."""
    if T < 1:
        raise ValueError(f"need at least one output row, got T={T}")
    _check_parts(part_lengths, sum(part_lengths) if part_lengths else 0)
    column = positional_columns(T, sum(part_lengths))
    ends = torch.tensor(part_lengths).cumsum(0)  # the first column after each part
    return torch.bucketize(column, ends, right=True)


def on_current_part(weights: torch.Tensor, part_lengths: list[int]) -> torch.Tensor:
    """weights (T, S), the parts' token counts -> (T,) bool: whether the part each row draws on
    most is the part being translated at that row (`current_part`)."""
    _check_weights(weights)
    _check_parts(part_lengths, weights.size(1))
    return _top_part(weights, part_lengths) == current_part(weights.size(0), part_lengths)


def on_last_part(weights: torch.Tensor, part_lengths: list[int]) -> torch.Tensor:
    """weights (T, S), the parts' token counts -> (T,) bool: whether the part each row draws on
    most is the source's last part."""
    _check_weights(weights)
    _check_parts(part_lengths, weights.size(1))
    return _top_part(weights, part_lengths) == len(part_lengths) - 1


def uniform_block(part_lengths: list[int]) -> float:
    """What block_mass gives for uniform weights: the largest part's share of the tokens."""
    _check_parts(part_lengths, sum(part_lengths) if part_lengths else 0)
    return max(part_lengths) / sum(part_lengths)


# ---------------------------------------------------------------------------------------------
# Many sources: means over all their rows
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Alignment:
    """Means over every output row of every source (a long output counts once per row).

    sources, rows: how many were measured (sources of one token are left out: their only
    column gets all the weight whatever the model does). peak / uniform_peak: the strongest
    column's weight, and 1/S. entropy: the row entropy as a share of log S. last / chance_last:
    the share of rows whose strongest column is the last source token, and the share a column
    drawn at random would give (the mean of 1/S). block / uniform_block, block_rows: on the
    sources of two parts or more only, the weight on the part a row draws on most, what uniform
    weights put there, and how many rows that is (0 when no source has two parts; the block
    means are then nan). current / chance_current / last_part, on the same rows: the share
    whose strongest sentence is the one being translated (`on_current_part`), the share a
    sentence drawn at random would give (the mean of 1/k), and the share whose strongest
    sentence is the last one (nan when no source has two parts).
    """

    sources: int
    rows: int
    peak: float
    uniform_peak: float
    entropy: float
    last: float
    chance_last: float
    block: float
    uniform_block: float
    block_rows: int
    current: float = math.nan
    chance_current: float = math.nan
    last_part: float = math.nan


def summarize(weights: list[torch.Tensor], part_lengths: list[list[int]] | None = None
              ) -> Alignment:
    """`weights`: one (T, S) tensor per source, its written rows only; `part_lengths`: for each
    source, its parts' token counts (None: every source is one part) -> an `Alignment`."""
    if part_lengths is None:
        part_lengths = [[w.size(1)] for w in weights]
    if len(part_lengths) != len(weights):
        raise ValueError(f"{len(weights)} weight tensors for {len(part_lengths)} part lists")
    peaks, uniform, entropy, last, blocks, uniform_blocks = [], [], [], [], [], []
    current, chance_current, last_part = [], [], []
    for w, parts in zip(weights, part_lengths):
        _check_distribution(w)
        _check_parts(parts, w.size(1))
        T, S = w.shape
        if S < 2:
            continue
        w = w.detach().to(torch.float64)
        peaks.append(row_peak(w))
        uniform.append(torch.full((T,), 1.0 / S, dtype=torch.float64))
        entropy.append(entropy_ratio(w))
        last.append(strongest_is_last(w).to(torch.float64))
        if len(parts) >= 2:
            blocks.append(block_mass(w, parts))
            uniform_blocks.append(torch.full((T,), uniform_block(parts), dtype=torch.float64))
            current.append(on_current_part(w, parts).to(torch.float64))
            chance_current.append(torch.full((T,), 1.0 / len(parts), dtype=torch.float64))
            last_part.append(on_last_part(w, parts).to(torch.float64))
    if not peaks:
        raise ValueError("no source of two tokens or more to measure")

    def mean(chunks):
        return float(torch.cat(chunks).mean()) if chunks else math.nan

    return Alignment(sources=len(peaks), rows=sum(len(p) for p in peaks), peak=mean(peaks),
                     uniform_peak=mean(uniform), entropy=mean(entropy), last=mean(last),
                     chance_last=mean(uniform), block=mean(blocks),
                     uniform_block=mean(uniform_blocks),
                     block_rows=sum(len(b) for b in blocks), current=mean(current),
                     chance_current=mean(chance_current), last_part=mean(last_part))


def table(measured: Alignment) -> str:
    """The measures of an `Alignment` as a printed table, one per line: what is measured, its
    mean, and what uniform weights or a pick at random would give, said on each line. The rows
    of joined sources of two sentences or more are left out when there were none."""
    rows = [("weight on the strongest column", measured.peak, measured.uniform_peak,
             "uniform weights"),
            ("entropy as a share of log S", measured.entropy, 1.0, "uniform weights"),
            ("rows peaking on the last token", measured.last, measured.chance_last,
             "a column at random")]
    if measured.block_rows:
        rows += [(f"weight on the top sentence ({measured.block_rows:,} rows)", measured.block,
                  measured.uniform_block, "uniform weights"),
                 ("top sentence is being translated", measured.current,
                  measured.chance_current, "a sentence at random"),
                 ("top sentence is the last one", measured.last_part, measured.chance_current,
                  "a sentence at random")]
    width = max(len(what) for what, *_ in rows)
    lines = [f"{measured.sources:,} sources, {measured.rows:,} output rows".ljust(width)
             + "  measured  compared with"]
    lines += [f"{what:{width}}  {value:8.1%}  {base:6.1%} ({against})"
              for what, value, base, against in rows]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# The data: a model's greedy outputs and the parts of joined sources
# ---------------------------------------------------------------------------------------------


@torch.no_grad()
def greedy_weights(model, sources: list[str], batch_size: int = 64, with_tokens: bool = False
                   ) -> list:
    """For each English source, the weights (T, S) with which `model` wrote its greedy output
    (as `model.translate` decodes it: source cap on), up to and including <eos>; on the CPU, in
    the order of `sources`. Batches are sorted by length, so little is padded. With
    `with_tokens`, each item is (weights, the output's T tokens as strings)."""
    if not model.attends:
        raise ValueError("this model has no attention: there are no weights to measure")
    if not is_int(batch_size) or batch_size < 1:
        raise ValueError(f"batch_size must be an integer >= 1, got {batch_size!r}")
    was_training = model.training
    model.eval()
    out: list[torch.Tensor | None] = [None] * len(sources)
    order = sorted(range(len(sources)), key=lambda i: len(tokenize(sources[i])))
    try:
        for k in range(0, len(order), batch_size):
            idx = order[k:k + batch_size]
            src, lengths = model.prepare([sources[i] for i in idx])  # (B, S), (B,)
            ids = search.greedy(model, src, lengths, source_cap=True)  # (B, T)
            weights = attention_weights(model, src, lengths, ids).cpu()  # (B, T, S)
            for row, i in enumerate(idx):
                tokens = ids[row].tolist()
                T = tokens.index(EOS) + 1 if EOS in tokens else sum(t != PAD for t in tokens)
                out[i] = weights[row, :T, :int(lengths[row])]
                if with_tokens:
                    out[i] = (out[i], [model.tgt_vocab.itos[t] for t in tokens[:T]])
    finally:
        model.train(was_training)
    return out


# A word an output copies from its source: a name (a capital, then letters) or a number, which
# French writes as English does. Common words are left out: "a" or "pas" may look alike in both
# languages without being a translation of each other.
COPYABLE = re.compile(r"[A-Z][a-z]+|[0-9]+")


def copied_words(source: list[str], output: list[str]) -> list[tuple[int, int]]:
    """[(output row t, source column j)] for each name or number (COPYABLE) that occurs exactly
    once in the source and once in the output: the rows that write a word read off the source,
    and the column they copy it from."""
    pairs = []
    for token in set(source) & set(output):
        if COPYABLE.fullmatch(token) and source.count(token) == 1 and output.count(token) == 1:
            pairs.append((output.index(token), source.index(token)))
    return sorted(pairs)


@dataclass(frozen=True)
class CopyAlignment:
    """Of `rows` output rows that copy a name or number (from `sources` sources), the share
    whose strongest column is the copied word's (`on_word`), the one after it (`after_word`: a
    one-way encoder's state h_{j+1} has read word j too), and either. The control for position:
    the share of rows where the diagonal column (`positional_columns`) is the copied word's
    (`by_position`), and of the other `off_diagonal` rows, the share whose strongest column is the
    word's all the same (`on_word_off_diagonal`, nan when there are none)."""

    sources: int
    rows: int
    on_word: float
    after_word: float
    by_position: float
    off_diagonal: int
    on_word_off_diagonal: float

    @property
    def either(self) -> float:
        return self.on_word + self.after_word


def copy_alignment(model, sources: list[str]) -> CopyAlignment:
    """Where `model` looks while it writes a word it copies: `copied_words` in its greedy
    outputs for `sources`, and the strongest column of each such row."""
    on, after, rows, used, diagonal, off, on_off = 0, 0, 0, 0, 0, 0, 0
    for source, (weights, output) in zip(sources, greedy_weights(model, sources,
                                                                 with_tokens=True)):
        pairs = copied_words(tokenize(source), output)
        used += bool(pairs)
        guess = positional_columns(*weights.shape) if pairs else None  # (T,)
        for t, j in pairs:
            top = int(weights[t].argmax())
            rows += 1
            on += top == j
            after += top == j + 1
            if int(guess[t]) == j:
                diagonal += 1
            else:
                off += 1
                on_off += top == j
    if not rows:
        raise ValueError("no output copies a name or number of its source: nothing to measure")
    return CopyAlignment(sources=used, rows=rows, on_word=on / rows, after_word=after / rows,
                         by_position=diagonal / rows, off_diagonal=off,
                         on_word_off_diagonal=on_off / off if off else math.nan)


def group_parts(held_out: list[tuple[str, list[str]]], groups, k_max: int, seed: int = 0
                ) -> list[list[str]]:
    """The English sentences each joined group of `lib.experiments.joined.joined_groups(held_out,
    k_max,
    seed)` was made of, in order. Rebuilt by joining the items' positions instead of their text,
    and checked against `groups`' joined English, so a change in how groups are drawn is an
    error here rather than a silent mismatch."""
    markers = joined_groups([(str(i), [str(i)]) for i in range(len(held_out))], k_max=k_max,
                            seed=seed)
    if len(markers) != len(groups):
        raise ValueError(f"{len(groups)} groups, but joined_groups makes {len(markers)} of "
                         f"these {len(held_out)} items with k_max={k_max}, seed={seed}")
    parts = []
    for (english, _, k), (positions, _, k_marker) in zip(groups, markers):
        sentences = [held_out[int(i)][0] for i in positions.split()]
        if k != k_marker or " ".join(sentences) != english:
            raise ValueError(f"the group {english!r} is not made of {sentences!r}: were the "
                             f"groups drawn with k_max={k_max}, seed={seed}?")
        parts.append(sentences)
    return parts


def part_lengths(sentences: list[str]) -> list[int]:
    """The token counts of a joined source's parts (`lib.data.tokenize`)."""
    return [len(tokenize(s)) for s in sentences]


# ---------------------------------------------------------------------------------------------
# Which reading the means support: the thresholds, and the classifier of
# lib.course.verdicts.attention's alignment sentences
# ---------------------------------------------------------------------------------------------


# How close to uniform a row's weights must be, as a share of the uniform entropy log S, to count
# as "close to uniform": at 0.9 a row over S = 30 tokens is as spread as uniform weights over
# 30^0.9 = 21 of them. A row is "peaked" when its strongest column holds at least PEAKED of its
# weight on average: only then is the context c_t mostly one state. Rows whose strongest column is
# the last token count when they are a majority. A reading "by sentence" needs both more weight on
# one sentence than uniform weights put there (BLOCK_MARGIN) and that sentence to be the one being
# translated at that point of the output in most rows, BLOCK_MARGIN above a sentence drawn at
# random. The page prints the measured values beside the words.
NEAR_UNIFORM = 0.9
PEAKED = 0.5
BLOCK_MARGIN = 0.15


def alignment_kind(entropy: float, peak: float, last: float, block: float, uniform_block: float,
                   current: float, chance_current: float, last_part: float = math.nan) -> str:
    """Which reading the measured weights of an attention model support (the means of
    `summarize`):

    'uniform': mean row entropy at least NEAR_UNIFORM of log S; else, when the strongest column
    is the last source token in at least half the rows, 'last' if the strongest column holds at
    least PEAKED of a row's weight on average, 'tilt' if less (diffuse weights whose weak peak is
    the last token); else 'blocks' when the sentence a row draws on most holds BLOCK_MARGIN more
    weight than uniform weights put there AND is the sentence being translated (`current`) in at
    least half the rows and BLOCK_MARGIN above chance; else 'last part' when the sentence a row
    draws on most is the source's last one (`last_part`) in at least half the rows and
    BLOCK_MARGIN above chance; else 'peaked' or 'spread' by the peak. block, uniform_block,
    current, chance_current and last_part may be nan (no source of two sentences): then neither
    'blocks' nor 'last part'."""
    for name, share in (("entropy", entropy), ("peak", peak), ("last", last)):
        if not 0.0 <= share <= 1.0:
            raise ValueError(f"{name} must be a share between 0 and 1, got {share!r}")
    for name, share in (("block", block), ("uniform_block", uniform_block),
                        ("current", current), ("chance_current", chance_current),
                        ("last_part", last_part)):
        if not (math.isnan(share) or 0.0 <= share <= 1.0):
            raise ValueError(f"{name} must be a share between 0 and 1 (or nan), got {share!r}")
    if entropy >= NEAR_UNIFORM:
        return "uniform"
    if last >= 0.5:
        return "last" if peak >= PEAKED else "tilt"
    if (block >= uniform_block + BLOCK_MARGIN and current >= 0.5
            and current >= chance_current + BLOCK_MARGIN):  # False when any is nan
        return "blocks"
    if last_part >= 0.5 and last_part >= chance_current + BLOCK_MARGIN:  # False when nan
        return "last part"
    return "peaked" if peak >= PEAKED else "spread"
