"""The sweep that chose the reference model's training settings: test BLEU vs tokens seen.

Training time on a CPU is (target tokens seen) / (tokens per second), so a setting can be judged
by the BLEU it reaches after a given number of target tokens, which does not depend on the
machine; `bench/training.py` then measures tokens per second on the CPU. Each variant trains
from the same initial weights and logs greedy BLEU on the 2,000 held-out test sentences every
quarter epoch, then scores greedy and beam 5 at the end. The variants ran in parallel on one
GPU (many small models at once); the results are in bench/results/sweep-h100.json.

    python -m bench.sweep run bench/sweep_variants.json INDEX OUT_DIR   # -> OUT_DIR/NAME.json
    python -m bench.sweep table RESULTS.json                # a Markdown summary

A variant is a dict: name, min_freq, model (ModelConfig overrides), train (TrainConfig
overrides) and reverse (feed the source reversed, as Sutskever et al. 2014 did).
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import torch

from lib.course.memo import load_corpus
from lib.data import DataConfig
from lib.encoder import Encoder
from lib.evaluate import evaluate_bleu
from lib.model import ModelConfig, Seq2Seq
from lib.train import TrainConfig, train

BASE_MODEL = dict(emb_dim=256, hidden_size=512, num_layers=2, dropout=0.2, feed_context=True)
BASE_TRAIN = dict(epochs=7, batch_size=256, lr=3e-3)


def reverse_source(encoder_cls) -> None:
    """Make the encoder read every source sentence backwards (its padding stays at the end)."""
    forward = encoder_cls.forward

    def reversed_forward(self, src, lengths):
        # src (B, S): position i of sentence b reads token lengths[b] - 1 - i
        idx = torch.arange(src.size(1), device=src.device).unsqueeze(0)  # (1, S)
        back = lengths.to(src.device).unsqueeze(1) - 1 - idx  # (B, S)
        return forward(self, src.gather(1, torch.where(back >= 0, back, idx)), lengths)

    encoder_cls.forward = reversed_forward


def run(variant: dict, out_dir: Path, device: str = "cuda") -> dict:
    corpus = load_corpus(DataConfig(min_freq=variant.get("min_freq", 3)))
    model_kw = {**BASE_MODEL, **variant.get("model", {})}
    train_kw = {**BASE_TRAIN, **variant.get("train", {})}
    per_epoch = math.ceil(len(corpus.train_examples) / train_kw["batch_size"])
    cfg = TrainConfig(**train_kw, eval_every=max(1, per_epoch // 4), eval_sentences=2000)
    if variant.get("reverse"):
        reverse_source(Encoder)
    torch.manual_seed(0)
    model = Seq2Seq(ModelConfig(len(corpus.src_vocab), len(corpus.tgt_vocab), **model_kw),
                    corpus.src_vocab, corpus.tgt_vocab)
    test = corpus.split.test
    out = out_dir / f"{variant['name']}.json"
    record = {"name": variant["name"], "variant": variant, "tgt_vocab": len(corpus.tgt_vocab),
              "curve": []}

    def on_eval(model, hist):  # valid_pairs is the test set here: greedy test BLEU
        record["curve"].append([hist.tokens[-1], round(hist.valid_bleu[-1], 2)])
        out.write_text(json.dumps(record))

    start = time.perf_counter()
    hist = train(model, corpus.train_examples, cfg, valid_pairs=test, device=device,
                 progress=False, log_every=1, on_eval=on_eval)
    record.update(seconds=time.perf_counter() - start, tokens=hist.tokens[-1],
                  greedy=evaluate_bleu(model, test), beam5=evaluate_bleu(model, test, beam_size=5))
    out.write_text(json.dumps(record))
    return record


def first_reaching(curve, bleu: float):
    return next((tokens for tokens, b in curve if b >= bleu), None)


def table(results: dict) -> str:
    lines = ["| variant | changes from the base | target tokens (M) | greedy | beam 5 | "
             "tokens to greedy 30 (M) |", "|---|---|---|---|---|---|"]
    for name, r in sorted(results.items(), key=lambda kv: -kv[1]["greedy"]):
        v = r["variant"]
        changes = ", ".join(f"{k}={val}" for part in ("model", "train") for k, val in
                            v.get(part, {}).items())
        changes += "".join(f", {k}={v[k]}" for k in ("min_freq", "reverse") if k in v)
        reach = first_reaching(r["curve"], 30)
        lines.append(f"| {name} | {changes.strip(', ')} | {r['tokens'] / 1e6:.2f} | "
                     f"{r['greedy']:.2f} | {r['beam5']:.2f} | "
                     f"{'-' if reach is None else f'{reach / 1e6:.2f}'} |")
    return "\n".join(lines)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("variants", type=Path)
    r.add_argument("index", type=int)
    r.add_argument("out_dir", type=Path)
    r.add_argument("--device", default="cuda")
    t = sub.add_parser("table")
    t.add_argument("results", type=Path)
    args = p.parse_args(argv)
    if args.cmd == "run":
        variant = json.loads(args.variants.read_text())[args.index]
        run(variant, args.out_dir, args.device)
    else:
        data = json.loads(args.results.read_text())
        print(f"{data['device']}, {data['date']}; BLEU on {data['test_sentences']:,} test "
              f"sentences (sacrebleu, all references)\n")
        print(table(data["results"]))


if __name__ == "__main__":
    main()
