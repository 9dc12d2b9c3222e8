"""lib.checks.wrap_up: each checker accepts the reference, rejects typical mistakes with a
message that names them, and reports an unfinished skeleton as not done."""

from __future__ import annotations

from conftest import assert_rejects, skeleton

from lib.bleu import corpus_bleu, sentence_bleu
from lib.checks import wrap_up as checks
from lib.data import tokenize

# --- bucket_by_length -------------------------------------------------------------------------


def bucket_by_length(sources):
    buckets = {}
    for i, s in enumerate(sources):
        buckets.setdefault(len(tokenize(s)), []).append(i)
    return buckets


def test_buckets_accepts_reference_and_skeleton_is_not_done():
    assert checks.check_buckets(bucket_by_length).ok
    r = checks.check_buckets(skeleton)
    assert not r.ok and not r.done and "not done yet" in str(r)


def test_buckets_names_whitespace_words_and_characters():
    def words(sources):
        out = {}
        for i, s in enumerate(sources):
            out.setdefault(len(s.split()), []).append(i)
        return out

    def chars(sources):
        out = {}
        for i, s in enumerate(sources):
            out.setdefault(len(s), []).append(i)
        return out

    assert_rejects(checks.check_buckets(words), "spaces", "lib.data.tokenize")
    assert_rejects(checks.check_buckets(chars), "characters")


def test_buckets_names_one_based_indices_and_sentences():
    def one_based(sources):
        return {k: [i + 1 for i in v] for k, v in bucket_by_length(sources).items()}

    def sentences(sources):
        return {k: [sources[i] for i in v] for k, v in bucket_by_length(sources).items()}

    assert_rejects(checks.check_buckets(one_based), "start at 1")
    assert_rejects(checks.check_buckets(sentences), "indices")


# --- bucket_bleu ------------------------------------------------------------------------------


def bucket_bleu(hypotheses, references, buckets):
    return {k: corpus_bleu([hypotheses[i] for i in idx], [references[i] for i in idx]).score
            for k, idx in buckets.items()}


def test_bucket_bleu_accepts_reference_and_skeleton_is_not_done():
    r = checks.check_bucket_bleu(bucket_bleu)
    assert r.ok, str(r)
    assert not checks.check_bucket_bleu(skeleton).done


def test_bucket_bleu_names_averaged_sentence_bleu():
    def mean_sentence(hyps, refs, buckets):
        return {k: sum(sentence_bleu(hyps[i], refs[i]).score for i in idx) / len(idx)
                for k, idx in buckets.items()}

    assert_rejects(checks.check_bucket_bleu(mean_sentence), "averaged sentence BLEU")


def test_bucket_bleu_names_first_reference_whole_corpus_and_scale():
    def first_ref(hyps, refs, buckets):
        return bucket_bleu(hyps, [r[:1] for r in refs], buckets)

    def whole(hyps, refs, buckets):
        score = corpus_bleu(hyps, refs).score
        return {k: score for k in buckets}

    def fraction(hyps, refs, buckets):
        return {k: v / 100 for k, v in bucket_bleu(hyps, refs, buckets).items()}

    assert_rejects(checks.check_bucket_bleu(first_ref), "first reference only")
    assert_rejects(checks.check_bucket_bleu(whole), "whole corpus")
    assert_rejects(checks.check_bucket_bleu(fraction), "0-100")


# --- worst_sentence ---------------------------------------------------------------------------


def worst_sentence(hypotheses, references):
    scores = [sentence_bleu(h, r).score for h, r in zip(hypotheses, references)]
    return min(range(len(scores)), key=lambda i: scores[i])


def test_worst_accepts_reference_and_skeleton_is_not_done():
    r = checks.check_worst(worst_sentence)
    assert r.ok, str(r)
    assert not checks.check_worst(skeleton).done


def test_worst_names_best_instead_of_worst_and_first_reference():
    def best(hyps, refs):
        scores = [sentence_bleu(h, r).score for h, r in zip(hyps, refs)]
        return max(range(len(scores)), key=lambda i: scores[i])

    def first_ref(hyps, refs):
        return worst_sentence(hyps, [r[:1] for r in refs])

    assert_rejects(checks.check_worst(best), "HIGHEST")
    assert_rejects(checks.check_worst(first_ref), "first reference only")


def test_worst_names_the_tie_and_a_wrong_type():
    def last_of_ties(hyps, refs):
        scores = [sentence_bleu(h, r).score for h, r in zip(hyps, refs)]
        return max(range(len(scores)), key=lambda i: (-scores[i], i))

    assert_rejects(checks.check_worst(last_of_ties), "return the first of them")
    assert_rejects(checks.check_worst(lambda h, r: "0"), "an int")


# --- inputs changed in place ------------------------------------------------------------------


def test_inputs_changed_in_place_are_named():
    def sorts_references(hypotheses, references):
        for refs in references:
            refs.sort(key=len)  # the caller's references of each sentence are reordered
        return worst_sentence(hypotheses, references)

    assert_rejects(checks.check_worst(sorts_references),
                   "changed its input `references[1]` in place (e.g. references[1].sort()")

    def pops_buckets(hypotheses, references, buckets):
        return {k: bucket_bleu(hypotheses, references, {k: buckets.pop(k)})[k]
                for k in list(buckets)}

    assert_rejects(checks.check_bucket_bleu(pops_buckets),
                   "changed its input `buckets` in place (e.g. buckets[key] = ...")
