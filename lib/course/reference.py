"""The reference model every chapter uses: from the cache, the published release, or training.

`lib.pretrained()` tries, in order: the cached file for the current cache key (its archive is
checked first); the checkpoint published for that key (`make release` writes it, CI publishes it
as a release asset, see lib.course.release), downloaded once with its sha256 checked against the
release's manifest; training, with a message that says why. A file that fails a check is
deleted, never trusted. The cache key (`training_key`) hashes the settings below, the corpus
checksum, the torch version the model is trained with and `lib.train.TRAINING_VERSION`, so a
change of any of them gives a new model instead of silently showing a stale one.

    python -m lib.course.reference --train     # (re)train, then print held-out BLEU and minutes
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
from pathlib import Path

from lib.course import checkpoint, links
from lib.data import DataConfig, corpus_path, load_corpus
from lib.model import ModelConfig, Seq2Seq
from lib.train import TrainConfig

DATA = DataConfig()
# Chosen by a measured sweep of held-out BLEU against target tokens trained on (bench/sweep.py;
# docs and README "The reference model"). Training time and BLEU: `make train`, bench/training.py.
MODEL = dict(emb_dim=256, hidden_size=512, num_layers=2, dropout=0.1, feed_context=True)
TRAIN = TrainConfig(epochs=6.4, batch_size=128, lr=2e-3, label_smoothing=0.1, ema=0.995,
                    shortlist=1000, samples=500, eval_every=50, eval_sentences=250)
EARLY_MINUTES = 5.0  # the model as it was after this much training is also scored (a target)

MANIFEST = "manifest.json"  # beside every published checkpoint: key, sha256, bytes, BLEU


def training_key(data: DataConfig, model: dict, train: TrainConfig,
                 data_sha256: str | None = None, **more) -> str:
    """A short hash of what training *does*: the settings, the corpus, torch, the training version.

    Not the code's text: a refactor that computes the same thing keeps the key (and every
    reader's cached or published model). A change of what training computes must bump
    `lib.train.TRAINING_VERSION`; tests/test_training_golden.py fails until it is bumped
    (docs/decisions.md, "What a model's key is"). `model` holds ModelConfig fields other than
    the vocabulary sizes, which follow from the data settings and the corpus; unset fields count
    with their defaults, so a new field changes every key. `more` adds settings of a model
    built another way (e.g. the attention chapter's data).
    """
    from lib.data import corpus_sha256
    from lib.train import TRAINING_TORCH, TRAINING_VERSION

    fields = {f.name: f.default for f in dataclasses.fields(ModelConfig)
              if f.default is not dataclasses.MISSING}
    unknown = set(model) - set(fields)
    if unknown:
        raise ValueError(f"not ModelConfig fields (or vocabulary sizes, which the data sets): "
                         f"{sorted(unknown)}")
    blob = json.dumps({"data": dataclasses.asdict(data), "model": {**fields, **model},
                       "train": train.to_dict(), "corpus": data_sha256
                       or corpus_sha256(corpus_path()), "torch": TRAINING_TORCH,
                       "training_version": TRAINING_VERSION, **more}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def reference_key(data_sha256: str | None = None) -> str:
    """The reference model's key (`training_key` of DATA, MODEL and TRAIN)."""
    return training_key(DATA, MODEL, TRAIN, data_sha256)


def cache_path() -> Path:
    from lib.course.download import cache_dir

    return cache_dir() / f"reference-{reference_key()}.pt"


def train_reference(progress: bool = True, device=None, path: Path | None = None):
    """Train the reference model from scratch and save it; returns (model, history)."""
    from lib.evaluate import evaluate_bleu
    from lib.train import new_model, train

    corpus = load_corpus(DATA)
    model = new_model(corpus, TRAIN.seed, **MODEL)
    early = {}

    def snapshot(model, hist):  # keep the weights of the last check within EARLY_MINUTES
        if hist.eval_seconds[-1] <= EARLY_MINUTES * 60:
            early["minutes"] = hist.eval_seconds[-1] / 60
            early["state"] = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}

    hist = train(model, corpus.train_examples, TRAIN, valid_pairs=corpus.split.valid,
                 device=device, progress=progress, on_eval=snapshot)
    extra = {"key": reference_key(), "minutes": hist.seconds[-1] / 60,
             "tokens_per_second": hist.tokens_per_second, "history": hist.to_dict(),
             "test_bleu_greedy": evaluate_bleu(model, corpus.split.test)}
    if early:
        final = {k: v.detach().clone() for k, v in model.state_dict().items()}
        model.load_state_dict(early["state"])
        extra["early_minutes"] = early["minutes"]
        extra["early_test_bleu_greedy"] = evaluate_bleu(model, corpus.split.test)
        model.load_state_dict(final)
    checkpoint.save(model, path or cache_path(), extra=extra)
    return model, hist


def release_tag(key: str) -> str:
    """The GitHub release that holds the checkpoint for cache key `key`."""
    return f"reference-{key}"


def fetch_published(dest: Path, key: str, progress: bool = True) -> Path:
    """Download the checkpoint published for `key` to `dest`, checked against its manifest.

    The manifest (small JSON) must name this key; the checkpoint must then have its sha256 and
    byte count. Raises lib.course.download.DownloadError (or ChecksumError) when it cannot.
    """
    from lib.course.download import DownloadError, cache_dir, download

    tag = release_tag(key)

    def check_manifest(path: Path) -> None:
        try:
            found = json.loads(path.read_text(encoding="utf-8"))
            ok = found["key"] == key and len(found["sha256"]) == 64 and found["bytes"] > 0
        except (ValueError, KeyError, TypeError) as e:
            raise DownloadError(f"the release manifest of {tag} is not valid: {e!r}") from e
        if not ok:
            raise DownloadError(f"the release manifest of {tag} is for key {found.get('key')}, "
                                f"not {key}, or lacks sha256/bytes")

    manifest_path = cache_dir() / f"{tag}.{MANIFEST}"
    manifest_path.unlink(missing_ok=True)  # always the published one: it is a few bytes
    download(links.release_asset(tag, MANIFEST), manifest_path, verify=check_manifest,
             progress=False)
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    return download(links.release_asset(tag, manifest["file"]), dest, manifest["sha256"],
                    size=manifest["bytes"], progress=progress)


class _CacheLock:
    """An exclusive lock on one cache key, so that two notebooks started on a machine without
    the model do not both download or train it on the same cores: one works, the other waits
    and then loads the result. A lock file beside the cache file (fcntl.flock, released by the
    system even if the holder dies) holds the holder's pid and what it is doing; it is removed
    on release. Where fcntl does not exist (Windows), nothing is locked."""

    def __init__(self, path: Path):
        self.lock_path = path.with_name(f"{path.name}.lock")
        self.fd: int | None = None
        self.waited = False

    def __enter__(self) -> _CacheLock:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not on Linux or macOS
            return self
        while True:
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if not self.waited:
                    pid, doing = self._holder()
                    print(f"Another process (pid {pid}) {doing} the reference model; waiting "
                          f"for it to finish…", flush=True)
                self.waited = True
                fcntl.flock(fd, fcntl.LOCK_EX)
            try:  # the holder removes the file on release: a lock on a removed file is stale
                if os.fstat(fd).st_ino == os.stat(self.lock_path).st_ino:
                    break
            except FileNotFoundError:
                pass
            os.close(fd)
        self.fd = fd
        self.doing("is fetching")
        return self

    def _holder(self) -> tuple[str, str]:
        """(pid, what it is doing) of the process holding the lock, as it wrote them."""
        try:
            pid, doing = self.lock_path.read_text(encoding="utf-8").split(" ", 1)
            return pid, doing.strip()
        except (OSError, ValueError):  # gone, or not written yet
            return "unknown", "is fetching or training"

    def doing(self, what: str) -> None:
        """Tell waiting processes what the holder is doing ("is training")."""
        if self.fd is not None:
            os.ftruncate(self.fd, 0)
            os.pwrite(self.fd, f"{os.getpid()} {what}".encode(), 0)

    def __exit__(self, *exc) -> None:
        if self.fd is not None:
            self.lock_path.unlink(missing_ok=True)  # before unlocking: see the inode check
            os.close(self.fd)
            self.fd = None


def _not_cached(path: Path) -> FileNotFoundError:
    return FileNotFoundError(f"no reference model at {path} and training is disabled; run "
                             f"`make train` (or `python -m lib.course.reference --train`)")


def _check_writable(path: Path) -> None:
    """Fail in a second, not after the training run, when the cache cannot take the model."""
    from lib.course.checkpoint import check_writable

    try:
        check_writable(path)
    except ValueError as e:
        raise type(e)(f"{e}; set SEQ2SEQ_CACHE to a folder that can be written") from e


def pretrained(device=None, download: bool = True, train: bool = True,
               progress: bool = True) -> Seq2Seq:
    """The reference model: cached if fresh, else downloaded if published, else trained.

    The model's `source` attribute says which: "cache", "download" or "training". While one
    process downloads or trains, another asking for the same model waits, then loads it.
    """
    from lib.course.checkpoint import CheckpointError

    path = cache_path()
    key = path.stem.split("-", 1)[1]
    if path.is_file():
        try:
            return _loaded(path, device, "cache")
        except CheckpointError as e:
            path.unlink(missing_ok=True)
            print(f"The cached reference model was damaged and is deleted: {e}")
    if not (download or train):
        raise _not_cached(path)
    _check_writable(path)
    with _CacheLock(path) as lock:
        if lock.waited and path.is_file():
            try:
                return _loaded(path, device, "cache")
            except CheckpointError as e:
                path.unlink(missing_ok=True)
                print(f"The reference model the other process left is damaged: {e}")
        return _fetch_or_train(path, key, device, download, train, progress, lock)


def _fetch_or_train(path: Path, key: str, device, download: bool, train: bool, progress: bool,
                    lock: _CacheLock) -> Seq2Seq:
    from lib.course.checkpoint import CheckpointError

    if download:
        from lib.course.download import DownloadError

        try:
            fetch_published(path, key, progress=progress)
            return _loaded(path, device, "download")
        except (DownloadError, CheckpointError, OSError) as e:
            path.unlink(missing_ok=True)  # never leave a file that would win every later call
            why = f"no usable published checkpoint for key {key} ({e})"
    else:
        why = "downloading is turned off (download=False)"
    if not train:
        raise _not_cached(path)
    from lib.device import pick_device

    slow = pick_device(device).type == "cpu"
    lock.doing("is training")
    print(f"Training the reference model here, because {why}. This takes "
          f"{'15 to 25 minutes on a CPU' if slow else 'one to two minutes on this GPU'}; "
          f"the result is cached in {path.parent} and later calls load it in seconds.")
    model, _ = train_reference(progress=progress, device=device)
    model.source = "training"
    return model.to(model.device)


def _loaded(path: Path, device, source: str) -> Seq2Seq:
    model = checkpoint.load(path, device=device)
    model.source = source
    return model


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", action="store_true", help="train even if a cached model exists")
    parser.add_argument("--ensure", action="store_true",
                        help="make sure the model is cached: the cache, else the published "
                             "checkpoint, else training; skip the beam evaluation")
    parser.add_argument("--device", default=None)
    parser.add_argument("--key", action="store_true",
                        help="print the current cache key (reference_key()) and stop")
    args = parser.parse_args(argv)
    if args.key:
        print(reference_key())
        return
    path = cache_path()
    if args.ensure and not args.train:
        model = pretrained(device=args.device)
        if model.source == "cache":
            print(f"reference model is cached and fresh: {path}")
            return
    elif args.train or not path.is_file():
        _check_writable(path)
        with _CacheLock(path) as lock:
            lock.doing("is training")
            train_reference(device=args.device)
    model = checkpoint.load(path, device=args.device)
    extra = model.extra
    print(f"reference model {path}: trained {extra['minutes']:.1f} min at "
          f"{extra['tokens_per_second']:.0f} target tokens/s")
    if "early_minutes" in extra:
        print(f"held-out BLEU after {extra['early_minutes']:.1f} min (greedy): "
              f"{extra['early_test_bleu_greedy']:.2f}")
    print(f"held-out BLEU (greedy, sacrebleu, all references): {extra['test_bleu_greedy']:.2f}")
    if not args.ensure:
        from lib.evaluate import evaluate_bleu

        bleu = evaluate_bleu(model, load_corpus(DATA).split.test, beam_size=5)
        print(f"held-out BLEU (beam 5, sacrebleu, all references): {bleu:.2f}")


if __name__ == "__main__":
    main()
