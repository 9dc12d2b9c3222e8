"""Publish the reference model: its checkpoint for the current cache key, and a manifest.

    make release      # = python -m lib.course.release --out _build/release

Readers then get the model in seconds instead of training it (lib.course.reference.pretrained): the
manifest names the key, and gives the checkpoint's sha256 and byte count, which the download
must match. The weights are stored in half precision when that moves neither greedy nor beam-5
BLEU on the test split by more than TOLERANCE (measured here, each time, and written into the
manifest); otherwise in full precision.

The attention chapter's runs (CHAPTER_RUNS) go beside it, one folder per release,
<out>/<tag>/ (lib.course.chapter_models.write_release): the result and trained weights as
the build computed them, byte for byte, which `lib.experiments.long_inputs.cached_runs` downloads
(`lib.pretrained(attention=True)`).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import shutil
from pathlib import Path

import torch

from lib.course import chapter_models, checkpoint, reference
from lib.course.download import sha256_of
from lib.course.memo import load_corpus
from lib.evaluate import evaluate_bleu
from lib.experiments import long_inputs
from lib.search import DEFAULT_BEAM
from lib.version import __version__

TOLERANCE = 0.1  # BLEU points that half precision may cost, greedy and beam search
# The attention chapter's runs, as book/attention.md names them.
CHAPTER_RUNS = long_inputs.MODELS


def _bleu(model, test) -> dict[str, float]:
    beam = round(evaluate_bleu(model, test, beam_size=DEFAULT_BEAM), 2)
    return {"greedy": round(evaluate_bleu(model, test), 2), f"beam{DEFAULT_BEAM}": beam}


def _rounded(model, dtype: torch.dtype):
    """A copy of `model` whose weights went through `dtype` and back: what a reader loads."""
    rounded = copy.deepcopy(model)
    rounded.load_state_dict({k: v.to(dtype) if v.is_floating_point() else v
                             for k, v in model.state_dict().items()})  # cast back to float32
    return rounded


def write_release(out: Path, device: str = "cpu") -> dict:
    """Write the checkpoint and manifest.json for the current key into `out`; return the manifest.

    The reference model must be cached (`make reference`); it is never trained here.
    """
    key = reference.reference_key()
    previous = _current(Path(out), key)
    if previous is not None:
        return previous
    model = reference.pretrained(device=device, download=False, train=False, progress=False)
    test = load_corpus(reference.DATA).split.test
    bleu = {"float32": _bleu(model, test), "float16": _bleu(_rounded(model, torch.float16), test)}
    cost = {name: bleu["float32"][name] - bleu["float16"][name] for name in bleu["float32"]}
    dtype = "float16" if all(abs(c) <= TOLERANCE for c in cost.values()) else "float32"
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    name = f"reference-{key}.pt"
    for stale in out.glob("reference-*.pt"):  # one key per release folder
        if stale.name != name:
            stale.unlink()
    path = checkpoint.save(model, out / name, extra=model.extra, dtype=getattr(torch, dtype))
    extra = model.extra
    manifest = {
        "key": key, "tag": reference.release_tag(key), "file": name,
        "sha256": sha256_of(path), "bytes": path.stat().st_size, "dtype": dtype,
        "lib_version": __version__,
        "test_bleu": bleu, "bleu_tolerance": TOLERANCE, "test_sentences": len(test),
        "training": {"minutes": round(extra.get("minutes", 0.0), 2),
                     "tokens_per_second": round(extra.get("tokens_per_second", 0.0))},
        "data": "Tatoeba English-French pairs (tatoeba.org), CC-BY 2.0 FR",
    }
    tmp = out / f"{reference.MANIFEST}.tmp"
    tmp.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, out / reference.MANIFEST)
    return manifest


def write_runs(out: Path, configs: dict | None = None) -> list[dict]:
    """Write the releases of the attention chapter's runs (`configs`, default CHAPTER_RUNS)
    into `out`, one folder each; return their manifests. Runs that are not cached are
    downloaded or trained first (`lib.experiments.long_inputs.cached_runs`); other keys' folders
    go."""
    configs = CHAPTER_RUNS if configs is None else configs
    long_inputs.cached_runs(configs)
    manifests = []
    for label, config in configs.items():
        description = (f"The attention chapter's model {label!r} ({config}): its result and "
                       f"weights, "
                       "which `lib.experiments.long_inputs.cached_runs` downloads when it is "
                       "not cached.")
        run = long_inputs.cached_run(config)
        manifests.append(chapter_models.write_release(run, Path(out), description))
    tags = {manifest["tag"] for manifest in manifests}
    for stale in Path(out).glob(f"{long_inputs.NAME}-*"):  # one key per run in a release folder
        if stale.is_dir() and stale.name not in tags:
            shutil.rmtree(stale)
    return manifests


def prepare_runs(configs: dict | None = None) -> dict:
    """Cache the attention chapter's runs before the website is built, so that the chapter reads
    them instead of computing them in the page (whose output would then show why it did)."""
    configs = CHAPTER_RUNS if configs is None else configs
    runs = long_inputs.cached_runs(configs)
    for label, config in configs.items():
        print(f"{label}: cached at {long_inputs.cached_run(config).result}")
    return runs


def _current(out: Path, key: str) -> dict | None:
    """The manifest in `out` if it is for `key` and its checkpoint still has its sha256."""
    try:
        manifest = json.loads((out / reference.MANIFEST).read_text(encoding="utf-8"))
        fresh = manifest["key"] == key and sha256_of(out / manifest["file"]) == manifest["sha256"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return manifest if fresh else None


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("_build/release"))
    parser.add_argument("--prepare-runs", action="store_true",
                        help="only make sure the attention chapter's runs are cached (downloaded "
                             "or trained), writing nothing to --out: `make chapter-models`")
    args = parser.parse_args(argv)
    if args.prepare_runs:
        prepare_runs()
        return
    manifest = write_release(args.out)
    bleu = manifest["test_bleu"]
    print(f"{args.out / manifest['file']}: {manifest['bytes'] / 1e6:.1f} MB, {manifest['dtype']}, "
          f"sha256 {manifest['sha256']}")
    for dtype, scores in bleu.items():
        print(f"  test BLEU with {dtype} weights: greedy {scores['greedy']:.2f}, "
              f"beam {DEFAULT_BEAM} {scores[f'beam{DEFAULT_BEAM}']:.2f}")
    print(f"{args.out / reference.MANIFEST} written (release tag {manifest['tag']})")
    for run in write_runs(args.out):
        size = sum(f["bytes"] for f in run["files"]) / 1e6
        print(f"{args.out / run['tag']}: {len(run['files'])} files, {size:.1f} MB "
              f"(release tag {run['tag']})")


if __name__ == "__main__":
    main()
