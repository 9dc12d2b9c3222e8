"""JoeyNMT 2.3.0 side by side with the course's model: same data, same split, same vocabulary.

Why a harness: a throughput figure means little on its own; next to a maintained toolkit
training a model of the same size on the same sentences, it says whether our code is slow. This
script runs in the course's environment and never imports joeynmt. It

1. creates `_build/bench/joeynmt-venv` (torch==2.13.0 first, then joeynmt==2.3.0 under a
   constraints file, so pip can never swap in another torch);
2. writes pre-tokenised train/dev/test files and vocabulary files from lib.data's split and
   tokeniser (`export_data`), and a JoeyNMT YAML config matched to lib.course.reference's
   MODEL/TRAIN
   (`joey_config`), under `_build/bench/joeynmt/`;
3. runs `bench/joeynmt_worker.py` inside that environment (throughput, time to BLEU, decoding)
   and prints the worker's JSON.

    python -m bench.joeynmt_compare setup
    python -m bench.joeynmt_compare throughput --steps 40
    python -m bench.joeynmt_compare train --minutes 12 --target 20 [--recipe matched]
    python -m bench.joeynmt_compare decode --repeats 3

Two recipes (`--recipe`; each setting and its source is in `RECIPE_NOTES` and the report):

- `authors` (the default): JoeyNMT set up as its authors set up a small recurrent model in the
  example configurations of its v2.3 release (configs/rnn_reverse.yaml, configs/rnn_small.yaml)
  and its code defaults: bidirectional encoder, input feeding, Luong attention, embeddings drawn
  from N(0, 0.1), Adam at 1e-3 with plateau scheduling. Only the sizes are ours: the two
  directions have half our hidden size each, so the concatenated final state initialises the
  decoder ("last") and the parameter count stays the same as the matched recipe's.
- `matched`: JoeyNMT wired as close to our model as it allows (unidirectional encoder, which
  needs bench/joeynmt_worker.py's patch; Luong attention without input feeding; our peak
  learning rate and warm-up, then inverse-sqrt decay; JoeyNMT's code-default embedding scale,
  N(0, 0.01)). It learns far slower per step than ours; it is kept to reproduce the
  BENCHMARKS.md row that measured it.

What tests/test_bench_joeynmt_export.py checks against JoeyNMT itself: the
exported vocabularies load into JoeyNMT's Vocabulary with every id kept except <unk>/<pad>,
which JoeyNMT always puts first (harmless: the files hold text, not ids); JoeyNMT reads our
sentences token for token; its loss skips padding; the patched encoder's final state equals its
GRU run on each sentence alone. So the export and the patch are sound, and what differs from
JoeyNMT's authors are the settings listed above.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from lib import search
from lib.course import reference
from lib.course.memo import load_corpus
from lib.data import tokenize

ROOT = Path(__file__).resolve().parents[1]

BUILD = ROOT / "_build" / "bench"
VENV = BUILD / "joeynmt-venv"
WORK = BUILD / "joeynmt"
TRAINED_RECIPE = WORK / "train-recipe.txt"  # which recipe made model-train/ (decode checks)
JOEYNMT = "joeynmt==2.3.0"
# joeynmt 2.3.0's helpers.py imports importlib_metadata without declaring it (found when
# setting this up): installed beside it, under the same constraints.
UNDECLARED = ("importlib-metadata",)
# The BLEU comparison runs in this environment too, so the course's own stays without it.
EXTRAS = ("torchmetrics==1.9.0",)
TORCH = "torch==2.13.0"
# sacrebleu pinned to the course's version so both sides score with the same code; torch
# pinned so pip keeps the CPU build installed first.
CONSTRAINTS = (TORCH, "sacrebleu==2.6.0")
SPECIALS = {"unk_token": "<unk>", "unk_id": 0, "pad_token": "<pad>", "pad_id": 1,
            "bos_token": "<sos>", "bos_id": 2, "eos_token": "<eos>", "eos_id": 3}


def venv_python() -> Path:
    return VENV / "bin" / "python"


def ensure_venv(log=print) -> dict:
    """Create the JoeyNMT environment once; -> what was installed and how."""
    py = venv_python()
    marker = VENV / ".bench-installed"
    constraints = BUILD / "joeynmt-constraints.txt"
    if not marker.is_file():
        BUILD.mkdir(parents=True, exist_ok=True)
        constraints.write_text("\n".join(CONSTRAINTS) + "\n")
        if not py.is_file():
            subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        pip = [str(py), "-m", "pip", "install", "-q"]
        log(f"installing {TORCH} then {JOEYNMT} into {VENV} ...")
        subprocess.run(pip + [TORCH], check=True)
        subprocess.run(pip + ["-c", str(constraints), JOEYNMT, *UNDECLARED, *EXTRAS],
                       check=True)
        marker.touch()
    out = subprocess.run([str(py), "-c", "import importlib.metadata as m, sys, json; print(json."
                          "dumps({k: m.version(k) for k in ('joeynmt', 'torch', 'sacrebleu', "
                          "'protobuf', 'torchmetrics')} | {'python': sys.version.split()[0]}))"],
                         check=True, capture_output=True, text=True)
    return {"versions": json.loads(out.stdout), "constraints": list(CONSTRAINTS),
            "install": f"{TORCH} first, then {JOEYNMT} with -c constraints "
                       f"({', '.join(CONSTRAINTS)}); its own pins (protobuf<3.21) resolve on "
                       f"Python 3.11; plus {', '.join(UNDECLARED)}, which joeynmt imports "
                       f"but does not declare"}


# ---------------------------------------------------------------------------------------------
# Data and config (pure: unit-tested without joeynmt)
# ---------------------------------------------------------------------------------------------


def _write_lines(path: Path, lines) -> None:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def export_data(corpus, out: Path) -> dict:
    """lib's split and vocabularies -> JoeyNMT's plain files; -> the file prefixes.

    Every sentence is written as lib.data.tokenize's tokens joined by single spaces, so
    JoeyNMT's word-level whitespace tokeniser sees exactly our tokens. Dev/test lines carry the
    first reference (JoeyNMT takes one per line); `test_refs.json` keeps all of them, and BLEU
    is computed from the hypotheses by lib.data.detokenize + sacrebleu, as lib.evaluate does.
    """
    out.mkdir(parents=True, exist_ok=True)
    tok = lambda s: " ".join(tokenize(s))  # noqa: E731
    parts = {"train": corpus.split.train,
             "dev": [(en, refs[0]) for en, refs in corpus.split.valid],
             "test": [(en, refs[0]) for en, refs in corpus.split.test]}
    for name, pairs in parts.items():
        _write_lines(out / f"{name}.en", (tok(en) for en, _ in pairs))
        _write_lines(out / f"{name}.fr", (tok(fr) for _, fr in pairs))
    _write_lines(out / "src_vocab.txt", corpus.src_vocab.itos)
    _write_lines(out / "trg_vocab.txt", corpus.tgt_vocab.itos)
    (out / "test_refs.json").write_text(json.dumps([refs for _, refs in corpus.split.test],
                                                   ensure_ascii=False), encoding="utf-8")
    return {name: str(out / name) for name in parts}


RECIPES = ("authors", "matched")

# What bench/report.py prints about each recipe: every JoeyNMT setting and where it comes from.
# "rnn_reverse.yaml" etc. are the example configurations in the joeynmt repository at tag v2.3
# (the release that pip installs as 2.3.0); "code default" is joeynmt 2.3.0's own default.
RECIPE_NOTES = {
    "authors": (
        "JoeyNMT set up as its authors set up a small recurrent model (joeynmt v2.3 "
        "configs/rnn_reverse.yaml and rnn_small.yaml, and its code defaults), at our sizes: "
        "a bidirectional GRU encoder (code default, every RNN example), each direction with "
        "half our hidden size, so that its concatenated final state starts the decoder "
        "(init_hidden \"last\", rnn_small.yaml) and the parameter count matches; a 2-layer "
        "GRU decoder with input feeding (code default, both examples) and Luong attention "
        "(rnn_reverse.yaml); weights Xavier-uniform, biases zero, embeddings N(0, 0.1) (both "
        "examples; the code default is N(0, 0.01)); Adam at 1e-3 with plateau scheduling on "
        "BLEU on our validation split, patience 5, factor 0.5 (rnn_reverse.yaml; "
        "bench/joeynmt_worker.py drops the `verbose` argument that joeynmt 2.3.0 passes and "
        "torch 2.13 no longer takes); gradient norm clipped at 1.0 and "
        "dropout 0.1 (rnn_reverse.yaml, as ours); no label smoothing (both examples); "
        "batches of our 128 sentences, loss averaged over target tokens (as ours). Ours keeps "
        "its own recipe (lib.course.reference.TRAIN)."),
    "matched": (
        "JoeyNMT wired as close to our model as it allows: its recurrent decoder always "
        "attends, so it uses the cheapest option (Luong, bilinear, no input feeding); its "
        "decoder starts from the encoder's last state like ours but gets no context at every "
        "step (ours: feed_context); JoeyNMT 2.3.0 crashes on a unidirectional encoder, so "
        "bench/joeynmt_worker.py patches that one method (same steps, forward state only); "
        "Adam at our peak rate with our warm-up, then inverse-sqrt decay; embeddings at the "
        "code default N(0, 0.01); same batch size in sentences, clipping and dropout."),
}


def joey_config(data_dir: Path, model_dir: Path, model: dict, train, *, dev: str = "dev",
                alpha: float, max_len: int, updates: int | None = None,
                validation_freq: int = 10**9, logging_freq: int = 10,
                recipe: str = "authors") -> dict:
    """A JoeyNMT config with lib.course.reference's sizes and the given recipe's settings."""
    if recipe not in RECIPES:
        raise ValueError(f"recipe must be one of {RECIPES}, got {recipe!r}")
    hidden = model["hidden_size"]
    if recipe == "authors" and hidden % 2:
        raise ValueError(f"the authors recipe splits hidden_size={hidden} between the "
                         "encoder's two directions: it must be even")
    rnn = {"type": "recurrent", "rnn_type": "gru", "hidden_size": hidden,
           "num_layers": model["num_layers"], "dropout": model["dropout"],
           "embeddings": {"embedding_dim": model["emb_dim"], "scale": False}}
    lang = {"level": "word", "lowercase": False, "normalize": False, "max_length": 1000,
            "min_length": 1}
    training = {
        "model_dir": str(model_dir), "overwrite": True, "random_seed": train.seed,
        "optimizer": "adam", "weight_decay": train.weight_decay,
        "clip_grad_norm": train.clip,
        "batch_size": train.batch_size, "batch_type": "sentence", "normalization": "tokens",
        "epochs": max(1, int(-(-train.epochs // 1))), "validation_freq": validation_freq,
        "logging_freq": logging_freq, "eval_metrics": ["bleu"], "early_stopping_metric": "bleu",
        "keep_best_ckpts": 1, "shuffle": True, "use_cuda": False, "num_workers": 0,
        "print_valid_sents": [0],
    }
    if recipe == "authors":
        training.update({"learning_rate": 0.001, "scheduling": "plateau", "patience": 5,
                         "decrease_factor": 0.5, "learning_rate_min": 0.0002,
                         "label_smoothing": 0.0})
        init = {"initializer": "xavier_uniform", "bias_initializer": "zeros",
                "embed_initializer": "normal", "embed_init_weight": 0.1}
        encoder = {**rnn, "hidden_size": hidden // 2, "bidirectional": True}
        decoder = {**rnn, "hidden_dropout": model["dropout"], "attention": "luong",
                   "input_feeding": True, "init_hidden": "last"}
    else:
        training.update({"learning_rate": train.lr, "scheduling": "warmupinversesquareroot",
                         "learning_rate_warmup": train.warmup_steps,
                         "learning_rate_min": 0.0})
        init = {"initializer": "xavier_uniform", "embed_initializer": "normal"}
        encoder = {**rnn, "bidirectional": False}
        decoder = {**rnn, "hidden_dropout": model["dropout"], "attention": "luong",
                   "input_feeding": False, "init_hidden": "last"}
    if updates:
        training["updates"] = updates
    return {
        "name": f"bench-gru-{recipe}",
        "data": {"train": str(data_dir / "train"), "dev": str(data_dir / dev),
                 "test": str(data_dir / "test"), "dataset_type": "plain",
                 "src": {"lang": "en", "voc_file": str(data_dir / "src_vocab.txt"), **lang},
                 "trg": {"lang": "fr", "voc_file": str(data_dir / "trg_vocab.txt"), **lang},
                 "special_symbols": dict(SPECIALS)},
        "testing": {"beam_size": 1, "beam_alpha": alpha, "batch_size": 256,
                    "batch_type": "sentence", "max_output_length": max_len,
                    "eval_metrics": ["bleu"], "sacrebleu_cfg": {"tokenize": "13a"}},
        "training": training,
        "model": {**init, "tied_embeddings": False, "tied_softmax": False,
                  "encoder": encoder, "decoder": decoder},
    }


def log_freq(validation_freq: int) -> int:
    """JoeyNMT wants a logging interval that is smaller than and divides the validation's."""
    return max(d for d in range(1, 11) if validation_freq % d == 0 and d < max(2, validation_freq))


def write_config(cfg: dict, path: Path) -> Path:
    """YAML is a superset of JSON, so JSON is a valid JoeyNMT config (but PyYAML reads 1e-12,
    without a dot, as a string: keep floats like 0.003 or 0.0)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(cfg, indent=2), encoding="utf-8")
    return path


# ---------------------------------------------------------------------------------------------
# Running the worker
# ---------------------------------------------------------------------------------------------


def prepare(kind: str, **overrides) -> Path:
    """Export the data (once per run) and write the config for one kind of run."""
    corpus = load_corpus(reference.DATA)
    data_dir = WORK / "data"
    export_data(corpus, data_dir)
    model_dir = WORK / f"model-{kind}"
    cfg = joey_config(data_dir, model_dir, reference.MODEL, reference.TRAIN,
                      alpha=search.DEFAULT_ALPHA, max_len=40, **overrides)
    return write_config(cfg, WORK / f"{kind}.yaml")


def run_worker(*args: str, threads: int | None = None) -> dict:
    """Run bench.joeynmt_worker in the JoeyNMT venv (from the repository root, so that it
    imports `lib` from it); -> its JSON (last stdout line)."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads)) if threads else None
    proc = subprocess.run([str(venv_python()), "-m", "bench.joeynmt_worker", *args], cwd=ROOT,
                          env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr[-4000:])
        raise SystemExit(f"joeynmt worker {args[0]} failed (exit {proc.returncode})")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("mode", choices=["setup", "throughput", "train", "decode"])
    p.add_argument("--steps", type=int, default=40, help="timed training steps (throughput)")
    p.add_argument("--warmup", type=int, default=10, help="untimed first steps (throughput)")
    p.add_argument("--minutes", type=float, default=12.0, help="training cap (train)")
    p.add_argument("--target", type=float, default=20.0, help="test BLEU to reach (train)")
    p.add_argument("--eval-every", type=int, default=None,
                   help="steps between test evaluations (default: lib.course.reference.TRAIN's)")
    p.add_argument("--repeats", type=int, default=3, help="timed decodes of the test set")
    p.add_argument("--recipe", choices=RECIPES, default="authors",
                   help="JoeyNMT's settings: its authors' (default) or wired like ours")
    args = p.parse_args(argv)
    info = ensure_venv(log=lambda m: print(m, file=sys.stderr))
    if args.mode == "setup":
        result = info
    elif args.mode == "throughput":
        cfg = prepare("throughput", updates=args.warmup + args.steps,
                      logging_freq=max(1, min(args.warmup, 10)), recipe=args.recipe)
        result = run_worker("throughput", str(cfg), "--warmup", str(args.warmup))
    elif args.mode == "train":
        every = args.eval_every or reference.TRAIN.eval_every or 100
        cfg = prepare("train", validation_freq=every,
                      logging_freq=log_freq(every), recipe=args.recipe)
        TRAINED_RECIPE.unlink(missing_ok=True)
        result = run_worker("train", str(cfg), "--refs", str(WORK / "data" / "test_refs.json"),
                            "--minutes", str(args.minutes), "--target", str(args.target))
        TRAINED_RECIPE.write_text(args.recipe)
    else:
        cfg = prepare("decode", recipe=args.recipe)
        ckpt = WORK / "model-train" / "latest.ckpt"
        if not ckpt.exists() or not TRAINED_RECIPE.is_file():
            raise SystemExit(f"no trained JoeyNMT model at {ckpt}: run the train mode first")
        trained = TRAINED_RECIPE.read_text()
        if trained != args.recipe:
            raise SystemExit(f"the JoeyNMT model at {ckpt} was trained with --recipe {trained}, "
                             f"not {args.recipe}: decode with --recipe {trained}")
        result = run_worker("decode", str(cfg), "--ckpt", str(ckpt), "--refs",
                            str(WORK / "data" / "test_refs.json"), "--repeats",
                            str(args.repeats))
    if args.mode != "setup":  # (in setup mode result is info: no copy inside itself)
        result.update(recipe=args.recipe, recipe_notes=RECIPE_NOTES[args.recipe], setup=info)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
