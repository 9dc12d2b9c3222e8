"""lib.checks.tensors: each checker accepts the reference, rejects typical mistakes with a
message that names them, and reports an unfinished skeleton as not done."""

from __future__ import annotations

import random
from collections import Counter

import pytest
import torch
from conftest import assert_rejects, skeleton

from lib.checks import tensors
from lib.data import EOS, SOS, UNK, group_by_source

# --- split_by_key -----------------------------------------------------------------------------


def split_ok(pairs, n_test, seed):
    """An independent split by English string, the rule of lib.data.split_by_source."""
    groups = group_by_source(pairs)
    sources = sorted(groups)
    random.Random(seed).shuffle(sources)
    test = [(e, f) for e in sources[:n_test] for f in groups[e]]
    train = [(e, f) for e in sources[n_test:] for f in groups[e]]
    return train, test


def split_key_ok(pairs, n_test, seed, key):
    groups = {}
    for en, fr in pairs:
        groups.setdefault(key(en), []).append((en, fr))
    keys = sorted(groups)
    random.Random(seed).shuffle(keys)
    test = [p for k in keys[:n_test] for p in groups[k]]
    train = [p for k in keys[n_test:] for p in groups[k]]
    return train, test


def test_split_by_key_accepts_reference_and_exact_key_is_split_by_source():
    r = tensors.check_split_by_key(split_key_ok)
    assert r.ok, str(r)
    pairs = tensors.toy_pairs()
    assert split_key_ok(pairs, 10, 0, lambda en: en) == split_ok(pairs, 10, 0)


def test_split_by_key_toy_data_has_near_duplicates_on_both_sides_of_a_string_split():
    """The checker's data must catch a split by the English string (the chapter's rule)."""
    pairs = tensors.toy_near_duplicates()
    train, test = split_ok(pairs, 8, 0)
    key = tensors.near_duplicate_key
    assert {key(e) for e, _ in train} & {key(e) for e, _ in test}
    assert key("Go away!") == key("go away.") != key("Go away now.")


def test_split_by_key_names_a_split_by_string():
    r = tensors.check_split_by_key(lambda pairs, n_test, seed, key: split_ok(pairs, n_test, seed))
    assert_rejects(r, "grouped by the English string", "group by key(en)")


def test_split_by_key_names_a_line_split_and_lost_pairs():
    def by_line(pairs, n_test, seed, key):
        pairs = list(pairs)
        random.Random(seed).shuffle(pairs)
        return pairs[n_test:], pairs[:n_test]

    assert_rejects(tensors.check_split_by_key(by_line), "you split the lines")

    def one_line_per_key(pairs, n_test, seed, key):
        train, test = split_key_ok(pairs, n_test, seed, key)
        firsts = {}
        for en, fr in test:
            firsts.setdefault(key(en), (en, fr))
        return train, list(firsts.values())

    assert_rejects(tensors.check_split_by_key(one_line_per_key), "pairs are missing")


def test_split_by_key_names_n_test_counted_as_sentences():
    def by_sentences(pairs, n_test, seed, key):
        sentences = sorted({en for en, _ in pairs})
        random.Random(seed).shuffle(sentences)
        chosen = {key(en) for en in sentences[:n_test]}  # n_test sentences, fewer keys
        return ([p for p in pairs if key(p[0]) not in chosen],
                [p for p in pairs if key(p[0]) in chosen])

    assert_rejects(tensors.check_split_by_key(by_sentences), "counts keys")


def test_split_by_key_names_a_split_that_ignores_the_seed_and_skeleton():
    def first_keys(pairs, n_test, seed, key):
        keys = list(dict.fromkeys(key(en) for en, _ in pairs))[:n_test]
        return ([p for p in pairs if key(p[0]) not in keys],
                [p for p in pairs if key(p[0]) in keys])

    assert_rejects(tensors.check_split_by_key(first_keys), "seeds 0, 1, 2 and 3")

    def skeleton(pairs, n_test, seed, key):
        raise NotImplementedError

    assert not tensors.check_split_by_key(skeleton).done


# --- encode_with_fallback -----------------------------------------------------------------------


def fallback_ok(tokens, vocab):
    return [vocab.stoi[t] if t in vocab.stoi else vocab.stoi.get(t.lower(), UNK) for t in tokens]


def test_fallback_accepts_the_reference_and_a_tensor():
    assert tensors.check_encode_with_fallback(fallback_ok).ok
    assert tensors.check_encode_with_fallback(lambda t, v: torch.tensor(fallback_ok(t, v))).ok


@pytest.mark.parametrize("wrong, words", [
    (lambda t, v: [v.stoi.get(x.lower(), UNK) for x in t], "you lower-cased every token"),
    (lambda t, v: [v.stoi.get(x, UNK) for x in t], "no fallback"),
    (lambda t, v: [SOS] + fallback_ok(t, v) + [EOS], "no <sos> or <eos>"),
    (lambda t, v: fallback_ok(t, v)[:-1], "one id per token"),
])
def test_fallback_names_the_typical_mistakes(wrong, words):
    assert_rejects(tensors.check_encode_with_fallback(wrong), words)


def test_fallback_stub_is_not_done():
    assert not tensors.check_encode_with_fallback(skeleton).done


# --- reverse_padded ---------------------------------------------------------------------------


def reverse_ok(src, lengths):
    out = src.clone()
    for b, n in enumerate(lengths.tolist()):
        out[b, :n] = src[b, :n].flip(0)
    return out


def test_reverse_accepts_an_independent_solution():
    r = tensors.check_reverse_padded(reverse_ok)
    assert r.ok and r.done, str(r)


def test_reverse_names_whole_row_flip_and_unchanged_batch():
    r = tensors.check_reverse_padded(lambda src, lengths: src.flip(1))
    assert r.done and not r.ok and "flipped whole rows" in str(r)
    r = tensors.check_reverse_padded(lambda src, lengths: src)
    assert r.done and not r.ok and "unchanged" in str(r)


def test_reverse_names_off_by_one_dtype_and_in_place():
    def off_by_one(src, lengths):  # keeps the last token in place
        out = src.clone()
        for b, n in enumerate(lengths.tolist()):
            out[b, :n - 1] = src[b, :n - 1].flip(0)
        return out

    def in_place(src, lengths):
        for b, n in enumerate(lengths.tolist()):
            src[b, :n] = src[b, :n].flip(0).clone()
        return src

    r = tensors.check_reverse_padded(off_by_one)
    assert r.done and not r.ok and "row 0" in str(r) and "expected [14, 7, 6, 5]" in str(r)
    r = tensors.check_reverse_padded(lambda src, lengths: reverse_ok(src, lengths).float())
    assert r.done and not r.ok and "torch.long" in str(r)
    r = tensors.check_reverse_padded(in_place)
    assert r.done and not r.ok and "reversed `src` in place" in str(r)
    assert "the caller's batch must not change" in str(r)


def test_reverse_leaves_the_callers_batch_alone_and_names_other_changes_generically():
    def changes_lengths(src, lengths):  # a change to `lengths`, not to the batch
        out = reverse_ok(src, lengths)
        lengths.zero_()
        return out

    r = tensors.check_reverse_padded(changes_lengths)
    assert r.done and not r.ok and "`lengths` in place" in str(r)
    assert "caller's batch" not in str(r)


def test_reverse_skeleton_not_done():
    def skeleton(src, lengths):
        raise NotImplementedError

    r = tensors.check_reverse_padded(skeleton)
    assert not r.done and "not done yet" in str(r)


# --- largest_min_freq -------------------------------------------------------------------------


def min_freq_ok(train_counts, test_tokens, share):
    """An independent solution: build the vocabulary with lib.data.Vocab for each min_freq,
    from the largest down."""
    from lib.data import Vocab

    sentences = [[tok] * n for tok, n in train_counts.items()]
    for m in range(max(train_counts.values()) + 1, 0, -1):
        vocab = Vocab.build(sentences, m)
        if sum(t not in vocab.stoi for t in test_tokens) / len(test_tokens) <= share:
            return m
    return 0


def min_freq_with(within=lambda r, s: r <= s, unknown=lambda c, m: c < m, add_test=False,
                  first_above=False):
    def fn(train_counts, test_tokens, share):
        counts = train_counts + Counter(test_tokens) if add_test else train_counts
        for m in range(1, 100):
            rate = sum(unknown(counts[t], m) for t in test_tokens) / len(test_tokens)
            if not within(rate, share):
                return m if first_above else m - 1
    return fn


def test_min_freq_reference_answers():
    counts = Counter({"le": 9, "chat": 4, "dort": 2, "noir": 1, "vite": 3, "chien": 6})
    rare = ["le", "chat", "dort", "dort", "dort", "noir", "zèbre", "le", "chat", "vite", "chien"]
    assert [min_freq_ok(counts, rare, s) for s in (0.05, 0.1, 0.4, 0.6, 0.99)] == [0, 1, 2, 4, 9]


def test_min_freq_accepts_reference_and_a_tensor_int():
    assert tensors.check_largest_min_freq(min_freq_ok).ok
    assert tensors.check_largest_min_freq(min_freq_with()).ok
    assert tensors.check_largest_min_freq(lambda *a: torch.tensor(min_freq_ok(*a))).ok


def test_min_freq_names_the_usual_slips():
    r = tensors.check_largest_min_freq(min_freq_with(unknown=lambda c, m: c <= m))
    assert_rejects(r, "one too small", "not <=")
    r = tensors.check_largest_min_freq(min_freq_with(within=lambda r, s: r < s))
    assert_rejects(r, "*at most*", "not <")
    r = tensors.check_largest_min_freq(min_freq_with(add_test=True))
    assert_rejects(r, "counted the test tokens")
    r = tensors.check_largest_min_freq(min_freq_with(first_above=True))
    assert_rejects(r, "one too large", "first one above it")
    r = tensors.check_largest_min_freq(lambda *a: float(min_freq_ok(*a)))
    assert_rejects(r, "as an int")
    r = tensors.check_largest_min_freq(lambda *a: max(1, min_freq_ok(*a)))  # never 0
    assert_rejects(r, "share 5%", "return 0")


def test_min_freq_skeleton_not_done():
    r = tensors.check_largest_min_freq(skeleton)
    assert not r.done and not r.ok
