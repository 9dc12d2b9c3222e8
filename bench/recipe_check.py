"""The reference recipe against its strongest sweep candidates, on this machine's CPU.

bench/sweep.py compared 35 training settings on a GPU, judged by BLEU after a number of target
tokens (bench/results/sweep-h100.json). Its base was the recipe before the shortlist softmax,
sampled rare words and the weight average (EMA) joined it, so its best variants are checked
again here on top of today's recipe (lib.course.reference.TRAIN): same model size, same epochs
(hence the same steps and, on the same CPU, the same minutes), same initial weights. Each run
trains as `lib.course.reference.train_reference` does and scores greedy and beam 5 on the 2,000
held-out test sentences; the reference model itself is scored from its cached checkpoint.

    python -m bench.recipe_check run NAME      # one variant (or "reference") -> RESULTS
    python -m bench.recipe_check splice        # BENCHMARKS.md's sweep section, from RESULTS

RESULTS (bench/results/recipe-cpu.json) is committed, as bench/results/sweep-h100.json is: a
full `make bench` renders both into BENCHMARKS.md without training them again.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path

import torch

from bench import report
from bench.common import cpu_model
from lib import train as training
from lib.course import checkpoint, reference
from lib.course.memo import load_corpus
from lib.evaluate import evaluate_bleu
from lib.train import new_model

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "recipe-cpu.json"
GPU_RESULTS = ROOT / "bench" / "results" / "sweep-h100.json"
SECTION = "## Training settings: the sweep behind the reference recipe"

# Overrides of lib.course.reference.TRAIN: the GPU sweep's best greedy variant (label smoothing
# 0.2 instead of 0.1). How far a seed alone moves BLEU is in the GPU sweep (seeds 0, 1, 2).
VARIANTS = {
    "label_smoothing=0.2": dict(label_smoothing=0.2),
}


def score(model, test) -> dict:
    return {"greedy": evaluate_bleu(model, test), "beam5": evaluate_bleu(model, test, beam_size=5)}


def run(name: str) -> dict:
    """Train variant `name` (or load the reference) and score it on the test split."""
    corpus = load_corpus(reference.DATA)
    test = corpus.split.test
    record = {"name": name, "threads": torch.get_num_threads(), "test_sentences": len(test),
              "torch": torch.__version__, "reference_key": reference.reference_key()}
    if name == "reference":
        path = reference.cache_path()
        if not path.exists():
            raise SystemExit(f"no cached reference model at {path}: run `make reference` first")
        model = checkpoint.load(path)
        extra = checkpoint.read(path).get("extra") or {}
        record.update(minutes=extra.get("minutes"), overrides={})
    else:
        if name not in VARIANTS:
            raise SystemExit(f"unknown variant {name!r}; choose from reference, "
                             + ", ".join(VARIANTS))
        cfg = dataclasses.replace(reference.TRAIN, **VARIANTS[name])
        model = new_model(corpus, cfg.seed, **reference.MODEL)
        start = time.perf_counter()
        hist = training.train(model, corpus.train_examples, cfg,
                              valid_pairs=corpus.split.valid, progress=False)
        record.update(minutes=(time.perf_counter() - start) / 60, steps=hist.step[-1],
                      tokens=hist.tokens[-1], overrides=VARIANTS[name])
    model.eval()
    record.update(score(model, test))
    return record


def record_run(record: dict, results: Path = RESULTS) -> dict:
    """Add (or replace, by name) one run in the committed results file."""
    data = json.loads(results.read_text()) if results.exists() else {"runs": []}
    data["runs"] = [r for r in data["runs"] if r["name"] != record["name"]] + [record]
    data.update(date=time.strftime("%Y-%m-%d"),
                machine=f"{cpu_model()}, {torch.get_num_threads()} torch threads")
    results.write_text(json.dumps(data, indent=1))
    return data


def committed_results() -> dict:
    """Both sweeps as the report reads them (results["sweep"])."""
    return {"gpu": json.loads(GPU_RESULTS.read_text()), "cpu": json.loads(RESULTS.read_text())}


def splice(text: str, section: str) -> str:
    """`text` with its sweep section replaced by `section` (appended when it has none)."""
    start = text.find(SECTION)
    if start < 0:
        return text.rstrip() + "\n\n" + section.strip() + "\n"
    end = text.find("\n## ", start + len(SECTION))
    rest = "" if end < 0 else text[end:]
    return text[:start] + section.strip() + "\n" + rest


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("name")
    s = sub.add_parser("splice")
    s.add_argument("--report", type=Path, default=ROOT / "BENCHMARKS.md")
    args = p.parse_args(argv)
    if args.cmd == "run":
        record = run(args.name)
        record_run(record)
        print(json.dumps(record))
    else:
        section = "\n".join(report.section_sweep({"sweep": committed_results()}))
        args.report.write_text(splice(args.report.read_text(), section))
        print(f"wrote the sweep section of {args.report}")


if __name__ == "__main__":
    main()
