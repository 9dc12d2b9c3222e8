"""From sentences to tensors: the Tatoeba English-French corpus, tokens, vocabularies, batches.

The path from raw text to a batch is:

    line "Go.\\tVa !"  --read_pairs-->  ("Go.", "Va !")
          --tokenize-->  ["Go", "."], ["Va", "!"]
          --Vocab.encode-->  [392, 4], [693, 22]       (encode_pairs: no special tokens)
          --make_batches (collate)-->  Batch(src (B, S), tgt_in (B, T), tgt_out (B, T)),
                here src [392, 4], tgt_in [2, 693, 22], tgt_out [693, 22, 3]
                (2 = <sos>, 3 = <eos>; the ids are those of build_corpus's default vocabularies)

Nothing here touches the network or the disk at import time.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import random
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from numbers import Integral
from pathlib import Path

import torch

from lib.validate import is_int

PAD, UNK, SOS, EOS = 0, 1, 2, 3
SPECIALS = ("<pad>", "<unk>", "<sos>", "<eos>")

DATA_ENV = "SEQ2SEQ_DATA"  # path to a fra.txt to use instead of the course's copy
# The course's corpus: the first 76,036 pairs of one release of the public file (English sides of
# 3-30 characters), shipped inside the package, gzipped, with its credit and licence beside it.
# The sha256 is that of the uncompressed text, so every reader trains and scores on these bytes.
CORPUS_PAIRS = 76_036
CORPUS_SHA256 = "253b377b164d4da0cac71b8ae38487c3e9ac5eedd32aebb4c60a29a958aa79d2"
PACKAGED_CORPUS = Path(__file__).resolve().parent / "corpus" / "fra-eng.txt.gz"

# ---------------------------------------------------------------------------------------------
# Text: normalise, tokenise, detokenise
# ---------------------------------------------------------------------------------------------

_SPACES = {"\u202f": " ", "\u00a0": " ", "\u2009": " ", "\u2007": " ", "\t": " "}
_QUOTES = {"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u2010": "-", "\u2011": "-"}
_TRANSLATE = str.maketrans({**_SPACES, **_QUOTES})

# A word (letters/digits, inner hyphens allowed: "est-ce", "dit-il") with an optional
# elision apostrophe kept on its left part ("j'", "qu'"), or any single other symbol.
_TOKEN = re.compile(r"\w+(?:-\w+)*'?|[^\w\s]")

# Tatoeba's French puts a space before ? ! : ; and inside « »; none before . , )
_NO_SPACE_BEFORE = {".", ",", ")", "…"}
_NO_SPACE_AFTER = {"("}


def normalize(text: str) -> str:
    """Fold Unicode variants so that "Va\u202f!" and "Va !" are the same string.

    Tatoeba's French uses narrow no-break (and a few thin) spaces before ! ? : ; and curly
    apostrophes; we map every space of `_SPACES` to a plain space and the apostrophes to "'" so
    that the tokenizer and the vocabulary see one form.
    """
    if not isinstance(text, str):
        raise TypeError(f"expected a sentence as str, got {type(text).__name__}: {text!r}")
    text = unicodedata.normalize("NFC", text).translate(_TRANSLATE)
    return " ".join(text.split())


def tokenize(text: str) -> list[str]:
    """Split a normalised sentence into word and punctuation tokens.

    >>> tokenize("Qu'est-ce que c'est ?")
    ["Qu'", 'est-ce', 'que', "c'", 'est', '?']
    """
    return _TOKEN.findall(normalize(text))


def detokenize(tokens: list[str]) -> str:
    """Join tokens back into natural French (the inverse of `tokenize` on normalised text).

    BLEU is computed by sacrebleu on plain strings, so the model's output must look like the
    references: "J'ai faim ." would lose n-gram matches against "J'ai faim.".
    """
    out = ""
    prev = None
    for tok in tokens:
        if prev is None:
            out = tok
        elif prev.endswith("'") or prev in _NO_SPACE_AFTER:
            out += tok
        elif tok in _NO_SPACE_BEFORE:
            out += tok
        else:
            out += " " + tok
        prev = tok
    return out


# ---------------------------------------------------------------------------------------------
# Vocabulary
# ---------------------------------------------------------------------------------------------


class Vocab:
    """A two-way map between tokens and integer ids, with the four special tokens first.

    <pad> fills batches to a common length, <unk> stands for rare words, <sos> starts decoding
    and <eos> ends a sentence.
    """

    def __init__(self, itos: list[str]):
        if list(itos[:4]) != list(SPECIALS):
            raise ValueError(f"a vocabulary must start with {SPECIALS}, got {itos[:4]}")
        if len(set(itos)) != len(itos):
            raise ValueError("a vocabulary must not list a token twice")
        self.itos = list(itos)
        self.stoi = {t: i for i, t in enumerate(self.itos)}

    @classmethod
    def build(cls, sentences: list[list[str]], min_freq: int = 1) -> Vocab:
        """Keep tokens seen at least `min_freq` times, most frequent first (ties alphabetical)."""
        counts = Counter(tok for sent in sentences for tok in sent)
        kept = sorted((t for t, c in counts.items() if c >= min_freq and t not in SPECIALS),
                      key=lambda t: (-counts[t], t))
        return cls(list(SPECIALS) + kept)

    def __len__(self) -> int:
        return len(self.itos)

    def __eq__(self, other) -> bool:
        return isinstance(other, Vocab) and self.itos == other.itos

    def __repr__(self) -> str:
        return f"Vocab({len(self)} tokens: {' '.join(self.itos[:8])} ...)"

    def encode(self, tokens: list[str], eos: bool = False) -> list[int]:
        ids = [self.stoi.get(t, UNK) for t in tokens]
        return ids + [EOS] if eos else ids

    def decode(self, ids, strip: bool = True) -> list[str]:
        """Ids to tokens; with `strip`, stop at <eos> and drop <pad>/<sos>. An id outside the
        vocabulary is an error: Python would read -1 as the last token."""
        out = []
        for i in (ids.tolist() if torch.is_tensor(ids) else ids):
            if isinstance(i, bool) or not isinstance(i, Integral) or not 0 <= i < len(self.itos):
                raise ValueError(f"token id {i!r} is not in this vocabulary: ids are whole "
                                 f"numbers from 0 to {len(self.itos) - 1}")
            if strip and i == EOS:
                break
            if strip and i in (PAD, SOS):
                continue
            out.append(self.itos[i])
        return out


# ---------------------------------------------------------------------------------------------
# Reading the corpus and splitting it
# ---------------------------------------------------------------------------------------------


class CorpusError(ValueError):
    """The corpus file is missing, truncated or not in Tatoeba's tab-separated format."""


def open_corpus(path: str | os.PathLike):
    """Open a corpus file for reading bytes, gunzipping it when its name ends in .gz."""
    path = Path(path)
    return gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")


def corpus_sha256(path: str | os.PathLike) -> str:
    """The sha256 of a corpus file's text (after gunzip): the same for fra.txt and its .gz."""
    digest = hashlib.sha256()
    try:
        with open_corpus(path) as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                digest.update(chunk)
    except (OSError, EOFError) as e:  # gzip raises BadGzipFile (an OSError) or EOFError
        raise CorpusError(f"corpus file {path} cannot be read: {e}; the file is corrupt") from e
    return digest.hexdigest()


def corpus_path() -> Path:
    """The corpus file: $SEQ2SEQ_DATA if set, else the course's copy shipped with `lib`.

    The shipped copy is checked against CORPUS_SHA256 before it is used. Nothing here touches
    the network: `lib.course.download.public_corpus_path()` downloads today's public file.
    """
    if os.environ.get(DATA_ENV):
        path = Path(os.environ[DATA_ENV]).expanduser()
        if not path.is_file():
            raise CorpusError(f"${DATA_ENV} points to {path}, which is not a file")
        return path
    path = PACKAGED_CORPUS
    if not path.is_file():
        raise CorpusError(f"the course's corpus {path} is missing: reinstall the package, or set "
                          f"${DATA_ENV} to a Tatoeba fra.txt")
    stat = path.stat()
    if _verified.get(path) != (stat.st_size, stat.st_mtime_ns):
        found = corpus_sha256(path)
        if found != CORPUS_SHA256:
            raise CorpusError(f"the course's corpus {path} has sha256 {found}, expected "
                              f"{CORPUS_SHA256}: the file is damaged; reinstall the package")
        _verified[path] = (stat.st_size, stat.st_mtime_ns)
    return path


_verified: dict[Path, tuple[int, int]] = {}  # files whose checksum was checked, with their stat


def read_pairs(path: str | os.PathLike | None = None, limit: int | None = CORPUS_PAIRS
               ) -> list[tuple[str, str]]:
    """Read (English, French) pairs, normalised, from a Tatoeba file.

    Accepts the two-column form (`English<TAB>French`) and the newer three-column form with an
    attribution column, plain or gzipped. `limit` keeps the first pairs only (the course's copy
    holds exactly 76,036; a newer public file's first 76,036 are a different corpus).
    """
    if limit is not None and (not is_int(limit) or limit < 1):  # True would read one pair
        raise ValueError(f"limit must be a whole number of pairs >= 1 or None, got {limit!r}")
    path = Path(path) if path is not None else corpus_path()
    if not path.is_file():
        raise CorpusError(f"corpus file {path} does not exist")
    pairs = []
    try:
        _read_lines(path, limit, pairs)
    except (EOFError, gzip.BadGzipFile) as e:  # a truncated or damaged .gz
        raise CorpusError(f"corpus file {path} cannot be read: {e}; the file is corrupt") from e
    if not pairs:
        raise CorpusError(f"corpus file {path} holds no sentence pairs")
    return pairs


def _read_lines(path: Path, limit: int | None, pairs: list[tuple[str, str]]) -> None:
    with open_corpus(path) as f:
        for lineno, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8").rstrip("\n").rstrip("\r")
            except UnicodeDecodeError as e:
                raise CorpusError(f"{path}, line {lineno}: not valid UTF-8 ({e}); "
                                  f"the file is corrupt") from e
            if not line.strip():
                continue
            cols = line.split("\t")
            if len(cols) not in (2, 3) or not cols[0].strip() or not cols[1].strip():
                raise CorpusError(
                    f"{path}, line {lineno}: expected 'English<TAB>French[<TAB>attribution]', "
                    f"got {line[:80]!r} — the file is corrupt or not a Tatoeba pair file")
            pairs.append((normalize(cols[0]), normalize(cols[1])))
            if limit is not None and len(pairs) >= limit:
                break


@dataclass
class Split:
    """A leak-free split: every English sentence lives in exactly one part.

    `train` lists (English, French) pairs, one per translation. `valid` and `test` list
    (English, [all French translations]) so BLEU can use every reference.
    """

    train: list[tuple[str, str]]
    valid: list[tuple[str, list[str]]]
    test: list[tuple[str, list[str]]]


def group_by_source(pairs: list[tuple[str, str]]) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for en, fr in pairs:
        groups.setdefault(en, []).append(fr)
    return groups


def split_by_source(pairs: list[tuple[str, str]], n_valid: int = 1000, n_test: int = 2000,
                    seed: int = 0) -> Split:
    """Split by English sentence, never by line.

    "Run!" has two French translations ("Cours !", "Courez !"); splitting lines at random could
    put one in training and the other in the test set, and the test would measure memory, not
    translation.
    """
    groups = group_by_source(pairs)
    sources = sorted(groups)
    if n_valid + n_test >= len(sources):
        raise ValueError(f"cannot hold out {n_valid}+{n_test} of {len(sources)} source sentences")
    random.Random(seed).shuffle(sources)
    test = [(s, groups[s]) for s in sources[:n_test]]
    valid = [(s, groups[s]) for s in sources[n_test:n_test + n_valid]]
    train = [(s, fr) for s in sources[n_test + n_valid:] for fr in groups[s]]
    return Split(train=train, valid=valid, test=test)


# ---------------------------------------------------------------------------------------------
# Batches
# ---------------------------------------------------------------------------------------------


@dataclass
class Batch:
    """Padded id tensors for one training step.

    tgt_in is <sos> + target and tgt_out is target + <eos>: the same sequence shifted by one,
    which is what teacher forcing feeds and predicts.
    """

    src: torch.Tensor  # (B, S) source ids, padded with <pad>
    src_lengths: torch.Tensor  # (B,) true source lengths, on the CPU (pack_padded_sequence)
    tgt_in: torch.Tensor  # (B, T) decoder inputs: <sos> y1 .. y_{n}
    tgt_out: torch.Tensor  # (B, T) targets:        y1 .. y_{n} <eos>

    def to(self, device) -> Batch:
        return Batch(self.src.to(device), self.src_lengths, self.tgt_in.to(device),
                     self.tgt_out.to(device))

    @property
    def n_tokens(self) -> int:
        return int((self.tgt_out != PAD).sum())


def pad(seqs: list[list[int]], value: int = PAD) -> torch.Tensor:
    """List of id lists -> (B, max_len) long tensor."""
    out = torch.full((len(seqs), max(len(s) for s in seqs)), value, dtype=torch.long)
    for i, s in enumerate(seqs):
        out[i, :len(s)] = torch.tensor(s, dtype=torch.long)
    return out


def encode_pairs(pairs: list[tuple[str, str]], src_vocab: Vocab, tgt_vocab: Vocab
                 ) -> list[tuple[list[int], list[int]]]:
    """Tokenise and number every pair once, before training (the target gets no <sos>/<eos>)."""
    return [(src_vocab.encode(tokenize(en)), tgt_vocab.encode(tokenize(fr))) for en, fr in pairs]


def collate(examples: list[tuple[list[int], list[int]]]) -> Batch:
    src = [s for s, _ in examples]
    tgt = [t for _, t in examples]
    return Batch(src=pad(src),
                 src_lengths=torch.tensor([len(s) for s in src], dtype=torch.long),
                 tgt_in=pad([[SOS] + t for t in tgt]),
                 tgt_out=pad([t + [EOS] for t in tgt]))


def make_batches(examples: list[tuple[list[int], list[int]]], batch_size: int,
                 shuffle: bool = True, seed: int = 0) -> list[Batch]:
    """Bucket by length so a batch holds sentences of similar length (little padding).

    Sorting by (source length, target length) after a seeded shuffle groups similar lengths;
    shuffling the order of the batches keeps training from seeing short sentences first.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    order = list(range(len(examples)))
    rng = random.Random(seed)
    if shuffle:
        rng.shuffle(order)
    order.sort(key=lambda i: (len(examples[i][0]), len(examples[i][1])))
    batches = [collate([examples[i] for i in order[k:k + batch_size]])
               for k in range(0, len(order), batch_size)]
    if shuffle:
        rng.shuffle(batches)
    return batches


# ---------------------------------------------------------------------------------------------
# Everything at once
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DataConfig:
    """How the corpus becomes training data; part of the reference model's cache key."""

    min_freq: int = 3  # rarer training tokens become <unk>: a smaller softmax trains faster
    n_valid: int = 1000
    n_test: int = 2000
    seed: int = 0
    limit: int = CORPUS_PAIRS


@dataclass
class Corpus:
    split: Split
    src_vocab: Vocab
    tgt_vocab: Vocab
    train_examples: list[tuple[list[int], list[int]]]


def build_corpus(config: DataConfig = DataConfig(), path=None) -> Corpus:
    """Read, split by source sentence, build vocabularies on the training part only, encode.

    The data pipeline itself; `lib.course.memo.load_corpus` keeps its result on disk.
    """
    split = split_by_source(read_pairs(path, limit=config.limit), config.n_valid, config.n_test,
                            config.seed)
    src_vocab = Vocab.build([tokenize(en) for en, _ in split.train], config.min_freq)
    tgt_vocab = Vocab.build([tokenize(fr) for _, fr in split.train], config.min_freq)
    return Corpus(split, src_vocab, tgt_vocab, encode_pairs(split.train, src_vocab, tgt_vocab))


def corpus_to_json(corpus: Corpus) -> dict:
    """The corpus as JSON, for a disk cache (`corpus_from_json` reads it back)."""
    return {"train": corpus.split.train, "valid": corpus.split.valid, "test": corpus.split.test,
            "src_itos": corpus.src_vocab.itos, "tgt_itos": corpus.tgt_vocab.itos,
            "examples": corpus.train_examples}


def corpus_from_json(blob: dict) -> Corpus:
    """The cached corpus, with the tuples JSON turned into lists made tuples again."""
    split = Split(train=[tuple(p) for p in blob["train"]],
                  valid=[tuple(p) for p in blob["valid"]], test=[tuple(p) for p in blob["test"]])
    examples = [tuple(e) for e in blob["examples"]]
    if len(examples) != len(split.train):
        raise CorpusError("the cached corpus is inconsistent (examples and pairs differ in "
                          "number); delete the cache's results/ folder")
    return Corpus(split, Vocab(blob["src_itos"]), Vocab(blob["tgt_itos"]), examples)
