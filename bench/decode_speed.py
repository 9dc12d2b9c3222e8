"""Our side of the decoding comparison: sentences/s of batched greedy and beam-5 on the test set.

Why end to end: JoeyNMT's `predict` is timed from its dataset to detokenised strings, so ours
is timed the same way, through lib.evaluate.translate_all (tokenise, length-sorted batches of
256, search, detokenise). bench/decoding.py has the finer analysis (one at a time, k and alpha);
this script is the small, JSON-writing part that the side-by-side report needs. Greedy and
beam-5 alternate in each repeat so both see the same machine load; medians are reported.

    python -m bench.decode_speed [--checkpoint PATH] [--repeats 3] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import torch

from lib.course import checkpoint, reference
from lib.course.memo import load_corpus
from lib.evaluate import sacrebleu_score, translate_all

ROOT = Path(__file__).resolve().parents[1]

DEFAULT_CHECKPOINT = ROOT / "_build" / "bench" / "ours-time-to-bleu.pt"


def run(path: Path, repeats: int) -> dict:
    model = checkpoint.load(path, device="cpu").eval()
    test = load_corpus(reference.DATA).split.test
    sources, refs = [en for en, _ in test], [r for _, r in test]
    kinds = {"greedy": 1, "beam5": 5}
    hyps = {name: translate_all(model, sources[:64], beam_size=k)  # warm-up
            for name, k in kinds.items()}
    times = {name: [] for name in kinds}
    for i in range(repeats):
        for name, k in (kinds.items() if i % 2 == 0 else reversed(kinds.items())):
            t0 = time.perf_counter()
            hyps[name] = translate_all(model, sources, beam_size=k)
            times[name].append(time.perf_counter() - t0)
    out = {"sentences": len(sources), "threads": torch.get_num_threads(), "checkpoint": str(path)}
    for name in kinds:
        out[name] = {"sentences_per_s": len(sources) / statistics.median(times[name]),
                     "seconds": times[name], "bleu": sacrebleu_score(hyps[name], refs).score}
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--checkpoint", type=Path, default=DEFAULT_CHECKPOINT)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--json", type=Path)
    args = p.parse_args()
    result = run(args.checkpoint, args.repeats)
    if args.json:
        args.json.write_text(json.dumps(result))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
