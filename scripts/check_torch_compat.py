"""Do the published checkpoints load and translate the same under another torch version?

Colab runs its own torch (see docs/decisions.md, "What the Colab-shaped test models"), which is
not the one that trained and saved the checkpoints (lib.train.TRAINING_TORCH). This script
loads each checkpoint with `lib.course.checkpoint.load` on the CPU, decodes the first N test
sentences greedily (`lib.search.greedy_with_scores`, source cap as in `Seq2Seq.translate`) and
writes the token ids and their log-probabilities to a JSON file. Run it under each interpreter,
then compare the two files:

    .venv/bin/python -m scripts.check_torch_compat --out a.json
    PYTHONPATH=. /other/venv/bin/python -m scripts.check_torch_compat --out b.json PATH...
    .venv/bin/python -m scripts.check_torch_compat --compare a.json b.json

Without PATHs it checks the cached reference model and the attention chapter's
models that are cached. Their file names hash the runtime torch (lib.course.memo), so under
another torch pass the paths the first run printed. The comparison fails unless every
sentence's ids are equal; it reports the largest difference of the log-probabilities.

Nothing is downloaded, trained or written except `--out`; the test sentences are read from the
corpus file (the split only: the vocabularies are the checkpoint's).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import torch

from lib import search
from lib.course import checkpoint
from lib.data import EOS, PAD, DataConfig, corpus_path, read_pairs, split_by_source

DEFAULT_N = 200


def default_paths() -> list[Path]:
    """The cached reference model, then the attention chapter's cached models."""
    # Imported here: with explicit paths (another torch's venv) the course machinery, which
    # that venv may lack the dependencies of, is never imported.
    from lib.course import reference
    from lib.experiments import long_inputs

    paths = [reference.cache_path()]
    paths += [long_inputs.weights_path(c) for c in long_inputs.MODELS.values()]
    return [p for p in paths if p.is_file()]


def test_sentences(n: int) -> list[str]:
    """The English side of the first `n` test groups of the course's split."""
    config = DataConfig()
    split = split_by_source(read_pairs(corpus_path(), limit=config.limit), config.n_valid,
                            config.n_test, config.seed)
    return [en for en, _ in split.test[:n]]


def _trimmed(row: list[int]) -> list[int]:
    """The ids up to and including <eos>, without the padding after it."""
    out = []
    for tok in row:
        if tok == PAD:
            break
        out.append(tok)
        if tok == EOS:
            break
    return out


@torch.no_grad()
def decode(path: Path, sentences: list[str]) -> dict:
    """Greedy ids and log-probabilities of `sentences` under the checkpoint at `path`."""
    model = checkpoint.load(path, device="cpu").eval()
    src, lengths = model.prepare(sentences)
    ids, scores = search.greedy_with_scores(model, src, lengths, source_cap=True)
    rows = [_trimmed(row) for row in ids.tolist()]
    digest = hashlib.sha256(json.dumps(rows).encode()).hexdigest()
    return {"path": str(path), "ids": rows, "scores": scores.tolist(), "digest": digest}


def run(paths: list[Path], n: int) -> dict:
    sentences = test_sentences(n)
    return {"torch": torch.__version__, "python": sys.version.split()[0], "n": len(sentences),
            "models": [decode(Path(p), sentences) for p in paths]}


def compare(a: dict, b: dict) -> list[str]:
    """The differences that matter (ids, sentence counts, missing models); empty if none."""
    problems = []
    if a["n"] != b["n"]:
        problems.append(f"{a['n']} sentences against {b['n']}")
    if len(a["models"]) != len(b["models"]):
        problems.append(f"{len(a['models'])} models against {len(b['models'])}")
    for x, y in zip(a["models"], b["models"]):
        differ = [i for i, (p, q) in enumerate(zip(x["ids"], y["ids"])) if p != q]
        if differ:
            problems.append(f"{x['path']} / {y['path']}: {len(differ)} sentences differ, "
                            f"first {differ[:5]}")
    return problems


def max_score_gap(a: dict, b: dict) -> float:
    """The largest difference of two sentences' greedy log-probabilities, model by model."""
    return max((abs(p - q) for x, y in zip(a["models"], b["models"])
                for p, q in zip(x["scores"], y["scores"])), default=0.0)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", type=Path,
                        help="checkpoints (default: the cached reference and chapter copies)")
    parser.add_argument("-n", type=int, default=DEFAULT_N, help="test sentences to translate")
    parser.add_argument("--out", type=Path, help="write the ids and log-probabilities here")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"),
                        help="compare two --out files instead of decoding")
    args = parser.parse_args(argv)
    if args.compare:
        a, b = (json.loads(p.read_text(encoding="utf-8")) for p in args.compare)
        problems = compare(a, b)
        print(f"torch {a['torch']} (Python {a['python']}) against torch {b['torch']} "
              f"(Python {b['python']}), {a['n']} sentences, {len(a['models'])} models: "
              f"{'ids differ' if problems else 'identical ids'}; largest log-probability "
              f"difference {max_score_gap(a, b):.3g}")
        for line in problems:
            print("  " + line)
        return 1 if problems else 0
    paths = args.paths or default_paths()
    if not paths:
        parser.error("no checkpoint given and none cached")
    result = run(paths, args.n)
    print(f"torch {result['torch']}, Python {result['python']}, {result['n']} sentences")
    for model in result["models"]:
        print(f"  {model['path']}: ids sha256 {model['digest'][:16]}")
    if args.out:
        args.out.write_text(json.dumps(result), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
