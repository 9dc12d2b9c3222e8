"""Training benchmark: target tokens/s, this CPU's matmul peak, the utilisation, and BLEU.

    python -m bench.training                 # throughput + peak + utilisation (a few minutes)
    python -m bench.training --reference     # also read BLEU and minutes of the cached reference
    python -m bench.training --json OUT      # also write the medians as JSON (bench/run_all.py)

Utilisation counts the matrix-multiply FLOPs the model must do (GRU gates and the prediction
head, forward and backward = 3x forward) per second, divided by the peak a large fp32 matmul
reaches on the same cores in the same run. The reference trains with a shortlist softmax
(`TrainConfig.shortlist`, `samples`), so its head multiplies only the rows of the listed and
drawn words, and the FLOPs count those; the same run also times the full softmax, the peer
the shortlist must beat.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import torch

from bench.common import cpu_model
from lib.course import checkpoint, reference
from lib.course.memo import load_corpus
from lib.data import make_batches
from lib.evaluate import evaluate_bleu
from lib.head import shortlist_ids
from lib.model import ModelConfig, Seq2Seq
from lib.train import batch_loss

WARMUP = 5  # untimed first steps: allocations and caches settle before the clock starts


def matmul_peak(n: int = 2048, repeats: int = 10) -> float:
    """Best GFLOP/s of an n x n fp32 matmul over a few runs (what the cores can do at best)."""
    a, b = torch.randn(n, n), torch.randn(n, n)
    for _ in range(3):
        a @ b
    best = 0.0
    for _ in range(repeats):
        t = time.perf_counter()
        a @ b
        best = max(best, 2 * n**3 / (time.perf_counter() - t) / 1e9)
    return best


def matmul_flops(cfg: ModelConfig, src_tokens: int, tgt_tokens: int,
                 head_tokens: int | None = None, head_words: int | None = None) -> float:
    """Forward+backward matmul FLOPs for a batch with these numbers of (padded) tokens.

    The head multiplies `head_tokens` states (default: all target positions) by `head_words`
    rows of W_p (default: the whole vocabulary; a shortlist uses fewer of both).
    """
    H, E, L = cfg.hidden_size, cfg.emb_dim, cfg.num_layers
    enc = 3 * H * (E + H) + (L - 1) * 3 * H * (2 * H)  # multiply-adds per source token
    dec_in = E + (H if cfg.feed_context else 0)
    dec = 3 * H * (dec_in + H) + (L - 1) * 3 * H * (2 * H)
    head = H * (head_words or cfg.tgt_vocab_size) * (tgt_tokens if head_tokens is None
                                                      else head_tokens)
    return 3 * 2 * (enc * src_tokens + dec * tgt_tokens + head)


def throughput(steps: int, warmup: int = WARMUP, shortlist: int | None = None) -> dict:
    """Train the reference configuration for `steps` batches; tokens/s and achieved GFLOP/s.

    shortlist: None takes the reference's own (`reference.TRAIN.shortlist`), 0 the full softmax.
    """
    shortlist = reference.TRAIN.shortlist if shortlist is None else shortlist
    samples = reference.TRAIN.samples if shortlist else 0
    corpus = load_corpus(reference.DATA)
    cfg = ModelConfig(len(corpus.src_vocab), len(corpus.tgt_vocab), **reference.MODEL)
    torch.manual_seed(0)
    model = Seq2Seq(cfg, corpus.src_vocab, corpus.tgt_vocab).train()
    opt = torch.optim.Adam(model.parameters(), lr=reference.TRAIN.lr, fused=True)
    batches = make_batches(corpus.train_examples, reference.TRAIN.batch_size, seed=1)
    tokens = flops = 0.0
    for i, b in enumerate(batches[:warmup + steps]):
        if i == warmup:
            start = time.perf_counter()
            tokens = flops = 0.0
        loss = batch_loss(model, b, label_smoothing=reference.TRAIN.label_smoothing,
                          shortlist=shortlist, samples=samples)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), reference.TRAIN.clip)
        opt.step()
        tokens += b.n_tokens
        if shortlist:
            n = min(shortlist, cfg.tgt_vocab_size)  # + the drawn rare words (a few are targets)
            words = len(shortlist_ids(b.tgt_out, n)) + min(samples, cfg.tgt_vocab_size - n)
            flops += matmul_flops(cfg, b.src.numel(), b.tgt_out.numel(), b.n_tokens, words)
        else:
            flops += matmul_flops(cfg, b.src.numel(), b.tgt_out.numel())
    seconds = time.perf_counter() - start
    return {"tokens_per_s": tokens / seconds, "gflops": flops / seconds / 1e9,
            "params": sum(p.numel() for p in model.parameters()), "config": cfg}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--reference", action="store_true")
    p.add_argument("--json", type=Path, help="also write the medians here")
    args = p.parse_args()
    print(f"machine : {cpu_model()}, {os.cpu_count()} logical cores, torch {torch.__version__}, "
          f"{torch.get_num_threads()} threads, load average {os.getloadavg()[0]:.2f}")
    peaks, runs, full = [], [], []
    for _ in range(args.repeats):  # interleave so all see the same machine state
        peaks.append(matmul_peak())
        runs.append(throughput(args.steps))
        if reference.TRAIN.shortlist:
            full.append(throughput(args.steps, shortlist=0))
    peak = statistics.median(peaks)
    tps = statistics.median(r["tokens_per_s"] for r in runs)
    tps_full = statistics.median(r["tokens_per_s"] for r in full) if full else tps
    gflops = statistics.median(r["gflops"] for r in runs)
    cfg = runs[0]["config"]
    print(f"model   : {runs[0]['params'] / 1e6:.1f} M parameters, hidden {cfg.hidden_size}, "
          f"emb {cfg.emb_dim}, {cfg.num_layers} layers, target vocab {cfg.tgt_vocab_size}, "
          f"batch {reference.TRAIN.batch_size}, feed_context={cfg.feed_context}")
    print(f"matmul peak (2048^2 fp32, best of 10, median of {args.repeats}): {peak:.1f} GFLOP/s")
    print(f"training: {tps:.0f} target tokens/s, {gflops:.1f} GFLOP/s of matmul work "
          f"(median of {args.repeats} x {args.steps} steps; "
          f"shortlist {reference.TRAIN.shortlist or 'off'}, "
          f"{reference.TRAIN.samples} rare words drawn per step)")
    if full:
        print(f"full softmax (shortlist off), same run: {tps_full:.0f} target tokens/s; "
              f"the shortlist trains {tps / tps_full:.2f}x as fast")
    print(f"utilisation: {100 * gflops / peak:.1f} % of the measured matmul peak "
          f"(target >= 30 %)")
    if args.json:
        args.json.write_text(json.dumps({
            "tokens_per_s": tps, "tokens_per_s_full_softmax": tps_full,
            "shortlist": reference.TRAIN.shortlist, "gflops": gflops, "peak_gflops": peak,
            "utilisation": gflops / peak, "steps": args.steps, "repeats": args.repeats,
            "params": runs[0]["params"], "threads": torch.get_num_threads(),
            "batch_size": reference.TRAIN.batch_size, "model": reference.MODEL}))
    if args.reference:
        path = reference.cache_path()
        if not path.is_file():
            print(f"no cached reference model at {path}: run `make train` first")
            return
        model = checkpoint.load(path)
        extra = model.extra
        test = load_corpus(reference.DATA).split.test
        hist = extra["history"]
        print(f"reference: trained {extra['minutes']:.1f} min at "
              f"{extra['tokens_per_second']:.0f} target tokens/s")
        for s, t, b in zip(hist["eval_step"], hist["eval_seconds"], hist["valid_bleu"]):
            print(f"  step {s:5d}  {t / 60:5.1f} min  valid BLEU (greedy, "
                  f"{reference.TRAIN.eval_sentences} sentences) {b:.2f}")
        for k in (1, 5):
            print(f"  held-out test BLEU, beam {k}: {evaluate_bleu(model, test, beam_size=k):.2f}")


if __name__ == "__main__":
    main()
