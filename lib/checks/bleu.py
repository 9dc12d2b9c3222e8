"""Checkers for the BLEU chapter's exercises, against `lib.bleu` and `sacrebleu`.

* `check_clipped_precision(fn)`: `fn(hyp_tokens, refs_tokens, n)` -> (matches, total), the
  clipped n-gram matches of one tokenised hypothesis against its tokenised references.
* `check_brevity_penalty(fn)`: `fn(hyp_len, ref_lens)` -> BP, with the reference length closest
  to the hypothesis length (ties go to the shorter reference).
* `check_corpus_bleu(fn)`: `fn(hyps_tokens, refs_tokens)` -> corpus BLEU in 0..100 from counts
  summed over the corpus (no smoothing, 4-grams), equal to sacrebleu with tokenize="none".
* `check_paired_bootstrap(fn)`: `fn(hyps_a, hyps_b, refs, n_samples, seed)` -> the share of
  paired resamples (with replacement) of the test set in which A's corpus BLEU beats B's.

Each returns a `lib.checks.CheckResult` that says in words what is wrong.
"""

from __future__ import annotations

import math
import random
from collections import Counter

from lib import bleu
from lib.checks import CheckResult, Mismatch, call, run_checks

# (hypothesis, references), already tokenised by whitespace
CLIP_CASES = [
    ("the the the the", ["the cat is here"]),
    ("the the the the", ["the cat", "the dog"]),
    ("the cat sat on the mat", ["the cat is on the mat", "there is a cat on the mat"]),
    ("le chat est sur le tapis le chat", ["le chat est sur le tapis", "le chat le chat dort"]),
    ("a b a b a b", ["a b a", "b a b a"]),
    ("il fait froid .", ["il fait froid .", "j' ai froid ."]),
    ("x y z", ["a b c d"]),
]

CORPUS = [
    ("il fait froid .", ["il fait froid .", "j' ai froid ."]),
    ("je suis très fatigué .", ["je suis très fatiguée .", "je suis épuisé ."]),
    ("tom est dans la cuisine .", ["tom est à la cuisine .", "tom se trouve dans la cuisine ."]),
    ("nous avons gagné .", ["nous avons gagné .", "on a gagné ."]),
    ("le chat dort sur le lit .", ["le chat dort sur le lit ."]),
    ("elle ne veut pas venir avec nous .", ["elle ne veut pas venir avec nous ."]),
    ("c' est un bon livre .", ["c' est un bon livre .", "ce livre est bon ."]),
    ("où est la gare ?", ["où se trouve la gare ?"]),
]


def _split(cases):
    return [(h.split(), [r.split() for r in refs]) for h, refs in cases]


def _ngrams(tokens, n) -> Counter:
    return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def _pair(got, what: str) -> tuple:
    if not isinstance(got, (tuple, list)) or len(got) < 2:
        raise Mismatch(f"return a pair ({what}), got {type(got).__name__}: {str(got)[:60]}")
    return got[0], got[1]


# ---------------------------------------------------------------------------------------------
# Exercise: clipped n-gram precision
# ---------------------------------------------------------------------------------------------


def _clip_case(fn, hyp, refs, n) -> None:
    expected = bleu.clipped_matches(hyp, refs, n)
    matches, total = _pair(call(fn, hyp, refs, n, names=("hyp", "refs", "n")),
                           "matches, total")
    where = f"n = {n}, hypothesis {' '.join(hyp)!r}, references {[' '.join(r) for r in refs]}"
    hyp_counts = _ngrams(hyp, n)
    if total != expected.total:
        if total == len(hyp_counts):
            raise Mismatch(f"{where}: total = {total} counts the DISTINCT n-grams; count every "
                           f"n-gram of the hypothesis ({expected.total})")
        raise Mismatch(f"{where}: total = {total}, expected {expected.total} (a sentence of L "
                       f"tokens has L - n + 1 n-grams)")
    if matches == expected.matches:
        return
    unclipped = sum(c for g, c in hyp_counts.items() if any(g in _ngrams(r, n) for r in refs))
    summed = Counter()
    for r in refs:
        summed += _ngrams(r, n)
    summed_clip = sum(min(c, summed[g]) for g, c in hyp_counts.items())
    first_only = sum(min(c, _ngrams(refs[0], n)[g]) for g, c in hyp_counts.items())
    if matches == summed_clip and summed_clip != unclipped:
        raise Mismatch(f"{where}: you clipped with the counts ADDED over the references; clip "
                       f"with the largest count in any ONE reference (matches = "
                       f"{expected.matches}, you gave {matches})")
    if matches == unclipped:
        repeated = next(g for g, c in hyp_counts.items()
                        if c > max(_ngrams(r, n)[g] for r in refs))
        raise Mismatch(f"{where}: not clipped: the hypothesis repeats {' '.join(repeated)!r} "
                       f"more than any reference; credit each n-gram at most as often as it "
                       f"occurs in one reference (matches = {expected.matches}, you gave "
                       f"{matches})")
    if matches == first_only:
        raise Mismatch(f"{where}: you only used the first reference; an n-gram matches if it "
                       f"occurs in any reference (matches = {expected.matches}, you gave "
                       f"{matches})")
    raise Mismatch(f"{where}: matches = {matches}, expected {expected.matches}")


def check_clipped_precision(fn) -> CheckResult:
    """Check `fn(hyp_tokens, refs_tokens, n) -> (matches, total)` against lib.bleu."""
    def one_reference():
        for hyp, refs in _split(CLIP_CASES):
            for n in (1, 2):
                _clip_case(fn, hyp, refs[:1], n)
        return "one reference, n = 1 and 2"

    def several_references():
        for hyp, refs in _split(CLIP_CASES):
            for n in (1, 2, 3, 4):
                _clip_case(fn, hyp, refs, n)
        return "several references, n = 1 to 4"

    def short_hypothesis():
        _clip_case(fn, ["oui"], [["oui", "."]], 2)
        return "a hypothesis shorter than n (no n-grams at all)"

    return run_checks("clipped n-gram precision", one_reference, several_references,
                      short_hypothesis)


# ---------------------------------------------------------------------------------------------
# Exercise: brevity penalty
# ---------------------------------------------------------------------------------------------


BP_NAMES = ("hyp_len", "ref_lens")


def check_brevity_penalty(fn) -> CheckResult:
    """Check `fn(hyp_len, ref_lens) -> BP` (closest reference length, ties to the shorter)."""
    def expected(c, refs):
        return bleu.brevity_penalty(c, bleu.closest_ref_length(c, refs))

    def case(c, refs, note):
        got = call(fn, c, list(refs), names=BP_NAMES)
        want = expected(c, refs)
        if isinstance(got, bool) or not isinstance(got, (int, float)) or \
                not math.isfinite(float(got)):
            raise Mismatch(f"return a number, got {got!r}")
        if math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12):
            return
        where = f"hypothesis length {c}, reference lengths {list(refs)}"
        r = bleu.closest_ref_length(c, refs)
        tie_long = min(refs, key=lambda x: (abs(x - c), -x))
        if tie_long != r and math.isclose(got, bleu.brevity_penalty(c, tie_long)):
            raise Mismatch(f"{where}: two references are equally close; the tie goes to the "
                           f"shorter one ({r}), BP = {want:.4f}")
        if len(refs) > 1 and math.isclose(got, bleu.brevity_penalty(c, min(refs))):
            raise Mismatch(f"{where}: you used the SHORTEST reference; use the one whose length "
                           f"is closest to the hypothesis' ({r}), BP = {want:.4f}")
        if len(refs) > 1 and math.isclose(got, bleu.brevity_penalty(c, max(refs))):
            raise Mismatch(f"{where}: you used the LONGEST reference; use the one whose length "
                           f"is closest to the hypothesis' ({r}), BP = {want:.4f}")
        if c >= r and math.isclose(got, math.exp(1 - r / c)):
            raise Mismatch(f"{where}: a hypothesis at least as long as its reference is not "
                           f"penalised: BP = 1")
        if c < r and math.isclose(got, math.exp(1 - c / r)):
            raise Mismatch(f"{where}: r and c are swapped: BP = exp(1 - r / c) = {want:.4f}")
        raise Mismatch(f"{where}: got BP = {got:.4f}, expected {want:.4f} ({note})")

    def one_reference():
        case(5, [7], "shorter than the reference")
        case(7, [7], "as long as the reference")
        case(9, [7], "longer than the reference")
        return "one reference: shorter, equal, longer"

    def several():
        case(6, [4, 7, 12], "the closest reference is longer")
        case(9, [4, 10, 12], "the closest reference is longer")
        case(8, [3, 9, 20], "the closest reference is longer")
        return "several references: the closest one counts"

    def ties():
        case(8, [10, 6], "10 and 6 are equally close to 8")
        case(5, [7, 3, 9], "7 and 3 are equally close to 5")
        return "ties go to the shorter reference"

    def empty():
        got = call(fn, 0, [4], names=BP_NAMES)
        if got != 0:
            raise Mismatch(f"an empty hypothesis (length 0) must get BP = 0, got {got!r}")
        return "an empty hypothesis"

    return run_checks("brevity penalty", one_reference, several, ties, empty)


# ---------------------------------------------------------------------------------------------
# Exercise: corpus BLEU
# ---------------------------------------------------------------------------------------------


def _reference_bleu(cases) -> float:
    hyps = [h for h, _ in cases]
    refs = [r for _, r in cases]
    return bleu.corpus_bleu(hyps, refs, tokenize="none", smooth_method="none").score


def _sacrebleu(cases) -> float:
    import sacrebleu

    n = max(len(r) for _, r in cases)
    streams = [[r[j] if j < len(r) else None for _, r in cases] for j in range(n)]
    return sacrebleu.corpus_bleu([h for h, _ in cases], streams, tokenize="none",
                                 smooth_method="none").score


def check_corpus_bleu(fn) -> CheckResult:
    """Check `fn(hyps_tokens, refs_tokens) -> corpus BLEU (0..100)` against lib.bleu and
    sacrebleu (tokenize="none", no smoothing, n-grams up to 4)."""
    def case(cases, name):
        expected = _reference_bleu(cases)
        if abs(expected - _sacrebleu(cases)) > 1e-9:  # pragma: no cover - guards the reference
            raise AssertionError("lib.bleu and sacrebleu disagree")
        split = _split(cases)
        got = call(fn, [h for h, _ in split], [r for _, r in split], names=("hyps", "refs"))
        if isinstance(got, bleu.BLEUResult):
            got = got.score
        if isinstance(got, bool) or not isinstance(got, (int, float)):
            raise Mismatch(f"return the score as a number, got {type(got).__name__}")
        if math.isclose(got, expected, rel_tol=1e-6, abs_tol=1e-6):
            return
        sentence = [bleu.sentence_bleu(h, r, tokenize="none").score for h, r in cases]
        unsmoothed = [bleu.corpus_bleu([h], [r], tokenize="none", smooth_method="none").score
                      for h, r in cases]
        for scores in (sentence, unsmoothed):
            if math.isclose(got, sum(scores) / len(scores), rel_tol=1e-6, abs_tol=1e-6):
                raise Mismatch(f"{name}: you averaged sentence BLEUs ({got:.2f}); corpus BLEU "
                               f"adds up the matches, totals and lengths of ALL sentences "
                               f"first, then computes one score ({expected:.2f})")
        if math.isclose(got, expected / 100, rel_tol=1e-6):
            raise Mismatch(f"{name}: report BLEU in 0..100 (got {got:.4f}, expected "
                           f"{expected:.2f})")
        res = bleu.corpus_bleu([h for h, _ in cases], [r for _, r in cases], tokenize="none",
                               smooth_method="none")
        if res.bp < 1 and math.isclose(got, expected / res.bp, rel_tol=1e-6):
            raise Mismatch(f"{name}: you left out the brevity penalty (BP = {res.bp:.4f})")
        arith = 100 * res.bp * sum(c / t for c, t in zip(res.counts, res.totals)) / 4
        if math.isclose(got, arith, rel_tol=1e-6):
            raise Mismatch(f"{name}: you took the arithmetic mean of the precisions; BLEU uses "
                           f"the geometric mean exp(sum_n 1/4 log p_n)")
        raise Mismatch(f"{name}: got {got:.4f}, expected {expected:.4f}")

    def whole():
        case(CORPUS, f"a corpus of {len(CORPUS)} sentences")
        return f"a corpus of {len(CORPUS)} sentences with one or two references"

    def short():
        cases = [(h, r) for h, r in CORPUS if h.startswith(("il", "nous", "où", "tom"))]
        case(cases, "a corpus with short hypotheses (the brevity penalty bites)")
        return "shorter corpora"

    def perfect():
        cases = [(r[0], r) for _, r in CORPUS]
        case(cases, "a perfect corpus (every hypothesis equals its first reference)")
        return "a perfect match scores 100"

    return run_checks("corpus BLEU", whole, short, perfect)


# ---------------------------------------------------------------------------------------------
# Exercise: a paired bootstrap test
# ---------------------------------------------------------------------------------------------

BOOTSTRAP_NAMES = ("hyps_a", "hyps_b", "refs", "n_samples", "seed")


def _words(rng, n: int) -> list[str]:
    vocab = ("le chat chien maison jardin rouge petit grand mange dort voit sous sur dans "
             "avec sans une un la les des très bien vite").split()
    return [rng.choice(vocab) for _ in range(n)]


def _replace(words: list[str], positions) -> str:
    """The sentence with the words at `positions` replaced by ones no reference uses."""
    return " ".join(f"x{i}" if i in positions else w for i, w in enumerate(words))


def one_difference_corpus() -> tuple[list[str], list[str], list[list[str]]]:
    """30 sentences on which systems A and B write the same except sentence 0, where A is
    exact and B misses two words (same length). A's corpus BLEU beats B's exactly on the
    resamples that draw sentence 0, so the answer is about 1 - (29/30)^30 = 0.64; the other
    resamples are ties, and a tie is not a win."""
    rng = random.Random(17)
    refs, hyps_a, hyps_b = [], [], []
    for i in range(30):
        words = _words(rng, rng.randint(6, 9))
        refs.append([" ".join(words)])
        hyps_a.append(" ".join(words) if i == 0 else _replace(words, {1}))
        hyps_b.append(_replace(words, {1, 3}) if i == 0 else _replace(words, {1}))
    return hyps_a, hyps_b, refs


def long_short_corpus() -> tuple[list[str], list[str], list[list[str]]]:
    """3 long sentences (16 words) and 17 short ones (4 words). A is exact on the long ones
    and keeps every other word of the short ones; B the other way round. Corpus BLEU counts
    n-grams, most of which are in the long sentences, and prefers A; the mean of sentence
    BLEUs counts sentences and prefers B."""
    rng = random.Random(23)
    refs, hyps_a, hyps_b = [], [], []
    for i in range(20):
        words = _words(rng, 16 if i % 7 == 0 else 4)
        odd = set(range(1, len(words), 2))
        refs.append([" ".join(words)])
        if len(words) == 16:
            hyps_a.append(" ".join(words))
            hyps_b.append(_replace(words, odd))
        else:
            hyps_a.append(_replace(words, odd))
            hyps_b.append(" ".join(words))
    return hyps_a, hyps_b, refs


def paired_bootstrap_reference(hyps_a, hyps_b, refs, n_samples: int, seed: int,
                               mistake: str = "") -> float:
    """The share of `n_samples` resamples of the test set on which A's corpus BLEU is strictly
    higher than B's. A resample draws len(refs) sentence indices with replacement,
    random.Random(seed).choices(range(N), k=N), and scores both systems on the SAME indices.

    Corpus BLEU adds each sentence's n-gram statistics, so they are computed once per sentence
    and summed per resample (the same score as lib.bleu.corpus_bleu on the resampled lists).
    `mistake` computes a typical wrong version, to recognise it in a learner's answer:
    "unpaired", "no replacement", "ties win" or "mean sentence BLEU".
    """
    def stats(hyps):
        return [bleu.corpus_bleu([h], [r]) for h, r in zip(hyps, refs)]

    def corpus(sentences, idx) -> float:
        if mistake == "mean sentence BLEU":  # sentences: each one's sentence BLEU
            return sum(sentences[i] for i in idx) / len(idx)
        picked = [sentences[i] for i in idx]
        return bleu.bleu_from_counts(
            [sum(s.counts[n] for s in picked) for n in range(bleu.MAX_ORDER)],
            [sum(s.totals[n] for s in picked) for n in range(bleu.MAX_ORDER)],
            sum(s.sys_len for s in picked), sum(s.ref_len for s in picked)).score

    if mistake == "mean sentence BLEU":
        a, b = ([bleu.sentence_bleu(h, r).score for h, r in zip(hyps, refs)]
                for hyps in (hyps_a, hyps_b))
    else:
        a, b = stats(hyps_a), stats(hyps_b)
    rng = random.Random(seed)
    N, wins = len(refs), 0
    for _ in range(n_samples):
        idx = rng.sample(range(N), N) if mistake == "no replacement" else \
            rng.choices(range(N), k=N)
        idx_b = rng.choices(range(N), k=N) if mistake == "unpaired" else idx
        score_a, score_b = corpus(a, idx), corpus(b, idx_b)
        wins += score_a >= score_b if mistake == "ties win" else score_a > score_b
    return wins / n_samples


_BOOTSTRAP_MISTAKES = {
    "no replacement": "every resample holds each sentence exactly once (drawn without "
                      "replacement), so it is the test set again and every resample gives "
                      "the same verdict; draw N indices WITH replacement: "
                      "rng.choices(range(N), k=N)",
    "ties win": "you counted ties as wins for A: count the resamples where A's BLEU is "
                "strictly higher (here a third of the resamples leave out the only sentence "
                "where the systems differ, and tie)",
    "unpaired": "you resampled the two systems independently; the test is PAIRED: score A "
                "and B on the same resampled sentences, so that only the systems differ, "
                "not the sentences",
    "mean sentence BLEU": "you compared the means of sentence BLEUs; compare corpus BLEU, "
                          "whose n-gram counts are added over the resample before one score is "
                          "computed (it weighs the long sentences' many n-grams, the mean "
                          "weighs every sentence the same)",
}


def check_paired_bootstrap(fn) -> CheckResult:
    """Check `fn(hyps_a, hyps_b, refs, n_samples, seed) -> share of resamples where A's corpus
    BLEU is strictly higher than B's`, against `paired_bootstrap_reference`.

    Any sampler that draws N indices with replacement from random.Random(seed) is right: an
    answer equal to the reference's is accepted at once, another one within 0.09 of a
    4,000-resample estimate (about 4 standard errors of the difference, with 500 resamples).
    """
    n_samples, tolerance = 500, 0.09

    def case(name: str, corpus, mistakes: tuple[str, ...]) -> str:
        hyps_a, hyps_b, refs = corpus()
        exact = paired_bootstrap_reference(hyps_a, hyps_b, refs, n_samples, 0)
        got = call(fn, hyps_a, hyps_b, refs, n_samples, 0, names=BOOTSTRAP_NAMES)
        if isinstance(got, bool) or not isinstance(got, (int, float)):
            raise Mismatch(f"return the share of resamples where A wins, a number between 0 "
                           f"and 1, got {type(got).__name__}")
        if got > 1 and math.isclose(got / n_samples, exact, abs_tol=tolerance):
            raise Mismatch(f"{name}: you returned the number of wins ({got}); return their "
                           f"share of the {n_samples} resamples")
        if got == exact:
            return f"{name}: {got:.3f}"
        estimate = paired_bootstrap_reference(hyps_a, hyps_b, refs, 4000, 12345)
        if abs(got - estimate) <= tolerance:
            return f"{name}: {got:.3f} (about {estimate:.3f})"
        if abs((1 - got) - estimate) <= tolerance:
            raise Mismatch(f"{name}: you returned {got:.3f}, the share of resamples where A "
                           f"does NOT win (a p-value for 'A is better'); return the share "
                           f"where A wins, about {estimate:.3f}")
        for mistake in mistakes:  # those this corpus tells apart from the right answer
            why = _BOOTSTRAP_MISTAKES[mistake]
            wrong = paired_bootstrap_reference(hyps_a, hyps_b, refs, n_samples, 0, mistake)
            if got == wrong or (abs(got - wrong) <= 0.05 and abs(wrong - estimate) > 0.12):
                raise Mismatch(f"{name}: you returned {got:.3f}, expected about "
                               f"{estimate:.3f}: {why}")
        raise Mismatch(f"{name}: you returned {got:.3f}, expected about {estimate:.3f} (the "
                       f"share of {n_samples} paired resamples, drawn with replacement, in "
                       f"which A's corpus BLEU is strictly higher than B's)")

    def reproducible() -> str:
        hyps_a, hyps_b, refs = one_difference_corpus()
        runs = [call(fn, hyps_a, hyps_b, refs, 200, seed, names=BOOTSTRAP_NAMES)
                for seed in (7, 7)]
        if runs[0] != runs[1]:
            raise Mismatch(f"the same seed gave {runs[0]} and then {runs[1]}: draw with "
                           f"random.Random(seed), not the global random module")
        return "the same seed gives the same answer"

    return run_checks(
        "paired bootstrap",
        # Without replacement every resample is the whole corpus: the same verdict each time.
        lambda: case("long sentences better in A, short ones in B", long_short_corpus,
                     ("no replacement", "mean sentence BLEU")),
        lambda: case("30 sentences where A and B differ on one", one_difference_corpus,
                     ("ties win", "unpaired")),
        reproducible,
    )
