"""lib.subword: BPE merges against a hand-worked example and a from-scratch recount, and the
segmentation of new words."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from lib.subword import BPE, END, learn_bpe, piece_vocabulary

# Sennrich et al.'s toy corpus. Worked by hand, ties going to the pair that sorts first:
# (e,s) 9 and (s,t</w>) 9 tie -> e s; then es t</w> 9; l o 7; then (e,w) (n,e) (w,est</w>) tie
# at 6 -> e w, then ew est</w> 6 (before n ew), n ewest</w> 6; lo w</w> 5; then d est</w> 3.
TOY = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
TOY_MERGES = [("e", "s"), ("es", "t" + END), ("l", "o"), ("e", "w"), ("ew", "est" + END),
              ("n", "ewest" + END), ("lo", "w" + END), ("d", "est" + END)]


def naive_bpe(word_counts, num_merges):
    """The textbook loop: recount every pair of every word before each merge."""
    words = {w: (*w[:-1], w[-1] + END) for w in word_counts}
    merges = []
    for _ in range(num_merges):
        counts = Counter()
        for w, symbols in words.items():
            for pair in zip(symbols, symbols[1:]):
                counts[pair] += word_counts[w]
        if not counts:
            break
        best = min(counts, key=lambda p: (-counts[p], p))
        merges.append(best)
        for w, symbols in words.items():
            out, i = [], 0
            while i < len(symbols):
                if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == best:
                    out.append(symbols[i] + symbols[i + 1])
                    i += 2
                else:
                    out.append(symbols[i])
                    i += 1
            words[w] = tuple(out)
    return merges, words


def test_learn_bpe_matches_the_hand_worked_toy():
    assert learn_bpe(TOY, 8) == TOY_MERGES


def test_segment_applies_merges_by_rank_to_a_new_word():
    bpe = BPE(TOY_MERGES)
    assert bpe.segment("lowest") == ("lo", "w", "est" + END)  # unseen word, known pieces
    assert bpe.segment("newest") == ("newest" + END,)
    assert bpe.segment("zq") == ("z", "q" + END)  # nothing to merge
    assert bpe.encode(["low", "lowest"]) == ["low" + END, "lo", "w", "est" + END]


@pytest.mark.parametrize("seed", range(5))
def test_learn_bpe_matches_a_full_recount_and_segment_reproduces_training(seed):
    rng = random.Random(seed)
    words = {"".join(rng.choice("abcde") for _ in range(rng.randint(1, 7))): rng.randint(1, 9)
             for _ in range(60)}
    expected, segmented = naive_bpe(words, 40)
    merges = learn_bpe(words, 40)
    assert merges == expected
    bpe = BPE(merges)
    for w, symbols in segmented.items():  # the training words come out as learned
        assert bpe.segment(w) == symbols


def test_learning_stops_when_every_word_is_one_symbol():
    merges = learn_bpe({"ab": 3, "a": 1}, 10)
    assert merges == [("a", "b" + END)]


def test_decode_inverts_encode():
    bpe = BPE(learn_bpe(TOY, 5))
    sentence = ["the", "lowest", "newer", "x"]
    assert BPE.decode(bpe.encode(sentence)) == sentence


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="num_merges"):
        learn_bpe(TOY, -1)
    with pytest.raises(ValueError, match="positive"):
        learn_bpe({"a": 0}, 3)
    with pytest.raises(ValueError, match="empty word"):
        BPE([]).segment("")
    with pytest.raises(ValueError, match="end inside a word"):
        BPE.decode(["lo", "w"])


def test_piece_vocabulary_by_hand_on_the_toy():
    chars = set("lowernstid")
    expected = chars | {c + END for c in chars} | {"es", "est" + END, "lo", "ew", "ewest" + END,
                                                  "newest" + END, "low" + END, "dest" + END}
    assert piece_vocabulary(TOY, TOY_MERGES) == expected


def test_piece_vocabulary_covers_every_new_word_of_seen_characters():
    # "lowe" ends in e</w>, never word-final in training, and "ewer" needs the merge result
    # "ew", which no segmented training word keeps: both are in the standard vocabulary.
    bpe = BPE(TOY_MERGES)
    vocab = piece_vocabulary(TOY, TOY_MERGES)
    segmented_training = {p for w in TOY for p in bpe.segment(w)}
    for word in ["lowe", "ewer", "ton", "sewer", "e"]:
        assert set(bpe.segment(word)) <= vocab, word
    assert bpe.segment("ewer") == ("ew", "e", "r" + END)
    assert "ew" in vocab and "ew" not in segmented_training
    assert "q" + END not in vocab  # an unseen character stays unknown
    assert not set(bpe.segment("toq")) <= vocab
