"""Our side of "time to BLEU 20": train lib.course.reference's recipe, score the test set as it
goes.

Why a separate run from bench/training.py: throughput says how fast steps are; this says how
soon the model is useful, which also depends on the recipe (batch size, learning rate). The
reference configuration (read at run time) is trained with lib.train.train; every
`eval_every` steps `on_eval` scores the held-out test set with greedy decoding
(lib.evaluate.evaluate_bleu: detokenised, sacrebleu, all references). The time of a check is
training time: the seconds spent in those test evaluations are subtracted. Training stops at
the first check at or above the target, or at the first check past the time cap. The model is
saved for the decoding benchmark.

    python -m bench.time_to_bleu --minutes 12 --target 20 [--eval-every 100] [--json OUT]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path

import torch

from lib.course import checkpoint, reference
from lib.course.memo import load_corpus
from lib.evaluate import evaluate_bleu
from lib.model import ModelConfig, Seq2Seq
from lib.train import train

ROOT = Path(__file__).resolve().parents[1]

CHECKPOINT = ROOT / "_build" / "bench" / "ours-time-to-bleu.pt"


class _Stop(Exception):
    """Raised from on_eval to end training early (lib.train has no stop hook)."""


def run(minutes: float, target: float, eval_every: int | None) -> dict:
    corpus = load_corpus(reference.DATA)
    test = corpus.split.test
    cfg = ModelConfig(len(corpus.src_vocab), len(corpus.tgt_vocab), **reference.MODEL)
    torch.manual_seed(reference.TRAIN.seed)
    model = Seq2Seq(cfg, corpus.src_vocab, corpus.tgt_vocab)
    # lib.train's own validation check is cut to one sentence: our on_eval does the scoring.
    every = eval_every or reference.TRAIN.eval_every or 100
    train_cfg = dataclasses.replace(reference.TRAIN, eval_every=every, eval_sentences=1)
    evals, spent = [], [0.0]

    def on_eval(model, hist):
        t0 = time.perf_counter()
        train_s = hist.eval_seconds[-1] - spent[0]
        bleu = evaluate_bleu(model, test)
        evals.append({"step": hist.eval_step[-1], "train_seconds": train_s, "bleu": bleu,
                      "tokens": hist.tokens[-1] if hist.tokens else None})
        spent[0] += time.perf_counter() - t0
        if bleu >= target or train_s >= minutes * 60:
            raise _Stop

    try:
        train(model, corpus.train_examples, train_cfg, valid_pairs=corpus.split.valid[:1],
              progress=False, on_eval=on_eval)
    except _Stop:
        pass
    model.eval()
    CHECKPOINT.parent.mkdir(parents=True, exist_ok=True)
    checkpoint.save(model, CHECKPOINT, extra={"bench": "time_to_bleu"})
    reached = next((e for e in evals if e["bleu"] >= target), None)
    return {"evals": evals, "target": target, "cap_minutes": minutes,
            "reached_seconds": reached["train_seconds"] if reached else None,
            "best_bleu": max((e["bleu"] for e in evals), default=None),
            "params": sum(p.numel() for p in model.parameters()),
            "threads": torch.get_num_threads(), "checkpoint": str(CHECKPOINT),
            "eval_every": every}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--minutes", type=float, default=12.0)
    p.add_argument("--target", type=float, default=20.0)
    p.add_argument("--eval-every", type=int, default=None)
    p.add_argument("--json", type=Path, help="also write the result here")
    args = p.parse_args()
    result = run(args.minutes, args.target, args.eval_every)
    if args.json:
        args.json.write_text(json.dumps(result))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
