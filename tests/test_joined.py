"""lib.experiments.joined: long inputs built from one split only, every sentence once, references
whole."""

import pytest

from lib.experiments import joined

HELD = [(f"Sentence {i}.", [f"Phrase {i}."] + [f"Autre {i}."] * (i % 3)) for i in range(40)]
TRAIN = [(f"Train {i}.", f"Entraîne {i}.") for i in range(30)]


def test_group_sizes_cover_everything_and_use_every_k():
    sizes = joined.group_sizes(1000, 5, seed=3)
    assert sum(sizes) == 1000 and set(sizes) == {1, 2, 3, 4, 5}
    counts = [sizes.count(k) for k in range(1, 6)]
    assert max(counts) - min(counts) <= 1  # one of each k per cycle
    assert joined.group_sizes(1000, 5, seed=3) == sizes != joined.group_sizes(1000, 5, seed=4)


def test_references_join_part_by_part():
    assert joined.join_references([["A.", "B."], ["C."], ["D.", "E.", "F."]]) == [
        "A. C. D.", "B. C. E.", "B. C. F."]
    with pytest.raises(ValueError, match="reference"):
        joined.join_references([["A."], []])


def test_held_out_groups_use_each_sentence_once_and_nothing_else():
    groups = joined.joined_groups(HELD, k_max=5, seed=0)
    by_source = dict((en, refs) for en, refs in HELD)
    seen = []
    for en, refs, k in groups:
        parts = [p + "." for p in en.split(". ") if p]
        parts = [p[:-1] if p.endswith("..") else p for p in parts]
        assert len(parts) == k
        seen += parts
        # oracle: the references rebuilt from the parts' own references
        assert refs == joined.join_references([by_source[p] for p in parts])
    assert sorted(seen) == sorted(en for en, _ in HELD)
    assert joined.joined_groups(HELD, 5, 0) == groups != joined.joined_groups(HELD, 5, 1)


def test_training_pairs_come_from_training_pairs_aligned():
    pairs = joined.joined_train_pairs(TRAIN, k_max=4, n=50, seed=0)
    assert len(pairs) == 50
    lookup = dict(TRAIN)
    for en, fr in pairs:
        parts = [p + "." for p in en[:-1].split(". ")]
        assert 1 <= len(parts) <= 4
        assert fr == " ".join(lookup[p] for p in parts)  # the French side, part by part
    assert joined.joined_train_pairs(TRAIN, 4, 50, 0) == pairs


@pytest.mark.parametrize("kwargs, match", [({"k_max": 0}, "k_max"), ({"k_max": True}, "k_max"),
                                           ({"seed": 1.5}, "seed"), ({"n": 0}, "n must")])
def test_bad_settings_are_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        joined.joined_train_pairs(TRAIN, **{"k_max": 3, "n": 5, "seed": 0, **kwargs})
