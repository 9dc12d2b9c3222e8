"""lib.data: normalisation, French tokenisation, reading and splitting the corpus, vocabularies,
batches. Oracles are hand-written expectations and direct recomputations from the raw file."""

from __future__ import annotations

import gzip
import hashlib
import random
from collections import Counter, defaultdict
from pathlib import Path

import pytest
import torch

from lib import data
from lib.data import EOS, PAD, SOS, SPECIALS, UNK, CorpusError, Vocab

ATTRIBUTION = "CC-BY 2.0 (France) Attribution: tatoeba.org #2877272 (CM) & #1158250 (Wittydev)"


# The developers' and CI's copy of the corpus, beside the repository (not part of the package).
SHARED_COPY = Path(__file__).resolve().parents[2] / "shared" / "data" / "fra-eng" / "fra.txt"


@pytest.fixture(scope="module")
def corpus_file(monkeypatch_module):
    monkeypatch_module.delenv(data.DATA_ENV, raising=False)
    path = data.corpus_path()
    assert path == data.PACKAGED_CORPUS and path.is_file()
    return path


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as m:
        yield m


@pytest.fixture(scope="module")
def pairs(corpus_file):
    return data.read_pairs(corpus_file)


@pytest.fixture(scope="module")
def raw_lines(corpus_file):
    """The corpus as raw (English, French) strings, parsed here without lib.data."""
    with gzip.open(corpus_file, "rt", encoding="utf-8") as f:
        return [tuple(line.rstrip("\n").split("\t")[:2]) for line in f if line.strip()]


# ---------------------------------------------------------------------------------------------
# normalize / tokenize / detokenize
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("space", ["\u202f", "\u00a0", "\u2009"])
def test_normalize_maps_unicode_spaces_to_one_plain_space(space):
    assert data.normalize(f"Va{space}!") == "Va !"
    assert data.normalize(f"Dis{space}:{space}«{space}oui{space}»") == "Dis : « oui »"


@pytest.mark.parametrize("quote", ["\u2019", "\u2018"])
def test_normalize_maps_curly_apostrophes(quote):
    assert data.normalize(f"J{quote}ai faim.") == "J'ai faim."


def test_normalize_collapses_whitespace_and_composes_accents():
    assert data.normalize("  Il   est\u202f\u202fla.  ") == "Il est la."
    # e + combining acute accent (NFD) becomes the single code point é (NFC)
    assert data.normalize("Cafe\u0301") == "Caf\u00e9"
    assert data.tokenize("Cafe\u0301 !") == ["Caf\u00e9", "!"]


def test_normalize_rejects_non_strings():
    with pytest.raises(TypeError, match="expected a sentence as str, got int"):
        data.normalize(3)
    with pytest.raises(TypeError, match="NoneType"):
        data.tokenize(None)


@pytest.mark.parametrize("text, tokens", [
    ("J'ai faim.", ["J'", "ai", "faim", "."]),
    ("J\u2019ai faim\u202f!", ["J'", "ai", "faim", "!"]),
    ("Qu'est-ce que c'est ?", ["Qu'", "est-ce", "que", "c'", "est", "?"]),
    ("« Bonjour », dit-il.", ["«", "Bonjour", "»", ",", "dit-il", "."]),
    ("Va-t-il venir ?", ["Va-t-il", "venir", "?"]),
    ("Aujourd'hui, l'œuvre est là !", ["Aujourd'", "hui", ",", "l'", "œuvre", "est", "là", "!"]),
    ("Où êtes-vous ?", ["Où", "êtes-vous", "?"]),
    ("Il a (presque) fini…", ["Il", "a", "(", "presque", ")", "fini", "…"]),
    ("Dis : « s'il te plaît ».", ["Dis", ":", "«", "s'", "il", "te", "plaît", "»", "."]),
    ("I'm hungry.", ["I'", "m", "hungry", "."]),
    ("", []),
])
def test_tokenize_french_typography(text, tokens):
    assert data.tokenize(text) == tokens


@pytest.mark.parametrize("tokens, text", [
    (["J'", "ai", "faim", "."], "J'ai faim."),
    (["Qu'", "est-ce", "que", "c'", "est", "?"], "Qu'est-ce que c'est ?"),
    (["«", "Bonjour", "»", ",", "dit-il", "."], "« Bonjour », dit-il."),
    (["Il", "a", "(", "presque", ")", "fini", "…"], "Il a (presque) fini…"),
    (["Attends", "!"], "Attends !"),
    (["Dis", ":", "«", "oui", "»", "."], "Dis : « oui »."),
    ([], ""),
])
def test_detokenize_writes_natural_french(tokens, text):
    assert data.detokenize(tokens) == text


def test_detokenize_inverts_tokenize_on_the_real_french_side(pairs):
    french = [fr for _, fr in pairs]
    tokens = [data.tokenize(fr) for fr in french]
    back = [data.detokenize(t) for t in tokens]
    misses = [fr for fr, b in zip(french, back) if b != fr]
    # Measured: 250 of 76,036 (0.33 %) do not come back exactly, all because the source itself
    # breaks the typography the detokenizer writes, e.g.
    #   "Tout le monde à bord!"     -> "Tout le monde à bord !"  (no space before "!")
    #   "J'aime le R&B."            -> "J'aime le R & B."
    #   'Elle a dit "au revoir".'   -> 'Elle a dit " au revoir ".'
    assert len(misses) / len(french) <= 0.01, misses[:10]
    assert "Tout le monde à bord!" in misses
    # ...but the tokens always survive the round trip: nothing is lost or merged.
    assert all(data.tokenize(b) == t for b, t in zip(back, tokens))


def test_normalized_corpus_has_no_unicode_spaces_or_curly_quotes(pairs):
    odd = {"\u202f", "\u00a0", "\u2009", "\u2019", "\u2018", "\t"}
    assert not [p for p in pairs if odd & set(p[0] + p[1])]
    assert any("\u202f" in fr for _, fr in _raw_sample()), "the raw file does use U+202F"


def _raw_sample():
    with gzip.open(data.PACKAGED_CORPUS, "rt", encoding="utf-8") as f:
        return [tuple(next(f).split("\t")[:2]) for _ in range(50)]


# ---------------------------------------------------------------------------------------------
# read_pairs and corpus_path
# ---------------------------------------------------------------------------------------------


def test_real_corpus_is_the_documented_copy(corpus_file, pairs, raw_lines):
    with gzip.open(corpus_file, "rb") as f:
        assert hashlib.sha256(f.read()).hexdigest() == data.CORPUS_SHA256
    assert len(pairs) == data.CORPUS_PAIRS == len(raw_lines) == 76_036
    assert pairs[0] == ("Go.", "Va !")
    assert pairs[1] == ("Run!", "Cours !")  # "Cours\u202f!" in the file
    assert [data.normalize(en) for en, _ in raw_lines] == [en for en, _ in pairs]
    assert len({en for en, _ in pairs}) == 49_196  # as the corpus README says


def test_corpus_path_env_override(tmp_path, monkeypatch):
    f = tmp_path / "mine.txt"
    f.write_text("Hi.\tSalut.\nGo.\tVa\u202f!\n", encoding="utf-8")
    monkeypatch.setenv(data.DATA_ENV, str(f))
    assert data.corpus_path() == f
    assert data.read_pairs() == [("Hi.", "Salut."), ("Go.", "Va !")]
    monkeypatch.setenv(data.DATA_ENV, str(tmp_path / "missing.txt"))
    with pytest.raises(CorpusError, match=r"SEQ2SEQ_DATA.*missing\.txt"):
        data.corpus_path()


def test_the_packaged_corpus_has_the_bytes_of_the_developers_copy(corpus_file):
    if not SHARED_COPY.is_file():
        pytest.skip(f"no developers' copy at {SHARED_COPY} to compare with")
    with gzip.open(corpus_file, "rb") as f:
        assert f.read() == SHARED_COPY.read_bytes()
    assert data.corpus_sha256(SHARED_COPY) == data.corpus_sha256(corpus_file) \
        == data.CORPUS_SHA256


def test_the_packaged_corpus_is_checked_before_use(tmp_path, monkeypatch):
    real = data.PACKAGED_CORPUS.read_bytes()
    bad = tmp_path / "fra-eng.txt.gz"
    bad.write_bytes(gzip.compress(b"Go.\tVa !\n", mtime=0))
    monkeypatch.delenv(data.DATA_ENV, raising=False)
    monkeypatch.setattr(data, "PACKAGED_CORPUS", bad)
    with pytest.raises(CorpusError, match=r"has sha256 [0-9a-f]{64}, expected 253b377b.*damaged"):
        data.corpus_path()
    truncated = tmp_path / "cut.txt.gz"
    truncated.write_bytes(real[:5000])
    with pytest.raises(CorpusError, match="corrupt"):
        data.read_pairs(truncated)
    with pytest.raises(CorpusError, match="corrupt"):
        data.corpus_sha256(truncated)
    monkeypatch.setattr(data, "PACKAGED_CORPUS", tmp_path / "missing.gz")
    with pytest.raises(CorpusError, match="missing: reinstall the package"):
        data.corpus_path()


def test_the_public_file_is_an_explicit_opt_in_that_warns(monkeypatch, tmp_path):
    import lib.course.download

    fetched = tmp_path / "fra.txt"
    monkeypatch.setattr(lib.course.download, "fetch_corpus", lambda: fetched)
    with pytest.warns(UserWarning, match="every measured number will differ"):
        assert lib.course.download.public_corpus_path() == fetched


def test_no_corpus_is_fetched_by_default(monkeypatch):
    import lib.course.download

    def refuse(*args, **kwargs):
        raise AssertionError("the corpus must not be downloaded unless asked for")

    monkeypatch.setattr(lib.course.download, "fetch_corpus", refuse)
    monkeypatch.delenv(data.DATA_ENV, raising=False)
    assert len(data.read_pairs()) == data.CORPUS_PAIRS


def test_two_and_three_column_files_give_the_same_pairs(tmp_path, raw_lines):
    sample = raw_lines[:40] + raw_lines[-40:]
    two = tmp_path / "two.txt"
    three = tmp_path / "three.txt"
    crlf = tmp_path / "crlf.txt"
    two.write_text("".join(f"{en}\t{fr}\n" for en, fr in sample), encoding="utf-8")
    three.write_text("".join(f"{en}\t{fr}\t{ATTRIBUTION}\n" for en, fr in sample),
                     encoding="utf-8")
    crlf.write_bytes("".join(f"{en}\t{fr}\t{ATTRIBUTION}\r\n" for en, fr in sample)
                     .encode("utf-8"))
    expected = [(data.normalize(en), data.normalize(fr)) for en, fr in sample]
    assert data.read_pairs(two) == expected
    assert data.read_pairs(three) == expected
    assert data.read_pairs(crlf) == expected
    assert data.read_pairs(three, limit=5) == expected[:5]
    assert data.read_pairs(three, limit=None) == expected


def test_blank_lines_are_skipped_and_do_not_shift_line_numbers(tmp_path):
    f = tmp_path / "gaps.txt"
    f.write_text("Go.\tVa !\n\n\nHi.\tSalut.\nbroken line\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"gaps\.txt, line 5\b"):
        data.read_pairs(f)
    f.write_text("Go.\tVa !\n\n\nHi.\tSalut.\n\n", encoding="utf-8")
    assert data.read_pairs(f) == [("Go.", "Va !"), ("Hi.", "Salut.")]


@pytest.mark.parametrize("bad_line", [
    "Run.",  # no tab: a truncated line
    "Run.\t",  # empty French side
    "\tCours !",  # empty English side
    "Run.\tCours !\tattribution\textra",  # four columns
])
def test_malformed_line_names_file_and_line(tmp_path, bad_line):
    f = tmp_path / "corrupt.txt"
    f.write_text(f"Go.\tVa !\nHi.\tSalut.\n{bad_line}\nWow!\tÇa alors !\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"corrupt\.txt, line 3: expected 'English<TAB>Fr"):
        data.read_pairs(f)


def test_file_cut_in_the_middle_of_a_line_names_the_line(tmp_path, raw_lines):
    text = "".join(f"{en}\t{fr}\n" for en, fr in raw_lines[:20])
    f = tmp_path / "cut.txt"
    f.write_text(text[:text.index("\t", text.index("\n", 200))], encoding="utf-8")  # no tab left
    n = f.read_text(encoding="utf-8").count("\n") + 1
    with pytest.raises(CorpusError, match=rf"cut\.txt, line {n}:"):
        data.read_pairs(f)


def _invalid_utf8_file(tmp_path):
    f = tmp_path / "latin1.txt"
    f.write_bytes("Go.\tVa !\nHi.\tSalut.\nWow!\t\u00c7a alors !\n".encode("latin-1"))
    return f


def test_invalid_utf8_raises_corpus_error_naming_the_file(tmp_path):
    f = _invalid_utf8_file(tmp_path)
    with pytest.raises(CorpusError, match=r"latin1\.txt\b.*not valid UTF-8"):
        data.read_pairs(f)


def test_invalid_utf8_error_names_the_line(tmp_path):
    f = _invalid_utf8_file(tmp_path)
    with pytest.raises(CorpusError, match=r"latin1\.txt.*line 3"):
        data.read_pairs(f)


def test_file_truncated_inside_a_multibyte_character(tmp_path):
    f = tmp_path / "trunc.txt"
    f.write_bytes("Go.\tVa !\nWow!\t\u00c7a".encode("utf-8")[:-2])  # half of "Ç"
    with pytest.raises(CorpusError, match=r"trunc\.txt\b.*not valid UTF-8"):
        data.read_pairs(f)


def test_empty_and_missing_files(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    with pytest.raises(CorpusError, match=r"empty\.txt holds no sentence pairs"):
        data.read_pairs(empty)
    empty.write_text("\n\n  \n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"empty\.txt holds no sentence pairs"):
        data.read_pairs(empty)
    with pytest.raises(CorpusError, match=r"nothere\.txt does not exist"):
        data.read_pairs(tmp_path / "nothere.txt")
    with pytest.raises(CorpusError, match="does not exist"):
        data.read_pairs(tmp_path)  # a directory is not a corpus


def test_corpus_error_is_a_value_error():
    assert issubclass(CorpusError, ValueError)


# ---------------------------------------------------------------------------------------------
# split_by_source
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def split(pairs):
    return data.split_by_source(pairs)


def test_every_pair_fits_the_decoders_source_cap(pairs):
    """lib.search.SOURCE_CAP lets a hypothesis hold a * S + b tokens (<eos> included) for a
    source of S tokens; every reference translation in the corpus must fit, the tightest exactly
    (so the cap is as small as it can be)."""
    from lib.search import SOURCE_CAP

    a, b = SOURCE_CAP
    slack = [a * len(data.tokenize(en)) + b - (len(data.tokenize(fr)) + 1) for en, fr in pairs]
    assert min(slack) == 0


def test_every_english_sentence_is_in_exactly_one_part(pairs, split):
    train_en = [en for en, _ in split.train]
    valid_en = [en for en, _ in split.valid]
    test_en = [en for en, _ in split.test]
    assert len(valid_en) == len(set(valid_en)) == 1000
    assert len(test_en) == len(set(test_en)) == 2000 >= 1000
    train_set, valid_set, test_set = set(train_en), set(valid_en), set(test_en)
    assert not (train_set & valid_set) and not (train_set & test_set) and not (valid_set & test_set)
    assert train_set | valid_set | test_set == {en for en, _ in pairs}
    # Training keeps every line of its sentences, once: the multiset of lines is preserved.
    assert Counter(split.train) == Counter(p for p in pairs if p[0] in train_set)
    n_lines = len(split.train) + sum(len(r) for _, r in split.valid + split.test)
    assert n_lines == len(pairs)


def test_test_sentences_keep_all_their_translations(raw_lines, split):
    grouped = defaultdict(list)  # direct grouping of the raw file, in file order
    for en, fr in raw_lines:
        grouped[data.normalize(en)].append(data.normalize(fr))
    for en, refs in split.test + split.valid:
        assert refs == grouped[en], en
    multi = [(en, refs) for en, refs in split.test if len(refs) > 1]
    assert len(multi) > 300  # many test sentences have several references
    assert max(len(r) for _, r in split.test) >= 5


def test_split_is_deterministic_by_seed(pairs, split):
    again = data.split_by_source(list(pairs))
    assert again == split
    shuffled = list(pairs)
    random.Random(1).shuffle(shuffled)  # the input order of lines does not pick the test set
    assert {en for en, _ in data.split_by_source(shuffled).test} == {en for en, _ in split.test}
    other = data.split_by_source(pairs, seed=1)
    assert {en for en, _ in other.test} != {en for en, _ in split.test}


def test_split_refuses_to_hold_out_everything():
    few = [("a", "x"), ("b", "y"), ("b", "z"), ("c", "w")]  # 3 source sentences
    with pytest.raises(ValueError, match="cannot hold out 1\\+2 of 3 source sentences"):
        data.split_by_source(few, n_valid=1, n_test=2)
    s = data.split_by_source(few, n_valid=1, n_test=1)
    assert len(s.valid) == len(s.test) == 1 and len({en for en, _ in s.train}) == 1


def test_build_corpus_builds_vocabularies_on_training_sentences_only():
    cfg = data.DataConfig(min_freq=2, n_valid=100, n_test=300, seed=3, limit=4000)
    corpus = data.build_corpus(cfg)
    pairs = data.read_pairs(limit=4000)
    assert corpus.split == data.split_by_source(pairs, 100, 300, 3)
    src_counts = Counter(t for en, _ in corpus.split.train for t in data.tokenize(en))
    tgt_counts = Counter(t for _, fr in corpus.split.train for t in data.tokenize(fr))
    assert set(corpus.src_vocab.itos[4:]) == {t for t, c in src_counts.items() if c >= 2}
    assert set(corpus.tgt_vocab.itos[4:]) == {t for t, c in tgt_counts.items() if c >= 2}
    test_only = {t for en, _ in corpus.split.test for t in data.tokenize(en)} - set(src_counts)
    assert test_only and not test_only & set(corpus.src_vocab.itos)
    assert len(corpus.train_examples) == len(corpus.split.train)
    en, fr = corpus.split.train[7]
    assert corpus.train_examples[7] == (corpus.src_vocab.encode(data.tokenize(en)),
                                        corpus.tgt_vocab.encode(data.tokenize(fr)))


# ---------------------------------------------------------------------------------------------
# Vocab
# ---------------------------------------------------------------------------------------------


def test_vocab_specials_come_first():
    assert SPECIALS == ("<pad>", "<unk>", "<sos>", "<eos>")
    assert (PAD, UNK, SOS, EOS) == (0, 1, 2, 3)
    v = Vocab.build([["Va", "!"]])
    assert v.itos[:4] == list(SPECIALS)
    assert [v.stoi[s] for s in SPECIALS] == [0, 1, 2, 3]


def test_vocab_build_orders_by_frequency_then_alphabet_and_applies_min_freq():
    sents = [["b", "a", "<eos>"], ["a", "c"], ["c", "d"], ["e"]]
    assert Vocab.build(sents).itos == list(SPECIALS) + ["a", "c", "b", "d", "e"]
    assert Vocab.build(sents, min_freq=2).itos == list(SPECIALS) + ["a", "c"]
    assert len(Vocab.build(sents, min_freq=3)) == 4


def test_vocab_encode_decode_round_trip_and_unknowns():
    v = Vocab(list(SPECIALS) + ["je", "suis", "là", "."])
    toks = ["je", "suis", "là", "."]
    assert v.encode(toks) == [4, 5, 6, 7]
    assert v.encode(toks, eos=True) == [4, 5, 6, 7, EOS]
    assert v.decode(v.encode(toks, eos=True)) == toks
    assert v.decode(torch.tensor([SOS, 4, 5, EOS, 6, PAD])) == ["je", "suis"]
    assert v.decode([SOS, 4, PAD, 5]) == ["je", "suis"]
    assert v.decode([SOS, 4, EOS, PAD], strip=False) == ["<sos>", "je", "<eos>", "<pad>"]
    assert v.encode(["tu", "es", "là"]) == [UNK, UNK, 6]
    assert v.decode(v.encode(["tu", "es"])) == ["<unk>", "<unk>"]
    assert v.encode([]) == [] and v.encode([], eos=True) == [EOS]


@pytest.mark.parametrize("itos", [
    [],
    ["<pad>", "<unk>", "<sos>"],
    ["<unk>", "<pad>", "<sos>", "<eos>", "a"],
    ["a", "<pad>", "<unk>", "<sos>", "<eos>"],
    list(SPECIALS) + ["a", "b", "a"],
    list(SPECIALS) + ["<pad>"],
])
def test_bad_vocab_lists_are_rejected(itos):
    with pytest.raises(ValueError, match="must (start with|not list a token twice)"):
        Vocab(itos)


def test_vocab_equality():
    assert Vocab(list(SPECIALS) + ["a"]) == Vocab(list(SPECIALS) + ["a"])
    assert Vocab(list(SPECIALS) + ["a"]) != Vocab(list(SPECIALS) + ["b"])
    assert Vocab(list(SPECIALS)) != list(SPECIALS)


# ---------------------------------------------------------------------------------------------
# Batches
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def examples(pairs):
    sample = pairs[::15]  # spread over the corpus, which is sorted by English length
    src_vocab = Vocab.build([data.tokenize(en) for en, _ in sample])
    tgt_vocab = Vocab.build([data.tokenize(fr) for _, fr in sample])
    return data.encode_pairs(sample, src_vocab, tgt_vocab)


def _rows(batch):
    """The examples a batch holds, recovered from its tensors (src, target)."""
    out = []
    for i in range(batch.src.size(0)):
        n = int(batch.src_lengths[i])
        src = batch.src[i, :n].tolist()
        tgt_out = batch.tgt_out[i].tolist()
        m = tgt_out.index(EOS)
        out.append((src, tgt_out[:m]))
    return out


def test_collate_by_hand():
    b = data.collate([([5, 6, 7], [8]), ([9], [10, 11, 12])])
    assert b.src.tolist() == [[5, 6, 7], [9, PAD, PAD]]
    assert b.src_lengths.tolist() == [3, 1]
    assert b.tgt_in.tolist() == [[SOS, 8, PAD, PAD], [SOS, 10, 11, 12]]
    assert b.tgt_out.tolist() == [[8, EOS, PAD, PAD], [10, 11, 12, EOS]]
    assert b.n_tokens == 6
    assert b.src.dtype == b.tgt_in.dtype == b.tgt_out.dtype == torch.long


def test_batches_cover_every_example_once_shifted_and_padded_at_the_end(examples):
    batches = data.make_batches(examples, batch_size=64, seed=5)
    assert len(batches) == -(-len(examples) // 64)
    assert all(b.src.size(0) <= 64 for b in batches)
    seen = [row for b in batches for row in _rows(b)]
    assert sorted(seen) == sorted(examples)
    for b in batches:
        B, T = b.tgt_in.shape
        assert b.tgt_out.shape == (B, T) and (b.tgt_in[:, 0] == SOS).all()
        # tgt_in = <sos> + y, tgt_out = y + <eos>: the same sequence shifted by one
        real_out = b.tgt_out != PAD
        inner = b.tgt_in[:, 1:] != PAD
        assert torch.equal(b.tgt_in[:, 1:][inner], b.tgt_out[:, :-1][inner])
        last = real_out & ~torch.cat([inner, torch.zeros(B, 1, dtype=torch.bool)], 1)
        assert (b.tgt_out[last] == EOS).all() and int(last.sum()) == B
        assert torch.equal(real_out, b.tgt_in != PAD)
        # padding only at the end: the real tokens are a prefix of each row
        for mask, lengths in ((b.src != PAD, b.src_lengths), (real_out, real_out.sum(1))):
            prefix = torch.arange(mask.size(1)) < lengths.unsqueeze(1)
            assert torch.equal(mask, prefix)
        assert (b.tgt_out == EOS).sum() == B
    assert sum(b.n_tokens for b in batches) == sum(len(t) + 1 for _, t in examples)


def test_bucketing_reduces_padding(examples):
    def pad_fraction(batches):
        cells = sum(b.src.numel() + b.tgt_out.numel() for b in batches)
        pads = sum(int((b.src == PAD).sum() + (b.tgt_out == PAD).sum()) for b in batches)
        return pads / cells

    shuffled = list(examples)
    random.Random(0).shuffle(shuffled)
    plain = [data.collate(shuffled[k:k + 64]) for k in range(0, len(shuffled), 64)]
    bucketed = data.make_batches(examples, 64, seed=0)
    # Measured on this sample: 37.5 % padding at random, 5.0 % bucketed.
    assert pad_fraction(bucketed) < 0.1 < 0.3 < pad_fraction(plain)


def test_make_batches_is_deterministic_by_seed_and_shuffles_batch_order(examples):
    def key(batches):
        return [(b.src.tolist(), b.tgt_out.tolist()) for b in batches]

    a = data.make_batches(examples, 32, seed=1)
    assert key(a) == key(data.make_batches(examples, 32, seed=1))
    assert key(a) != key(data.make_batches(examples, 32, seed=2))
    lengths = [b.src.size(1) for b in a]
    assert lengths != sorted(lengths)  # short sentences do not all come first
    ordered = data.make_batches(examples, 32, shuffle=False)
    assert [b.src.size(1) for b in ordered] == sorted(b.src.size(1) for b in ordered)


def test_batch_size_must_be_positive(examples):
    for bad in (0, -3):
        with pytest.raises(ValueError, match=f"batch_size must be at least 1, got {bad}"):
            data.make_batches(examples, bad)
    assert len(data.make_batches(examples[:5], 1)) == 5
    assert len(data.make_batches(examples[:5], 100)) == 1
    assert data.make_batches([], 8) == []


def test_batch_to_keeps_lengths_on_the_cpu():
    b = data.collate([([5, 6], [7])]).to("cpu")
    assert b.src_lengths.device.type == "cpu" and b.src.tolist() == [[5, 6]]


# --- arguments that Python would quietly accept ----------------------------------------------


@pytest.mark.parametrize("limit", [True, False, 1.5, 3.0, "10", 0, -2])
def test_read_pairs_refuses_a_limit_that_is_not_a_count(tmp_path, limit):
    """`limit=True` read one pair: a flag is not a count."""
    path = tmp_path / "pairs.txt"
    path.write_text("Hi.\tSalut.\nGo.\tVa.\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"limit must be a whole number of pairs >= 1 or None, "
                                         rf"got {limit!r}"):
        data.read_pairs(path, limit=limit)


@pytest.mark.parametrize("ids", [[-1], [5, -3], [99], [2.0], [True], torch.tensor([4, -1])])
def test_decode_refuses_an_id_outside_the_vocabulary(ids):
    """-1 is refused, not read as the last token, as Python's indexing would."""
    vocab = Vocab(list(SPECIALS) + ["chat", "chien"])
    with pytest.raises(ValueError, match=r"token id .* is not in this vocabulary: ids are whole "
                                         r"numbers from 0 to 5"):
        vocab.decode(ids)
    assert vocab.decode([4, 5, EOS, -1]) == ["chat", "chien"]  # what follows <eos> is not read
    assert vocab.decode(torch.tensor([SOS, 4, PAD, 5])) == ["chat", "chien"]
