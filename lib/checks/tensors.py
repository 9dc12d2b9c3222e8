"""Checkers for the exercises of "From sentences to tensors".

    check_reverse_padded(reverse_padded)     a padded batch with each sentence reversed, the
                                             <pad> ids still after it (Sutskever et al.)
    check_split_by_key(split_by_key)         a stricter split: sentences with the same key
                                             (e.g. the same words, whatever the punctuation and
                                             capitals) all on one side
    check_largest_min_freq(largest_min_freq)
                                             the largest min_freq whose vocabulary leaves at
                                             most a share of the test tokens unknown

Each runs the learner's function on small cases, compares it with `lib.data` (or with the rule
the chapter states) and says in words what differs.
"""

from __future__ import annotations

import random
from collections import Counter

import torch

from lib.checks.harness import CheckResult, Mismatch, call, expect_shape, run_checks
from lib.data import PAD, SPECIALS, UNK, Vocab, pad


def _as_ids(got) -> list[int]:
    """A learner's ids (a list or a 1-D tensor) as ints, or a Mismatch that says why not."""
    if torch.is_tensor(got):
        if got.dim() != 1:
            raise Mismatch(f"return one flat list of ids (or a 1-D tensor), got a tensor of "
                           f"shape {tuple(got.shape)}")
        return [int(i) for i in got.tolist()]
    if not isinstance(got, (list, tuple)):
        raise Mismatch(f"return a list of integer ids, got {type(got).__name__}: {got!r}")
    if not all(isinstance(i, int) or (torch.is_tensor(i) and i.numel() == 1) for i in got):
        raise Mismatch(f"every id must be an integer, got {got!r}")
    return [int(i) for i in got]


# ---------------------------------------------------------------------------------------------
# split_by_key(pairs, n_test, seed, key) -> (train pairs, test pairs), grouped by key(English)
# ---------------------------------------------------------------------------------------------


def toy_pairs(n_sources: int = 60, seed: int = 1) -> list[tuple[str, str]]:
    """Pairs laid out like Tatoeba's: each English sentence on 1-4 consecutive lines."""
    rng = random.Random(seed)
    pairs = []
    for i in range(n_sources):
        for k in range(rng.randint(1, 4)):
            pairs.append((f"English sentence {i}.", f"Traduction {k} de la phrase {i}."))
    return pairs


def near_duplicate_key(en: str) -> str:
    """The checker's key: lower case, final punctuation dropped ("Go away!" ~ "go away.")."""
    return en.lower().rstrip(".!? ")


def toy_near_duplicates(n_keys: int = 40, seed: int = 3) -> list[tuple[str, str]]:
    """Pairs in which most sentences come back elsewhere in the file as a near-duplicate: the
    same words with other capitals or final punctuation ("Sentence 4." ... "sentence 4!")."""
    rng = random.Random(seed)
    lines = []
    for i in range(n_keys):
        for variant in rng.sample(["Sentence {}.", "sentence {}!", "Sentence {}?"],
                                  rng.randint(1, 3)):
            for k in range(rng.randint(1, 2)):
                lines.append((variant.format(i), f"Traduction {k} de {variant.format(i)}"))
    rng.shuffle(lines)  # variants of one sentence are scattered over the file
    return lines


def _split_key_case(fn, pairs, n_test, key) -> str:
    got = call(fn, pairs, n_test, 0, key, names=("pairs", "n_test", "seed", "key"))
    train, test = _as_split(got)
    if sorted(train + test) != sorted(pairs):
        lost = len(pairs) - len(train) - len(test)
        what = (f"{lost} pairs are missing" if lost > 0 else f"{-lost} pairs are extra"
                if lost < 0 else "the pairs differ from the input")
        raise Mismatch(f"train + test must hold every input pair exactly once: {what}")
    shared_en = sorted({e for e, _ in train} & {e for e, _ in test})
    if shared_en:
        raise Mismatch(f"{len(shared_en)} English sentences have lines on both sides (e.g. "
                       f"{shared_en[0]!r}): you split the lines; group the lines by key(en) "
                       f"and split the groups")
    train_keys = {key(e): e for e, _ in train}
    shared = sorted(k for k in {key(e) for e, _ in test} if k in train_keys)
    if shared:
        example = next(e for e, _ in test if key(e) == shared[0])
        raise Mismatch(f"{len(shared)} keys are on both sides, e.g. {example!r} in test and "
                       f"{train_keys[shared[0]]!r} in train, both with key {shared[0]!r}: you "
                       f"grouped by the English string; group by key(en), so that every "
                       f"sentence with the same key goes to the same side")
    test_keys = {key(e) for e, _ in test}
    if len(test_keys) != n_test:
        counted = ("distinct English sentences" if len({e for e, _ in test}) == n_test
                   else "lines" if len(test) == n_test else "something else")
        raise Mismatch(f"the test part holds {len(test_keys)} distinct keys; n_test={n_test} "
                       f"counts keys (groups of sentences), and you counted {counted}")
    return (f"{len(pairs)} pairs -> {len(test_keys)} keys in test, {len(test)} test lines, no "
            f"key on both sides")


def _as_split(got):
    if not (isinstance(got, tuple) and len(got) == 2):
        raise Mismatch("return a pair (train, test), each a list of (English, French) pairs")
    try:
        return ([(str(e), str(f)) for e, f in got[0]], [(str(e), str(f)) for e, f in got[1]])
    except (TypeError, ValueError):
        raise Mismatch("train and test must be lists of (English, French) pairs") from None


def _split_key_random(fn, pairs, n_test, key) -> str:
    def test_keys(seed):
        got = call(fn, pairs, n_test, seed, key, names=("pairs", "n_test", "seed", "key"))
        return {key(e) for e, _ in _as_split(got)[1]}

    a = test_keys(0)
    if a != test_keys(0):
        raise Mismatch("the same seed gave two different test sets; use random.Random(seed)")
    if all(test_keys(s) == a for s in (1, 2, 3)):
        raise Mismatch("seeds 0, 1, 2 and 3 give the same test keys: shuffle the keys with "
                       "random.Random(seed) before you cut")
    return "the seed picks the test keys, reproducibly"


def check_split_by_key(fn) -> CheckResult:
    """`fn(pairs, n_test, seed, key)` -> (train, test): the English sentences grouped by
    `key(en)`, n_test groups chosen at random in test with all their lines, no key on both
    sides. With key = the identity it is `lib.data.split_by_source`'s rule."""
    near = toy_near_duplicates()
    return run_checks(
        "split_by_key",
        lambda: _split_key_case(fn, near, 8, near_duplicate_key),
        lambda: _split_key_case(fn, toy_pairs(30, seed=7), 5, lambda en: en),  # exact key
        lambda: _split_key_case(fn, toy_near_duplicates(15, seed=4), 6, near_duplicate_key),
        lambda: _split_key_random(fn, near, 8, near_duplicate_key),
    )


# ---------------------------------------------------------------------------------------------
# encode_with_fallback(tokens, vocab) -> ids: an unknown token falls back to its lower case
# ---------------------------------------------------------------------------------------------

_CASED = Vocab(list(SPECIALS) + ["the", "cat", "Turkey", "turkey", "is", "cold", ".", "Paris",
                                 "are"])


def _fallback_reference(tokens: list[str], vocab: Vocab) -> list[int]:
    out = []
    for tok in tokens:
        if tok in vocab.stoi:
            out.append(vocab.stoi[tok])
        else:
            out.append(vocab.stoi.get(tok.lower(), UNK))
    return out


def check_encode_with_fallback(fn, vocab: Vocab | None = None) -> CheckResult:
    """`fn(tokens, vocab)`: one id per token; a known token keeps its own id, an unknown one
    takes the id of its lower-case form when that is known, and <unk> otherwise."""
    vocab = vocab or _CASED
    cases = [
        (["The", "cat", "is", "cold", "."], "a capital at the start of a sentence"),
        (["Turkey", "is", "cold", "."], "a token known as it is, whose lower case is known too"),
        (["THE", "Cat", "Are", "zebras"], "several unknown casings and one unknown word"),
        (["paris", "is", "cold"], "a lower-case token known only with a capital"),
    ]

    def case(tokens, note):
        def check():
            got = _as_ids(call(fn, list(tokens), vocab, names=("tokens", "vocab")))
            want = _fallback_reference(tokens, vocab)
            if got == want:
                return note
            where = f"{tokens} ({note})"
            lowered = [vocab.stoi.get(t.lower(), UNK) for t in tokens]
            plain = [vocab.stoi.get(t, UNK) for t in tokens]
            if got == lowered:
                raise Mismatch(f"{where}: you lower-cased every token, known ones too; a token "
                               f"the vocabulary knows as it is (Turkey) keeps its own id, only an "
                               f"unknown one falls back to its lower case")
            if got == plain:
                raise Mismatch(f"{where}: no fallback: an unknown token whose lower case is "
                               f"known (The -> the) should get the lower case's id")
            if len(got) == len(tokens) + 2 and got[1:-1] == want:
                raise Mismatch(f"{where}: no <sos> or <eos> on the source side")
            if len(got) != len(tokens):
                raise Mismatch(f"{where}: return one id per token ({len(tokens)}), got "
                               f"{len(got)}")
            raise Mismatch(f"{where}: expected {want}, got {got}")
        return check

    return run_checks("encode_with_fallback", *[case(t, n) for t, n in cases])


# ---------------------------------------------------------------------------------------------
# reverse_padded(src, lengths) -> each sentence reversed, the <pad> ids still after it
# ---------------------------------------------------------------------------------------------


def _reverse_case(fn, seqs: list[list[int]]) -> str:
    src = pad(seqs)  # (B, T), right-padded
    lengths = torch.tensor([len(s) for s in seqs])  # (B,)
    expected = pad([s[::-1] for s in seqs])  # (B, T)
    given = src.clone()  # the caller's batch: it must come back unchanged
    try:
        got = call(fn, given, lengths.clone(), names=("src", "lengths"))
    except Mismatch:
        if not torch.equal(given, src):
            raise Mismatch("you reversed `src` in place: reverse into a copy (src.clone()); "
                           "the caller's batch must not change, since the training loop "
                           "still reads batch.src") from None
        raise
    if not torch.is_tensor(got):
        raise Mismatch(f"return a tensor of shape (B, T) like src, got {type(got).__name__}")
    expect_shape("the reversed batch", got, tuple(src.shape))
    if got.dtype != torch.long:
        raise Mismatch(f"the reversed batch has dtype {got.dtype}; ids index an embedding "
                       f"table, so keep torch.long")
    if torch.equal(got, expected):
        return f"lengths {lengths.tolist()}: each sentence reversed, pads still at the end"
    if torch.equal(got, src.flip(1)) and not torch.equal(src.flip(1), expected):
        raise Mismatch("you flipped whole rows, so the <pad> ids of the shorter sentences moved "
                       "to the front, where the encoder would read them first; reverse only the "
                       "first lengths[b] positions of row b")
    if torch.equal(got, src):
        raise Mismatch("the batch came back unchanged: reverse each sentence's tokens")
    for b, s in enumerate(seqs):
        row = got[b].tolist()
        if row == expected[b].tolist():
            continue
        n = len(s)
        if row[:n] == s:
            raise Mismatch(f"row {b} is {row}: its tokens are in their original order; "
                           f"expected {expected[b].tolist()}")
        raise Mismatch(f"row {b} (length {n}) is {row}, expected {expected[b].tolist()}: the "
                       f"first {n} positions reversed, then <pad> = {PAD}")
    raise Mismatch("unreachable")  # pragma: no cover


def check_reverse_padded(fn) -> CheckResult:
    """`fn(src (B, T) long, right-padded, lengths (B,))` -> (B, T) long: row b's first
    lengths[b] ids in reverse order, then the same <pad> ids, so packing still works."""
    cases = [
        [[5, 6, 7, 14], [8, 15], [9, 10, 16]],  # ids >= 4: the source has no specials
        [[4, 5, 6], [7, 8, 9]],  # equal lengths: flipping whole rows is right here
        [[12], [5, 6, 7, 8, 9, 17], [7, 18], [11, 12, 13, 19]],
    ]
    return run_checks("reverse_padded", *[(lambda c=c: _reverse_case(fn, c)) for c in cases])


# ---------------------------------------------------------------------------------------------
# largest_min_freq(train_counts, test_tokens, share) -> the largest min_freq whose vocabulary
# leaves at most `share` of the test tokens unknown
# ---------------------------------------------------------------------------------------------


def _unknown_share(counts, tokens: list[str], min_freq: int) -> float:
    """Share of `tokens` that Vocab.build(..., min_freq) on these counts maps to <unk>."""
    return sum(counts.get(t, 0) < min_freq for t in tokens) / len(tokens)


def _last_within(rate, share: float) -> int:
    """The largest min_freq with rate(min_freq) <= share (0 if even 1 is above it); rate grows
    with min_freq and reaches 1 > share."""
    m = 0
    while rate(m + 1) <= share:
        m += 1
    return m


def _min_freq_case(fn, counts: dict, tokens: list[str], share: float) -> str:
    def rate(m: int) -> float:
        return _unknown_share(counts, tokens, m)

    want = _last_within(rate, share)
    got = call(fn, Counter(counts), list(tokens), share,
               names=("train_counts", "test_tokens", "share"))
    if hasattr(got, "item"):
        got = got.item()
    if not isinstance(got, int) or isinstance(got, bool):
        raise Mismatch(f"return min_freq as an int, got {type(got).__name__}: {got!r}")
    if got == want:
        return f"share {share:.0%}: min_freq {want}"
    rates = ", ".join(f"{m}: {rate(m):.0%}" for m in range(1, max(want, got) + 2))
    where = f"(share {share:.0%}; unknown test tokens by min_freq: {rates}) "
    if want == 0:
        raise Mismatch(f"{where}even min_freq 1 leaves more than {share:.0%} unknown (tokens "
                       f"never seen in training): no min_freq is within the share, return 0")
    with_test = Counter(counts) + Counter(tokens)
    if got == _last_within(lambda m: _unknown_share(with_test, tokens, m), share):
        raise Mismatch(f"{where}you counted the test tokens towards the vocabulary; it is "
                       f"built from the training counts only, so test tokens cannot make "
                       f"themselves known")
    if got == want - 1 and rate(want) == share:
        raise Mismatch(f"{where}at min_freq {want} exactly {share:.0%} are unknown, which is "
                       f"*at most* {share:.0%}: compare with <=, not <")
    if got == want - 1:
        raise Mismatch(f"{where}one too small: a token is unknown when seen *fewer* than "
                       f"min_freq times (Vocab.build keeps count >= min_freq): its training "
                       f"count < min_freq, not <=")
    if got == want + 1:
        raise Mismatch(f"{where}one too large: at min_freq {got} more than {share:.0%} are "
                       f"unknown; return the last min_freq within the share, not the first "
                       f"one above it")
    raise Mismatch(f"{where}expected {want}, got {got}")


def check_largest_min_freq(fn) -> CheckResult:
    """`fn(train_counts (Counter), test_tokens (list), 0 < share < 1)` -> the largest int min_freq
    for which at most `share` of test_tokens are seen fewer than min_freq times in training, 0
    if even min_freq 1 leaves more."""
    counts = {"le": 9, "chat": 4, "dort": 2, "noir": 1, "vite": 3, "chien": 6}
    rare = ["le", "chat", "dort", "dort", "dort", "noir", "zèbre", "le", "chat", "vite", "chien"]
    common = ["le", "chat", "dort", "noir", "zèbre", "le", "chat", "le", "vite", "le", "noir",
              "vite"]  # at min_freq 2 exactly 25 % unknown
    return run_checks(
        "largest_min_freq",
        lambda: _min_freq_case(fn, counts, rare, 0.4),  # min_freq 2
        lambda: _min_freq_case(fn, counts, common, 0.25),  # 2, where the share is exact
        lambda: _min_freq_case(fn, counts, rare, 0.6),  # 4
        lambda: _min_freq_case(fn, counts, rare, 0.05),  # 0: zèbre alone is 9 % at min_freq 1
    )
