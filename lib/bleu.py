"""BLEU from scratch, equal to sacrebleu's ``corpus_bleu`` and ``sentence_bleu``.

BLEU (Papineni et al., 2002) asks how many of a translation's word n-grams also occur in
a human reference translation. Exact sentence match is far too strict: "I live in the USA"
and "I live in America" share most of their words, and a metric should give credit for that.

The recipe, for n = 1 .. 4:

* **clipped n-gram precision** p_n: count the hypothesis n-grams that occur in a reference,
  but credit each n-gram at most as often as it occurs in the reference that contains it most
  often ("the the the the" against "the cat" earns 1 match, not 4), then divide by the number
  of hypothesis n-grams;
* **brevity penalty** BP = exp(1 - r / c) when the hypothesis length c is shorter than the
  reference length r (else 1), because precision alone rewards saying very little;
* **BLEU** = BP * exp(sum_n w_n log p_n) with uniform weights w_n = 1/4, reported in 0..100.

Corpus BLEU adds up the counts of all sentences *before* dividing, so it is not the mean of
sentence BLEUs. Everything here follows sacrebleu (Post, 2018): the same tokens, n-gram counts,
lengths and formulas, so that a score computed with this module can be compared with published
ones. The scores agree to within 1e-9, and the counts and lengths exactly (the tests check
both), but not to the last bit: the arithmetic is done in another order, so a score often
differs from sacrebleu's in its last few bits (around 1e-14 for a score between 0 and 100).
This module does not import sacrebleu: it is a from-scratch, readable re-implementation.
"""

from __future__ import annotations

import math
import random
import re
import warnings
from collections import Counter
from dataclasses import dataclass
from itertools import chain
from typing import Callable, Iterable, NamedTuple, Sequence

from lib.version import __version__

from .validate import is_int, is_number

__all__ = [
    "MAX_ORDER",
    "ORDER_LIMIT",
    "SMOOTH_DEFAULTS",
    "TOKENIZERS",
    "AmbiguousReferencesWarning",
    "BLEUResult",
    "ClippedCounts",
    "LAYOUTS",
    "NgramMatch",
    "bleu_from_counts",
    "brevity_penalty",
    "clipped_matches",
    "closest_ref_length",
    "corpus_bleu",
    "ngrams",
    "paired_bootstrap",
    "sentence_bleu",
    "tokenize",
    "tokenize_13a",
]

MAX_ORDER = 4
"""Longest n-gram that BLEU counts by default (the standard BLEU-4)."""

ORDER_LIMIT = 100
"""The largest ``max_order`` accepted. BLEU uses 4; orders longer than every sentence only add
empty counts, and an order of a million made a call run for minutes."""

SMOOTH_DEFAULTS: dict[str, float | None] = {
    "exp": None,  # no parameter: halve the pseudo-count at each further order with no match
    "floor": 0.1,  # a zero count becomes 0.1 matches
    "add-k": 1,  # add k to matches and totals for n >= 2
    "none": None,  # no smoothing: a single zero precision makes BLEU 0
}
"""Smoothing methods and their default values (Chen and Cherry, 2014; as in sacrebleu)."""


# --------------------------------------------------------------------------------------------
# Tokenisation
# --------------------------------------------------------------------------------------------
# BLEU counts *tokens*, so the same output scores differently under different tokenisers.
# "13a" is the tokeniser of the mteval-v13a.pl script used by WMT and sacrebleu's default:
# it splits off ASCII punctuation and symbols but keeps apostrophes and hyphens inside words
# ("l'homme", "peut-être") and keeps the period and comma inside numbers ("3.14", "1,000").
# Non-ASCII punctuation such as « » ’ is left attached to its word.

# Rule 1: pad ASCII punctuation and symbols with spaces: { | } ~ [ \ ] ^ _ ` ! " # $ % & ( ) *
# + : ; < = > ? @ /. (mteval writes it as a regex whose class also holds the space; padding a
# space with spaces cannot change the tokens, so we leave it out.) It replaces each character
# on its own, so ``str.translate`` does it in one pass in C.
_PUNCTUATION = '{|}~[\\]^_`!"#$%&()*+:;<=>?@/'
_PAD_PUNCTUATION = str.maketrans({c: f" {c} " for c in _PUNCTUATION})
# Rule 2: split a period or comma off unless a digit precedes it.
_PERIOD_AFTER_NONDIGIT = re.compile(r"([^0-9])([.,])")
# Rule 3: split a period or comma off unless a digit follows it.
_PERIOD_BEFORE_NONDIGIT = re.compile(r"([.,])([^0-9])")
# Rule 4: split a dash off a digit that precedes it ("1990-2000" -> "1990 - 2000").
_DASH_AFTER_DIGIT = re.compile(r"([0-9])-")
# Without any digit, rules 2 and 3 split off every period and comma and rule 4 does nothing,
# so for such text (most sentences) one translation table does all four rules at once.
_DIGIT = re.compile(r"[0-9]")
_PAD_PUNCTUATION_AND_PERIODS = str.maketrans({c: f" {c} " for c in _PUNCTUATION + ".,"})


def tokenize_13a(text: str) -> list[str]:
    """Split ``text`` into tokens with the mteval-v13a rules (sacrebleu's ``13a``).

    >>> tokenize_13a("Il a 3,5 ans, non ?")
    ['Il', 'a', '3,5', 'ans', ',', 'non', '?']
    """
    # Language-independent part: remove <skipped> tags, undo end-of-line hyphenation,
    # join lines, and unescape the four SGML entities that mteval knows (in this order).
    text = text.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in text:
        text = text.replace("&quot;", '"').replace("&amp;", "&")
        text = text.replace("&lt;", "<").replace("&gt;", ">")
    if _DIGIT.search(text) is None:
        return text.translate(_PAD_PUNCTUATION_AND_PERIODS).split()
    # The surrounding spaces matter: they let rules 2 and 3 split a period or comma at the
    # very start or end of the line. Rules 2 and 3 consume two characters per match, so in
    # a run such as "a...5" not every period is split: the regexes reproduce that exactly.
    text = f" {text} ".translate(_PAD_PUNCTUATION)
    text = _PERIOD_AFTER_NONDIGIT.sub(r"\1 \2 ", text)
    text = _PERIOD_BEFORE_NONDIGIT.sub(r" \1 \2", text)
    text = _DASH_AFTER_DIGIT.sub(r"\1 - ", text)
    return text.split()  # any run of Unicode whitespace (U+202F included) separates tokens


def _tokenize_none(text: str) -> list[str]:
    """Split on whitespace only: for text that is already tokenised (not recommended)."""
    return text.split()


TOKENIZERS: dict[str, Callable[[str], list[str]]] = {
    "13a": tokenize_13a,
    "none": _tokenize_none,
}
"""Tokenisers by the name that BLEU signatures use."""


def tokenize(text: str, method: str = "13a", lowercase: bool = False) -> list[str]:
    """Return the tokens that BLEU counts for ``text``: optional lowercasing, then ``method``.

    Trailing whitespace is stripped first, as sacrebleu does (it matters only for a line
    that ends in a hyphen and a newline).
    """
    _check_tokenizer(method)
    if lowercase:
        text = text.lower()
    return TOKENIZERS[method](text.rstrip())


# --------------------------------------------------------------------------------------------
# The pieces of BLEU, one at a time (used by the BLEU chapter and its explorer widget)
# --------------------------------------------------------------------------------------------
def ngrams(tokens: Sequence[str], n: int) -> Counter:
    """Count the n-grams (tuples of ``n`` consecutive tokens) of ``tokens``.

    >>> ngrams(["a", "b", "a", "b"], 2)
    Counter({('a', 'b'): 2, ('b', 'a'): 1})
    """
    _check_order(n, "n")
    tokens = list(tokens)
    # zip over n shifted copies yields every window of n tokens, without a Python loop.
    return Counter(zip(*(tokens[i:] for i in range(n))))


class NgramMatch(NamedTuple):
    """One distinct hypothesis n-gram: how often it occurs and how much of it is credited."""

    ngram: tuple[str, ...]
    count: int  # occurrences in the hypothesis
    max_ref_count: int  # most occurrences in any single reference
    clipped: int  # min(count, max_ref_count): the matches it is credited with


class ClippedCounts(NamedTuple):
    """Clipped matches of one n-gram order: p_n = matches / total."""

    matches: int
    total: int
    details: list[NgramMatch]  # one row per distinct n-gram, in hypothesis order


def clipped_matches(
    hyp_tokens: Sequence[str], refs_tokens: Sequence[Sequence[str]], n: int
) -> ClippedCounts:
    """Clipped n-gram matches of a tokenised hypothesis against tokenised references.

    Each hypothesis n-gram is credited at most as many times as it occurs in the one
    reference where it is most frequent. Without clipping, "the the the the" would have a
    perfect unigram precision against "the cat".

    >>> clipped_matches("the the the the".split(), ["the cat".split()], 1)[:2]
    (1, 4)
    """
    hyp_counts = ngrams(hyp_tokens, n)
    max_ref = Counter()
    for ref in refs_tokens:
        max_ref |= ngrams(ref, n)  # Counter "|" keeps the larger count of each n-gram
    details = [
        NgramMatch(gram, count, max_ref[gram], min(count, max_ref[gram]))
        for gram, count in hyp_counts.items()  # a Counter keeps first-occurrence order
    ]
    return ClippedCounts(sum(d.clipped for d in details), sum(hyp_counts.values()), details)


def brevity_penalty(sys_len: int, ref_len: int) -> float:
    """BP = 1 if the hypothesis is at least as long as the reference, else exp(1 - r/c).

    Precision alone would reward a system that outputs only the words it is sure of; BP
    takes that back. An empty output (c = 0) gets BP = 0.
    """
    if sys_len >= ref_len:
        return 1.0
    if sys_len == 0:
        return 0.0
    return math.exp(1 - ref_len / sys_len)


def closest_ref_length(hyp_len: int, ref_lens: Sequence[int]) -> int:
    """The reference length closest to ``hyp_len``; on a tie, the shorter one.

    With several references, BP compares the hypothesis with the reference whose length is
    nearest to its own (the tie rule matches sacrebleu and mteval).
    """
    return min(ref_lens, key=lambda ref_len: (abs(ref_len - hyp_len), ref_len))


# --------------------------------------------------------------------------------------------
# The result
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class BLEUResult:
    """A BLEU score and the statistics it was computed from (sacrebleu's names).

    ``counts`` and ``totals`` are the true clipped matches and hypothesis n-grams per order.
    ``precisions`` are the (smoothed) percentages that entered the score. Note that sacrebleu
    reports ``counts`` and ``totals`` *after* add-k smoothing (k added for n >= 2); here they
    stay the raw counts, and only ``precisions`` show the smoothing.
    """

    score: float  # 0..100
    precisions: list[float]  # p_n in percent, n = 1..max_order
    bp: float  # brevity penalty
    sys_len: int  # hypothesis tokens
    ref_len: int  # closest-reference tokens, summed over sentences
    counts: list[int]  # clipped matches per order
    totals: list[int]  # hypothesis n-grams per order
    # The settings, for the signature:
    nrefs: int | None = 1  # references per hypothesis, None if it varies
    lowercase: bool = False
    tokenize: str = "13a"
    smooth_method: str = "exp"
    smooth_value: float | None = None
    effective_order: bool = False

    @property
    def ratio(self) -> float:
        """Hypothesis length / reference length: below 1 means the brevity penalty bites."""
        return self.sys_len / self.ref_len if self.ref_len else 0.0

    @property
    def max_order(self) -> int:
        return len(self.precisions)

    def signature(self) -> str:
        """A sacrebleu-style signature of the settings, e.g.
        ``nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:lib-0.1.0``.

        A BLEU number alone is not reproducible: the tokeniser, lowercasing, smoothing and
        number of references each move it by points. Published scores are only comparable
        when their signatures are equal, so report the signature next to the score.
        """
        smooth = self.smooth_method
        if self.smooth_value is not None:
            smooth += f"[{self.smooth_value:.2f}]"
        parts = [
            f"nrefs:{'var' if self.nrefs is None else self.nrefs}",
            f"case:{'lc' if self.lowercase else 'mixed'}",
            f"eff:{'yes' if self.effective_order else 'no'}",
            f"tok:{self.tokenize}",
            f"smooth:{smooth}",
        ]
        if self.max_order != MAX_ORDER:  # sacrebleu's signature omits this; we don't
            parts.append(f"order:{self.max_order}")
        parts.append(f"version:lib-{__version__}")
        return "|".join(parts)

    def __str__(self) -> str:
        """The one-line summary that sacrebleu prints, character for character."""
        precisions = "/".join(f"{p:.1f}" for p in self.precisions)
        return (
            f"BLEU = {self.score:.2f} {precisions} (BP = {self.bp:.3f} "
            f"ratio = {self.ratio:.3f} hyp_len = {self.sys_len:d} ref_len = {self.ref_len:d})"
        )


def bleu_from_counts(
    counts: Sequence[int],
    totals: Sequence[int],
    sys_len: int,
    ref_len: int,
    *,
    smooth_method: str = "exp",
    smooth_value: float | None = None,
    use_effective_order: bool = False,
    **settings,
) -> BLEUResult:
    """Turn n-gram statistics (summed over a corpus) into a BLEU score.

    BLEU = BP * the geometric mean of the precisions (`_smoothed_precisions` says how a zero
    match count is treated). With ``use_effective_order`` the mean runs only over the orders
    for which the hypothesis has any n-gram, so a 3-word sentence is not zeroed for lacking
    4-grams. Extra keyword ``settings`` (nrefs, lowercase, tokenize) are stored for the
    signature.
    """
    _check_smoothing(smooth_method)
    smooth_value = _resolve_smooth_value(smooth_method, smooth_value)
    counts, totals = list(counts), list(totals)
    if not counts or len(counts) != len(totals):
        raise ValueError(
            f"need one count and one total per n-gram order, got {len(counts)} counts "
            f"and {len(totals)} totals"
        )
    bp = brevity_penalty(sys_len, ref_len)
    precisions, order = _smoothed_precisions(counts, totals, smooth_method, smooth_value)
    if not use_effective_order:
        order = len(counts)
    if not any(counts) or 0.0 in precisions[:order]:  # log 0 = -inf: the geometric mean is 0
        score = 0.0
    else:
        # The geometric mean of the precisions as fractions (exactly 1.0 for a perfect match,
        # so that it scores exactly 100; sacrebleu averages logs of percentages, 1e-14 apart).
        score = 100.0 * bp * math.exp(sum(math.log(p / 100.0) for p in precisions[:order]) / order)
    return BLEUResult(
        score, precisions, bp, sys_len, ref_len, counts, totals,
        smooth_method=smooth_method, smooth_value=smooth_value,
        effective_order=use_effective_order, **settings,
    )  # fmt: skip


def _smoothed_precisions(
    counts: list[int], totals: list[int], smooth_method: str, smooth_value: float | None
) -> tuple[list[float], int]:
    """The precisions p_n in percent, and how many orders the hypotheses have n-grams for.

    Smoothing decides what a zero match count means, which matters for short sentences:

    * ``none``: p_n = 0, so log p_n = -inf and BLEU = 0;
    * ``floor``: a zero count becomes ``smooth_value`` (default 0.1) matches;
    * ``add-k``: k (default 1) is added to matches and totals for n >= 2 (including, as in
      sacrebleu, orders for which the hypothesis has no n-grams at all: they become k/k);
    * ``exp``: the i-th order with no match gets p_n = 1 / (2^i * total) (mteval's method).

    When nothing matched at all, the precisions stay 0 (BLEU is 0 whatever the smoothing).
    """
    precisions = [0.0] * len(counts)
    if not any(counts):
        return precisions, len(counts)
    order = len(counts)
    exp_halvings = 1
    for n in range(1, len(counts) + 1):
        matched, total = counts[n - 1], totals[n - 1]
        if smooth_method == "add-k" and n > 1:
            matched, total = matched + smooth_value, total + smooth_value
        if total == 0:  # the hypotheses are shorter than n tokens
            break
        order = n
        if matched:
            precisions[n - 1] = 100.0 * matched / total
        elif smooth_method == "exp":
            exp_halvings *= 2
            precisions[n - 1] = 100.0 / (exp_halvings * total)
        elif smooth_method == "floor":
            precisions[n - 1] = 100.0 * smooth_value / total
    return precisions, order


# --------------------------------------------------------------------------------------------
# Corpus and sentence BLEU
# --------------------------------------------------------------------------------------------
def corpus_bleu(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]],
    *,
    smooth_method: str = "exp",
    smooth_value: float | None = None,
    lowercase: bool = False,
    tokenize: str = "13a",
    max_order: int = MAX_ORDER,
    use_effective_order: bool = False,
    layout: str | None = None,
) -> BLEUResult:
    """Corpus BLEU of ``hypotheses``; ``references[i]`` lists the references of hypothesis i.

    Each hypothesis may have any number (at least one) of references. Equals
    ``sacrebleu.corpus_bleu`` with the same settings. sacrebleu takes references transposed,
    as reference *streams* (``refs[j][i]`` is reference j of sentence i, ``None`` where a
    sentence has fewer references): pass those with ``layout="streams"``.

    A list of N lists of N strings reads both ways, and the two readings give different
    scores, so nothing in the data can tell which was meant. Rather than guess, such a square
    ``references`` (N >= 2) with ``layout=None`` is read per hypothesis and warns; say
    ``layout="per-hypothesis"`` (or ``"streams"``) to silence it. Any other shape is
    unambiguous: streams passed as per-hypothesis lists fail the length check.
    """
    _check_settings(smooth_method, smooth_value, tokenize, max_order)
    references = _per_hypothesis(hypotheses, references, layout)
    _check_corpus(hypotheses, references)
    split = TOKENIZERS[tokenize]

    def prepare(text: str) -> list[str]:
        return split((text.lower() if lowercase else text).rstrip())

    counts, totals = [0] * max_order, [0] * max_order
    sys_len = ref_len = 0
    # Reference statistics (lengths, and each n-gram's clipping limit) are cached: several
    # hypotheses (systems, n-best lists) often share one set of references.
    ref_cache: dict[tuple[str, ...], tuple[list[int], Counter]] = {}
    for hyp, refs in zip(hypotheses, references):
        key = tuple(refs)
        cached = ref_cache.get(key)
        if cached is None:
            cached = ref_cache[key] = _reference_stats([prepare(r) for r in refs], max_order)
        ref_lens, max_ref_counts = cached
        tokens = prepare(hyp)
        sys_len += len(tokens)
        ref_len += ref_lens[0] if len(ref_lens) == 1 else closest_ref_length(len(tokens), ref_lens)
        _add_matches(tokens, max_ref_counts, counts, totals)

    nrefs = {len(refs) for refs in references}
    return bleu_from_counts(
        counts, totals, sys_len, ref_len,
        smooth_method=smooth_method, smooth_value=smooth_value,
        use_effective_order=use_effective_order,
        nrefs=nrefs.pop() if len(nrefs) == 1 else None, lowercase=bool(lowercase),
        tokenize=tokenize,
    )  # fmt: skip


def _add_matches(tokens: list[str], max_ref_counts: Counter, counts: list[int],
                 totals: list[int]) -> None:
    """Add one hypothesis's clipped matches and n-gram totals, per order, to counts/totals."""
    length = len(tokens)
    for n in range(1, min(length, len(counts)) + 1):
        total = length - n + 1  # a sentence of L tokens has L - n + 1 n-grams
        distinct = set(_windows(tokens, n))
        if len(distinct) == total:
            # The usual case: no n-gram repeats, so clipping cannot bite and the matches
            # are the n-grams found in some reference: one set intersection, in C.
            matched = len(max_ref_counts.keys() & distinct)
        else:
            matched = 0
            for gram, count in Counter(_windows(tokens, n)).items():
                matched += min(count, max_ref_counts.get(gram, 0))
        counts[n - 1] += matched
        totals[n - 1] += total


LAYOUTS = ("per-hypothesis", "streams")
"""How ``corpus_bleu`` reads ``references``: ours (one list per hypothesis) or sacrebleu's."""


def _per_hypothesis(hypotheses, references, layout: str | None):
    """``references`` as one list per hypothesis, whatever the layout (see corpus_bleu)."""
    if layout is not None and layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS} or None, got {layout!r}")
    if layout == "streams":
        return _from_streams(hypotheses, references)
    n = len(hypotheses) if isinstance(hypotheses, Sequence) else 0
    if layout is None and n >= 2 and isinstance(references, Sequence) \
            and len(references) == n and all(
                isinstance(r, Sequence) and not isinstance(r, str) and len(r) == n
                for r in references):
        warnings.warn(
            f"references is a square {n} x {n} list: read as references[i] = the references "
            f"of hypothesis i. If it holds sacrebleu-style reference streams (references[j][i] "
            f"= reference j of sentence i), pass layout='streams'; pass "
            f"layout='per-hypothesis' to silence this warning",
            AmbiguousReferencesWarning, stacklevel=3)
    return references


class AmbiguousReferencesWarning(UserWarning):
    """``references`` reads both as per-hypothesis lists and as sacrebleu's streams."""


def _from_streams(hypotheses, streams) -> list[list[str]]:
    """sacrebleu's reference streams -> one list per hypothesis, ``None`` entries dropped."""
    if isinstance(streams, str) or not isinstance(streams, Sequence) or not streams:
        raise TypeError("with layout='streams', references must be a non-empty list of "
                        "reference streams, each with one string (or None) per hypothesis")
    for j, stream in enumerate(streams):
        if isinstance(stream, str) or not isinstance(stream, Sequence):
            raise TypeError(f"reference stream {j} must be a list, got {type(stream).__name__}")
        if len(stream) != len(hypotheses):
            raise ValueError(f"reference stream {j} has {len(stream)} entries for "
                             f"{len(hypotheses)} hypotheses: a stream holds one reference "
                             f"(or None) per hypothesis")
    return [[r for r in refs if r is not None] for refs in zip(*streams)]


def sentence_bleu(
    hypothesis: str,
    references: Sequence[str],
    *,
    smooth_method: str = "exp",
    smooth_value: float | None = None,
    lowercase: bool = False,
    tokenize: str = "13a",
    max_order: int = MAX_ORDER,
    use_effective_order: bool = True,
) -> BLEUResult:
    """BLEU of one hypothesis against its references; equals ``sacrebleu.sentence_bleu``.

    BLEU is a corpus metric: one sentence rarely has a matching 4-gram, so sentence scores
    are noisy. Like sacrebleu, the default uses ``exp`` smoothing and the effective order
    (only n-gram orders that the hypothesis has). Use it to explore, not to rank systems.
    """
    if not isinstance(hypothesis, str):
        raise TypeError(f"hypothesis must be a string, got {type(hypothesis).__name__}")
    if isinstance(references, str):
        raise TypeError("references must be a list of reference strings, not one string")
    return corpus_bleu(
        [hypothesis], [references],
        smooth_method=smooth_method, smooth_value=smooth_value, lowercase=lowercase,
        tokenize=tokenize, max_order=max_order, use_effective_order=use_effective_order,
        layout="per-hypothesis",
    )  # fmt: skip


def _windows(tokens: list[str], n: int) -> Iterable:
    """The n-grams of ``tokens`` in order: the tokens themselves for n = 1, else tuples."""
    return tokens if n == 1 else zip(*(tokens[i:] for i in range(n)))


def _reference_stats(refs_tokens: list[list[str]], max_order: int) -> tuple[list[int], Counter]:
    """Reference lengths, and each n-gram's largest count in any one reference.

    All orders share one Counter (unigrams are strings, longer n-grams tuples of different
    lengths, so they never collide): one Counter per reference instead of four
    (bench/bleu_speed.py times corpus_bleu against sacrebleu).
    """
    ref_lens = [len(tokens) for tokens in refs_tokens]
    per_ref = [
        Counter(chain.from_iterable(_windows(tokens, n) for n in range(1, max_order + 1)))
        for tokens in refs_tokens
    ]
    merged = per_ref[0]
    for other in per_ref[1:]:  # a plain max-merge loop: Counter's "|" builds a new Counter
        for gram, count in other.items():
            if count > merged.get(gram, 0):
                merged[gram] = count
    return ref_lens, merged


# --------------------------------------------------------------------------------------------
# Input checks: fail early, say what is wrong and where
# --------------------------------------------------------------------------------------------
def _check_order(value: int, name: str) -> None:
    if not is_int(value):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be at least 1, got {value}")


def _check_tokenizer(name: str) -> None:
    if name not in TOKENIZERS:
        raise ValueError(f"unknown tokenizer {name!r}; choose one of {sorted(TOKENIZERS)}")


def _check_smoothing(name: str) -> None:
    if name not in SMOOTH_DEFAULTS:
        raise ValueError(
            f"unknown smoothing method {name!r}; choose one of {list(SMOOTH_DEFAULTS)}"
        )


def _resolve_smooth_value(method: str, value: float | None) -> float | None:
    """The value that ``method`` will use: the default if ``value`` is None."""
    default = SMOOTH_DEFAULTS[method]
    if value is None:
        return default
    if default is None:
        raise ValueError(f"smooth_value is only used by 'floor' and 'add-k', not {method!r}")
    if not is_number(value):
        raise TypeError(f"smooth_value must be a number, got {type(value).__name__}")
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"smooth_value must be a finite number >= 0, got {value}")
    return value


def _check_settings(
    smooth_method: str, smooth_value: float | None, tokenize: str, max_order: int
) -> None:
    _check_smoothing(smooth_method)
    _resolve_smooth_value(smooth_method, smooth_value)
    _check_tokenizer(tokenize)
    _check_order(max_order, "max_order")
    if max_order > ORDER_LIMIT:
        raise ValueError(f"max_order must be at most ORDER_LIMIT={ORDER_LIMIT} (BLEU uses "
                         f"{MAX_ORDER}), got {max_order:,}")


def _check_corpus(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> None:
    if isinstance(hypotheses, str) or not isinstance(hypotheses, Sequence):
        raise TypeError("hypotheses must be a list of strings (for one sentence use sentence_bleu)")
    if isinstance(references, str) or not isinstance(references, Sequence):
        raise TypeError(
            "references must be a list with one list of reference strings per hypothesis"
        )
    if len(hypotheses) != len(references):
        raise ValueError(
            f"got {len(hypotheses)} hypotheses but {len(references)} reference lists: "
            "references[i] must list the references of hypotheses[i] (sacrebleu's transposed "
            "reference streams are not accepted here)"
        )
    if not hypotheses:
        raise ValueError("BLEU needs at least one hypothesis")
    for i, hyp in enumerate(hypotheses):
        if not isinstance(hyp, str):
            raise TypeError(f"hypotheses[{i}] must be a string, got {type(hyp).__name__}")
    for i, refs in enumerate(references):
        if isinstance(refs, str) or not isinstance(refs, Sequence):
            raise TypeError(
                f"references[{i}] must be a list of reference strings, got {type(refs).__name__}"
            )
        if not refs:
            raise ValueError(f"references[{i}] is empty: each hypothesis needs a reference")
        for j, ref in enumerate(refs):
            if not isinstance(ref, str):
                raise TypeError(f"references[{i}][{j}] must be a string, got {type(ref).__name__}")


MIN_ROUNDS = 40  # the fewest bootstrap rounds whose 95 % interval spans two different draws
MAX_ROUNDS = 100_000  # each round rescores the whole corpus twice


def sentence_stats(hyps: list[str], references: list[list[str]]) -> list[BLEUResult]:
    """Each sentence's n-gram statistics (a one-sentence `corpus_bleu`). Corpus BLEU adds them,
    so a resample of the test set is scored by adding, without tokenising anything again."""
    return [corpus_bleu([h], [r]) for h, r in zip(hyps, references)]


def resampled_bleu(stats: list[BLEUResult], idx) -> float:
    """Corpus BLEU of the sentences at `idx` (a repeated index counts again), from their
    `sentence_stats`: the score `corpus_bleu` gives the resampled lists."""
    picked = [stats[i] for i in idx]
    return bleu_from_counts([sum(s.counts[n] for s in picked) for n in range(MAX_ORDER)],
                            [sum(s.totals[n] for s in picked) for n in range(MAX_ORDER)],
                            sum(s.sys_len for s in picked), sum(s.ref_len for s in picked)).score


def paired_bootstrap(hyps_a: list[str], hyps_b: list[str], references: list[list[str]],
                     rounds: int = 1000, seed: int = 0) -> tuple[float, float, float]:
    """Corpus BLEU of a minus that of b on the same sentences, and its 95 % interval.

    Each round draws the sentences with replacement, the same draw for both systems (paired),
    and recomputes both corpus BLEUs from per-sentence n-gram counts, so a sentence that is
    hard for both moves both scores together. Returns (difference, low, high).
    """
    if not len(hyps_a) == len(hyps_b) == len(references) or not references:
        raise ValueError("need as many hypotheses of each system as references, at least one")
    if not is_int(rounds) or not MIN_ROUNDS <= rounds <= MAX_ROUNDS:
        raise ValueError(f"rounds must be an integer from {MIN_ROUNDS} to {MAX_ROUNDS:,}, got "
                         f"{rounds!r}: fewer leave the 2.5 % and 97.5 % points on the same "
                         f"draw, more only take longer (1,000 is usual)")
    a, b = sentence_stats(hyps_a, references), sentence_stats(hyps_b, references)
    everything = range(len(references))
    diff = resampled_bleu(a, everything) - resampled_bleu(b, everything)
    rng = random.Random(seed)
    draws = sorted(resampled_bleu(a, idx) - resampled_bleu(b, idx)
                   for idx in (rng.choices(everything, k=len(references))
                               for _ in range(rounds)))
    return diff, draws[int(0.025 * rounds)], draws[int(0.975 * rounds) - 1]
