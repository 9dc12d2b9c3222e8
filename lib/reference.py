"""The reference model every chapter uses: from the cache, a download, or training.

`lib.pretrained()` never retrains when a fresh cached model exists. The cache key hashes the
configs below, the corpus checksum and the code of the modules that shape training, so changing
any of them trains a new model instead of silently showing a stale one.

    python -m lib.reference --train     # (re)train, then print held-out BLEU and minutes
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
from pathlib import Path

from lib import checkpoint
from lib.data import DataConfig, corpus_path, load_corpus
from lib.model import ModelConfig, Seq2Seq
from lib.train import TrainConfig

DATA = DataConfig()
# Chosen by a measured sweep (BLEU against target tokens seen; see README "The reference model"):
# batch 128 makes twice the updates of 256 for the same tokens, which matters more than the
# CPU speed lost; label smoothing 0.1 and dropout 0.1 each added about 1 BLEU; a higher learning
# rate, dropout 0.3, a reversed source or min_freq 5 scored lower. The moving average of the
# weights (ema) lifted the 5-minute snapshot by about 1-2 BLEU in a probe at about 5 ms per
# step. The shortlist softmax (1,000 most frequent words + the batch's targets + 500 rare words
# drawn per step, lib.head.shortlist_cross_entropy) trains 1.31x as many target tokens per
# second as the full softmax (bench/training.py); 6.4 epochs fill the 15-minute CPU budget.
# Without the drawn words the model kept a third of its probability on unlisted words.
# Validation checks every 50 steps on 250 sentences (the cost of 100 x 500) put the 5-minute
# snapshot at 5.0 min instead of 4.7 (evaluation uses no randomness: same final weights).
# Measured (make train, 2 cores): 13.7 min at 4,103 tokens/s; greedy 36.46, beam 5 39.52
# (lib.search defaults), 30.36 greedy after 5.0 min. Full softmax, 5.2 epochs: 14.0 min, greedy
# 35.02, beam 5 38.84, 28.2 greedy after 4.8 min.
MODEL = dict(emb_dim=256, hidden_size=512, num_layers=2, dropout=0.1, feed_context=True)
TRAIN = TrainConfig(epochs=6.4, batch_size=128, lr=2e-3, label_smoothing=0.1, ema=0.995,
                    shortlist=1000, samples=500, eval_every=50, eval_sentences=250)
EARLY_MINUTES = 5.0  # the model as it was after this much training is also scored (a target)

# Where readers fetch a published checkpoint (one place; $SEQ2SEQ_PRETRAINED_URL and
# $SEQ2SEQ_PRETRAINED_SHA256 override it). None: no checkpoint is published, so train locally.
PRETRAINED_URL: str | None = None
PRETRAINED_SHA256: str | None = None

# The modules whose code decides what training produces.
_TRAINING_CODE = ("data", "encoder", "decoder", "head", "model", "train")


def _code_fingerprint() -> str:
    """Hash the code (not comments or docstrings) of the modules that shape training."""
    h = hashlib.sha256()
    here = Path(__file__).parent
    for name in _TRAINING_CODE:
        tree = ast.parse((here / f"{name}.py").read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            body = getattr(node, "body", None)
            if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                    and isinstance(getattr(body[0], "value", None), ast.Constant) \
                    and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
        h.update(ast.dump(tree).encode())
    # train_reference (below) seeds and builds the model: its code shapes the result too.
    here_tree = ast.parse(Path(__file__).read_text(encoding="utf-8"))
    for node in here_tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "train_reference":
            node.body = [n for n in node.body if not (isinstance(n, ast.Expr) and isinstance(
                getattr(n, "value", None), ast.Constant))]
            h.update(ast.dump(node).encode())
    return h.hexdigest()


def reference_key(data_sha256: str | None = None) -> str:
    """A short hash of everything that determines the reference model."""
    from lib.data import corpus_sha256

    data_sha256 = data_sha256 or corpus_sha256(corpus_path())
    blob = json.dumps({"data": DATA.__dict__, "model": MODEL, "train": TRAIN.to_dict(),
                       "corpus": data_sha256, "code": _code_fingerprint()}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def cache_path() -> Path:
    from lib.download import cache_dir

    return cache_dir() / f"reference-{reference_key()}.pt"


def train_reference(progress: bool = True, device=None, path: Path | None = None):
    """Train the reference model from scratch and save it; returns (model, history)."""
    from lib.evaluate import evaluate_bleu
    from lib.train import train

    corpus = load_corpus(DATA)
    config = ModelConfig(len(corpus.src_vocab), len(corpus.tgt_vocab), **MODEL)
    import torch

    torch.manual_seed(TRAIN.seed)
    model = Seq2Seq(config, corpus.src_vocab, corpus.tgt_vocab)
    early = {}

    def snapshot(model, hist):  # keep the weights of the last check within EARLY_MINUTES
        if hist.eval_seconds[-1] <= EARLY_MINUTES * 60:
            early["minutes"] = hist.eval_seconds[-1] / 60
            early["state"] = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}

    hist = train(model, corpus.train_examples, TRAIN, valid_pairs=corpus.split.valid,
                 device=device, progress=progress, on_eval=snapshot)
    extra = {"key": reference_key(), "minutes": hist.seconds[-1] / 60,
             "tokens_per_second": hist.tokens_per_second, "history": hist.to_dict(),
             "test_bleu_greedy": evaluate_bleu(model, corpus.split.test)}
    if early:
        final = {k: v.detach().clone() for k, v in model.state_dict().items()}
        model.load_state_dict(early["state"])
        extra["early_minutes"] = early["minutes"]
        extra["early_test_bleu_greedy"] = evaluate_bleu(model, corpus.split.test)
        model.load_state_dict(final)
    checkpoint.save(model, path or cache_path(), extra=extra)
    return model, hist


def _download(url: str, sha256: str | None) -> Path:
    from lib.download import cache_dir, download

    name = "pretrained-" + hashlib.sha256(url.encode()).hexdigest()[:12] + ".pt"
    return download(url, cache_dir() / name, sha256)


def pretrained(device=None, download: bool = True, train: bool = True,
               progress: bool = True) -> Seq2Seq:
    """The reference model: cached if fresh, else downloaded if published, else trained."""
    path = cache_path()
    if path.is_file():
        return checkpoint.load(path, device=device)
    url = os.environ.get("SEQ2SEQ_PRETRAINED_URL", PRETRAINED_URL)
    sha = os.environ.get("SEQ2SEQ_PRETRAINED_SHA256", PRETRAINED_SHA256)
    if download and url:
        return checkpoint.load(_download(url, sha), device=device)
    if not train:
        raise FileNotFoundError(f"no reference model at {path} and training is disabled; "
                                f"run `make train` (or `python -m lib.reference --train`)")
    model, _ = train_reference(progress=progress, device=device)
    return model.to(model.device)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", action="store_true", help="train even if a cached model exists")
    parser.add_argument("--ensure", action="store_true",
                        help="train only if no fresh model is cached; skip the beam evaluation")
    parser.add_argument("--device", default=None)
    args = parser.parse_args(argv)
    path = cache_path()
    if args.train or not path.is_file():
        train_reference(device=args.device)
    elif args.ensure:
        print(f"reference model is cached and fresh: {path}")
        return
    model = checkpoint.load(path, device=args.device)
    extra = model.extra
    print(f"reference model {path}: trained {extra['minutes']:.1f} min at "
          f"{extra['tokens_per_second']:.0f} target tokens/s")
    if "early_minutes" in extra:
        print(f"held-out BLEU after {extra['early_minutes']:.1f} min (greedy): "
              f"{extra['early_test_bleu_greedy']:.2f}")
    print(f"held-out BLEU (greedy, sacrebleu, all references): {extra['test_bleu_greedy']:.2f}")
    if not args.ensure:
        from lib.evaluate import evaluate_bleu

        bleu = evaluate_bleu(model, load_corpus(DATA).split.test, beam_size=5)
        print(f"held-out BLEU (beam 5, sacrebleu, all references): {bleu:.2f}")


if __name__ == "__main__":
    main()
