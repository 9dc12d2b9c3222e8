"""lib.experiments.alignment: each measure against values computed by hand, the summary's means
over rows,
the greedy weights against one sentence at a time, and the joined groups' parts."""

from __future__ import annotations

import functools
import math
import re

import pytest
import torch

from lib import search
from lib.attention import attention_weights
from lib.data import EOS
from lib.experiments import alignment
from lib.experiments.joined import joined_groups
from lib.experiments.toy import tiny_model

pytestmark = pytest.mark.usefixtures("one_thread")  # tiny models: see conftest

# Three rows over four columns, chosen so every measure has a round value.
W = torch.tensor([[0.25, 0.25, 0.25, 0.25],  # uniform
                  [0.0, 0.0, 0.0, 1.0],  # all on the last column
                  [0.5, 0.5, 0.0, 0.0]], dtype=torch.float64)  # two columns, evenly


def test_row_peak_by_hand():
    assert alignment.row_peak(W).tolist() == [0.25, 1.0, 0.5]


def test_row_entropy_by_hand():
    # uniform over 4: log 4; one column: 0 (0 log 0 counts as 0); two columns evenly: log 2
    assert torch.allclose(alignment.row_entropy(W),
                          torch.tensor([math.log(4), 0.0, math.log(2)], dtype=torch.float64))


def test_entropy_ratio_by_hand():
    assert torch.allclose(alignment.entropy_ratio(W),
                          torch.tensor([1.0, 0.0, 0.5], dtype=torch.float64))
    with pytest.raises(ValueError, match="S >= 2"):
        alignment.entropy_ratio(torch.ones(2, 1))


def test_strongest_is_last_by_hand():
    tilted = torch.tensor([[0.2, 0.3, 0.5], [0.5, 0.3, 0.2], [0.3, 0.4, 0.3]])
    assert alignment.strongest_is_last(tilted).tolist() == [True, False, False]


def test_block_mass_by_hand():
    # parts of 1 and 3 tokens: row 0 puts 0.25 and 0.75 on them, row 1 0 and 1, row 2 0.5, 0.5
    assert alignment.block_mass(W, [1, 3]).tolist() == [0.75, 1.0, 0.5]
    # parts of 2 and 2: 0.5/0.5, 0/1, 1/0
    assert alignment.block_mass(W, [2, 2]).tolist() == [0.5, 1.0, 1.0]
    assert alignment.uniform_block([1, 3]) == 0.75
    assert alignment.uniform_block([2, 2]) == 0.5


def test_current_part_by_hand():
    # row t of T sits at column floor((t + 1/2) S / T): for T = 3, S = 4, columns 0, 2, 3
    assert alignment.current_part(3, [1, 3]).tolist() == [0, 1, 1]
    assert alignment.current_part(3, [2, 2]).tolist() == [0, 1, 1]
    # T = 4, S = 4: columns 0, 1, 2, 3
    assert alignment.current_part(4, [2, 2]).tolist() == [0, 0, 1, 1]
    assert alignment.current_part(4, [1, 1, 2]).tolist() == [0, 1, 2, 2]
    with pytest.raises(ValueError, match="row"):
        alignment.current_part(0, [2, 2])


def test_on_current_and_last_part_by_hand():
    # parts of 1 and 3: W's rows draw most on parts 1, 1, and 0 (0.5 each: the first wins)
    assert alignment.on_current_part(W, [1, 3]).tolist() == [False, True, False]
    assert alignment.on_last_part(W, [1, 3]).tolist() == [True, True, False]
    # parts of 2 and 2: rows draw most on parts 0 (a tie), 1, 0; the current parts are 0, 1, 1
    assert alignment.on_current_part(W, [2, 2]).tolist() == [True, True, False]
    assert alignment.on_last_part(W, [2, 2]).tolist() == [False, True, False]


@pytest.mark.parametrize("parts", [[1, 2], [2, 3], [0, 4], [], [2.0, 2.0], [True, 3]])
def test_parts_must_count_every_column(parts):
    with pytest.raises(ValueError):
        alignment.block_mass(W, parts)


def test_weights_must_be_a_matrix():
    for bad in (torch.ones(4), torch.ones(0, 3), [[0.5, 0.5]]):
        with pytest.raises(ValueError, match=r"\(T, S\)"):
            alignment.row_peak(bad)


def test_summarize_pools_rows_by_hand():
    one = torch.tensor([[0.5, 0.5]], dtype=torch.float64)  # S = 2, one part
    stats = alignment.summarize([W, one, torch.ones(1, 1)], [[1, 3], [2], [1]])
    assert (stats.sources, stats.rows) == (2, 4)  # the one-token source is left out
    assert stats.peak == pytest.approx((0.25 + 1.0 + 0.5 + 0.5) / 4)
    assert stats.uniform_peak == pytest.approx((3 * 0.25 + 0.5) / 4)
    assert stats.chance_last == stats.uniform_peak
    assert stats.entropy == pytest.approx((1.0 + 0.0 + 0.5 + 1.0) / 4)
    # strongest column last: row 1 of W; the tie of `one` goes to its first column
    assert stats.last == pytest.approx(1 / 4)
    # blocks only on the source of two parts: W's rows
    assert stats.block_rows == 3
    assert stats.block == pytest.approx((0.75 + 1.0 + 0.5) / 3)
    assert stats.uniform_block == pytest.approx(0.75)
    # the same rows: on the current part in row 1 only, on the last part in rows 0 and 1
    assert stats.current == pytest.approx(1 / 3)
    assert stats.chance_current == pytest.approx(1 / 2)
    assert stats.last_part == pytest.approx(2 / 3)


def test_summarize_without_parts_has_no_blocks():
    stats = alignment.summarize([W])
    assert stats.block_rows == 0 and math.isnan(stats.block) and math.isnan(stats.uniform_block)
    assert math.isnan(stats.current) and math.isnan(stats.chance_current)
    assert math.isnan(stats.last_part)
    assert stats.rows == 3 and stats.last == pytest.approx(1 / 3)


def test_summarize_refuses_nothing_to_measure_and_mismatched_parts():
    with pytest.raises(ValueError, match="two tokens"):
        alignment.summarize([torch.ones(2, 1)])
    with pytest.raises(ValueError, match="part lists"):
        alignment.summarize([W, W], [[4]])


def test_uniform_weights_measure_as_uniform():
    u = torch.full((5, 10), 0.1, dtype=torch.float64)
    stats = alignment.summarize([u], [[3, 7]])
    assert stats.peak == pytest.approx(stats.uniform_peak)
    assert stats.entropy == pytest.approx(1.0)
    assert stats.block == pytest.approx(stats.uniform_block)


def test_table_prints_each_measure_beside_what_it_is_compared_with():
    stats = alignment.summarize([W, torch.tensor([[0.5, 0.5]], dtype=torch.float64)],
                                [[1, 3], [2]])
    lines = alignment.table(stats).splitlines()
    assert lines[0].startswith("2 sources, 4 output rows") and \
        lines[0].endswith("measured  compared with")
    assert len(lines) == 7
    rows = {line[:line.index("  ")]: line for line in lines[1:]}
    # peak (0.25 + 1 + 0.5 + 0.5) / 4, against 1/S: (3 / 4 + 1 / 2) / 4
    assert rows["weight on the strongest column"].split()[-4:] == ["56.2%", "31.2%", "(uniform",
                                                                   "weights)"]
    assert "(uniform weights)" in rows["entropy as a share of log S"]
    assert "25.0%" in rows["rows peaking on the last token"] and \
        "(a column at random)" in rows["rows peaking on the last token"]
    assert "weight on the top sentence (3 rows)" in rows
    for what in ("top sentence is being translated", "top sentence is the last one"):
        assert rows[what].endswith("(a sentence at random)")
    assert "33.3%" in rows["top sentence is being translated"]
    assert "66.7%" in rows["top sentence is the last one"]
    assert "nan" not in alignment.table(stats)


def test_table_leaves_out_the_sentence_rows_without_joined_sources():
    text = alignment.table(alignment.summarize([W]))
    assert "sentence" not in text and "nan" not in text and len(text.splitlines()) == 4


# --- the greedy weights of a real (tiny) model ---------------------------------------------------

attention_model = functools.partial(tiny_model, src_words=6, tgt_words=4, emb_dim=6, hidden=8,
                                    max_tgt_len=6, scale=3.0, eos_bias=1.0, attention=True)


def test_greedy_weights_equal_one_sentence_at_a_time():
    model = attention_model()
    sources = ["en1 en2 en3", "en4", "en0 en5 en1 en2 en3 en4", "en2 en2"]
    got = alignment.greedy_weights(model, sources, batch_size=3)
    for english, w in zip(sources, got):
        src, lengths = model.prepare([english])
        ids = search.greedy(model, src, lengths, source_cap=True)[0].tolist()
        T = ids.index(EOS) + 1 if EOS in ids else len(ids)
        expected = attention_weights(model, src, lengths, torch.tensor([ids[:T]]))[0]
        assert w.shape == (T, lengths.item())
        assert torch.allclose(w, expected, atol=1e-5)
        assert torch.allclose(w.sum(-1), torch.ones(T), atol=1e-5)


def test_greedy_weights_need_attention():
    with pytest.raises(ValueError, match="no attention"):
        alignment.greedy_weights(tiny_model(attention=False), ["en1"])


# --- the parts of joined groups -------------------------------------------------------------------

HELD_OUT = [(f"sentence {i} .", [f"phrase {i} ."]) for i in range(17)]


def test_group_parts_rebuild_each_group():
    groups = joined_groups(HELD_OUT, k_max=4, seed=0)
    parts = alignment.group_parts(HELD_OUT, groups, k_max=4)
    assert [len(p) for p in parts] == [k for _, _, k in groups]
    assert [" ".join(p) for p in parts] == [en for en, _, _ in groups]
    assert alignment.part_lengths(parts[0]) == [3] * len(parts[0])


def test_group_parts_refuse_groups_drawn_otherwise():
    with pytest.raises(ValueError, match="seed"):
        alignment.group_parts(HELD_OUT, joined_groups(HELD_OUT, k_max=4, seed=1), k_max=4)


@pytest.mark.parametrize("batch_size", [0, -1, 2.0, True, "3"])
def test_greedy_weights_refuse_a_bad_batch_size(batch_size):
    """batch_size=-1 once returned [None, None], and 0 a bare range() error."""
    with pytest.raises(ValueError, match=f"batch_size must be an integer >= 1, got "
                                         f"{re.escape(repr(batch_size))}"):
        alignment.greedy_weights(attention_model(), ["en1 en2", "en3"], batch_size=batch_size)


@pytest.mark.parametrize("weights, words", [
    (torch.tensor([[0.5, float("nan")], [0.5, 0.5]]), "NaN or infinite"),
    (torch.tensor([[0.5, 0.4], [0.5, 0.5]]), "row 0 sums to 0.9"),
    (torch.tensor([[1.5, -0.5], [0.5, 0.5]]), "negative"),
])
def test_summarize_refuses_weights_that_are_not_distributions(weights, words):
    with pytest.raises(ValueError, match=words):
        alignment.summarize([weights])


def test_copied_words_are_names_and_numbers_found_once_on_each_side():
    source = ["Mary", "has", "3", "cats", "and", "Tom", "has", "Tom", "."]
    output = ["Mary", "a", "3", "chats", "et", "Tom", ".", "<eos>"]
    # "Tom" is twice in the source, "a"/"has" are not names, "." is punctuation
    assert alignment.copied_words(source, output) == [(0, 0), (2, 2)]
    assert alignment.copied_words(["I", "am", "."], ["Je", "suis", "."]) == []


def test_copy_alignment_counts_the_strongest_column_on_the_word_or_after(monkeypatch):
    weights = torch.full((6, 5), 0.1)  # (T, S): rows of "Mary a 3 chats . <eos>"
    weights[0, 0] = 0.6  # writing "Mary": on its column
    weights[2, 3] = 0.6  # writing "3": on the column after it
    output = ["Mary", "a", "3", "chats", ".", "<eos>"]
    moved = torch.full((5, 4), 0.1)  # (T, S): "Tom a vu Mary <eos>" for "Mary saw Tom ."
    moved[0, 2] = 0.6  # writing "Tom" (row 0 of 5): on its column 2, off the diagonal's column 0
    moved[3, 1] = 0.6  # writing "Mary" (row 3): on column 1, just after Mary's 0
    monkeypatch.setattr(alignment, "greedy_weights",
                        lambda model, sources, with_tokens: [(weights, output),
                                                             (weights[:, :3], ["Je", "."])])
    measured = alignment.copy_alignment(None, ["Mary has 3 cats .", "I am ."])
    assert (measured.sources, measured.rows) == (1, 2)
    assert (measured.on_word, measured.after_word, measured.either) == (0.5, 0.5, 1.0)
    # Both copied words sit on the diagonal (columns floor((t + 1/2) 5/6) = 0 and 2): no control.
    assert (measured.by_position, measured.off_diagonal) == (1.0, 0)
    assert math.isnan(measured.on_word_off_diagonal)
    monkeypatch.setattr(alignment, "greedy_weights",
                        lambda model, sources, with_tokens: [
                            (moved, ["Tom", "a", "vu", "Mary", "<eos>"])])
    measured = alignment.copy_alignment(None, ["Mary saw Tom ."])
    assert (measured.rows, measured.on_word, measured.after_word) == (2, 0.5, 0.5)
    # Diagonal columns floor((t + 1/2) 4/5): Tom's row 0 -> 0 (Tom is at 2), Mary's row 3 -> 2
    # (Mary is at 0): neither copied word is on the diagonal, and one of the two rows finds it.
    assert (measured.by_position, measured.off_diagonal, measured.on_word_off_diagonal) == (
        0.0, 2, 0.5)
    monkeypatch.setattr(alignment, "greedy_weights",
                        lambda model, sources, with_tokens: [(weights[:, :3], ["Je", "."])])
    with pytest.raises(ValueError, match="no output copies a name or number"):
        alignment.copy_alignment(None, ["I am ."])
