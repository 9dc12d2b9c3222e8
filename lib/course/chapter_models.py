"""A chapter's own models, published like the reference model so readers download them.

The attention chapter trains two small models from scratch (`lib.experiments.long_inputs`),
which takes minutes on a CPU. Each such run is a `Run`: a result cached with `lib.course.memo`
and, when something loads it, the weights file beside it. `make release` publishes each run as
a GitHub release (`write_release`): the tag names the run's *published* key, which hashes its
settings (for the attention chapter's: the sizes, the recipe, the data settings and the corpus
checksum), the torch it is trained with and
`lib.train.TRAINING_VERSION`, as the reference model's key does: not the code's text, so a
refactor that computes the same keeps every published run. The release holds the result, the
weights and a manifest with the key and each file's sha256 and byte count. `cached` then gives
the runs from the cache, else downloads the published ones (checked against the manifest, under
one deadline), else computes them, saying why in one line. One process at a time does this
work: another waits, then reads the cache.

The published key is not memo's: memo's also hashes the torch *running* the code, and a reader
(Colab) has another torch than the one the course's models are trained with.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lib import train as training
from lib.course import memo, reference
from lib.course.download import DownloadError, cache_dir, sha256_of
from lib.version import __version__


@dataclass(frozen=True)
class Run:
    """One cached run: memo's `name` and `settings` (JSON), and where its weights go (None:
    nothing loads them, so none are published or needed)."""

    name: str
    settings: dict
    weights: Path | None = None

    @property
    def result(self) -> Path:
        """Where memo keeps the result (named by memo's key, runtime torch included)."""
        return memo.result_path(self.name, self.settings)

    @property
    def key(self) -> str:
        return published_key(self.name, self.settings)

    @property
    def tag(self) -> str:
        """The GitHub release of this run; its assets are named after it too."""
        return f"{self.name}-{self.key}"

    def files(self) -> dict[str, Path]:
        """{published asset name: local file}: the weights (if any), then the result."""
        weights = {f"{self.tag}.pt": self.weights} if self.weights else {}
        return {**weights, f"{self.tag}.json": self.result}

    def complete(self) -> bool:
        return all(path.is_file() for path in self.files().values())


def published_key(name: str, settings) -> str:
    """A short hash of a run's name, settings, lib.train.TRAINING_TORCH (not the runtime torch)
    and lib.train.TRAINING_VERSION."""
    blob = json.dumps({"name": name, "settings": settings, "torch": training.TRAINING_TORCH,
                       "training_version": training.TRAINING_VERSION}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def fetch(run: Run, left: Callable[[], float], progress: bool = False) -> None:
    """Download the files published for `run` into place, each checked against the manifest;
    the result last, so a result on disk means its weights are there. `left`: the seconds left
    of the deadline (reference.deadline_clock). DownloadError (naming the release) if not."""
    manifest = reference.fetch_manifest(run.tag, run.key, left, many=True)
    listed = {asset["file"]: asset for asset in manifest["files"]}
    for name, dest in run.files().items():
        if name not in listed:
            raise DownloadError(f"the release manifest of {run.tag} lists no {name}")
        reference.fetch_asset(run.tag, listed[name], dest, progress, left)


def cached(runs: dict, compute: Callable[[object], object], what: str,
           deadline: float | None = None, download: bool = True, train: bool = True) -> dict:
    """{label: result} of `runs` ({label: Run}, one memo name), as
    memo.cached_all gives them, the missing ones first downloaded from their releases.

    A result whose weights file is gone, or that cannot be read, counts as missing. A run that
    cannot be downloaded is computed (`compute(label)` must write its weights), after one line
    that says why; with $SEQ2SEQ_RECOMPUTE set, all are computed (memo) and nothing is
    downloaded. `download=False` skips the releases; `train=False` raises FileNotFoundError
    instead of computing a run that is not cached (or downloaded).
    """
    names = {run.name for run in runs.values()}
    if len(names) != 1:
        raise ValueError(f"runs must share one memo name, got {len(names)}")
    for run in runs.values():  # memo's own reading rule: an unreadable result is not cached
        unreadable = run.result.is_file() and not memo.readable(run.result)
        if unreadable or (run.weights and not run.weights.is_file()):
            run.result.unlink(missing_ok=True)
    name = names.pop()
    keys = {label: run.settings for label, run in runs.items()}
    recompute = bool(os.environ.get("SEQ2SEQ_RECOMPUTE"))
    if recompute and not train:
        raise FileNotFoundError(f"{what}: $SEQ2SEQ_RECOMPUTE asks to compute them again, and "
                                f"training is turned off (train=False)")
    if recompute or all(run.complete() for run in runs.values()):
        return memo.cached_all(name, keys, compute)
    if not (download or train):
        _refuse(runs, what, "downloading and training are turned off")
    lock_path = cache_dir() / "results" / name
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with reference.CacheLock(lock_path, "is downloading", what) as lock:
        missing = [label for label, run in runs.items() if not run.complete()]
        left = reference.deadline_clock(f"the published runs of {what}", deadline,
                                        "the runs not fetched yet are computed")
        for label in missing:
            run = runs[label]
            try:
                if not download:
                    raise DownloadError("downloading is turned off (download=False)")
                fetch(run, left)
            except (DownloadError, OSError) as e:
                if not train:
                    _refuse({label: run}, what, str(e))
                lock.doing("is training")
                print(f"Computing the run {label!r} of {what} here, because no usable "
                      f"published run for key {run.key} ({e}). This takes minutes on a CPU; "
                      f"the result is cached in {run.result.parent}.", flush=True)
        return memo.cached_all(name, keys, compute)


def _refuse(runs: dict, what: str, why: str) -> None:
    missing = [f"{label!r} ({run.result})" for label, run in runs.items() if not run.complete()]
    raise FileNotFoundError(f"{what}: no cached run {', '.join(missing)} and training is turned "
                            f"off (train=False); {why}")


def write_release(run: Run, out: Path, description: str) -> dict:
    """Copy `run`'s files into out/<tag>/ beside a manifest; return the manifest.

    The files are copied byte for byte (a reader's download is the build's file); the run must
    be cached. The manifest holds the key, the tag, the settings, `description` (the release
    notes' first line) and each file's name, sha256 and bytes.
    """
    missing = [str(path) for path in run.files().values() if not path.is_file()]
    if missing:
        raise FileNotFoundError(f"{run.name} is not cached ({', '.join(missing)} missing): "
                                f"run it first")
    folder = Path(out) / run.tag
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for name, source in run.files().items():
        target = folder / name
        if not target.is_file() or sha256_of(target) != sha256_of(source):
            shutil.copyfile(source, folder / f"{name}.tmp")
            os.replace(folder / f"{name}.tmp", target)
        files.append({"file": name, "sha256": sha256_of(target), "bytes": target.stat().st_size})
    manifest = {"key": run.key, "tag": run.tag, "name": run.name, "settings": run.settings,
                "description": description, "files": files, "lib_version": __version__,
                "torch": training.TRAINING_TORCH}
    for stale in folder.iterdir():
        if stale.name not in {f["file"] for f in files} | {reference.MANIFEST}:
            stale.unlink()
    text = json.dumps(manifest, indent=1, sort_keys=True) + "\n"
    path = folder / reference.MANIFEST
    if not path.is_file() or path.read_text(encoding="utf-8") != text:  # else left as it is
        path.with_suffix(".tmp").write_text(text, encoding="utf-8")
        os.replace(path.with_suffix(".tmp"), path)
    return manifest
