"""The JoeyNMT export gives JoeyNMT exactly lib's split, tokens and vocabularies (no joeynmt)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from lib.data import Corpus, Vocab, encode_pairs, split_by_source, tokenize
from lib.reference import MODEL, TRAIN

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import joeynmt_compare as jc  # noqa: E402

PAIRS = [("Go.", "Va !"), ("Go.", "Marche."), ("I'm hungry.", "J'ai faim."),
         ("Who is it?", "Qui est-ce ?"), ("Help!", "À l'aide !"), ("Run!", "Cours !"),
         ("Wait.", "Attends."), ("Stop!", "Arrête !"), ("Hello.", "Bonjour."),
         ("Thanks.", "Merci.")]


@pytest.fixture
def corpus() -> Corpus:
    split = split_by_source(PAIRS, n_valid=2, n_test=3, seed=0)
    src = Vocab.build([tokenize(en) for en, _ in split.train])
    tgt = Vocab.build([tokenize(fr) for _, fr in split.train])
    return Corpus(split, src, tgt, encode_pairs(split.train, src, tgt))


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def test_files_hold_lib_split_as_tokens(corpus, tmp_path):
    prefixes = jc.export_data(corpus, tmp_path)
    assert set(prefixes) == {"train", "dev", "test"}
    train_en, train_fr = lines(tmp_path / "train.en"), lines(tmp_path / "train.fr")
    assert [s.split(" ") for s in train_en] == [tokenize(en) for en, _ in corpus.split.train]
    assert [s.split(" ") for s in train_fr] == [tokenize(fr) for _, fr in corpus.split.train]
    for name, part in (("dev", corpus.split.valid), ("test", corpus.split.test)):
        assert [s.split(" ") for s in lines(tmp_path / f"{name}.en")] == \
            [tokenize(en) for en, _ in part]
        assert [s.split(" ") for s in lines(tmp_path / f"{name}.fr")] == \
            [tokenize(refs[0]) for _, refs in part]
    refs = json.loads((tmp_path / "test_refs.json").read_text(encoding="utf-8"))
    assert refs == [r for _, r in corpus.split.test]


def test_vocab_files_round_trip(corpus, tmp_path):
    jc.export_data(corpus, tmp_path)
    assert Vocab(lines(tmp_path / "src_vocab.txt")) == corpus.src_vocab
    assert Vocab(lines(tmp_path / "trg_vocab.txt")) == corpus.tgt_vocab
    # JoeyNMT puts its four specials first in its own order: they must be lib's four tokens.
    specials = {jc.SPECIALS[k] for k in ("unk_token", "pad_token", "bos_token", "eos_token")}
    assert specials == set(corpus.src_vocab.itos[:4])


def test_config_matches_reference_sizes(tmp_path):
    cfg = jc.joey_config(tmp_path, tmp_path / "m", MODEL, TRAIN, alpha=0.3, max_len=40)
    for part in ("encoder", "decoder"):
        rnn = cfg["model"][part]
        assert rnn["rnn_type"] == "gru"
        assert rnn["hidden_size"] == MODEL["hidden_size"]
        assert rnn["num_layers"] == MODEL["num_layers"]
        assert rnn["embeddings"]["embedding_dim"] == MODEL["emb_dim"]
    assert cfg["model"]["encoder"]["bidirectional"] is False
    assert cfg["training"]["batch_size"] == TRAIN.batch_size
    assert cfg["training"]["batch_type"] == "sentence"
    # PyYAML reads 1e-08 (no dot) as a string: every float must be written with a dot.
    text = json.dumps(cfg)
    assert "e-" not in text.replace("model-", "")


@pytest.mark.parametrize("freq, expected", [(100, 10), (20, 10), (5, 1), (7, 1), (30, 10)])
def test_log_freq_divides_validation_freq(freq, expected):
    got = jc.log_freq(freq)
    assert got == expected and freq % got == 0 and got < freq
