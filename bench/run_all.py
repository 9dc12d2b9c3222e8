"""`make bench`: run every benchmark part, collect their JSON, write BENCHMARKS.md.

Why subprocesses: each part starts from a fresh interpreter (no warm caches or threads left
over from the previous part), JoeyNMT runs in its own environment, and a failing part names
itself. Throughput runs alternate ours and JoeyNMT so both see the same machine state; every
figure in BENCHMARKS.md comes from this run's results (`_build/bench/results.json`).

    python -m bench.run_all                        # full run (cold book build included)
    python -m bench.run_all --skip-cold            # without the cold book build
    python -m bench.run_all --quick --skip-cold    # short caps: proves the harness works

If a part fails, the figures of the parts before it stay in _build/bench/results.partial.json.
Two parts also keep their figures in committed files, from which BENCHMARKS.md's sections can be
rendered without a full run: `bench.recipe_check` (hours of training; not run here) and
`bench.chapter_models` (run here; it rewrites bench/results/chapter-models-cpu.json).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

from bench import chapter_models, from_scratch, recipe_check, report
from bench.common import cpu_model
from bench.joeynmt_compare import ensure_venv, venv_python
from bench.training import WARMUP
from lib.course import reference

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "_build" / "bench"

COMMANDS: list[str] = []


def run_output(cmd: list, extra: list = ()) -> str:
    """Run one part (a module of `bench`, from the repository root), listed in the report's
    commands without `extra`; -> its stdout. A failing part stops the run, naming itself."""
    shown = " ".join(str(c).replace(str(ROOT) + "/", "") for c in cmd)
    COMMANDS.append(shown)
    print(f"$ {shown}", file=sys.stderr, flush=True)
    proc = subprocess.run([str(c) for c in [*cmd, *extra]], cwd=ROOT, stdout=subprocess.PIPE,
                          text=True)
    if proc.returncode != 0:
        raise SystemExit(f"benchmark part failed (exit {proc.returncode}): {shown}")
    return proc.stdout


def run_json(cmd: list, json_arg: bool = True) -> dict:
    """Run one part; -> its JSON (from --json FILE, or the last stdout line)."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        path = Path(f.name)
    out = run_output(cmd, ["--json", path] if json_arg else [])
    text = path.read_text() if json_arg else out.strip().splitlines()[-1]
    path.unlink(missing_ok=True)
    return json.loads(text)


def attention_parts(py: str, quick: bool) -> dict:
    """The attention chapter's models (bench.chapter_models: from the cache, or trained now,
    then the chapter timed with them cached), then the Playground in Chromium with both models
    (exported first, as `make playground` does; the attention copy is cached by then)."""
    run_output([py, "-m", "bench.chapter_models", "run"])
    run_output([py, "-m", "lib.course.playground", "--out", "_build/playground"])
    cmd = [py, "-m", "bench.playground", "--repeats", 3 if quick else 11]
    output = run_output(cmd)
    return {"chapter_models": chapter_models.committed_results(),
            "playground": {"command": "python " + " ".join(str(c) for c in cmd[1:]),
                           "output": output}}


def machine(threads: int) -> dict:
    with open("/proc/meminfo") as f:
        ram_kib = int(next(line for line in f if line.startswith("MemTotal")).split()[1])
    return {"cpu": cpu_model(), "cores": os.cpu_count(), "ram_gib": ram_kib / 2**20,
            "threads": threads, "os": platform.platform(), "python": platform.python_version(),
            "torch": torch.__version__, "load_start": os.getloadavg()[0]}


def keep(results: dict) -> None:
    """Write the figures so far, so that a part failing later does not lose them."""
    (OUT / "results.partial.json").write_text(json.dumps(results, indent=1))


def main() -> None:
    started = time.perf_counter()  # the report says how long the whole run took
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--skip-cold", action="store_true", help="skip the cold book build")
    p.add_argument("--skip-book", action="store_true", help="skip the book entirely")
    p.add_argument("--quick", action="store_true", help="short caps, few repeats")
    p.add_argument("--train-minutes", type=float, default=None,
                   help="cap per time-to-BLEU run (default 12, --quick 3)")
    p.add_argument("--out", type=Path, default=ROOT / "BENCHMARKS.md")
    args = p.parse_args()
    quick = args.quick
    minutes = args.train_minutes or (3.0 if quick else 12.0)
    steps, repeats = (10, 2) if quick else (60, 3)
    warmup = WARMUP  # the untimed first steps, ours (bench.training) and JoeyNMT's alike
    eval_every = 20 if quick else None  # None: lib.course.reference.TRAIN.eval_every
    py, bench_py = sys.executable, str(venv_python())
    OUT.mkdir(parents=True, exist_ok=True)
    setup = ensure_venv(log=lambda m: print(m, file=sys.stderr))
    key = reference.reference_key()  # the report names it; tests fail when it goes stale
    results: dict = {"machine": machine(torch.get_num_threads()),
                     "versions": setup["versions"], "install": setup["install"],
                     "reference": {"key": key}}

    # 1. throughput, alternating
    ours, joey = [], []
    for _ in range(repeats):
        ours.append(run_json([py, "-m", "bench.training", "--steps", steps, "--repeats", 1]))
        joey.append(run_json([py, "-m", "bench.joeynmt_compare", "throughput", "--steps",
                              steps, "--warmup", warmup], json_arg=False))
    med = lambda runs, k: statistics.median(r[k] for r in runs)  # noqa: E731
    results["throughput"] = {
        "ours": [r["tokens_per_s"] for r in ours], "joeynmt": [r["tokens_per_s"] for r in joey],
        "ours_median": med(ours, "tokens_per_s"), "joeynmt_median": med(joey, "tokens_per_s"),
        "shortlist": reference.TRAIN.shortlist,
        "ours_full_softmax": [r["tokens_per_s_full_softmax"] for r in ours],
        "ratio": med(ours, "tokens_per_s") / med(joey, "tokens_per_s"),
        "peak_gflops": med(ours, "peak_gflops"), "gflops": med(ours, "gflops"),
        "utilisation": med(ours, "gflops") / med(ours, "peak_gflops"),
        "ours_params": ours[0]["params"], "joeynmt_params": joey[0]["params"],
        "steps": steps, "warmup": warmup, "batch_size": reference.TRAIN.batch_size,
        "model": ", ".join(f"{k}={v}" for k, v in reference.MODEL.items()),
    }
    results["joeynmt_notes"] = (  # JoeyNMT's settings and their sources: joeynmt_compare.py
        joey[0]["recipe_notes"] + " JoeyNMT does not bucket by length, so its batches carry "
        "more padding. Ours trains with a shortlist softmax (the most frequent words plus the "
        "batch's targets, lib.head.shortlist_cross_entropy), JoeyNMT's softmax covers the "
        "whole vocabulary; the full-softmax row times ours without the shortlist in the same "
        "runs.")

    keep(results)

    # 2. the attention chapter's models and its execution, the Playground (before the long
    # training runs: a missing browser or export fails the run early)
    results.update(attention_parts(py, quick))

    keep(results)

    # 3. time to BLEU 20 (the models are kept for decoding)
    extra = ["--eval-every", eval_every] if eval_every else []
    ttb_ours = run_json([py, "-m", "bench.time_to_bleu", "--minutes", minutes, *extra])
    ttb_joey = run_json([py, "-m", "bench.joeynmt_compare", "train", "--minutes", minutes,
                         *extra], json_arg=False)
    results["time_to_bleu"] = {"ours": ttb_ours, "joeynmt": ttb_joey, "target": 20.0,
                               "sentences": reference.DATA.n_test,
                               "eval_every": ttb_ours["eval_every"]}

    keep(results)

    # 4. decoding
    dec_repeats = 1 if quick else 3
    d_ours = run_json([py, "-m", "bench.decode_speed", "--repeats", dec_repeats])
    d_joey = run_json([py, "-m", "bench.joeynmt_compare", "decode", "--repeats", dec_repeats],
                      json_arg=False)
    results["decoding"] = {
        "ours": d_ours, "joeynmt": d_joey, "repeats": dec_repeats,
        "ratio_greedy": d_ours["greedy"]["sentences_per_s"]
        / d_joey["greedy"]["sentences_per_s"],
        "ratio_beam5": d_ours["beam5"]["sentences_per_s"] / d_joey["beam5"]["sentences_per_s"],
        "notes": "Length normalisation differs: ours divides by length^alpha, JoeyNMT uses "
                 "GNMT's ((5 + length) / 6)^alpha, both with lib.search.DEFAULT_ALPHA; "
                 "maximum output length 40 for both."}

    keep(results)

    # 5. BLEU implementations (the bench venv has torchmetrics)
    b = run_json([bench_py, "-m", "bench.bleu_speed", "--repeats", 3 if quick else 7])
    b["speedup"] = b["corpus"]["sacrebleu_s"] / b["corpus"]["lib_s"]
    b["sentence_speedup"] = b["sentence"]["sacrebleu_s"] / b["sentence"]["lib_s"]
    results["bleu"] = b

    keep(results)

    # 6. the book
    if args.skip_book:
        results["book"] = {"command": "jupyter-book build . --all -n -W --keep-going",
                           "cold": {"skipped": "--skip-book"},
                           "warm": {"skipped": "--skip-book"}}
    else:
        book = run_json([py, "-m", "bench.book", "--results"]
                        + (["--skip-cold"] if args.skip_cold else []))
        if args.skip_cold:
            book["cold"] = {"skipped": "BENCH_SKIP_COLD=1 / --skip-cold"}
        if "warm_missing" in book:
            book["warm"] = {"skipped": book["warm_missing"]}
        results["book"] = book

    # 7. the training-settings sweeps: committed results (hours of training), rendered as measured
    results["sweep"] = recipe_check.committed_results()
    # 8. the attention chapter's pair at two sizes, from scratch on a GPU: committed results
    results["from_scratch"] = from_scratch.committed_results()

    if reference.reference_key() != key:  # lib, the data or the settings changed mid-run
        raise SystemExit(f"the reference key changed during the run ({key} -> "
                         f"{reference.reference_key()}): its figures mix two models; run again")
    results["machine"]["load_end"] = os.getloadavg()[0]
    results["commands"] = COMMANDS
    results_file = OUT / "results.json"
    results["run"] = {
        "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "quick": quick,
        "minutes": (time.perf_counter() - started) / 60,
        "results_file": str(results_file.relative_to(ROOT)),
        "note": f"{steps} throughput steps x {repeats} repeats, time-to-BLEU capped at "
                f"{minutes:g} min with checks every {ttb_ours['eval_every']} steps, "
                f"{dec_repeats} decoding repeat(s)"}
    results_file.write_text(json.dumps(results, indent=1))
    (OUT / "results.partial.json").unlink(missing_ok=True)
    args.out.write_text(report.render(results))
    print(f"wrote {args.out} (results in {results_file})", file=sys.stderr)


if __name__ == "__main__":
    main()
