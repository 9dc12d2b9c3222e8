"""Checkers for the BLEU chapter's exercises, against `lib.bleu` and `sacrebleu`.

* `check_clipping_prediction(prediction)`: the learner's hand count {n: (matches, total)} of
  the clipped n-gram matches of `CLIP_HYP` against `CLIP_REFS`, for n = 1 and 2.
* `check_brevity_penalty(fn)`: `fn(hyp_len, ref_lens)` -> BP, with the reference length closest
  to the hypothesis length (ties go to the shorter reference).
* `check_corpus_vs_mean(fn)`: `fn()` -> (hyps, refs), a small test set of the learner's own on
  which corpus BLEU and the mean of sentence BLEUs are at least `MIN_GAP` points apart.
* `check_fooling(fn)`: `fn()` -> (bad, good): a bad translation of `FOOL_SOURCE` that scores at
  least `FOOL_GAP` sentence-BLEU points above a good one, against `FOOL_REF`.
* `check_paired_bootstrap(fn)`: `fn(hyps_a, hyps_b, refs, n_samples, seed)` -> the share of
  paired resamples (with replacement) of the test set in which A's corpus BLEU beats B's.

Each returns a `lib.checks.harness.CheckResult` that says in words what is wrong.
"""

from __future__ import annotations

import math
import random
from collections import Counter

from lib import bleu
from lib.checks.harness import CheckResult, Mismatch, call, run_checks
from lib.validate import is_int, is_number

# The clipping exercise: a stuttering output against two references. The typical mistakes give
# different numbers here: not clipping (8 unigram matches), clipping with the counts added over
# the references (7), using the first reference only (4); the right count is 5.
CLIP_HYP = "le chat voit le chat voit le chat"
CLIP_REFS = ["le chat voit le chien", "un chat voit un chat"]
CLIP_ORDERS = (1, 2)


def _ngrams(tokens, n) -> Counter:
    return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def _pair(got, what: str) -> tuple:
    if not isinstance(got, (tuple, list)) or len(got) < 2:
        raise Mismatch(f"return a pair ({what}), got {type(got).__name__}: {str(got)[:60]}")
    return got[0], got[1]


# ---------------------------------------------------------------------------------------------
# Exercise: predict clipped n-gram counts by hand
# ---------------------------------------------------------------------------------------------


def _clip_case(fn, hyp, refs, n) -> None:
    """`fn(hyp, refs, n)` -> (matches, total) must equal lib.bleu.clipped_matches; a wrong
    answer is compared with each typical mistake's, and the message names the mistake."""
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
    raise Mismatch(f"{where}: matches = {matches}, expected {expected.matches}; count each "
                   f"distinct n-gram, credit it min(its count, its largest count in one "
                   f"reference), and add up")


def check_clipping_prediction(prediction) -> CheckResult:
    """Check a hand count `{n: (matches, total)}` of CLIP_HYP against CLIP_REFS, n = 1 and 2.

    A `...` left in the skeleton means "not done yet".
    """
    hyp, refs = CLIP_HYP.split(), [r.split() for r in CLIP_REFS]

    def form() -> str:
        if not isinstance(prediction, dict):
            raise Mismatch(f"write the prediction as a dict {{1: (matches, total), 2: (matches, "
                           f"total)}}, got {type(prediction).__name__}")
        if any(v is Ellipsis or (isinstance(v, (tuple, list)) and Ellipsis in v)
               for v in prediction.values()):
            raise NotImplementedError
        missing = [n for n in CLIP_ORDERS if n not in prediction]
        if missing:
            raise Mismatch(f"the prediction has no entry for n = {missing[0]}; give "
                           f"{{1: (matches, total), 2: (matches, total)}}")
        for n in CLIP_ORDERS:
            m, t = _pair(prediction[n], f"matches, total for n = {n}")
            if not (is_int(m) and is_int(t)):
                raise Mismatch(f"n = {n}: give two whole numbers (matches, total), got "
                               f"{prediction[n]!r}")
        return ""

    def order(n: int):
        def check() -> str:
            _clip_case(lambda h, r, k: tuple(prediction[k]), hyp, refs, n)
            return f"n = {n}: {prediction[n][0]} of {prediction[n][1]}"
        return check

    return run_checks("clipped counts by hand", form, *(order(n) for n in CLIP_ORDERS))


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
        if not is_number(got, finite=True):
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
# Exercise: a test set where corpus BLEU and the mean of sentence BLEUs part
# ---------------------------------------------------------------------------------------------

MIN_GAP = 10.0  # BLEU points between corpus BLEU and the mean of sentence BLEUs


def corpus_and_mean(hyps: list[str], refs: list[list[str]]) -> tuple[float, float]:
    """(corpus BLEU, mean of sentence BLEUs), both with lib.bleu's defaults as in the chapter."""
    corpus = bleu.corpus_bleu(hyps, refs, layout="per-hypothesis").score  # checked by _test_set
    mean = sum(bleu.sentence_bleu(h, r).score for h, r in zip(hyps, refs)) / len(hyps)
    return corpus, mean


def _test_set(got) -> tuple[list[str], list[list[str]]]:
    """The learner's (hyps, refs), checked for form; a Mismatch says what is wrong with it."""
    hyps, refs = _pair(got, "hyps, refs")
    if not isinstance(hyps, (list, tuple)) or not all(isinstance(h, str) for h in hyps):
        raise Mismatch("hyps must be a list of hypothesis strings, e.g. [\"Le chat dort.\", "
                       "\"Il pleut.\"]")
    if not isinstance(refs, (list, tuple)) or len(refs) != len(hyps):
        got = len(refs) if isinstance(refs, (list, tuple)) else repr(refs)
        raise Mismatch(f"refs must be a list with one entry per hypothesis: {len(hyps)} "
                       f"hypotheses, got {got}")
    for i, r in enumerate(refs):
        if isinstance(r, str):
            raise Mismatch(f"refs[{i}] is one string; each entry of refs is the LIST of "
                           f"references of its hypothesis: write [{r!r}]")
        if not isinstance(r, (list, tuple)) or not r or not all(isinstance(x, str) for x in r):
            raise Mismatch(f"refs[{i}] must be a non-empty list of reference strings, got {r!r}")
    if len(hyps) < 2:
        raise Mismatch("with a single sentence there is nothing to average: corpus BLEU is that "
                       "sentence's BLEU; use at least two sentences")
    short = [h for h in hyps if len(bleu.tokenize(h)) < bleu.MAX_ORDER]
    if len(short) == len(hyps):
        raise Mismatch(f"every hypothesis has fewer than {bleu.MAX_ORDER} tokens, so a gap "
                       f"would come from sentence BLEU skipping the orders a sentence lacks "
                       f"(its 'effective order'), not from summing counts; give at least one "
                       f"hypothesis of {bleu.MAX_ORDER} tokens or more")
    if len({(h, tuple(r)) for h, r in zip(hyps, refs)}) == 1:
        raise Mismatch("every sentence is the same (hypothesis and references): summing the "
                       "counts of copies gives the same precisions and the same BP, so both "
                       "scores agree; make the sentences differ in length and in quality")
    return list(hyps), [list(r) for r in refs]


def check_corpus_vs_mean(fn) -> CheckResult:
    """Check `fn() -> (hyps, refs)`: a test set on which corpus BLEU and the mean of sentence
    BLEUs (lib.bleu defaults) are at least MIN_GAP points apart. The message reports both."""
    def gap() -> str:
        hyps, refs = _test_set(call(fn))
        corpus, mean = corpus_and_mean(hyps, refs)
        numbers = f"corpus BLEU {corpus:.1f}, mean of sentence BLEUs {mean:.1f}"
        if abs(corpus - mean) < MIN_GAP:
            raise Mismatch(f"{numbers}: only {abs(corpus - mean):.1f} points apart, fewer than "
                           f"{MIN_GAP:.0f}. Corpus BLEU weighs each sentence by its number of "
                           f"n-grams, the mean weighs every sentence the same: try sentences of "
                           f"very different lengths that are translated very differently well")
        higher = "corpus BLEU" if corpus > mean else "the mean"
        return f"{numbers}: {abs(corpus - mean):.1f} points apart, {higher} higher"

    return run_checks("corpus BLEU against the mean of sentence BLEUs", gap)


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

    Each resample is scored by lib.bleu.resampled_bleu from lib.bleu.sentence_stats (the same
    score as lib.bleu.corpus_bleu on the resampled lists).
    `mistake` computes a typical wrong version, to recognise it in a learner's answer:
    "unpaired", "no replacement", "ties win" or "mean sentence BLEU".
    """
    def corpus(sentences, idx) -> float:
        if mistake == "mean sentence BLEU":  # sentences: each one's sentence BLEU
            return sum(sentences[i] for i in idx) / len(idx)
        return bleu.resampled_bleu(sentences, idx)

    if mistake == "mean sentence BLEU":
        a, b = ([bleu.sentence_bleu(h, r).score for h, r in zip(hyps, refs)]
                for hyps in (hyps_a, hyps_b))
    else:
        a, b = bleu.sentence_stats(hyps_a, refs), bleu.sentence_stats(hyps_b, refs)
    rng = random.Random(seed)
    N, wins = len(refs), 0
    for _ in range(n_samples):
        idx = rng.sample(range(N), N) if mistake == "no replacement" else \
            rng.choices(range(N), k=N)
        idx_b = rng.choices(range(N), k=N) if mistake == "unpaired" else idx
        score_a, score_b = corpus(a, idx), corpus(b, idx_b)
        wins += score_a >= score_b if mistake == "ties win" else score_a > score_b
    return wins / n_samples


_NEW_GENERATOR = ("you made a new random.Random(seed) for every resample, so every resample is "
                  "identical (the same draws, the same verdict); make one rng = "
                  "random.Random(seed) before the loop and call rng.choices(range(N), k=N) "
                  "for each resample")

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

    def new_generator(hyps_a, hyps_b, refs) -> bool:
        """A new random.Random(seed) per resample makes every resample of a call the same, so
        each call returns 0 or 1, and which one depends on the seed. Other answers of 0 or 1
        (no replacement, the mean of sentence BLEUs) give the same one for every seed."""
        shares = {call(fn, hyps_a, hyps_b, refs, 20, seed, names=BOOTSTRAP_NAMES)
                  for seed in range(8)}
        return shares == {0, 1}

    def case(name: str, corpus, mistakes: tuple[str, ...]) -> str:
        hyps_a, hyps_b, refs = corpus()
        exact = paired_bootstrap_reference(hyps_a, hyps_b, refs, n_samples, 0)
        got = call(fn, hyps_a, hyps_b, refs, n_samples, 0, names=BOOTSTRAP_NAMES)
        if not is_number(got):
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
        if got in (0, 1) and new_generator(hyps_a, hyps_b, refs):
            raise Mismatch(f"{name}: you returned {got:.3f}, expected about {estimate:.3f}: "
                           f"{_NEW_GENERATOR}")
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
        # The global random module starts each call from another state, so an answer drawn from
        # it differs for sure, not only by chance; its state is put back afterwards.
        before = random.getstate()
        runs = []
        try:
            for state in (1, 2):
                random.seed(state)
                runs.append(call(fn, hyps_a, hyps_b, refs, 200, 7, names=BOOTSTRAP_NAMES))
        finally:
            random.setstate(before)
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


# ---------------------------------------------------------------------------------------------
# corpus_bp(hyp_lens, ref_lens) -> the brevity penalty of a whole test set
# ---------------------------------------------------------------------------------------------

CORPUS_BP_NAMES = ("hyp_lens", "ref_lens")


def corpus_bp_reference(hyp_lens, ref_lens) -> float:
    """BP of a corpus: the lengths are added over the sentences first (c = sum of hypothesis
    lengths, r = sum of each sentence's closest reference length), then BP(c, r)."""
    c = sum(hyp_lens)
    r = sum(bleu.closest_ref_length(h, refs) for h, refs in zip(hyp_lens, ref_lens))
    return bleu.brevity_penalty(c, r)


def check_corpus_bp(fn) -> CheckResult:
    """`fn(hyp_lens, ref_lens)` -> the corpus brevity penalty, for hypothesis lengths (N,) and,
    for each sentence, the lengths of its references."""
    cases = [
        ([3, 9], [[5], [7]], "one output 2 shorter, one 2 longer: they cancel"),
        ([3, 4], [[5, 9], [6]], "every output too short"),
        ([4, 10, 7], [[5, 12], [6, 11], [4, 8]], "the closest reference is not the shortest"),
        ([2, 12], [[6], [6]], "a very short and a very long output"),
    ]

    def sentence_bps(hyps, refs):
        return [bleu.brevity_penalty(h, bleu.closest_ref_length(h, r)) for h, r in zip(hyps, refs)]

    def case(hyps, refs, note):
        def check():
            got = call(fn, list(hyps), [list(r) for r in refs], names=CORPUS_BP_NAMES)
            if not is_number(got, finite=True):
                raise Mismatch(f"return the penalty as a number, got {got!r}")
            want = corpus_bp_reference(hyps, refs)
            if math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12):
                return note
            where = f"hypothesis lengths {hyps}, reference lengths {refs} ({note})"
            bps = sentence_bps(hyps, refs)
            if math.isclose(got, sum(bps) / len(bps), rel_tol=1e-9):
                raise Mismatch(f"{where}: you averaged the sentences' penalties; corpus BLEU "
                               f"adds the lengths over the whole test set first and computes "
                               f"one penalty, BP = {want:.4f}, so a long output can make up "
                               f"for a short one")
            if math.isclose(got, math.prod(bps), rel_tol=1e-9):
                raise Mismatch(f"{where}: you multiplied the sentences' penalties; add the "
                               f"lengths first, then compute one penalty, BP = {want:.4f}")
            shortest = bleu.brevity_penalty(sum(hyps), sum(min(r) for r in refs))
            if math.isclose(got, shortest, rel_tol=1e-9) and not math.isclose(shortest, want):
                raise Mismatch(f"{where}: you used each sentence's SHORTEST reference; use the "
                               f"one closest in length to that sentence's output, "
                               f"BP = {want:.4f}")
            raise Mismatch(f"{where}: got BP = {got:.4f}, expected {want:.4f}")
        return check

    return run_checks("corpus brevity penalty", *[case(*c) for c in cases])


# ---------------------------------------------------------------------------------------------
# Exercise: fooling BLEU
# ---------------------------------------------------------------------------------------------

FOOL_SOURCE = "I am very tired."
FOOL_REF = "Je suis très fatigué."
FOOL_GAP = 10.0  # the bad translation must beat the good one by this many points


def check_fooling(fn) -> CheckResult:
    """Check `fn() -> (bad, good)`: two French strings, the first a bad translation of
    FOOL_SOURCE, the second a good one, on which sentence BLEU against FOOL_REF puts the bad
    one at least FOOL_GAP points higher. The checker measures the scores; whether the first
    is bad and the second good is the learner's judgement, which the message asks for."""
    def fooled() -> str:
        got = call(fn)
        bad, good = _pair(got, "bad, good")
        for name, text in (("bad", bad), ("good", good)):
            if not isinstance(text, str) or not text.strip():
                raise Mismatch(f"{name} must be a French sentence (a non-empty string), got "
                               f"{text!r:.60}")
        ref_tokens = bleu.tokenize(FOOL_REF)
        for name, text in (("bad", bad), ("good", good)):
            if bleu.tokenize(text) == ref_tokens:
                raise Mismatch(f"{name} is the reference itself, a perfect translation that "
                               f"scores 100; find a different sentence")
        s_bad = bleu.sentence_bleu(bad, [FOOL_REF]).score
        s_good = bleu.sentence_bleu(good, [FOOL_REF]).score
        numbers = f"BLEU of bad {s_bad:.1f}, of good {s_good:.1f}"
        if s_bad < s_good:
            raise Mismatch(f"{numbers}: the good translation scores higher, as BLEU should; "
                           f"return (bad, good) with the BAD one scoring higher (or did you "
                           f"swap them?)")
        if s_bad - s_good < FOOL_GAP:
            raise Mismatch(f"{numbers}: only {s_bad - s_good:.1f} points apart, fewer than "
                           f"{FOOL_GAP:.0f}. A wrong word in an otherwise copied sentence keeps "
                           f"most n-grams; a right translation in other words keeps few")
        return (f"{numbers}: BLEU prefers the bad one by {s_bad - s_good:.1f} points. The "
                f"checker cannot judge meaning: say in one sentence why the first is a bad "
                f"translation of {FOOL_SOURCE!r} and the second a good one")

    return run_checks("fooling BLEU", fooled)
