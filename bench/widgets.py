"""Benchmark: how fast the live widgets redraw, and how heavy each embedded view is.

Targets: a live control change redraws in <= 100 ms (median) on the CPU with a
reference-sized model, and a widget's embedded page weighs <= 300 KB.

The model is the cached reference model if there is one (`lib.pretrained(train=False)`), else a
randomly initialised model of the same size (hidden 512, embeddings 256, 2 layers, the corpus
vocabularies): the work per decoding step is the same, only the words differ. But a random
model never writes <eos>, so every output would run to the 40-token cap, four times the length
of a real translation. For it, the decoding cap is set to the length of 90% of the test
references (+1 for <eos>), and the 40-token worst case is timed too.

A redraw is timed from setting a control's value to the new HTML being in the Output widget
(recompute on the model's device, capture to the CPU, draw, display).

    python -m bench.widgets [--repeats 15] [--threads N] [--device cpu] [--map 300]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from pathlib import Path

import torch

import lib
from lib import widgets
from lib.course.memo import load_corpus
from lib.course.reference import MODEL
from lib.data import DataConfig, tokenize
from lib.model import ModelConfig, Seq2Seq

ROOT = Path(__file__).resolve().parents[1]

TARGET_MS, TARGET_KB = 100.0, 300.0


def reference_sized_model(device: str) -> tuple[Seq2Seq, str, list]:
    """The cached reference model, or a random one of its size; and the test pairs."""
    corpus = load_corpus(DataConfig())
    tests = corpus.split.test
    try:
        model = lib.pretrained(device=device, download=False, train=False, progress=False)
        return model.eval(), "the cached reference model (lib.pretrained)", tests
    except FileNotFoundError:
        torch.manual_seed(0)
        config = ModelConfig(len(corpus.src_vocab), len(corpus.tgt_vocab), **MODEL)
        model = Seq2Seq(config, corpus.src_vocab, corpus.tgt_vocab).to(device).eval()
        return model, "a random model of the reference size (no cached reference model)", tests


def typical_length(pairs) -> int:
    """Tokens (with <eos>) that 90% of the test references fit in."""
    lengths = sorted(len(tokenize(ref)) + 1 for _, refs in pairs for ref in refs)
    return lengths[int(0.9 * (len(lengths) - 1))]


def time_changes(box, control: str, values: list) -> list[float]:
    """Milliseconds per redraw when `control` takes each of `values` in turn."""
    live, times = box.live, []
    for value in values:
        start = time.perf_counter()
        live.controls[control].value = value
        times.append(1000 * (time.perf_counter() - start))
        assert live.error is None, f"{control}={value!r}: {live.error}"
    return times


def row(name: str, times: list[float]) -> str:
    med = statistics.median(times)
    p90 = sorted(times)[int(0.9 * (len(times) - 1))]
    ok = "ok" if med <= TARGET_MS else "OVER"
    return f"  {name:<44} median {med:6.1f} ms   p90 {p90:6.1f} ms   [{ok}]"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15, help="control changes per case")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: "
                        "torch's choice)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--map", type=int, default=300, help="sentences on the context map")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)

    model, which, pairs = reference_sized_model(args.device)
    tests = [en for en, _ in pairs]
    random_model = "random" in which
    cap = typical_length(pairs) if random_model else None
    c = model.config
    print(f"model: {which}")
    print(f"  hidden {c.hidden_size}, embeddings {c.emb_dim}, {c.num_layers} layers, "
          f"vocabularies {c.src_vocab_size}/{c.tgt_vocab_size}, device {model.device}")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"torch {torch.__version__} ({torch.get_num_threads()} threads), "
          f"python {platform.python_version()}")
    sentences = [s for s in tests if 4 <= len(s.split()) <= 8][:args.repeats]
    n = args.repeats

    print(f"\nlive redraw after a control change ({n} changes each; target <= {TARGET_MS:.0f} "
          f"ms median)")
    if random_model:
        print(f"  decoding capped at {cap} tokens, the length of 90% of the test references "
              f"(a random model never writes <eos>)")
    start = time.perf_counter()
    box = widgets.live_beam(model, sentences[0], beam_size=5, max_len=cap)
    print(f"  (live_beam built in {1000 * (time.perf_counter() - start):.0f} ms)")
    print(row("live_beam: new sentence (k=5)", time_changes(box, "sentence", sentences[1:])))
    print(row("live_beam: beam size 3 <-> 6", time_changes(box, "beam_size", [3, 6] * (n // 2))))
    print(row("live_beam: alpha", time_changes(box, "alpha", [0.0, 0.5, 1.0] * (n // 3))))

    start = time.perf_counter()
    box = widgets.live_hidden(model, sentences[0], map_sentences=tests[:args.map],
                              max_len=cap)
    print(f"  (live_hidden with a {args.map}-sentence map built in "
          f"{1000 * (time.perf_counter() - start):.0f} ms, once)")
    print(row("live_hidden: new sentence (+ map)", time_changes(box, "sentence", sentences[1:])))
    # layer and encoder/decoder are the view's own buttons: they switch in the browser, with no
    # kernel round trip to time

    box = widgets.live_stepper(model, sentences[0], max_len=cap)
    prefixes = ["Je", "Je suis", "Il", "Nous", "Tu", "Elle est", ""] * n
    print(row("live_stepper: forced prefix", time_changes(box, "prefix", prefixes[:n])))
    if random_model:
        print("  worst case, every output 40 tokens long:")
        box = widgets.live_beam(model, sentences[0], beam_size=5)
        print(row("  live_beam: new sentence (k=5)", time_changes(box, "sentence", sentences[1:])))
        box = widgets.live_hidden(model, sentences[0])
        print(row("  live_hidden: new sentence", time_changes(box, "sentence", sentences[1:])))
    box = widgets.live_bleu()
    hyps = ["Le chat est sur le tapis.", "Le chat est assis.", "Un chat sur un tapis."] * n
    print(row("live_bleu: hypothesis", time_changes(box, "hypothesis", hyps[:n])))

    print(f"\nembedded page weight (one notebook output, all data inline; target <= "
          f"{TARGET_KB:.0f} KB)")
    long_sentence = max((s for s in tests if len(s.split()) <= 14), key=len)
    cases = {
        "hidden_state_explorer + 300-sentence map":
            lambda: widgets.hidden_state_explorer(model, sentences[0], max_len=cap,
                                                  map_sentences=tests[:args.map]),
        "hidden_state_explorer, all 512 units, 40 steps":
            lambda: widgets.hidden_state_explorer(model, long_sentence, units=None),
        "beam_explorer k=5":
            lambda: widgets.beam_explorer(model, sentences[0], beam_size=5, max_len=cap),
        "beam_explorer k=10, 40 steps (worst case)":
            lambda: widgets.beam_explorer(model, long_sentence, beam_size=10),
        "decoder_stepper top-10, forced prefix":
            lambda: widgets.decoder_stepper(model, sentences[0], prefix="Je", top_k=10,
                                            max_len=cap),
        "bleu_explorer, one sentence":
            lambda: widgets.bleu_explorer("Le chat est sur le tapis.",
                                          ["Le chat est assis sur le tapis."]),
        "bleu_explorer, 20-sentence corpus":
            lambda: widgets.bleu_explorer(model.translate(tests[:20], max_len=cap),
                                          [refs for _, refs in pairs[:20]]),
    }
    for name, make in cases.items():
        kb = len(make().to_html().encode("utf-8")) / 1024
        print(f"  {name:<48} {kb:7.1f} KB   [{'ok' if kb <= TARGET_KB else 'OVER'}]")


if __name__ == "__main__":
    main()
