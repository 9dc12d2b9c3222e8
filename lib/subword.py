"""Byte-pair encoding (Sennrich et al. 2016), small enough to read: the subword tokens of
"From sentences to tensors".

A word-level vocabulary maps every word it lacks to <unk>. BPE starts instead from single
characters and learns *merges*: it repeatedly joins the pair of adjacent symbols that occurs
most often in the training words, so frequent words end up as one symbol and rare ones as a
few pieces. Any word whose characters were seen in training can then be written without
<unk>. Each word ends with END ("</w>"), so a piece that ends a word differs from the same
letters inside one ("est</w>" in "newest", "est" in "estate").

`learn_bpe` keeps pair counts up to date incrementally (only the words that contain the merged
pair are recounted) and takes the most frequent pair from a heap, so the course's training
side (tens of thousands of distinct words, thousands of merges) takes seconds, not minutes.
Ties go to the pair that sorts first, so the result does not depend on dictionary order.
"""

from __future__ import annotations

import heapq
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping

END = "</w>"


def _symbols(word: str) -> tuple[str, ...]:
    """'low' -> ('l', 'o', 'w</w>'): the characters, the last one marked as a word's end."""
    if not word:
        raise ValueError("cannot segment an empty word")
    return (*word[:-1], word[-1] + END)


def _merge(symbols: tuple[str, ...], pair: tuple[str, str]) -> tuple[str, ...]:
    """Join every occurrence of `pair` in `symbols`, left to right."""
    out, i = [], 0
    while i < len(symbols):
        if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == pair:
            out.append(symbols[i] + symbols[i + 1])
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return tuple(out)


def learn_bpe(word_counts: Mapping[str, int], num_merges: int) -> list[tuple[str, str]]:
    """The first `num_merges` merges of BPE on words with their counts, in the order learned.

    Each merge joins the adjacent pair with the highest count over all words (a word counted
    as often as it occurs); ties go to the pair that sorts first. Stops early when no pair is
    left (every word is one symbol).
    """
    if num_merges < 0:
        raise ValueError(f"num_merges must be at least 0, got {num_merges}")
    if any(n <= 0 for n in word_counts.values()):
        raise ValueError("word counts must be positive")
    words = [_symbols(w) for w in word_counts]  # current segmentation of each word
    freq = list(word_counts.values())
    counts: Counter = Counter()  # pair -> count over all words
    where: dict[tuple[str, str], set[int]] = defaultdict(set)  # pair -> words containing it
    for k, symbols in enumerate(words):
        for pair in zip(symbols, symbols[1:]):
            counts[pair] += freq[k]
            where[pair].add(k)
    heap = [(-n, pair) for pair, n in counts.items()]
    heapq.heapify(heap)
    merges: list[tuple[str, str]] = []
    while len(merges) < num_merges and heap:
        neg, pair = heapq.heappop(heap)
        if counts.get(pair, 0) != -neg or -neg <= 0:
            continue  # a stale entry: the pair's count changed since it was pushed
        merges.append(pair)
        joined = pair[0] + pair[1]
        delta: Counter = Counter()  # pair -> change of its count in this merge
        for k in where.pop(pair):
            old = words[k]
            new = _merge(old, pair)
            if new == old:
                continue  # the word lost this pair to an earlier merge
            for p in zip(old, old[1:]):
                delta[p] -= freq[k]
            for p in zip(new, new[1:]):
                delta[p] += freq[k]
                if joined in p:
                    where[p].add(k)  # the word's other pairs were indexed already
            words[k] = new
        for p, d in delta.items():
            if d == 0 or p == pair:
                continue
            counts[p] += d
            if counts[p] > 0:
                heapq.heappush(heap, (-counts[p], p))
            else:
                del counts[p]
        counts.pop(pair, None)
    return merges


class BPE:
    """Segments words with learned merges: the lowest-ranked (earliest learned) pair first."""

    def __init__(self, merges: Iterable[tuple[str, str]]):
        self.ranks = {tuple(pair): r for r, pair in enumerate(merges)}
        self._cache: dict[str, tuple[str, ...]] = {}

    def segment(self, word: str) -> tuple[str, ...]:
        """The pieces of one word: with the first 8 merges learned on the toy corpus
        {low: 5, lower: 2, newest: 6, widest: 3}, 'lowest' -> ('lo', 'w', 'est</w>'), since
        only 'lo' + 'w</w>' was learned, not 'lo' + 'w'."""
        if word not in self._cache:
            symbols = _symbols(word)
            while len(symbols) > 1:
                pair = min(zip(symbols, symbols[1:]),
                           key=lambda p: self.ranks.get(p, len(self.ranks)))
                if pair not in self.ranks:
                    break  # no learned merge applies any more
                symbols = _merge(symbols, pair)
            self._cache[word] = symbols
        return self._cache[word]

    def encode(self, tokens: Iterable[str]) -> list[str]:
        """The pieces of a tokenised sentence, word after word."""
        return [piece for tok in tokens for piece in self.segment(tok)]

    @staticmethod
    def decode(pieces: Iterable[str]) -> list[str]:
        """Pieces back to words: join until a piece that ends with END."""
        words, current = [], ""
        for piece in pieces:
            if piece.endswith(END):
                words.append(current + piece[:-len(END)])
                current = ""
            else:
                current += piece
        if current:
            raise ValueError(f"the pieces end inside a word: {current!r} has no {END}")
        return words


def piece_vocabulary(words: Iterable[str], merges: Iterable[tuple[str, str]]) -> set[str]:
    """The standard BPE vocabulary: every character of the training words, both inside a word
    and word-final ("c" and "c</w>"), plus the result of every merge.

    Any segmentation is made of these (its pieces are characters or merge results), so a new
    word has an unknown piece only where it has a character never seen in training. Taking
    instead the pieces that occur in the segmented training words misses merge results that
    every training word went on merging into something longer.
    """
    chars = {ch for word in words for ch in word}
    return ({*chars, *(ch + END for ch in chars)}
            | {left + right for left, right in merges})
