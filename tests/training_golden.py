"""The training golden run: what lib's training computes, recorded so that a change shows.

A published model's key (lib.course.reference.training_key) hashes the settings, the corpus, the
torch version and `lib.train.TRAINING_VERSION`, not the code's text. This run is what keeps that
honest: it encodes fixed sentences and the whole training split, then trains two small models
(teacher forcing 1.0 and 0.5, with the reference recipe's shortlist, sampled words, label
smoothing and weight average) for a few dozen seeded steps in float64 on one thread, and compares
their weights with the values recorded in tests/golden/training.json.

float64 on one thread makes the run the same on every machine up to rounding (~1e-15), far below
the tolerance, while a change of what training computes (a loss scaled before `backward`, another
initialisation, another batch order) moves the weights by orders of magnitude more.

    python -m tests.training_golden            # run it, print the comparison
    python -m tests.training_golden --record   # write tests/golden/training.json anew
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

GOLDEN = Path(__file__).resolve().parent / "golden" / "training.json"
RTOL = 1e-7  # relative difference of a statistic that counts as "training changed"
SENTENCES = ["I'm hungry.", "Don't touch that!", "It's 5 o'clock, isn't it?",
             "Ça vaut le coup d\u2019essayer\u202f!", "Tom a dit «\u00a0non\u00a0»."]
STEPS = 36  # per run: three batches of warm-up and cosine decay, a few EMA updates


def _digest(value) -> str:
    return hashlib.sha256(json.dumps(value, ensure_ascii=False).encode()).hexdigest()


def data_record(corpus) -> dict:
    """The data pipeline's output: exact, so hashed."""
    from lib.data import normalize, tokenize

    return {
        "tokens": [tokenize(normalize(s)) for s in SENTENCES],
        "split": _digest([corpus.split.train, corpus.split.valid, corpus.split.test]),
        "vocab_sizes": [len(corpus.src_vocab), len(corpus.tgt_vocab)],
        "vocabs": _digest([corpus.src_vocab.itos, corpus.tgt_vocab.itos]),
        "train_examples": _digest(corpus.train_examples),
    }


def _stats(model) -> dict:
    """Three numbers per weight tensor: sum, sum of squares, and a fixed ±1 projection."""
    import torch

    out = {}
    for name, p in model.state_dict().items():
        flat = p.detach().double().flatten()
        signs = torch.ones_like(flat)
        signs[1::3] = -1.0
        signs[2::7] = -1.0
        out[name] = [float(flat.sum()), float((flat * flat).sum()), float((flat * signs).sum())]
    return out


def training_record(corpus) -> dict:
    """Two short float64 runs of lib.train.train on the corpus's first training pairs."""
    import torch

    from lib.course.reference import TRAIN
    from lib.train import new_model, train

    examples = corpus.train_examples[:STEPS * 24]
    out = {}
    for ratio in (1.0, 0.5):
        torch.manual_seed(123)  # new_model must reseed: this must not matter
        model = new_model(corpus, TRAIN.seed, emb_dim=16, hidden_size=24, num_layers=2,
                          dropout=0.1, feed_context=True).double()
        config = TRAIN.__class__(**{**TRAIN.to_dict(), "epochs": 1.0, "batch_size": 24,
                                    "warmup_steps": 12, "teacher_forcing": ratio,
                                    "shortlist": 300, "samples": 50, "eval_every": 0})
        hist = train(model, examples, config, device="cpu", progress=False, log_every=6)
        out[f"teacher_forcing={ratio}"] = {"steps": hist.step[-1], "loss": hist.loss,
                                            "weights": _stats(model)}
    return out


def compute() -> dict:
    """Run the golden computation here (call it in a one-thread process: see `run`)."""
    import torch

    from lib.course.reference import DATA
    from lib.data import build_corpus

    torch.set_num_threads(1)
    corpus = build_corpus(DATA)  # the pipeline itself, never its disk cache
    return {"data": data_record(corpus), "training": training_record(corpus)}


def run() -> dict:
    """`compute` in a fresh process with one thread, whatever this machine or process uses."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-m", "tests.training_golden", "--json"],
                          capture_output=True, text=True, env=env, timeout=600,
                          cwd=Path(__file__).resolve().parents[1])
    if done.returncode:
        raise RuntimeError(f"the golden training run failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def differences(found: dict, recorded: dict, rtol: float = RTOL) -> list[str]:
    """Every statistic or record that differs (numbers beyond `rtol`, the rest exactly)."""
    diffs = []

    def walk(a, b, where):
        if isinstance(a, dict) and isinstance(b, dict):
            for k in sorted(set(a) | set(b)):
                if k not in a or k not in b:
                    diffs.append(f"{where}/{k}: only in {'recorded' if k in b else 'this run'}")
                else:
                    walk(a[k], b[k], f"{where}/{k}")
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for i, (x, y) in enumerate(zip(a, b)):
                walk(x, y, f"{where}[{i}]")
        elif isinstance(a, float) and isinstance(b, (int, float)):
            if abs(a - b) > rtol * max(abs(a), abs(b), 1e-3):
                diffs.append(f"{where}: {a!r}, recorded {b!r}")
        elif a != b:
            diffs.append(f"{where}: {str(a)[:60]}, recorded {str(b)[:60]}")

    walk(found, recorded, "")
    return diffs


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", action="store_true", help="write tests/golden/training.json")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.json:
        print(json.dumps(compute()))
        return
    from lib.train import TRAINING_TORCH, TRAINING_VERSION

    found = run()
    if args.record:
        import torch

        record = {"training_version": TRAINING_VERSION, "torch": torch.__version__,
                  "training_torch": TRAINING_TORCH, **found}
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n",
                          encoding="utf-8")
        print(f"recorded {GOLDEN} for TRAINING_VERSION = {TRAINING_VERSION}")
        return
    recorded = json.loads(GOLDEN.read_text(encoding="utf-8"))
    diffs = differences(found, {k: recorded[k] for k in ("data", "training")})
    print("\n".join(diffs) or "training computes what was recorded")


if __name__ == "__main__":
    main()
