"""Checkers for the exercises of "Wrap-up: translate your own sentences".

    check_buckets(bucket_by_length)    test sentences grouped by source length in tokens
    check_bucket_bleu(bucket_bleu)     one corpus BLEU per bucket, all references, = sacrebleu
    check_worst(worst_sentence)        the sentence whose translation has the lowest BLEU

The references are `lib.data.tokenize` (the model's tokens), `lib.evaluate.sacrebleu_score`
(sacrebleu's corpus BLEU with every reference) and `lib.bleu.sentence_bleu`; each checker also
computes the usual mistakes (whitespace words, averaged sentence BLEU, first reference only,
best instead of worst) and names them when the learner's answer matches one.
"""

from __future__ import annotations

from lib.bleu import sentence_bleu
from lib.checks.harness import CheckResult, Mismatch, call, run_checks
from lib.data import tokenize
from lib.evaluate import sacrebleu_score
from lib.validate import is_int

# ---------------------------------------------------------------------------------------------
# bucket_by_length(sources: list[str]) -> {n_tokens: [indices]}
# ---------------------------------------------------------------------------------------------

BUCKET_CASES = [
    ["I'm cold.", "Go!", "Tom isn't here.", "We won.", "Where are you going?", "Hi."],
    ["Let's go.", "I can't swim.", "It's a well-known fact, isn't it?", "Stop!",
     "Is this your book?", "Run."],
]


def bucket_reference(sources: list[str]) -> dict[int, list[int]]:
    """The reference answer: indices of the sentences with each number of tokens, in order."""
    buckets: dict[int, list[int]] = {}
    for i, s in enumerate(sources):
        buckets.setdefault(len(tokenize(s)), []).append(i)
    return buckets


def _group(sources, length) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for i, s in enumerate(sources):
        out.setdefault(length(s), []).append(i)
    return out


def _bucket_case(fn, sources: list[str]) -> str:
    got = call(fn, list(sources), names=("sources",))  # a fresh list: the cases stay
    if not isinstance(got, dict):
        raise Mismatch(f"return a dict {{number of tokens: [indices]}}, got "
                       f"{type(got).__name__}")
    got = {k: list(v) for k, v in got.items()}
    expected = bucket_reference(sources)
    if got == expected:
        return f"{len(sources)} sentences -> lengths {sorted(expected)}"
    if any(isinstance(i, str) for v in got.values() for i in v):
        raise Mismatch("the buckets must hold the sentences' indices (0, 1, ...), not the "
                       "sentences themselves")
    if got == _group(sources, lambda s: len(s.split())):
        raise Mismatch("you counted words separated by spaces; count the model's tokens with "
                       "lib.data.tokenize: \"I'm cold.\" is 4 tokens (I' m cold .), the "
                       "punctuation is a token too")
    if got == _group(sources, len):
        raise Mismatch("your keys are lengths in characters; count tokens with "
                       "lib.data.tokenize")
    shifted = {k: [i + 1 for i in v] for k, v in expected.items()}
    if got == shifted:
        raise Mismatch("your indices start at 1; Python lists (and the test set) start at 0")
    if sorted(got) != sorted(expected):
        raise Mismatch(f"your buckets are for lengths {sorted(got)}; the sentences have "
                       f"{sorted(expected)} tokens")
    for k in sorted(expected):
        if sorted(got[k]) == expected[k]:
            raise Mismatch(f"bucket {k} holds the right sentences but not in the order of the "
                           f"input; keep them in order ({expected[k]})")
        if got[k] != expected[k]:
            raise Mismatch(f"bucket {k} (sentences of {k} tokens) should be {expected[k]}, "
                           f"got {got[k]}")
    raise Mismatch("your buckets differ from the expected ones")


def check_buckets(fn) -> CheckResult:
    """`fn(sources)` groups sentence indices by their number of `lib.data.tokenize` tokens."""
    return run_checks("bucket by source length",
                      *[lambda c=c: _bucket_case(fn, c) for c in BUCKET_CASES])


# ---------------------------------------------------------------------------------------------
# bucket_bleu(hypotheses, references, buckets) -> {key: corpus BLEU of that bucket}
# ---------------------------------------------------------------------------------------------

HYPS = [
    "Je suis fatigué.", "Il fait froid aujourd'hui.", "Nous avons gagné.",
    "Elle est partie hier soir.", "Tom est ici.", "Je ne sais pas nager.",
    "C'est mon livre.", "Il pleut.",
]
REFS = [
    ["Je suis fatiguée.", "Je suis fatigué."],
    ["Aujourd'hui il fait froid.", "Il fait froid aujourd'hui."],
    ["Nous avons gagné."],
    ["Elle est partie hier au soir.", "Elle s'en est allée hier soir."],
    ["Tom n'est pas là.", "Tom est ici."],
    ["Je ne sais pas nager."],
    ["C'est mon livre à moi.", "Ce livre est à moi."],
    ["Il pleut.", "Il tombe des cordes."],
]
BUCKETS = {3: [0, 2, 4, 7], 4: [1, 5, 6], 5: [3]}


def bucket_bleu_reference(hypotheses, references, buckets) -> dict:
    return {k: sacrebleu_score([hypotheses[i] for i in idx],
                               [references[i] for i in idx]).score
            for k, idx in buckets.items()}


def _bleu_case(fn, hyps, refs, buckets) -> str:
    got = call(fn, list(hyps), [list(r) for r in refs], {k: list(v) for k, v in buckets.items()},
               names=("hypotheses", "references", "buckets"))
    if not isinstance(got, dict):
        raise Mismatch(f"return a dict {{bucket: BLEU}}, got {type(got).__name__}")
    if sorted(got) != sorted(buckets):
        raise Mismatch(f"return one score per bucket, keys {sorted(buckets)}; got "
                       f"{sorted(got)}")
    expected = bucket_bleu_reference(hyps, refs, buckets)

    def same(a: dict) -> bool:
        return all(abs(float(got[k]) - a[k]) < 0.01 for k in buckets)

    if same(expected):
        return ", ".join(f"bucket {k}: {v:.1f}" for k, v in expected.items())
    for k, v in got.items():
        if 0 <= float(v) <= 1 and expected[k] > 1:
            raise Mismatch(f"bucket {k}: got {float(v):.3f}; report BLEU on the 0-100 scale "
                           f"(.score), as sacrebleu does")
    mean_sentence = {k: sum(sentence_bleu(hyps[i], refs[i]).score for i in idx) / len(idx)
                     for k, idx in buckets.items()}
    if same(mean_sentence):
        raise Mismatch("you averaged sentence BLEU over the bucket; a bucket's BLEU is a "
                       "corpus BLEU: sum the n-gram counts of all its sentences, then combine "
                       "(lib.bleu.corpus_bleu or lib.evaluate.sacrebleu_score)")
    if same(bucket_bleu_reference(hyps, [r[:1] for r in refs], buckets)):
        raise Mismatch("you scored against the first reference only; pass every reference of "
                       "each sentence (a test sentence can have several translations)")
    whole = sacrebleu_score(list(hyps), [list(r) for r in refs]).score
    if all(abs(float(v) - whole) < 0.01 for v in got.values()):
        raise Mismatch("every bucket has the BLEU of the whole corpus; score only the "
                       "sentences whose indices are in the bucket")
    k = next(k for k in buckets if abs(float(got[k]) - expected[k]) >= 0.01)
    raise Mismatch(f"bucket {k} (sentences {buckets[k]}): got {float(got[k]):.2f}, expected "
                   f"{expected[k]:.2f}")


def check_bucket_bleu(fn) -> CheckResult:
    """`fn(hypotheses, references, buckets)`: corpus BLEU (0-100) of each bucket's sentences."""
    other = {"short": [0, 2, 7], "long": [1, 3, 4, 5, 6]}
    return run_checks("BLEU per length bucket",
                      lambda: _bleu_case(fn, HYPS, REFS, BUCKETS),
                      lambda: _bleu_case(fn, HYPS, REFS, other))


# ---------------------------------------------------------------------------------------------
# worst_sentence(hypotheses, references) -> index of the lowest sentence BLEU
# ---------------------------------------------------------------------------------------------

WORST_CASES = [
    # 1: against the first reference alone sentence 1 would be the worst; with all, sentence 2
    (["Nous avons gagné.", "Il fait très beau.", "Je veux un chat noir."],
     [["Nous avons gagné."], ["Le temps est magnifique.", "Il fait très beau."],
      ["Je veux un chien noir."]]),
    # 2: two sentences share the lowest score: the first of them is the answer
    (["Bonjour.", "Il pleut des cordes.", "Merci beaucoup.", "Il pleut des cordes."],
     [["Bonjour."], ["Tom est parti."], ["Merci beaucoup."], ["Tom est parti."]]),
]


def worst_reference(hypotheses, references) -> int:
    scores = [sentence_bleu(h, r).score for h, r in zip(hypotheses, references)]
    return min(range(len(scores)), key=lambda i: (scores[i], i))


def _worst_case(fn, hyps, refs) -> str:
    got = call(fn, list(hyps), [list(r) for r in refs], names=("hypotheses", "references"))
    if not is_int(got):
        try:
            import torch

            if torch.is_tensor(got) and got.numel() == 1:
                got = int(got)
        except ImportError:  # pragma: no cover
            pass
    if not is_int(got):
        raise Mismatch(f"return the index of the sentence (an int), got {type(got).__name__}")
    expected = worst_reference(hyps, refs)
    scores = [sentence_bleu(h, r).score for h, r in zip(hyps, refs)]
    if got == expected:
        return f"sentence {got} (BLEU {scores[got]:.1f}) of {len(hyps)}"
    if not 0 <= got < len(hyps):
        raise Mismatch(f"index {got} is outside the {len(hyps)} sentences")
    if got == worst_reference(hyps, [r[:1] for r in refs]):
        raise Mismatch(f"sentence {got} is the worst against the first reference only; "
                       f"score each hypothesis against all its references")
    if scores[got] == max(scores) and scores[got] > min(scores):
        raise Mismatch(f"sentence {got} has the HIGHEST BLEU ({scores[got]:.1f}); we want "
                       f"the lowest")
    if scores[got] == scores[expected]:
        raise Mismatch(f"sentences {got} and {expected} share the lowest BLEU "
                       f"({scores[got]:.1f}); return the first of them, {expected}")
    raise Mismatch(f"sentence {got} has BLEU {scores[got]:.1f}, but sentence {expected} has "
                   f"only {scores[expected]:.1f}")


def check_worst(fn) -> CheckResult:
    """`fn(hypotheses, references)`: index of the lowest sentence BLEU, the first on ties."""
    return run_checks("the worst-translated sentence",
                      *[lambda c=c: _worst_case(fn, *c) for c in WORST_CASES])
