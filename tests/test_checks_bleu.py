"""lib.checks.bleu accepts the reference solutions and names typical mistakes."""

from __future__ import annotations

import math
from collections import Counter

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
