"""Checker for the exercise of the introduction, "The path of one sentence".

    check_path_counts(path_counts)   path_counts(S, T, B, T_pad, V) -> {"encoder_steps",
                                     "decoder_steps", "distributions", "logits"}

The true counts are not written down here: they are read off a real (tiny, untrained) `Seq2Seq`
run on a batch made by `lib.data.collate`, so they follow the course's own conventions (no
<sos>/<eos> on the English side; <sos> + y in and y + <eos> out on the French side; every row
computed up to the padded length). A wrong count that equals a classic slip (the forgotten
<eos>, <sos> and <eos> counted as two steps, the padding left out of the logits, the batch or the
vocabulary forgotten) is named.
"""

from __future__ import annotations

import torch

from lib.checks.harness import CheckResult, Mismatch, call, run_checks
from lib.data import SPECIALS, collate
from lib.experiments.toy import tiny_model

KEYS = ("encoder_steps", "decoder_steps", "distributions", "logits")
NAMES = ("S", "T", "B", "T_pad", "V")

# (S, T, B, T_pad, V). In the first case every slip of `_slips` gives a count of its own, so
# the slip a wrong answer makes is named there; then the walk-through ("We won ." -> "Nous
# avons gagné ."), and batches.
CASES = [
    (4, 7, 3, 9, 30),
    (3, 4, 1, 4, 12),
    (5, 7, 4, 9, 30),
    (6, 2, 3, 6, 10),
    (9, 5, 8, 11, 50),
]


def true_counts(S: int, T: int, B: int, T_pad: int, V: int) -> dict[str, int]:
    """The counts read off a tiny model: the pair alone, then B pairs padded to T_pad words."""
    model = tiny_model(0, src_words=4, tgt_words=V - len(SPECIALS), hidden=4, layers=1,
                       emb_dim=2)
    word = len(SPECIALS)  # the first id that is a word, not a special token
    pair = ([word] * S, [word] * T)
    longest = ([word] * S, [word] * T_pad)  # the batch's longest French sentence
    alone, batch = collate([pair]), collate([pair] + [longest] * (B - 1) if B > 1 else [pair])
    with torch.no_grad():
        states, _, _ = model.encode(alone.src, alone.src_lengths)  # (1, S, H): one per step
        logits = model(alone.src, alone.src_lengths, alone.tgt_in)  # (1, T + 1, V)
        batch_logits = model(batch.src, batch.src_lengths, batch.tgt_in)  # (B, T_pad + 1, V)
    return {
        "encoder_steps": states.size(1),
        "decoder_steps": logits.size(1),  # one teacher-forced step per decoder input
        "distributions": logits.shape[:-1].numel(),  # one softmax per row of V logits
        "logits": batch_logits.numel(),
    }


def _slips(key: str, S: int, T: int, B: int, T_pad: int, V: int) -> list[tuple[int, str]]:
    """Wrong counts that come from a known mistake, each with what to say about it."""
    eos_missing = ("the last step is missing: the decoder also has to predict <eos> after the "
                   "last word (the target is y + <eos>, T + 1 tokens), or it never learns to stop")
    two_extra = ("<sos> and <eos> are not two extra steps: the input <sos> + y and the target "
                 "y + <eos> are the same T + 1 positions, shifted by one")
    if key == "encoder_steps":
        return [
            (S + 1, "the English sentence gets no <sos> or <eos> in this course: the encoder "
                    "runs one step per English token, S in all"),
            (S + 2, "the English sentence gets no <sos> or <eos> in this course: the encoder "
                    "runs one step per English token, S in all"),
            (T, "the encoder reads the English sentence (S tokens), not the French one"),
            (T + 1, "the encoder reads the English sentence (S tokens), not the French one"),
        ]
    if key == "decoder_steps":
        return [
            (T, eos_missing),
            (T + 2, two_extra),
            (T_pad + 1, "that is the padded batch's length; this pair on its own has no padding"),
            (S + 1, "the decoder's steps follow the French sentence (T tokens), not the English "
                    "one"),
            (S, "the decoder's steps follow the French sentence (T tokens), not the English one"),
        ]
    if key == "distributions":
        return [
            (T, eos_missing),
            (T + 2, two_extra),
            ((T + 1) * V, "that is the number of probabilities: each distribution holds V of "
                          "them, one per French word; count the distributions, one per step"),
            (V, "a distribution holds V probabilities, one per French word; the decoder "
                "computes one distribution at each of its steps"),
        ]
    return [
        (B * T_pad * V, "one position short per row: the decoder reads <sos> + y and predicts "
                        "y + <eos>, so a row padded to T_pad words has T_pad + 1 positions"),
        (B * (T_pad + 2) * V, "each row has T_pad + 1 positions, not T_pad + 2: " + two_extra),
        (B * (T + 1) * V, "the padding is computed too: every row of the batch runs the same "
                          "T_pad + 1 steps, and the padded positions get logits like the others; "
                          "the mask only keeps them out of the loss"),
        (B * T * V, "the padding is computed too (every row runs T_pad + 1 steps, not the "
                    "length of this pair), and the <eos> position is missing"),
        ((T_pad + 1) * V, "the batch is missing: B rows, each with its own logits"),
        (B * (T_pad + 1), "V is missing: at each position the head gives one logit per French "
                          "word, V of them"),
        (B * (T_pad + 1) * (V - len(SPECIALS)), "V counts every word of the vocabulary, the "
                                                "special tokens included: the head scores them "
                                                "all"),
    ]


def _number(key: str, value, label: str) -> int:
    if value is ...:
        raise NotImplementedError  # the skeleton's placeholder: not done yet
    if torch.is_tensor(value) and value.numel() == 1:
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Mismatch(f"{label}: {key!r} should be a whole number, got "
                       f"{type(value).__name__} {value!r}")
    if value != int(value):
        raise Mismatch(f"{label}: {key!r} is a count, a whole number; got {value!r}")
    return int(value)


def _case(fn, S: int, T: int, B: int, T_pad: int, V: int) -> str:
    label = f"S={S}, T={T}, B={B}, T_pad={T_pad}, V={V}"
    got = call(fn, S, T, B, T_pad, V, names=NAMES, where=label)
    if not isinstance(got, dict):
        raise Mismatch(f"{label}: return a dict with the keys {', '.join(KEYS)}; got "
                       f"{type(got).__name__}")
    missing = [k for k in KEYS if k not in got]
    if missing:
        raise Mismatch(f"{label}: the dict has no {', '.join(repr(k) for k in missing)} (its keys "
                       f"are {', '.join(repr(k) for k in got) or 'none'})")
    numbers = {k: _number(k, got[k], label) for k in KEYS}
    expected = true_counts(S, T, B, T_pad, V)
    for key in KEYS:
        if numbers[key] == expected[key]:
            continue
        for value, why in _slips(key, S, T, B, T_pad, V):
            if numbers[key] == value:
                raise Mismatch(f"{label}: {key} = {numbers[key]:,}: {why}")
        raise Mismatch(f"{label}: {key} = {numbers[key]:,} is not the count; follow the pair "
                       f"through the figure: what goes into each network, one token per step, "
                       f"and what comes out of the head at each step")
    return label


def check_path_counts(fn) -> CheckResult:
    """fn(S, T, B, T_pad, V) -> the counts of one pair's path, and the logits of a batch."""
    return run_checks("the path of one sentence", *[
        (lambda case=case: _case(fn, *case)) for case in CASES])
