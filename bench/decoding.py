"""Benchmark: batched beam search vs one sentence at a time vs greedy; BLEU and time vs k.

Figures for the greedy-vs-beam chapter, printed rather than asserted (timings depend on the
machine and its load):

1. speed on the held-out test sources: batched beam-5 and batched greedy, interleaved batch by
   batch so both see the same machine load, and beam-5 one sentence at a time (the readable
   `search.beam_search_one`, which steps each hypothesis on its own, and the batched code run
   with B = 1) on a random sample of them;
2. BLEU (sacrebleu, all references) and decoding time for k in {1, 2, 3, 5, 10} (k = 1 is
   greedy, as in `Seq2Seq.translate`), and BLEU against alpha and the pruning margin at k = 5;
3. how often beam search (with and without pruning) misses the exhaustive optimum, on small
   random models whose weights are scaled up so their distributions are peaked (a real
   vocabulary is far too large).

    python -m bench.decoding                      # the reference model (cached or downloaded)
    python -m bench.decoding --checkpoint PATH    # a saved model
    python -m bench.decoding --random-model       # reference sizes, random weights: timings only
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import time

import torch

from bench.common import cpu_model
from lib import exhaustive, search
from lib.checks import search as checks_search
from lib.course import checkpoint
from lib.course.memo import load_corpus
from lib.course.reference import MODEL, pretrained
from lib.data import PAD, SPECIALS, DataConfig, detokenize
from lib.device import pick_device
from lib.evaluate import sacrebleu_score
from lib.model import ModelConfig, Seq2Seq

TARGET_SPEEDUP = 10.0  # batched beam-5 vs one sentence at a time: at least this much faster
TARGET_GREEDY_RATIO = 3.0  # batched beam-5 takes at most this many times greedy's time




def load_model(args, corpus):
    """-> (model in eval mode, a line saying which model it is)."""
    device = pick_device(args.device)
    if args.random_model:
        torch.manual_seed(0)
        config = ModelConfig(len(corpus.src_vocab), len(corpus.tgt_vocab), **MODEL)
        model = Seq2Seq(config, corpus.src_vocab, corpus.tgt_vocab).to(device).eval()
        return model, "random weights, reference sizes (timings only: its BLEU means nothing)"
    if args.checkpoint:
        return checkpoint.load(args.checkpoint, device=device), f"checkpoint {args.checkpoint}"
    try:
        model = pretrained(device=device, train=False, progress=False)
    except FileNotFoundError as e:
        raise SystemExit(f"{e}\n(or run this benchmark with --random-model)") from e
    return model.eval(), "the reference model (lib.pretrained)"


def length_batches(sources: list[str], batch_size: int) -> list[list[int]]:
    """Indices of sources in batches of similar length, as lib.evaluate.translate_all does."""
    order = sorted(range(len(sources)), key=lambda i: len(sources[i]))
    return [order[k:k + batch_size] for k in range(0, len(order), batch_size)]


def timed(device, fn, *args, **kwargs):
    """(seconds, result) of fn(*args, **kwargs), waiting for the GPU where there is one."""
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    if device.type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - start, result


def rows(tokens: torch.Tensor) -> list[list[int]]:
    return [[i for i in row if i != PAD] for row in tokens.tolist()]


def decode_all(model, sources, batch_size, k, alpha=None, **options):
    """Decode every source like Seq2Seq.translate (greedy for k = 1) -> (seconds, id rows).
    `options` go to beam_search (e.g. margin=None for the beam without pruning)."""
    out: list[list[int]] = [[] for _ in sources]
    seconds = 0.0
    for idx in length_batches(sources, batch_size):
        src, lengths = model.prepare([sources[i] for i in idx])
        if k == 1 and alpha is None:
            t, ids = timed(model.device, search.greedy, model, src, lengths)
        else:
            t, res = timed(model.device, search.beam_search, model, src, lengths, beam_size=k,
                           alpha=alpha, **options)
            ids = res.tokens
        seconds += t
        for i, row in zip(idx, rows(ids)):
            out[i] = row
    return seconds, out


def texts(model, id_rows):
    return [detokenize(model.tgt_vocab.decode(r)) for r in id_rows]


# ---------------------------------------------------------------------------------------------
# 1. Speed
# ---------------------------------------------------------------------------------------------


def speed(model, sources, args) -> None:
    k, dev = 5, model.device
    warm_src, warm_lengths = model.prepare(sources[:8])  # first calls pay one-off set-up costs
    search.greedy(model, warm_src, warm_lengths)
    search.beam_search(model, warm_src, warm_lengths, beam_size=k)
    search.beam_search_one(model, warm_src[0, :warm_lengths[0]], beam_size=k)
    greedy_s = beam_s = plain_s = 0.0
    batched = {}
    for idx in length_batches(sources, args.batch_size):  # interleaved: same load for all
        src, lengths = model.prepare([sources[i] for i in idx])
        t, _ = timed(dev, search.greedy, model, src, lengths)
        greedy_s += t
        t, res = timed(dev, search.beam_search, model, src, lengths, beam_size=k)
        beam_s += t
        batched.update(zip(idx, rows(res.tokens)))
        t, _ = timed(dev, search.beam_search, model, src, lengths, beam_size=k, margin=None)
        plain_s += t
    sample = random.Random(0).sample(range(len(sources)), min(args.one_at_a_time,
                                                              len(sources)))
    ref_s = single_s = 0.0
    agree = 0
    for i in sample:
        src, lengths = model.prepare([sources[i]])
        t, ref = timed(dev, search.beam_search_one, model, src[0], beam_size=k)
        ref_s += t
        t, res = timed(dev, search.beam_search, model, src, lengths, beam_size=k)
        single_s += t
        agree += ref[0][0] == batched[i] == rows(res.tokens)[0]

    n, m = len(sources), len(sample)
    print(f"1. Speed: {n} test sources in length-sorted batches of {args.batch_size}; "
          f"beam k={k}, alpha={search.DEFAULT_ALPHA}, margin={search.DEFAULT_MARGIN}, "
          f"max_len={model.config.max_tgt_len}")

    def line(name, seconds, count):
        print(f"   {name:<58} {seconds / count * 1e3:9.1f} ms/sentence "
              f"{count / seconds:9.2f} sentences/s  ({count} sentences, {seconds:.1f} s)")

    line("batched greedy", greedy_s, n)
    line(f"batched beam-{k}", beam_s, n)
    line(f"batched beam-{k} without pruning (margin=None)", plain_s, n)
    line(f"beam-{k} one at a time: readable reference (beam_search_one)", ref_s, m)
    line(f"beam-{k} one at a time: batched code with B = 1", single_s, m)
    speedup = (ref_s / m) / (beam_s / n)
    speedup_b1 = (single_s / m) / (beam_s / n)
    ratio = beam_s / greedy_s
    print(f"   batched beam-{k} vs one at a time (reference): {speedup:6.1f}x faster   target "
          f">= {TARGET_SPEEDUP:.0f}x: {'met' if speedup >= TARGET_SPEEDUP else 'NOT met'}")
    print(f"   batched beam-{k} vs one at a time (B = 1):     {speedup_b1:6.1f}x faster")
    print(f"   batched beam-{k} time / batched greedy time:   {ratio:6.2f}x          target "
          f"<= {TARGET_GREEDY_RATIO:.0f}x: {'met' if ratio <= TARGET_GREEDY_RATIO else 'NOT met'}")
    print(f"   (without pruning, margin=None: {plain_s / greedy_s:.2f}x greedy's time)")
    print(f"   same answer from all three beam-{k} runs: {agree}/{m} sampled sentences\n")


# ---------------------------------------------------------------------------------------------
# 2. BLEU and time against k (and alpha)
# ---------------------------------------------------------------------------------------------


def quality(model, pairs, args) -> None:
    sources = [en for en, _ in pairs]
    refs = [r for _, r in pairs]
    print(f"2. BLEU (sacrebleu, all references) and time on {len(pairs)} test sentences"
          f"{' (a random model: BLEU is meaningless)' if args.random_model else ''}")
    print(f"   {'decoder':<26} {'BLEU':>6} {'seconds':>8} {'ms/sentence':>12} {'mean length':>12}")

    def report(name, k, alpha=None, **options):
        seconds, ids = decode_all(model, sources, args.batch_size, k, alpha, **options)
        bleu = sacrebleu_score(texts(model, ids), refs).score
        length = statistics.mean(len(r) for r in ids)
        print(f"   {name:<26} {bleu:6.2f} {seconds:8.1f} {seconds / len(ids) * 1e3:12.1f} "
              f"{length:12.2f}")

    for k in args.ks:
        report("greedy (k=1)" if k == 1 else f"beam k={k}, alpha={search.DEFAULT_ALPHA}", k)
    for alpha in args.alphas:
        report(f"beam k=5, alpha={alpha}", 5, alpha)
    for margin in args.margins:
        report(f"beam k=5, margin={margin}", 5, search.DEFAULT_ALPHA, margin=margin)
    print()


# ---------------------------------------------------------------------------------------------
# 3. How often beam search misses the optimum
# ---------------------------------------------------------------------------------------------


def optimum(args) -> None:
    words, max_len, n = 4, 6, args.optimum_sentences
    count = exhaustive.count_sequences(len(SPECIALS) + words, max_len)
    print(f"3. Beam search vs the exhaustive optimum: {args.optimum_models} small random models "
          f"(hidden 32, target vocabulary {words} words + <unk> + <eos>, weights x3 for peaked "
          f"distributions; not trained), {n} random sources each, max_len {max_len} "
          f"({count:,} sequences per sentence)")
    print(f"   {'':22}" + "".join(f"{f'k={k}':>18}" for k in args.optimum_ks))
    for alpha, margin in [(a, m) for a in sorted({0.0, search.DEFAULT_ALPHA, 1.0})
                          for m in (None, search.DEFAULT_MARGIN)]:
        g = torch.Generator().manual_seed(0)  # the same sources for every row
        missed = {k: 0 for k in args.optimum_ks}
        gaps = {k: [] for k in args.optimum_ks}
        total = 0
        for seed in range(args.optimum_models):
            model = checks_search.tiny_model(seed, src_words=20, tgt_words=words,
                                             max_tgt_len=max_len)
            lengths = torch.randint(3, 9, (n,), generator=g)
            src = torch.randint(4, len(model.src_vocab), (n, 8), generator=g)
            src = src.masked_fill(torch.arange(8) >= lengths.unsqueeze(1), PAD)
            best = exhaustive.exhaustive_search(model, src, lengths, max_len, alpha=alpha).scores
            total += n
            for k in args.optimum_ks:
                got = search.beam_search(model, src, lengths, beam_size=k, alpha=alpha,
                                         margin=margin).scores
                miss = got < best - 1e-5
                missed[k] += int(miss.sum())
                gaps[k] += (best - got)[miss].tolist()
        cells = []
        for k in args.optimum_ks:
            gap = f"({statistics.mean(gaps[k]):.2f})" if gaps[k] else ""
            cells.append(f"{100 * missed[k] / total:5.1f}% {gap:>6}")
        print(f"   alpha={alpha:<4} margin={str(margin):<4}"
              + "".join(f"{c:>18}" for c in cells))
    print("   (share of sentences where the beam's normalised score is below the optimum, and in "
          "brackets the mean shortfall of those misses)\n")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--checkpoint", help="a model saved with lib.course.checkpoint.save")
    source.add_argument("--random-model", action="store_true",
                        help="random weights of the reference sizes (before training is done)")
    parser.add_argument("--device", default=None, help="cpu, cuda, mps (default: automatic)")
    parser.add_argument("--sentences", type=int, default=2000, help="test sources for 1 and 2")
    parser.add_argument("--one-at-a-time", type=int, default=200,
                        help="sampled sources for the one-sentence-at-a-time baseline")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--ks", type=lambda s: [int(x) for x in s.split(",")],
                        default=[1, 2, 3, 5, 10])
    parser.add_argument("--alphas", type=lambda s: [float(x) for x in s.split(",") if x],
                        default=[0.0, 0.6, 1.0], help="alphas to compare at k=5 ('' for none)")
    parser.add_argument("--margins", default=[None, 3.0, 1.0],
                        type=lambda s: [None if x == "none" else float(x)
                                        for x in s.split(",") if x],
                        help="pruning margins to compare at k=5 ('none': no pruning; '' for none)")
    parser.add_argument("--optimum-models", type=int, default=5)
    parser.add_argument("--optimum-sentences", type=int, default=100)
    parser.add_argument("--optimum-ks", type=lambda s: [int(x) for x in s.split(",")],
                        default=[1, 2, 3, 5])
    parser.add_argument("--threads", type=int, default=None,
                        help="torch CPU threads (default: torch's choice); on a busy machine 1 "
                             "avoids threads waiting for each other")
    parser.add_argument("--skip", default="", help="sections to skip, e.g. 2,3")
    args = parser.parse_args(argv)
    skip = set(args.skip.split(","))
    if args.threads:
        torch.set_num_threads(args.threads)

    corpus = load_corpus(DataConfig())
    model, which = load_model(args, corpus)
    test = corpus.split.test[:args.sentences]
    print("Decoding benchmark")
    print(f"machine : {cpu_model()}, {os.cpu_count()} logical cores, torch threads "
          f"{torch.get_num_threads()}, load average {os.getloadavg()[0]:.1f} at the start")
    print(f"software: Python {platform.python_version()}, torch {torch.__version__}, "
          f"device {model.device}")
    print(f"model   : {which}; hidden {model.config.hidden_size}, embedding "
          f"{model.config.emb_dim}, {model.config.num_layers} layers, vocabularies "
          f"{len(model.src_vocab)} / {len(model.tgt_vocab)}\n")
    if "1" not in skip:
        speed(model, [en for en, _ in test], args)
    if "2" not in skip:
        quality(model, test, args)
    if "3" not in skip:
        optimum(args)
    print(f"load average {os.getloadavg()[0]:.1f} at the end (a load above the core count means "
          f"other work shared the CPU during these timings)")


if __name__ == "__main__":
    main()
