"""lib.checks.bleu accepts the reference solutions and names typical mistakes."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest
import torch
from conftest import assert_rejects, skeleton

from lib import bleu
from lib.checks import bleu as checks


def ngrams(tokens, n):
    return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def clip_by_hand(hyp, refs, n):
    """An independent count: each distinct n-gram is credited min(count, largest count in
    one reference)."""
    counts = ngrams(hyp, n)
    best = {g: max(ngrams(r, n)[g] for r in refs) for g in counts}
    return sum(min(c, best[g]) for g, c in counts.items()), sum(counts.values())


def _bp(c, r):
    return 1.0 if c >= r else (0.0 if c == 0 else math.exp(1 - r / c))


def bp_ok(c, refs):
    return _bp(c, min(refs, key=lambda r: (abs(r - c), r)))


def bp_shortest(c, refs):
    return _bp(c, min(refs))


def bp_ties_to_longer(c, refs):
    return _bp(c, min(refs, key=lambda r: (abs(r - c), -r)))


def not_done(*args):
    raise NotImplementedError


CLIP = checks.CLIP_HYP.split(), [r.split() for r in checks.CLIP_REFS]


def test_clipping_case_values_by_hand():
    # le x3, chat x3, voit x2; "le" is twice in reference 1, "chat" twice in reference 2,
    # "voit" once in each
    assert clip_by_hand(*CLIP, 1) == (5, 8) == tuple(bleu.clipped_matches(*CLIP, 1)[:2])
    # le chat x3, chat voit x2, voit le x2: each at most once in a single reference
    assert clip_by_hand(*CLIP, 2) == (3, 7) == tuple(bleu.clipped_matches(*CLIP, 2)[:2])


def test_clipping_prediction():
    result = checks.check_clipping_prediction({1: (5, 8), 2: (3, 7)})
    assert result.ok, str(result)
    assert "n = 1: 5 of 8" in str(result) and "n = 2: 3 of 7" in str(result)
    assert not checks.check_clipping_prediction({1: (..., ...), 2: (..., ...)}).done


@pytest.mark.parametrize("prediction, words", [
    ({1: (8, 8), 2: (3, 7)}, ["not clipped", "'le'", "matches = 5"]),
    ({1: (7, 8), 2: (3, 7)}, ["ADDED over the references"]),
    ({1: (4, 8), 2: (3, 7)}, ["only used the first reference"]),
    ({1: (5, 3), 2: (3, 7)}, ["DISTINCT"]),
    ({1: (5, 8), 2: (3, 8)}, ["L - n + 1"]),
    ({1: (5, 8), 2: (4, 7)}, ["ADDED over the references"]),
    ({1: (5, 8), 2: (5, 7)}, ["matches = 5, expected 3"]),
    ({1: (5, 8)}, ["no entry for n = 2"]),
    ([(5, 8), (3, 7)], ["dict"]),
    ({1: (5.0, 8), 2: (3, 7)}, ["whole numbers"]),
    ({1: 5, 2: 3}, ["return a pair"]),
])
def test_clipping_prediction_names_mistakes(prediction, words):
    assert_rejects(checks.check_clipping_prediction(prediction), *words)


def test_brevity_penalty():
    assert checks.check_brevity_penalty(bp_ok).ok
    result = checks.check_brevity_penalty(bp_shortest)
    assert not result.ok and "SHORTEST" in str(result)
    result = checks.check_brevity_penalty(bp_ties_to_longer)
    assert not result.ok and "tie goes to the shorter" in str(result)
    assert not checks.check_brevity_penalty(not_done).done


def long_and_short():
    """One long sentence translated exactly, one short one badly: corpus BLEU counts n-grams
    (mostly the long sentence's), the mean counts sentences."""
    return (["le petit chat noir de la voisine dort sur le canapé rouge du salon .",
             "il pleut des cordes ."],
            [["le petit chat noir de la voisine dort sur le canapé rouge du salon ."],
             ["il fait un temps de chien ."]])


def test_corpus_vs_mean_accepts_a_real_gap():
    hyps, refs = long_and_short()
    corpus = bleu.corpus_bleu(hyps, refs).score
    mean = sum(bleu.sentence_bleu(h, r).score for h, r in zip(hyps, refs)) / 2
    assert corpus - mean >= checks.MIN_GAP  # independent of the checker's own helper
    assert (corpus, mean) == checks.corpus_and_mean(hyps, refs)
    result = checks.check_corpus_vs_mean(long_and_short)
    assert result.ok, str(result)
    assert f"corpus BLEU {corpus:.1f}, mean of sentence BLEUs {mean:.1f}" in str(result)
    assert f"{corpus - mean:.1f} points apart, corpus BLEU higher" in str(result)
    assert not checks.check_corpus_vs_mean(not_done).done


@pytest.mark.parametrize("answer, words", [
    ((["il pleut des cordes ."], [["il fait un temps de chien ."]]), ["single sentence"]),
    ((["Oui.", "Non !"], [["Oui."], ["Non."]]), ["fewer than 4 tokens", "effective order"]),
    ((["il pleut des cordes ."] * 3, [["il fait un temps de chien ."]] * 3),
     ["every sentence is the same"]),
    ((["le chat dort .", "le chien dort ."], ["le chat dort .", "le chien dort ."]),
     ["refs[0] is one string", "['le chat dort .']"]),
    ((["le chat dort .", "le chien dort ."], [["le chat dort ."]]),
     ["one entry per hypothesis: 2 hypotheses, got 1"]),
    ((["le chat dort sur le lit .", "le chien dort dans le jardin ."],
      [["le chat dort sur le lit ."], ["le chien dort dans le jardin ."]]),
     ["only 0.0 points apart", "very different lengths"]),
    ("le chat dort .", ["return a pair"]),
])
def test_corpus_vs_mean_names_mistakes(answer, words):
    assert_rejects(checks.check_corpus_vs_mean(lambda: answer), *words)


def test_inputs_changed_in_place_are_named():
    def sorts_lengths(c, refs):
        refs.sort()
        return bp_ok(c, refs)

    result = checks.check_brevity_penalty(sorts_lengths)
    assert not result.ok and result.done
    assert "your function changed its input `refs` in place (e.g. refs.sort()" in str(result)
    assert "build a new list instead" in str(result)


# --- paired bootstrap -------------------------------------------------------------------------


def bootstrap_naive(hyps_a, hyps_b, refs, n_samples, seed):
    """The chapter's solution: corpus BLEU of both systems on each resample."""
    rng = random.Random(seed)
    n, wins = len(refs), 0
    for _ in range(n_samples):
        idx = rng.choices(range(n), k=n)  # N sentences, with replacement
        a = bleu.corpus_bleu([hyps_a[i] for i in idx], [refs[i] for i in idx]).score
        b = bleu.corpus_bleu([hyps_b[i] for i in idx], [refs[i] for i in idx]).score
        wins += a > b
    return wins / n_samples


def bootstrap_chapter(hyps_a, hyps_b, refs, n_samples, seed):
    """The solution given to the chapter: per-sentence statistics, weighted by the draws
    (1,000 resamples of the 2,000 test sentences in about a second)."""
    def sentence_stats(hyps):  # (N, 10): matches and totals for n = 1..4, then c and r
        rows = []
        for hyp, hyp_refs in zip(hyps, refs):
            s = bleu.corpus_bleu([hyp], [hyp_refs])
            rows.append(list(s.counts) + list(s.totals) + [s.sys_len, s.ref_len])
        return torch.tensor(rows)

    def corpus_score(stats):  # stats (10,) summed over a resample -> corpus BLEU
        s = stats.tolist()
        return bleu.bleu_from_counts(s[:4], s[4:8], s[8], s[9]).score

    a, b = sentence_stats(hyps_a), sentence_stats(hyps_b)
    rng = random.Random(seed)
    n, wins = len(refs), 0
    for _ in range(n_samples):
        idx = torch.tensor(rng.choices(range(n), k=n))  # n draws with replacement
        # the drawn sentences' rows (a repeated index counts again), added up per system
        wins += corpus_score(a[idx].sum(0)) > corpus_score(b[idx].sum(0))  # the same sentences
    return wins / n_samples


def bootstrap(sample="choices", paired=True, ties=False, metric="corpus", answer="share",
              rng_of=random.Random, new_generator=False):
    """A fast learner's bootstrap (per-sentence statistics summed), right by default, with
    one switch per typical mistake."""
    def fn(hyps_a, hyps_b, refs, n_samples, seed):
        n = len(refs)
        stats = [[bleu.corpus_bleu([h], [r]) for h, r in zip(hyps, refs)]
                 for hyps in (hyps_a, hyps_b)]
        sent = [[bleu.sentence_bleu(h, r).score for h, r in zip(hyps, refs)]
                for hyps in (hyps_a, hyps_b)]

        def score(system, idx):
            if metric == "mean sentence":
                return sum(sent[system][i] for i in idx) / len(idx)
            picked = [stats[system][i] for i in idx]
            return bleu.bleu_from_counts(
                [sum(s.counts[k] for s in picked) for k in range(4)],
                [sum(s.totals[k] for s in picked) for k in range(4)],
                sum(s.sys_len for s in picked), sum(s.ref_len for s in picked)).score

        rng = rng_of(seed)
        wins = 0
        for _ in range(n_samples):
            if new_generator:  # the slip: random.Random(seed) made again for each resample
                rng = rng_of(seed)
            if sample == "choices":
                idx = rng.choices(range(n), k=n)
            elif sample == "randrange":
                idx = [rng.randrange(n) for _ in range(n)]
            else:
                idx = list(range(n))
                rng.shuffle(idx)
            idx_b = idx if paired else rng.choices(range(n), k=n)
            a, b = score(0, idx), score(1, idx_b)
            wins += a >= b if ties else a > b
        return {"share": wins / n_samples, "count": wins, "p": 1 - wins / n_samples}[answer]
    return fn


class _GlobalRandom:
    """random.Random(seed) forgotten: the module's global generator, never seeded."""

    def __init__(self, seed):
        pass

    def __getattr__(self, name):
        return getattr(random, name)


def test_bootstrap_reference_sums_what_corpus_bleu_computes():
    hyps_a, _, refs = checks.long_short_corpus()
    idx = random.Random(1).choices(range(len(refs)), k=len(refs))
    picked = [bleu.corpus_bleu([hyps_a[i]], [refs[i]]) for i in idx]
    summed = bleu.bleu_from_counts(
        [sum(s.counts[k] for s in picked) for k in range(4)],
        [sum(s.totals[k] for s in picked) for k in range(4)],
        sum(s.sys_len for s in picked), sum(s.ref_len for s in picked)).score
    assert summed == bleu.corpus_bleu([hyps_a[i] for i in idx], [refs[i] for i in idx]).score
    # the two corpora pull corpus BLEU and the mean of sentence BLEUs apart, as designed
    a, b, refs = checks.long_short_corpus()
    assert bleu.corpus_bleu(a, refs).score > bleu.corpus_bleu(b, refs).score
    mean = [sum(bleu.sentence_bleu(h, r).score for h, r in zip(x, refs)) for x in (a, b)]
    assert mean[0] < mean[1]


def test_bootstrap_accepts_right_answers():
    for fn in (bootstrap_naive, bootstrap_chapter, bootstrap(), bootstrap(sample="randrange")):
        result = checks.check_paired_bootstrap(fn)
        assert result.ok, result


@pytest.mark.parametrize("wrong, words", [
    (bootstrap(sample="shuffle"), ["WITH replacement", "rng.choices"]),
    (bootstrap(ties=True), ["ties as wins", "strictly higher"]),
    (bootstrap(paired=False), ["independently", "PAIRED"]),
    (bootstrap(metric="mean sentence"), ["long sentences better in A",
                                         "means of sentence BLEUs"]),
    (bootstrap(answer="p"), ["does NOT win"]),
    (bootstrap(answer="count"), ["number of wins", "share"]),
    (bootstrap(rng_of=_GlobalRandom), ["same seed", "random.Random(seed)"]),
    (bootstrap(new_generator=True), [
        "you made a new random.Random(seed) for every resample, so every resample is identical",
        "make one rng = random.Random(seed) before the loop"]),
    (bootstrap(new_generator=True, sample="randrange"), [
        "new random.Random(seed) for every resample", "rng.choices(range(N), k=N)"]),
])
def test_bootstrap_names_typical_mistakes(wrong, words):
    assert_rejects(checks.check_paired_bootstrap(wrong), *words)


def test_bootstrap_skeleton_and_changed_inputs():
    assert not checks.check_paired_bootstrap(not_done).done

    def extends_refs(hyps_a, hyps_b, refs, n_samples, seed):
        for r in refs:
            r.append(r[0].lower())  # "more references": but into the caller's lists
        return bootstrap()(hyps_a, hyps_b, refs, n_samples, seed)

    assert_rejects(checks.check_paired_bootstrap(extends_refs), "`refs[0]` in place")


# --- corpus brevity penalty ---------------------------------------------------------------------


def corpus_bp_ok(hyp_lens, ref_lens):
    """Independent of lib.bleu: the closest reference (ties to the shorter) and the formula."""
    c = sum(hyp_lens)
    r = sum(min(refs, key=lambda x: (abs(x - h), x)) for h, refs in zip(hyp_lens, ref_lens))
    return 1.0 if c >= r else math.exp(1 - r / c)


def test_corpus_bp_accepts_an_independent_reference():
    assert checks.check_corpus_bp(corpus_bp_ok).ok


def _sentence_bps(hyp_lens, ref_lens):
    return [1.0 if h >= r else math.exp(1 - r / h)
            for h, r in ((h, min(refs, key=lambda x: (abs(x - h), x)))
                         for h, refs in zip(hyp_lens, ref_lens))]


@pytest.mark.parametrize("wrong, words", [
    (lambda h, r: sum(_sentence_bps(h, r)) / len(h), "you averaged the sentences' penalties"),
    (lambda h, r: math.prod(_sentence_bps(h, r)), "you multiplied the sentences' penalties"),
    (lambda h, r: corpus_bp_ok(h, [[min(x)] for x in r]), "SHORTEST reference"),
    (lambda h, r: "1.0", "return the penalty as a number"),
])
def test_corpus_bp_names_the_typical_mistakes(wrong, words):
    assert_rejects(checks.check_corpus_bp(wrong), words)


def test_corpus_bp_stub_is_not_done():
    assert not checks.check_corpus_bp(skeleton).done


# --- fooling BLEU ---------------------------------------------------------------------------


def test_fooling_accepts_a_wrong_meaning_that_outscores_a_paraphrase():
    # "content" (happy) keeps 3 of 5 tokens and two bigrams; "las" shares only "Je", "très", "."
    bad, good = "Je suis très content.", "Je me sens très las."
    assert bleu.sentence_bleu(bad, [checks.FOOL_REF]).score - \
        bleu.sentence_bleu(good, [checks.FOOL_REF]).score >= checks.FOOL_GAP
    result = checks.check_fooling(lambda: (bad, good))
    assert result.ok, result
    assert "cannot judge meaning" in str(result)


@pytest.mark.parametrize("answer, words", [
    (("Je me sens très las.", "Je suis très content."), "swap them"),
    (("Je suis très fatigué.", "Je me sens très las."), "the reference itself"),
    (("Je suis très content.", "Je suis fatigué."), "fewer than 10"),
    (("Je suis très content.", ""), "non-empty string"),
    ("Je suis très content.", "return a pair"),
])
def test_fooling_names_typical_mistakes(answer, words):
    result = checks.check_fooling(lambda: answer)
    assert result.done and not result.ok
    assert words in str(result), result


def test_fooling_skeleton_is_not_done():
    assert not checks.check_fooling(skeleton).done
