"""Benchmark: ``lib.bleu`` against ``sacrebleu`` on 10,000 sentences (and torchmetrics, if any).

Builds a test corpus from the Tatoeba English-French pairs: for each of 10,000 distinct
English sentences, its first 1-3 French translations are the references and a lightly
damaged copy of one of them is the hypothesis (dropped, swapped, repeated or replaced
words), so scores and n-gram statistics look like a real system's. Without the data file
it falls back to a synthetic corpus. Both implementations are timed in the same run,
alternating, and the median of the repeats is reported together with the machine.

    python -m bench.bleu_speed [--sentences 10000] [--repeats 7] [--data PATH]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import statistics
import time
from collections import defaultdict
from pathlib import Path

import sacrebleu

from bench.common import cpu_model
from lib import bleu

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "fra-eng" / "fra.txt"


def perturb(sentence: str, rng: random.Random) -> str:
    """Damage a translation a little, the way a decent system would differ from it."""
    words = sentence.split(" ")
    for _ in range(rng.randint(0, 3)):
        i = rng.randrange(len(words))
        op = rng.randrange(4)
        if op == 0 and len(words) > 1:
            del words[i]
        elif op == 1:
            j = rng.randrange(len(words))
            words[i], words[j] = words[j], words[i]
        elif op == 2:
            words.insert(i, words[i])
        else:
            words[i] = rng.choice(["le", "la", "de", "pas", "très", "il", "l’a", "ça"])
    return " ".join(words)


def french_corpus(path: Path, size: int, seed: int):
    """``size`` hypotheses with the 1-3 references of one English sentence each."""
    groups = defaultdict(list)
    with open(path, encoding="utf-8") as f:
        for line in f:
            columns = line.rstrip("\n").split("\t")  # English, French[, attribution]
            if len(columns) >= 2:
                groups[columns[0]].append(columns[1])
    rng = random.Random(seed)
    english = sorted(groups)
    rng.shuffle(english)
    if len(english) < size:
        raise SystemExit(f"{path} has only {len(english)} distinct English sentences")
    references = [groups[e][:3] for e in english[:size]]
    hypotheses = [perturb(rng.choice(refs), rng) for refs in references]
    return hypotheses, references


def synthetic_corpus(size: int, seed: int):
    """A stand-in when the data file is missing: random French-looking sentences."""
    rng = random.Random(seed)
    vocab = (
        "je tu il elle nous vous ils le la les un une de du à est suis a pas ne très bien".split()
    )
    vocab += ["l’homme", "qu’il", "«", "»", "peut-être", "3,5", "2024", "été", "ça", "?", "!"]

    def sentence():
        end = rng.choice([".", " !", "\u202f!", " ?", "\u202f?"])
        return " ".join(rng.choices(vocab, k=rng.randint(2, 10))) + end

    references = [[sentence() for _ in range(rng.randint(1, 3))] for _ in range(size)]
    hypotheses = [perturb(rng.choice(refs), rng) for refs in references]
    return hypotheses, references




def timed(fn, *args, **kwargs):
    gc.collect()
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sentences", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=7, help="timed runs (median is shown)")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write medians and agreement here")
    args = parser.parse_args()
    if args.repeats < 1 or args.sentences < 1:
        parser.error("--repeats and --sentences must be at least 1")

    if args.data.exists():
        hyps, refs = french_corpus(args.data, args.sentences, args.seed)
        source = f"Tatoeba fra-eng ({args.data.name}), perturbed French vs its 1-3 references"
    else:
        hyps, refs = synthetic_corpus(args.sentences, args.seed)
        source = f"synthetic ({args.data} not found)"
    # sacrebleu wants reference *streams*: stream j holds reference j of every sentence.
    width = max(len(r) for r in refs)
    streams = [[r[j] if j < len(r) else None for r in refs] for j in range(width)]

    print("BLEU speed: lib.bleu.corpus_bleu vs sacrebleu.corpus_bleu")
    print(
        f"machine  : {cpu_model()}, {os.cpu_count()} logical cores, load average "
        + " ".join(f"{x:.2f}" for x in os.getloadavg())
    )
    print(
        f"software : Python {platform.python_version()}, sacrebleu {sacrebleu.__version__}, "
        f"lib {bleu.__version__}"
    )
    nrefs = {n: sum(len(r) == n for r in refs) for n in sorted({len(r) for r in refs})}
    print(f"corpus   : {len(hyps):,} hypotheses, {source}")
    print(
        f"           references per hypothesis: {nrefs}; "
        f"{sum(len(h.split()) for h in hyps):,} hypothesis words"
    )
    print(f"repeats  : {args.repeats} of each, alternating which runs first; medians shown\n")

    # Corpus BLEU.
    ours_t, theirs_t = [], []
    for i in range(args.repeats):
        runs = [
            ("ours", lambda: bleu.corpus_bleu(hyps, refs)),
            ("theirs", lambda: sacrebleu.corpus_bleu(hyps, streams)),
        ]
        for name, run in runs if i % 2 == 0 else runs[::-1]:
            seconds, result = timed(run)
            (ours_t if name == "ours" else theirs_t).append(seconds)
            if name == "ours":
                ours = result
            else:
                theirs = result
    same = (
        abs(ours.score - theirs.score) <= 1e-9
        and ours.counts == theirs.counts
        and ours.totals == theirs.totals
        and (ours.sys_len, ours.ref_len) == (theirs.sys_len, theirs.ref_len)
    )
    print(f"lib.bleu  : {ours}")
    print(f"sacrebleu : {theirs}")
    print(
        f"equal     : {'yes' if same else 'NO'} (score difference {ours.score - theirs.score:.2e}"
        "; counts, totals and lengths compared exactly)"
    )
    print(f"signature : {ours.signature()}\n")

    def line(name, times):
        median = statistics.median(times)
        spread = f"min {min(times) * 1e3:7.1f}  max {max(times) * 1e3:7.1f}"
        rate = len(hyps) / median
        print(f"  {name:<28} median {median * 1e3:7.1f} ms  ({spread})  {rate:9,.0f} sentences/s")
        return median

    print(f"corpus_bleu on {len(hyps):,} sentences:")
    ours_median = line("lib.bleu.corpus_bleu", ours_t)
    theirs_median = line("sacrebleu.corpus_bleu", theirs_t)
    print(
        f"  ratio sacrebleu / lib.bleu: {theirs_median / ours_median:.2f}x "
        f"({'lib.bleu is faster' if ours_median < theirs_median else 'sacrebleu is faster'})\n"
    )

    # Sentence BLEU, one call per sentence (what a per-sentence table or widget does).
    def ours_sentences():
        return [bleu.sentence_bleu(h, r).score for h, r in zip(hyps, refs)]

    def theirs_sentences():
        return [sacrebleu.sentence_bleu(h, r).score for h, r in zip(hyps, refs)]

    ours_s, theirs_s = [], []
    for i in range(args.repeats):
        runs = [(ours_s, ours_sentences), (theirs_s, theirs_sentences)]
        for times, run in runs if i % 2 == 0 else runs[::-1]:
            seconds, scores = timed(run)
            times.append(seconds)
            if run is ours_sentences:
                ours_scores = scores
            else:
                theirs_scores = scores
    worst = max(abs(a - b) for a, b in zip(ours_scores, theirs_scores))
    print(f"sentence_bleu, {len(hyps):,} calls (largest score difference {worst:.2e}):")
    ours_median = line("lib.bleu.sentence_bleu", ours_s)
    theirs_median = line("sacrebleu.sentence_bleu", theirs_s)
    print(f"  ratio sacrebleu / lib.bleu: {theirs_median / ours_median:.2f}x\n")

    result = {"sentences": len(hyps), "repeats": args.repeats, "source": source,
              "versions": {"sacrebleu": sacrebleu.__version__},
              "corpus": {"lib_s": statistics.median(ours_t),
                         "sacrebleu_s": statistics.median(theirs_t),
                         "lib_score": ours.score, "sacrebleu_score": theirs.score,
                         "equal": bool(same)},
              "sentence": {"lib_s": statistics.median(ours_s),
                           "sacrebleu_s": statistics.median(theirs_s),
                           "max_difference": worst}}

    def save():
        if args.json:
            args.json.write_text(json.dumps(result))

    # torchmetrics, when it is installed (optional: the course does not need it).
    try:
        import torchmetrics
        from torchmetrics.functional.text import bleu_score, sacre_bleu_score
    except ImportError:
        print("torchmetrics: not installed, skipped")
        save()
        return
    tm_t = []
    for _ in range(args.repeats):
        seconds, score = timed(sacre_bleu_score, hyps, refs, tokenize="13a")
        tm_t.append(seconds)
    tm_score = 100 * float(score)
    print(
        f"torchmetrics {torchmetrics.__version__} sacre_bleu_score (13a): BLEU = {tm_score:.4f} "
        f"(difference from sacrebleu {tm_score - theirs.score:.2e})"
    )
    # Checked with torchmetrics 1.9: it breaks ties between equally close reference lengths
    # by taking the first reference listed, where sacrebleu and mteval take the shorter one,
    # so its brevity penalty (and score) depends on the order of the references; it also
    # returns float32.
    print("  (torchmetrics: ties in closest reference length go to the first reference, not the")
    print("   shorter one as in sacrebleu/mteval, and the result is float32)")
    tm_median = line("torchmetrics sacre_bleu_score", tm_t)
    print(f"  ratio torchmetrics / lib.bleu: {tm_median / statistics.median(ours_t):.2f}x")
    result["versions"]["torchmetrics"] = torchmetrics.__version__
    result["torchmetrics_sacre"] = {"s": tm_median, "score": tm_score,
                                    "difference": tm_score - theirs.score}
    result["torchmetrics_plain"] = plain_bleu(hyps, refs, streams, bleu, sacrebleu, bleu_score)
    print(f"plain BLEU (whitespace tokens, no smoothing): {result['torchmetrics_plain']}")
    save()


def plain_bleu(hyps, refs, streams, bleu, sacrebleu, bleu_score) -> dict:
    """The definition torchmetrics' BLEUScore uses: split on spaces, no smoothing, 4-grams.

    lib.bleu and sacrebleu get the same definition (tokenize "none", smooth "none"), so any
    difference left is a difference of implementation (e.g. the reference-length tie-break).
    """
    lib_score = bleu.corpus_bleu(hyps, refs, tokenize="none", smooth_method="none").score
    sb_score = sacrebleu.corpus_bleu(hyps, streams, tokenize="none", smooth_method="none").score
    seconds, tm = timed(bleu_score, hyps, refs, n_gram=4, smooth=False)
    return {"lib_score": lib_score, "sacrebleu_score": sb_score, "torchmetrics_score":
            100 * float(tm), "torchmetrics_s": seconds,
            "difference_tm_vs_sacrebleu": 100 * float(tm) - sb_score,
            "difference_lib_vs_sacrebleu": lib_score - sb_score}


if __name__ == "__main__":
    main()
