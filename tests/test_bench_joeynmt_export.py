"""The JoeyNMT export gives JoeyNMT exactly lib's split, tokens and vocabularies.

The first tests need no joeynmt. The last ones read the export with JoeyNMT 2.3.0 itself, in the
bench environment (`python -m bench.joeynmt_compare setup` makes it), and are skipped without
it.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from bench import joeynmt_compare as jc
from lib.course.reference import MODEL, TRAIN
from lib.data import Corpus, Vocab, encode_pairs, split_by_source, tokenize

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


@pytest.mark.parametrize("recipe", jc.RECIPES)
def test_config_matches_reference_sizes(tmp_path, recipe):
    cfg = jc.joey_config(tmp_path, tmp_path / "m", MODEL, TRAIN, alpha=0.3, max_len=40,
                         recipe=recipe)
    enc, dec = cfg["model"]["encoder"], cfg["model"]["decoder"]
    for rnn in (enc, dec):
        assert rnn["rnn_type"] == "gru"
        assert rnn["num_layers"] == MODEL["num_layers"]
        assert rnn["embeddings"]["embedding_dim"] == MODEL["emb_dim"]
    # The decoder state is the encoder's final state ("last"): the sizes must agree.
    directions = 2 if enc["bidirectional"] else 1
    assert dec["hidden_size"] == MODEL["hidden_size"] == directions * enc["hidden_size"]
    assert dec["init_hidden"] == "last"
    assert cfg["training"]["batch_size"] == TRAIN.batch_size
    assert cfg["training"]["batch_type"] == "sentence"
    assert jc.RECIPE_NOTES[recipe]
    # PyYAML reads 1e-08 (no dot) as a string: every float must be written with a dot.
    text = json.dumps(cfg)
    assert "e-" not in text.replace("model-", "")


def test_authors_recipe_is_joeynmts_own_rnn_settings(tmp_path):
    """The settings of joeynmt v2.3's configs/rnn_reverse.yaml (its recurrent example) where
    they are not sizes; the matched recipe left JoeyNMT's embeddings at N(0, 0.01)."""
    cfg = jc.joey_config(tmp_path, tmp_path / "m", MODEL, TRAIN, alpha=0.3, max_len=40)
    model, training = cfg["model"], cfg["training"]
    assert (model["embed_initializer"], model["embed_init_weight"]) == ("normal", 0.1)
    assert model["encoder"]["bidirectional"] is True
    assert model["decoder"]["input_feeding"] is True
    assert model["decoder"]["attention"] == "luong"
    assert (training["learning_rate"], training["scheduling"]) == (0.001, "plateau")
    assert (training["patience"], training["decrease_factor"]) == (5, 0.5)
    assert training["clip_grad_norm"] == 1.0
    matched = jc.joey_config(tmp_path, tmp_path / "m", MODEL, TRAIN, alpha=0.3, max_len=40,
                             recipe="matched")
    assert "embed_init_weight" not in matched["model"]  # JoeyNMT's default: 0.01


def test_bad_recipe_and_odd_hidden_size_are_named(tmp_path):
    with pytest.raises(ValueError, match="recipe must be one of.*'ours'"):
        jc.joey_config(tmp_path, tmp_path, MODEL, TRAIN, alpha=0.3, max_len=40, recipe="ours")
    with pytest.raises(ValueError, match="hidden_size=513.*even"):
        jc.joey_config(tmp_path, tmp_path, {**MODEL, "hidden_size": 513}, TRAIN, alpha=0.3,
                       max_len=40)


def test_lines_stay_aligned_as_joeynmt_reads_them(tmp_path):
    """JoeyNMT reads every file with str.splitlines(), which also breaks at U+2028, U+0085 and
    other separators: one such character inside a sentence would shift every later pair."""
    pairs = PAIRS + [("Odd\u2028line\x85break.", "Saut\u2029de\x0cligne."),
                     ("Tab\there.", "Tab\u00a0ici.")]
    split = split_by_source(pairs, n_valid=2, n_test=3, seed=0)
    src = Vocab.build([tokenize(en) for en, _ in split.train])
    tgt = Vocab.build([tokenize(fr) for _, fr in split.train])
    corpus = Corpus(split, src, tgt, encode_pairs(split.train, src, tgt))
    jc.export_data(corpus, tmp_path)
    for name, part in (("train", split.train), ("dev", split.valid), ("test", split.test)):
        for lang in ("en", "fr"):
            text = (tmp_path / f"{name}.{lang}").read_text(encoding="utf-8")
            assert len(text.splitlines()) == len(part)
    for name in ("src_vocab.txt", "trg_vocab.txt"):
        itos = (tmp_path / name).read_text(encoding="utf-8").splitlines()
        assert itos == (src if name.startswith("src") else tgt).itos


@pytest.mark.parametrize("freq, expected", [(100, 10), (20, 10), (5, 1), (7, 1), (30, 10)])
def test_log_freq_divides_validation_freq(freq, expected):
    got = jc.log_freq(freq)
    assert got == expected and freq % got == 0 and got < freq


# ---------------------------------------------------------------------------------------------
# JoeyNMT 2.3.0 itself reads the export (bench environment only)
# ---------------------------------------------------------------------------------------------

# Runs in the bench environment: JoeyNMT loads the data and builds the model from a config that
# joey_config wrote; prints what it saw as JSON. The worker is imported for its encoder patch
# (run from the repository root, which puts `bench` and `lib` on the path).
_IN_JOEYNMT = r"""
import json, sys
from pathlib import Path
import torch
import bench.joeynmt_worker  # noqa: F401  (patches RecurrentEncoder.forward, matched recipe)
from joeynmt.config import load_config, parse_global_args
from joeynmt.prediction import prepare

cfg = load_config(Path(sys.argv[1]))
Path(cfg["model_dir"]).mkdir(parents=True, exist_ok=True)
args = parse_global_args(cfg, rank=0, mode="train")
model, train, dev, test = prepare(args, rank=0, mode="train")
src_vocab, trg_vocab = model.src_vocab, model.trg_vocab
out = {"src_itos": src_vocab._itos, "trg_itos": trg_vocab._itos,
       "specials": [trg_vocab.unk_index, trg_vocab.pad_index, trg_vocab.bos_index,
                    trg_vocab.eos_index],
       "sizes": [len(train), len(dev), len(test)],
       "train": [[train.get_item(i, "en"), train.get_item(i, "fr")] for i in range(len(train))],
       "params": sum(p.numel() for p in model.parameters())}

# One batch of every training sentence, as JoeyNMT's training loop makes and sorts it.
torch.manual_seed(0)
model.eval()
batch = next(iter(train.make_iter(batch_size=len(train), batch_type="sentence", shuffle=False,
                                  eos_index=model.eos_index, pad_index=model.pad_index)))
batch.sort_by_src_length()
out["trg_ids"] = batch.trg.tolist()
out["indices"] = batch.indices.tolist()
with torch.no_grad():
    loss, log_probs, _, _ = model(return_type="loss", **vars(batch))
    out["loss"] = loss.item()
    keep = batch.trg != model.pad_index
    picked = log_probs.gather(-1, batch.trg.unsqueeze(-1)).squeeze(-1)  # (B, T)
    out["nll_without_pad"] = -picked[keep].sum().item()
    out["nll_with_pad"] = -picked.sum().item()
    # The encoder's final state, against its RNN run on each sentence alone (no padding).
    emb = model.src_embed(batch.src)  # (B, S, E)
    _, final = model.encoder(emb, batch.src_length, batch.src_mask)  # (B, directions * H)
    rnn = model.encoder.rnn
    alone = []
    for b, n in enumerate(batch.src_length.tolist()):
        _, h = rnn(emb[b:b + 1, :n])  # (layers * directions, 1, H)
        alone.append(torch.cat(list(h[-(2 if rnn.bidirectional else 1):, 0]), -1))
    out["encoder_gap"] = (final - torch.stack(alone)).abs().max().item()
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def joeynmt_python() -> Path:
    py = jc.venv_python()
    if not py.is_file():
        pytest.skip(f"no JoeyNMT bench environment at {py} (python -m bench.joeynmt_compare "
                    "setup)")
    return py


def _in_joeynmt(py: Path, corpus, tmp_path: Path, recipe: str) -> dict:
    data = tmp_path / "data"
    jc.export_data(corpus, data)
    cfg = jc.write_config(jc.joey_config(data, tmp_path / f"model-{recipe}", MODEL, TRAIN,
                                         alpha=0.3, max_len=40, recipe=recipe),
                          tmp_path / f"{recipe}.yaml")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.run([str(py), "-c", _IN_JOEYNMT, str(cfg)], cwd=jc.ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def seen(joeynmt_python, tmp_path_factory) -> dict:
    split = split_by_source(PAIRS, n_valid=2, n_test=3, seed=0)
    src = Vocab.build([tokenize(en) for en, _ in split.train])
    tgt = Vocab.build([tokenize(fr) for _, fr in split.train])
    corpus = Corpus(split, src, tgt, encode_pairs(split.train, src, tgt))
    tmp = tmp_path_factory.mktemp("joeynmt")
    return {"corpus": corpus, **{r: _in_joeynmt(joeynmt_python, corpus, tmp, r)
                                 for r in jc.RECIPES}}


def test_joeynmt_vocabulary_is_libs_with_its_special_order(seen):
    """JoeyNMT's Vocabulary puts unk, pad, bos, eos first whatever the file says: its ids are
    lib's with <unk> and <pad> swapped, every other token keeps its id."""
    corpus, got = seen["corpus"], seen["authors"]
    swap = {0: 1, 1: 0}
    for mine, theirs in ((corpus.src_vocab.itos, got["src_itos"]),
                         (corpus.tgt_vocab.itos, got["trg_itos"])):
        assert len(theirs) == len(mine)
        assert [theirs[swap.get(i, i)] for i in range(len(mine))] == mine
    assert got["specials"] == [0, 1, 2, 3]
    assert got["trg_itos"][:4] == [jc.SPECIALS[k] for k in ("unk_token", "pad_token",
                                                            "bos_token", "eos_token")]


def test_joeynmt_reads_libs_sentences_and_ids(seen):
    corpus, got = seen["corpus"], seen["authors"]
    split = corpus.split
    assert got["sizes"] == [len(split.train), len(split.valid), len(split.test)]
    assert got["train"] == [[tokenize(en), tokenize(fr)] for en, fr in split.train]
    # Targets as JoeyNMT's batches hold them: lib's tokens, then </s>, then padding.
    itos = got["trg_itos"]
    for row, i in zip(got["trg_ids"], got["indices"]):
        tokens = [itos[t] for t in row if t != got["specials"][1]]
        assert tokens == tokenize(split.train[i][1]) + [jc.SPECIALS["eos_token"]]


@pytest.mark.parametrize("recipe", jc.RECIPES)
def test_joeynmt_loss_skips_padding(seen, recipe):
    got = seen[recipe]
    assert got["nll_with_pad"] > got["nll_without_pad"]
    assert got["loss"] == pytest.approx(got["nll_without_pad"], rel=1e-5)


@pytest.mark.parametrize("recipe", jc.RECIPES)
def test_joeynmt_encoder_final_state_is_each_sentence_run_alone(seen, recipe):
    """For the matched recipe this checks bench.joeynmt_worker's patched method."""
    assert seen[recipe]["encoder_gap"] < 1e-5


def test_recipes_have_the_same_parameter_count(seen):
    """Half-size directions + input feeding (authors) = one direction, no feeding (matched)."""
    assert seen["authors"]["params"] == seen["matched"]["params"]
