"""lib.checks.bleu accepts the reference solutions and names typical mistakes."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest
import torch
from conftest import assert_rejects

from lib import bleu
from lib.checks import bleu as checks


def ngrams(tokens, n):
    return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def clip_ok(hyp, refs, n):
    counts, most = ngrams(hyp, n), Counter()
    for ref in refs:
        most |= ngrams(ref, n)
    return sum(min(c, most[g]) for g, c in counts.items()), sum(counts.values())


def clip_not_clipped(hyp, refs, n):
    counts = ngrams(hyp, n)
    found = sum(c for g, c in counts.items() if any(g in ngrams(r, n) for r in refs))
    return found, sum(counts.values())


def clip_summed_refs(hyp, refs, n):
    counts, summed = ngrams(hyp, n), Counter()
    for ref in refs:
        summed += ngrams(ref, n)
    return sum(min(c, summed[g]) for g, c in counts.items()), sum(counts.values())


def clip_distinct_total(hyp, refs, n):
    matches, _ = clip_ok(hyp, refs, n)
    return matches, len(ngrams(hyp, n))


def _bp(c, r):
    return 1.0 if c >= r else (0.0 if c == 0 else math.exp(1 - r / c))


def bp_ok(c, refs):
    return _bp(c, min(refs, key=lambda r: (abs(r - c), r)))


def bp_shortest(c, refs):
    return _bp(c, min(refs))


def bp_ties_to_longer(c, refs):
    return _bp(c, min(refs, key=lambda r: (abs(r - c), -r)))


def corpus_ok(hyps, refs):
    counts, totals, c, r = [0] * 4, [0] * 4, 0, 0
    for h, rs in zip(hyps, refs):
        for n in range(1, 5):
            m, t = clip_ok(h, rs, n)
            counts[n - 1] += m
            totals[n - 1] += t
        c += len(h)
        r += min((len(x) for x in rs), key=lambda x: (abs(x - len(h)), x))
    if min(counts) == 0:
        return 0.0
    log_mean = sum(math.log(m / t) for m, t in zip(counts, totals)) / 4
    return 100 * _bp(c, r) * math.exp(log_mean)


def corpus_mean_of_sentences(hyps, refs):
    return sum(corpus_ok([h], [r]) for h, r in zip(hyps, refs)) / len(hyps)


def corpus_no_bp(hyps, refs):
    counts, totals = [0] * 4, [0] * 4
    for h, rs in zip(hyps, refs):
        for n in range(1, 5):
            m, t = clip_ok(h, rs, n)
            counts[n - 1] += m
            totals[n - 1] += t
    return 100 * math.exp(sum(math.log(m / t) for m, t in zip(counts, totals)) / 4)


def not_done(*args):
    raise NotImplementedError


def test_clipped_precision():
    assert checks.check_clipped_precision(clip_ok).ok
    result = checks.check_clipped_precision(clip_not_clipped)
    assert not result.ok and "not clipped" in str(result) and "'the'" in str(result)
    result = checks.check_clipped_precision(clip_summed_refs)
    assert not result.ok and "ADDED over the references" in str(result)
    result = checks.check_clipped_precision(clip_distinct_total)
    assert not result.ok and "DISTINCT" in str(result)
    assert not checks.check_clipped_precision(not_done).done


def test_brevity_penalty():
    assert checks.check_brevity_penalty(bp_ok).ok
    result = checks.check_brevity_penalty(bp_shortest)
    assert not result.ok and "SHORTEST" in str(result)
    result = checks.check_brevity_penalty(bp_ties_to_longer)
    assert not result.ok and "tie goes to the shorter" in str(result)
    assert not checks.check_brevity_penalty(not_done).done


def test_corpus_bleu():
    result = checks.check_corpus_bleu(corpus_ok)
    assert result.ok, str(result)
    result = checks.check_corpus_bleu(corpus_mean_of_sentences)
    assert not result.ok and "averaged sentence BLEU" in str(result)
    result = checks.check_corpus_bleu(corpus_no_bp)
    assert not result.ok and "brevity penalty" in str(result)
    assert not checks.check_corpus_bleu(not_done).done


def test_corpus_reference_equals_sacrebleu():
    assert math.isclose(checks._reference_bleu(checks.CORPUS), checks._sacrebleu(checks.CORPUS))


def test_inputs_changed_in_place_are_named():
    def sorts_refs(hyp, refs, n):
        refs.sort(key=len)  # the caller's list of references is reordered
        return clip_ok(hyp, refs, n)

    result = checks.check_clipped_precision(sorts_refs)
    assert not result.ok and result.done
    assert "your function changed its input `refs` in place (e.g. refs.sort()" in str(result)
    assert "build a new list instead" in str(result)

    def sorts_lengths(c, refs):
        refs.sort()
        return bp_ok(c, refs)

    assert "`refs` in place" in str(checks.check_brevity_penalty(sorts_lengths))

    def pads_hyps(hyps, refs):
        for h in hyps:
            h.append(".")  # each hypothesis list gets an extra token
        return corpus_ok(hyps, refs)

    assert "`hyps[0]` in place" in str(checks.check_corpus_bleu(pads_hyps))


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
        drawn = torch.bincount(idx, minlength=n)  # (n,) how often each sentence was drawn
        wins += corpus_score(drawn @ a) > corpus_score(drawn @ b)  # the same sentences
    return wins / n_samples


def bootstrap(sample="choices", paired=True, ties=False, metric="corpus", answer="share",
              rng_of=random.Random):
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
