"""The attention chapter's models on long inputs: BLEU by source length, their cost, their keys.

book/attention.md scores two models on joined test sources (lib.experiments.long_inputs), the
same size, data, seed and steps, trained from scratch on joined pairs: one with a fixed context,
one with attention. This records, for each, greedy BLEU on the single test sentences and per
source-length bucket, its training steps and minutes, the seconds it took to translate the test
sources, and its key: the name of the result file `lib.experiments.long_inputs.cached_runs` keeps
(a hash of its settings, the corpus and torch). The models come from that cache when a build left
them there; the missing ones are made as the chapter makes them (trained side by side, or
downloaded where lib.experiments.long_inputs fetches published runs).

It then times the chapter itself executing with those models cached (`bench.book.with_models`),
for the issue's target: the attention chapter executes in at most 60 s on 2 CPU cores with its
models present.

    python -m bench.chapter_models run       # -> RESULTS, and its JSON on stdout
    python -m bench.chapter_models splice    # BENCHMARKS.md's section, from RESULTS
    python -m bench.chapter_models rekey --why "..."   # new keys, same runs: RESULTS renamed

RESULTS (bench/results/chapter-models-cpu.json) is committed: a full `make bench` runs this
again, and `splice` renders it into BENCHMARKS.md without a full run.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import time
from pathlib import Path

import torch

from bench import book, recipe_check, report
from bench.common import buckets, cpu_model
from lib.bleu import paired_bootstrap
from lib.course.memo import load_corpus
from lib.evaluate import sacrebleu_score
from lib.experiments import long_inputs
from lib.experiments.long_inputs import ScratchConfig

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "chapter-models-cpu.json"
CHAPTER = "book/attention"
CONFIGS = long_inputs.MODELS  # what book/attention.md trains and shows, by its labels
FIXED, ATTENTION = "fixed vector", "attention"


def model_key(config: ScratchConfig) -> str:
    """The name `cached_runs` keeps `config`'s result and weights under (without suffix)."""
    return long_inputs.weights_path(config).stem


def result_stamp(config: ScratchConfig) -> int | None:
    """The modification time of `config`'s cached result (None: not cached): a run that reads
    it from the cache leaves it as it was, one that trains or downloads it writes it."""
    result = long_inputs.weights_path(config).with_suffix(".json")
    return result.stat().st_mtime_ns if result.is_file() else None


def longest_bucket(runs: dict, groups) -> dict:
    """Attention minus fixed vector on the longest bucket's sources: paired bootstrap."""
    last = long_inputs.BUCKETS[-1]
    idx = [i for i, (en, _, _) in enumerate(groups)
           if long_inputs.bucket_of(long_inputs.source_length(en)) == last]
    diff, lo, hi = paired_bootstrap(
        [runs[ATTENTION]["hypotheses"][i] for i in idx],
        [runs[FIXED]["hypotheses"][i] for i in idx], [groups[i][1] for i in idx])
    return {"bucket": long_inputs.bucket_label(last), "sources": len(idx), "difference": diff,
            "low": lo, "high": hi}


def run(time_chapter: bool = True) -> dict:
    """Score the chapter's models (from the cache, or trained now) and time the chapter."""
    split = load_corpus().split
    before = {label: result_stamp(c) for label, c in CONFIGS.items()}
    start = time.perf_counter()
    runs = long_inputs.cached_runs(CONFIGS)
    wall = time.perf_counter() - start
    cached = {label: before[label] is not None and before[label] == result_stamp(c)
              for label, c in CONFIGS.items()}
    groups = {label: long_inputs.test_groups(c, split) for label, c in CONFIGS.items()}
    models = [{"label": label, "key": model_key(c), "config": dataclasses.asdict(c),
               "from_cache": cached[label], "steps": runs[label]["steps"],
               "minutes": runs[label]["seconds"] / 60,
               "decode_seconds": runs[label]["decode_seconds"],
               "single_bleu": sacrebleu_score(runs[label]["single_hypotheses"],
                                              [refs for _, refs in split.test]).score,
               "buckets": buckets(runs[label]["hypotheses"], groups[label])}
              for label, c in CONFIGS.items()]
    record = {"date": time.strftime("%Y-%m-%d %H:%M"),
              "machine": f"{cpu_model()}, {os.cpu_count()} cores, "
                         f"{torch.get_num_threads()} torch threads",
              "torch": torch.__version__,
              "test_sources": len(groups[FIXED]), "k_max": CONFIGS[FIXED].k_max,
              "models": models, "longest": longest_bucket(runs, groups[FIXED]),
              "made_here_minutes": None if all(cached.values()) else wall / 60}
    record["chapter"] = (book.with_models(CHAPTER) if time_chapter
                         else {"skipped": "bench.chapter_models run --skip-chapter"})
    return record


def rekey(data: dict, why: str, date: str) -> dict:
    """`data` with each model's key made current, when only the key's formula changed: the
    configs must be the current ones, else the figures describe other models and this refuses."""
    configs = {m["label"]: m["config"] for m in data["models"]}
    if configs != {label: dataclasses.asdict(c) for label, c in CONFIGS.items()}:
        raise SystemExit("the results' configs are not the current ones: run them again")
    old = {m["label"]: m["key"] for m in data["models"]}
    models = [dict(m, key=model_key(CONFIGS[m["label"]])) for m in data["models"]]
    return dict(data, models=models, rekeyed={"date": date, "why": why, "old": old})


def committed_results(path: Path | None = None) -> dict:
    """RESULTS (or `path`) as the report reads it (results["chapter_models"])."""
    return json.loads((path or RESULTS).read_text(encoding="utf-8"))


def section(data: dict) -> str:
    return "\n".join(report.section_chapter_models({"chapter_models": data}))


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--results", type=Path, default=RESULTS)
    r.add_argument("--skip-chapter", action="store_true",
                   help="score the models only; the chapter is not timed")
    s = sub.add_parser("splice")
    s.add_argument("--results", type=Path, default=RESULTS)
    s.add_argument("--report", type=Path, default=ROOT / "BENCHMARKS.md")
    k = sub.add_parser("rekey")
    k.add_argument("--results", type=Path, default=RESULTS)
    k.add_argument("--why", required=True, help="why the keys changed")
    args = p.parse_args(argv)
    if args.cmd == "run":
        record = run(time_chapter=not args.skip_chapter)
        args.results.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        print(json.dumps(record))
    elif args.cmd == "rekey":
        record = rekey(committed_results(args.results), args.why, time.strftime("%Y-%m-%d"))
        args.results.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        print(f"{args.results}: " + ", ".join(f"{m['label']} -> {m['key']}"
                                              for m in record["models"]))
    else:
        text = report.splice(args.report.read_text(encoding="utf-8"),
                             section(committed_results(args.results)),
                             before=recipe_check.SECTION)
        args.report.write_text(text, encoding="utf-8")
        print(f"wrote the {report.CHAPTER_MODELS_SECTION!r} section of {args.report}")


if __name__ == "__main__":
    main()
