"""The attention chapter's from-scratch comparison, run on a GPU at two state sizes.

book/attention.md trains a fixed-vector and an attention decoder from scratch on joined pairs
(`lib.experiments.long_inputs`) at one GRU layer of 128 units, small enough for 2 CPU cores, and
says that at the reference model's size (2 layers of 512) the two tie on this data. This script
measures both claims on one GPU: each size's pair has the same seed, data and steps and differs
only in the decoder's context; each model is scored greedily on the 2,000 single test sentences
and, by source length, on the chapter's joined test sources, and attention minus fixed vector gets
a paired bootstrap on all joined sources and on the longest bucket. The four trainings run as four
processes at once (the models are too small to fill the GPU alone).

    python -m bench.from_scratch run OUT_DIR     # needs CUDA; OUT_DIR/<run>.json and RESULTS' form
    python -m bench.from_scratch splice          # BENCHMARKS.md's section, from RESULTS

RESULTS (bench/results/from-scratch-gpu.json) is committed: the build never needs a GPU.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import torch

from bench import recipe_check, report
from bench.common import buckets
from lib.bleu import paired_bootstrap
from lib.course import reference
from lib.course.memo import load_corpus
from lib.evaluate import sacrebleu_score, translate_all
from lib.experiments import long_inputs
from lib.experiments.joined import joined_train_pairs
from lib.train import new_model

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "from-scratch-gpu.json"
FIXED, ATTENTION = "fixed vector", "attention"
REFERENCE_STEPS = 5000  # the ~5,000 GPU steps after which the 2 x 512 pair was said to tie
SIZES = {
    "1 x 128": long_inputs.MODELS,  # the chapter's own pair, as the CPU trains it
    "2 x 512": {label: dataclasses.replace(
        config, emb_dim=reference.MODEL["emb_dim"], hidden_size=reference.MODEL["hidden_size"],
        num_layers=reference.MODEL["num_layers"], steps=REFERENCE_STEPS)
        for label, config in long_inputs.MODELS.items()},
}


def run_name(size: str, label: str) -> str:
    """A file name for one run: '2 x 512', 'attention' -> '2x512-attention'."""
    return f"{size.replace(' ', '')}-{label.replace(' ', '-')}"


RUNS = {run_name(size, label): (size, label) for size in SIZES for label in SIZES[size]}


def train_one(name: str, device: str, steps: int | None = None) -> dict:
    """Train run `name` from scratch on `device`; its scores and greedy outputs as JSON."""
    size, label = RUNS[name]
    config = SIZES[size][label]
    if steps is not None:  # a short check of the script itself
        config = dataclasses.replace(config, steps=steps)
    corpus = load_corpus(reference.DATA)
    model = new_model(corpus, config.seed, **config.sizes()).to(device)
    pairs = joined_train_pairs(corpus.split.train, k_max=config.k_max,
                               n=config.steps * config.batch_size, seed=config.seed)
    start = time.perf_counter()
    history = long_inputs.fit(model, config, pairs, progress=True)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    model.eval()
    groups = long_inputs.test_groups(config, corpus.split)
    hypotheses = translate_all(model, [en for en, _, _ in groups])
    singles = translate_all(model, [en for en, _ in corpus.split.test])
    last = history.loss[-4:]  # logged every 50 steps: the last 200 steps
    return {"name": name, "size": size, "label": label, "config": dataclasses.asdict(config),
            "steps": config.steps, "seconds": seconds, "final_loss": sum(last) / len(last),
            "single_bleu": sacrebleu_score(singles, [r for _, r in corpus.split.test]).score,
            "buckets": buckets(hypotheses, groups), "hypotheses": hypotheses,
            "single_hypotheses": singles}


def compare(fixed: dict, attention: dict, groups) -> dict:
    """Attention minus fixed vector, paired bootstrap, on all joined sources and the longest
    bucket's."""
    last = long_inputs.BUCKETS[-1]
    every = list(range(len(groups)))
    longest = [i for i in every
               if long_inputs.bucket_of(long_inputs.source_length(groups[i][0])) == last]
    out = {}
    for key, idx in (("joined", every), ("longest", longest)):
        diff, lo, hi = paired_bootstrap([attention["hypotheses"][i] for i in idx],
                                        [fixed["hypotheses"][i] for i in idx],
                                        [groups[i][1] for i in idx])
        out[key] = {"sources": len(idx), "difference": diff, "low": lo, "high": hi}
    out["longest"]["bucket"] = long_inputs.bucket_label(last)
    return out


def run(out: Path, deadline: float, device: str, steps: int | None) -> dict:
    """All RUNS at once, one process each; what finished by `deadline` seconds is kept."""
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONUNBUFFERED="1", TQDM_MININTERVAL="30")
    procs = {}
    for name in RUNS:
        cmd = [sys.executable, "-m", "bench.from_scratch", "worker", name, str(out),
               "--device", device] + (["--steps", str(steps)] if steps else [])
        procs[name] = subprocess.Popen(cmd, env=env, cwd=ROOT)
    start = time.perf_counter()
    while any(p.poll() is None for p in procs.values()):
        if time.perf_counter() - start > deadline:
            for p in procs.values():
                p.kill()
            break
        time.sleep(5)
    runs = {name: json.loads((out / f"{name}.json").read_text()) for name in RUNS
            if (out / f"{name}.json").is_file()}
    groups = long_inputs.test_groups(long_inputs.MODELS[FIXED])
    props = torch.cuda.get_device_properties(0) if device.startswith("cuda") else None
    record = {"date": time.strftime("%Y-%m-%d %H:%M"),
              "machine": props.name if props else device, "torch": torch.__version__,
              "test_sources": len(groups), "k_max": long_inputs.MODELS[FIXED].k_max,
              "runs": [{k: v for k, v in r.items() if not k.endswith("hypotheses")}
                       for r in runs.values()],
              "missing": [name for name in RUNS if name not in runs], "comparisons": {}}
    for size in SIZES:
        pair = {label: runs.get(run_name(size, label)) for label in (FIXED, ATTENTION)}
        if all(pair.values()):
            record["comparisons"][size] = compare(pair[FIXED], pair[ATTENTION], groups)
    (out / "from-scratch-gpu.json").write_text(json.dumps(record, indent=1) + "\n")
    return record


def committed_results(path: Path | None = None) -> dict:
    return json.loads((path or RESULTS).read_text(encoding="utf-8"))


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("out", type=Path)
    r.add_argument("--deadline", type=float, default=560, help="seconds; unfinished runs stop")
    r.add_argument("--device", default="cuda")
    r.add_argument("--steps", type=int, help="a short check of the script: this many steps")
    w = sub.add_parser("worker")
    w.add_argument("name", choices=sorted(RUNS))
    w.add_argument("out", type=Path)
    w.add_argument("--device", default="cuda")
    w.add_argument("--steps", type=int)
    s = sub.add_parser("splice")
    s.add_argument("--results", type=Path, default=RESULTS)
    s.add_argument("--report", type=Path, default=ROOT / "BENCHMARKS.md")
    args = p.parse_args(argv)
    if args.cmd == "worker":
        result = train_one(args.name, args.device, args.steps)
        (args.out / f"{args.name}.json").write_text(json.dumps(result) + "\n")
        print(f"{args.name}: {result['seconds']:.0f} s, single {result['single_bleu']:.1f}")
    elif args.cmd == "run":
        print(json.dumps(run(args.out, args.deadline, args.device, args.steps), indent=1))
    else:
        section = report.section_from_scratch(committed_results(args.results))
        text = report.splice(args.report.read_text(encoding="utf-8"), "\n".join(section),
                             before=recipe_check.SECTION)  # the order report.render keeps
        args.report.write_text(text, encoding="utf-8")
        print(f"wrote the {report.FROM_SCRATCH_SECTION!r} section of {args.report}")


if __name__ == "__main__":
    main()
