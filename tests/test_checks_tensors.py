"""lib.checks.tensors: each checker accepts the reference, rejects typical mistakes with a
message that names them, and reports an unfinished skeleton as not done."""

from __future__ import annotations

import random
from collections import Counter

import pytest
import torch
from conftest import assert_rejects, skeleton

from lib.checks import tensors
from lib.data import (
    EOS,
    PAD,
    SOS,
    UNK,
    collate,
    encode_pairs,
    group_by_source,
    pad,
    tokenize,
)

# --- encode_sentence --------------------------------------------------------------------------


def encode_ok(tokens, vocab):
    return [vocab.stoi.get(t, UNK) for t in tokens]


def test_encode_accepts_reference_and_tensor_output():
    assert tensors.check_encode_sentence(encode_ok).ok
    assert tensors.check_encode_sentence(lambda t, v: torch.tensor(encode_ok(t, v))).ok


def test_encode_agrees_with_the_model_source_side():
    """The reference answer is what the model's own pipeline feeds the encoder."""
    vocab = tensors._VOCAB
    pairs = [("I am cold.", "J'ai froid."), ("Tom?", "Tom ?")]
    for (src, _), (en, _) in zip(encode_pairs(pairs, vocab, vocab), pairs):
        assert src == encode_ok(tokenize(en), vocab)
    assert collate([(encode_ok(["i", "am"], vocab), [5])]).src.tolist() == [[4, 5]]


def test_encode_rejects_eos_on_the_source_side():
    r = tensors.check_encode_sentence(lambda t, v: encode_ok(t, v) + [EOS])
    assert_rejects(r, "gets no <eos>", "encode_pairs")


def test_encode_rejects_sos_on_the_source_side():
    r = tensors.check_encode_sentence(lambda t, v: [SOS] + encode_ok(t, v))
    assert_rejects(r, "gets no <sos>")
    r = tensors.check_encode_sentence(lambda t, v: [SOS] + encode_ok(t, v) + [EOS])
    assert_rejects(r, "gets no <sos> and <eos>")


def test_encode_rejects_keyerror_on_unknown():
    r = tensors.check_encode_sentence(lambda t, v: [v.stoi[x] for x in t])
    assert_rejects(r, "<unk>", "KeyError")


def test_encode_rejects_wrong_unknown_id_and_dropped_words():
    r = tensors.check_encode_sentence(lambda t, v: [v.stoi.get(x, PAD) for x in t])
    assert_rejects(r, "should be <unk>")
    r = tensors.check_encode_sentence(lambda t, v: [v.stoi[x] for x in t if x in v.stoi])
    assert_rejects(r, "one id per token")


def test_encode_rejects_a_vocabulary_changed_in_place():
    """setdefault looks like a read but adds every unknown word to the learner's vocabulary."""
    r = tensors.check_encode_sentence(lambda t, v: [v.stoi.setdefault(x, UNK) for x in t])
    assert_rejects(r, "changed its input `v.stoi` in place")


def test_encode_skeleton_not_done():
    def skeleton(tokens, vocab):
        raise NotImplementedError

    r = tensors.check_encode_sentence(skeleton)
    assert not r.ok and not r.done and "not done yet" in str(r)


# --- pad_batch --------------------------------------------------------------------------------


def pad_ok(seqs):
    return pad(seqs), torch.tensor([len(s) for s in seqs])


def test_pad_accepts_reference():
    r = tensors.check_pad_batch(pad_ok)
    assert r.ok, str(r)


def test_pad_rejects_left_padding():
    def left(seqs):
        T = max(map(len, seqs))
        return torch.tensor([[PAD] * (T - len(s)) + s for s in seqs]), torch.tensor(
            [len(s) for s in seqs])

    r = tensors.check_pad_batch(left)
    assert not r.ok and "left" in str(r)


def test_pad_rejects_wrong_value_lengths_and_dtype():
    r = tensors.check_pad_batch(lambda s: (pad(s, value=EOS), torch.tensor([len(x) for x in s])))
    assert not r.ok and "<pad> = 0" in str(r)
    r = tensors.check_pad_batch(lambda s: (pad(s), torch.full((len(s),), max(map(len, s)))))
    assert not r.ok and "true lengths" in str(r)
    r = tensors.check_pad_batch(lambda s: (pad(s).float(), torch.tensor([len(x) for x in s])))
    assert not r.ok and "torch.long" in str(r)


def test_pad_skeleton_not_done():
    def skeleton(seqs):
        raise NotImplementedError

    assert not tensors.check_pad_batch(skeleton).done


# --- split_by_source --------------------------------------------------------------------------


def split_ok(pairs, n_test, seed):
    groups = group_by_source(pairs)
    sources = sorted(groups)
    random.Random(seed).shuffle(sources)
    test = [(e, f) for e in sources[:n_test] for f in groups[e]]
    train = [(e, f) for e in sources[n_test:] for f in groups[e]]
    return train, test


def test_split_accepts_reference():
    r = tensors.check_split_by_source(split_ok)
    assert r.ok, str(r)


def test_split_rejects_line_level_split():
    def by_line(pairs, n_test, seed):
        pairs = list(pairs)
        random.Random(seed).shuffle(pairs)
        return pairs[n_test:], pairs[:n_test]

    r = tensors.check_split_by_source(by_line)
    assert not r.ok and "both train and test" in str(r)


def test_split_rejects_first_sentences_and_lost_translations():
    def first(pairs, n_test, seed):
        groups = group_by_source(pairs)
        sources = list(groups)
        return ([(e, f) for e in sources[n_test:] for f in groups[e]],
                [(e, f) for e in sources[:n_test] for f in groups[e]])

    r = tensors.check_split_by_source(first)
    assert not r.ok and "at random" in str(r)

    def one_translation(pairs, n_test, seed):
        groups = group_by_source(pairs)
        sources = sorted(groups)
        random.Random(seed).shuffle(sources)
        return ([(e, f) for e in sources[n_test:] for f in groups[e]],
                [(e, groups[e][0]) for e in sources[:n_test]])

    r = tensors.check_split_by_source(one_translation)
    assert not r.ok and "missing" in str(r)


def test_split_rejects_n_test_as_lines():
    def lines(pairs, n_test, seed):
        train, test = split_ok(pairs, n_test, seed)
        keep = {e for e, _ in test[:n_test]}  # n_test lines' sentences, fewer sentences
        moved = [(e, f) for e, f in test if e not in keep]
        return train + moved, [(e, f) for e, f in test if e in keep]

    r = tensors.check_split_by_source(lines)
    assert not r.ok and "counts sentences" in str(r)


def test_split_skeleton_not_done():
    def skeleton(pairs, n_test, seed):
        raise NotImplementedError

    assert not tensors.check_split_by_source(skeleton).done


def test_split_names_pairs_shuffled_in_place():
    def shuffles_pairs(pairs, n_test, seed):
        random.Random(seed).shuffle(pairs)  # the caller's corpus is reordered
        return split_ok(pairs, n_test, seed)

    assert_rejects(tensors.check_split_by_source(shuffles_pairs),
                   "changed its input `pairs` in place (e.g. pairs.sort(), pairs.append(...), "
                   "shuffle(pairs)")


def test_pad_names_sequences_padded_in_place():
    def pads_in_place(seqs):
        lengths = torch.tensor([len(s) for s in seqs])
        for s in seqs:
            s.extend([PAD] * (int(lengths.max()) - len(s)))
        return torch.tensor(seqs), lengths

    assert_rejects(tensors.check_pad_batch(pads_in_place), "`seqs[1]` in place")


# --- split_by_key -----------------------------------------------------------------------------


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


def test_min_freq_skeleton_not_done():
    r = tensors.check_largest_min_freq(skeleton)
    assert not r.done and not r.ok
