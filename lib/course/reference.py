"""The reference model every chapter uses: from the cache, the published release, or training.

`lib.pretrained()` tries, in order: the cached file for the current cache key (its archive is
checked first); the checkpoint published for that key (`make release` writes it, CI publishes it
as a release asset, see lib.course.release), downloaded once with its sha256 checked against the
release's manifest; training, with a message that says why. A damaged file, one made for
another key, or one whose stored sizes are not MODEL's is deleted, never trusted; a file that
merely cannot be read is kept and named.
The cache key (`training_key`) hashes the settings below, the corpus checksum, the torch
version the model is trained with and `lib.train.TRAINING_VERSION`, so a change of any of them
gives a new model instead of silently showing a stale one.

    python -m lib.course.reference --train     # (re)train, then print held-out BLEU and minutes
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import hashlib
import json
import os
import re
import time
from collections.abc import Callable
from pathlib import Path

import torch

from lib import train as training
from lib.course import checkpoint, links
from lib.course import download as dl
from lib.course.checkpoint import CheckpointError, check_writable, expected_bytes
from lib.course.download import DEFAULT_DEADLINE, DownloadError, cache_dir, remove_stale_parts
from lib.course.memo import load_corpus
from lib.data import DataConfig, corpus_path, corpus_sha256
from lib.device import pick_device
from lib.evaluate import evaluate_bleu
from lib.model import ModelConfig, Seq2Seq
from lib.search import DEFAULT_BEAM
from lib.train import TrainConfig, new_model
from lib.validate import is_int

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
    blob = json.dumps({"data": dataclasses.asdict(data), "model": _model_fields(model),
                       "train": train.to_dict(), "corpus": data_sha256
                       or corpus_sha256(corpus_path()), "torch": training.TRAINING_TORCH,
                       "training_version": training.TRAINING_VERSION, **more}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _model_fields(model: dict) -> dict:
    """Every ModelConfig field but the vocabulary sizes: `model`'s value, else the default."""
    fields = {f.name: f.default for f in dataclasses.fields(ModelConfig)
              if f.default is not dataclasses.MISSING}
    unknown = set(model) - set(fields)
    if unknown:
        raise ValueError(f"not ModelConfig fields (or vocabulary sizes, which the data sets): "
                         f"{sorted(unknown)}")
    return {**fields, **model}


def reference_key(data_sha256: str | None = None) -> str:
    """The reference model's key (`training_key` of DATA, MODEL and TRAIN)."""
    return training_key(DATA, MODEL, TRAIN, data_sha256)


def cache_path() -> Path:
    return cache_dir() / f"reference-{reference_key()}.pt"


def train_reference(progress: bool = True, device=None, path: Path | None = None):
    """Train the reference model from scratch and save it; returns (model, history)."""
    corpus = load_corpus(DATA)
    model = new_model(corpus, TRAIN.seed, **MODEL)
    early = {}

    def snapshot(model, hist):  # keep the weights of the last check within EARLY_MINUTES
        if hist.eval_seconds[-1] <= EARLY_MINUTES * 60:
            early["minutes"] = hist.eval_seconds[-1] / 60
            early["state"] = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}

    hist = training.train(model, corpus.train_examples, TRAIN, valid_pairs=corpus.split.valid,
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


def fetch_published(dest: Path, key: str, progress: bool = True,
                    deadline: float | None = None) -> Path:
    """Download the checkpoint published for `key` to `dest`, checked against its manifest.

    The manifest (small JSON, at most MANIFEST_MAX_BYTES) must name this key, a plain file name,
    a sha256 and a byte count; the checkpoint must then have that sha256 and byte count. One
    `deadline` (seconds, default lib.course.download.DEFAULT_DEADLINE) bounds the whole fetch,
    manifest and checkpoint together. Raises lib.course.download.DownloadError (or
    ChecksumError) when it cannot, a malformed manifest included.
    """
    tag = release_tag(key)
    left = deadline_clock(f"the release {tag}", deadline, f"nothing was saved at {dest}")
    manifest = fetch_manifest(tag, key, left)
    return fetch_asset(tag, manifest, dest, progress, left)


def deadline_clock(what: str, deadline: float | None, nothing: str) -> Callable[[], float]:
    """The seconds left of one deadline for fetching `what` (default DEFAULT_DEADLINE), for
    each download in turn; past it, a DownloadError that says `nothing` was saved."""
    limit = DEFAULT_DEADLINE if deadline is None else deadline
    end = time.monotonic() + limit

    def left() -> float:
        remaining = end - time.monotonic()
        if remaining <= 0:
            raise DownloadError(f"fetching {what} took longer than its deadline of {limit:g} s; "
                                f"{nothing}")
        return remaining

    return left


def fetch_manifest(tag: str, key: str, left: Callable[[], float], many: bool = False) -> dict:
    """The manifest of release `tag`, downloaded afresh and checked to be one for `key`
    (`_published_manifest`; `many`: it lists its assets under "files")."""
    manifest_path = cache_dir() / f"{tag}.{MANIFEST}"
    manifest_path.unlink(missing_ok=True)  # always the published one: it is a few bytes
    check = functools.partial(_published_manifest, key=key, tag=tag, many=many)
    dl.download(links.release_asset(tag, MANIFEST), manifest_path, progress=False,
                verify=check, deadline=left(), max_bytes=MANIFEST_MAX_BYTES)
    return check(manifest_path)


def fetch_asset(tag: str, asset: dict, dest: Path, progress: bool,
                left: Callable[[], float]) -> Path:
    """Download the asset a manifest describes ({"file", "sha256", "bytes"}) to `dest`."""
    return dl.download(links.release_asset(tag, asset["file"]), dest, asset["sha256"],
                       size=asset["bytes"], progress=progress, deadline=left())


MANIFEST_MAX_BYTES = 64 * 1024  # a manifest is a few hundred bytes
CHECKPOINT_MAX_BYTES = 2**30  # the reference checkpoint is about 50 MB


def _published_manifest(path: Path, key: str, tag: str, many: bool = False) -> dict:
    """The manifest at `path` if it is one for `key`; DownloadError naming what is wrong.

    It describes one asset with its own "file", "sha256" and "bytes" (the reference model's),
    or, with `many`, a non-empty list of such objects under "files" (a chapter's runs).
    """
    def invalid(problem: str) -> DownloadError:
        return DownloadError(f"the release manifest of {tag} is not valid: {problem}")

    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise invalid(f"not JSON ({e}): the transfer was cut short or the file is not a "
                      f"manifest") from e
    if not isinstance(found, dict):
        raise invalid(f"a JSON {type(found).__name__}, not an object")
    if found.get("key") != key:
        raise DownloadError(f"the release manifest of {tag} is for key {found.get('key')}, "
                            f"not {key}")
    if not many:
        _check_asset(found, invalid)
        return found
    files = found.get("files")
    if not (isinstance(files, list) and files and all(isinstance(f, dict) for f in files)):
        raise invalid(f"'files' must be a non-empty list of objects, got {str(files)[:80]}")
    for i, asset in enumerate(files):
        _check_asset(asset, lambda problem, i=i: invalid(f"files[{i}]: {problem}"))
    names = [asset["file"] for asset in files]
    if len(set(names)) != len(names) or MANIFEST in names:
        raise invalid(f"'files' must name each file once and not {MANIFEST}, got {names}")
    return found


def _check_asset(asset: dict, invalid: Callable[[str], DownloadError]) -> None:
    """Raise invalid(problem) unless `asset` has a plain file name, a sha256 and a byte count."""
    name, sha256, size = asset.get("file"), asset.get("sha256"), asset.get("bytes")
    if not (isinstance(name, str) and re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}", name)):
        raise invalid(f"'file' must be a plain file name, got {name!r}")
    if not (isinstance(sha256, str) and re.fullmatch(r"[0-9a-fA-F]{64}", sha256)):
        raise invalid(f"'sha256' must be 64 hex digits, got {sha256!r}")
    if not (is_int(size) and 0 < size <= CHECKPOINT_MAX_BYTES):
        raise invalid(f"'bytes' must be a whole number from 1 to {CHECKPOINT_MAX_BYTES}, "
                      f"got {size!r}")


class CacheLock:
    """An exclusive lock on one cache key, so that two notebooks started on a machine without
    the model (`what`: the reference model, a chapter's runs) do not both download or train it
    on the same cores: one works, the other waits and then loads the result. A lock file
    beside the cache file (fcntl.flock, released by the system even if the holder dies) holds
    the holder's pid and what it is doing (`doing`, set on entry and changed with `doing()`);
    it is removed on release. A waiting process says what
    the holder is doing, and again whenever that changes (a failed download, then training).
    Where fcntl does not exist (Windows), nothing is locked."""

    POLL = 0.2  # seconds between a waiting process's looks at the lock

    def __init__(self, path: Path, doing: str = "is preparing",
                 what: str = "the reference model"):
        self.lock_path = path.with_name(f"{path.name}.lock")
        self.fd: int | None = None
        self.waited = False
        self._doing = doing
        self.what = what

    def __enter__(self) -> CacheLock:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not on Linux or macOS
            return self
        told = None
        while True:
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
            told = self._wait(fd, fcntl, told)
            try:  # the holder removes the file on release: a lock on a removed file is stale
                if os.fstat(fd).st_ino == os.stat(self.lock_path).st_ino:
                    break
            except FileNotFoundError:
                pass
            os.close(fd)
        self.fd = fd
        self.doing(self._doing)
        return self

    def _wait(self, fd: int, fcntl, told: tuple | None) -> tuple | None:
        """Take the lock on `fd`, saying what the holder is doing while it is held; returns
        what was last said, so that a retry on a new lock file does not repeat it."""
        quiet_since = time.monotonic()
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return told
            except BlockingIOError:
                self.waited = True
            pid, doing = self._holder()
            # a holder that has not written yet is given a second before "unknown" is said
            if (pid, doing) != told and (doing or time.monotonic() - quiet_since > 1):
                doing = doing or "is fetching or training"
                if told is None:
                    print(f"Another process (pid {pid}) {doing} {self.what}; waiting for it "
                          f"to finish…", flush=True)
                else:
                    print(f"The other process (pid {pid}) moved on: it {doing} {self.what}; "
                          f"still waiting…", flush=True)
                told = pid, doing
            time.sleep(self.POLL)

    def _holder(self) -> tuple[str, str]:
        """(pid, what it is doing) of the process holding the lock, as it wrote them; what it
        is doing is "" while the file is not written yet."""
        try:
            pid, doing = self.lock_path.read_text(encoding="utf-8").split(" ", 1)
            return pid, doing.strip()
        except (OSError, ValueError):  # gone, or not written yet
            return "unknown", ""

    def doing(self, what: str) -> None:
        """Tell waiting processes what the holder is doing ("is training")."""
        self._doing = what
        if self.fd is not None:
            # padded, so that a shorter text read while it is written is never left with the
            # end of a longer one; the file is never empty once written
            text = f"{os.getpid()} {what}".ljust(100).encode()
            os.pwrite(self.fd, text, 0)
            os.ftruncate(self.fd, len(text))

    def __exit__(self, *exc) -> None:
        if self.fd is not None:
            self.lock_path.unlink(missing_ok=True)  # before unlocking: see the inode check
            os.close(self.fd)
            self.fd = None


def _not_cached(path: Path, why: str | None = None) -> FileNotFoundError:
    because = f". Not downloaded: {why}" if why else ""
    return FileNotFoundError(f"no reference model at {path} and training is disabled; run "
                             f"`make train` (or `python -m lib.course.reference --train`)"
                             f"{because}")


def _check_writable(path: Path, size: int | None = None) -> None:
    """Fail in a second, not after the training run, when the cache cannot take the model (no
    folder, a folder at its place, no permission, or, given its `size`, no room)."""
    try:
        check_writable(path, size)
    except ValueError as e:
        raise type(e)(f"{e}; set SEQ2SEQ_CACHE to a folder that can be written") from e


def pretrained(device=None, download: bool = True, train: bool = True,
               progress: bool = True) -> Seq2Seq:
    """The reference model: cached if fresh, else downloaded if published, else trained.

    The model's `source` attribute says which: "cache", "download" or "training". While one
    process downloads or trains, another asking for the same model waits, then loads it. A
    cached file that is damaged or holds another key's model is deleted; one that cannot be
    read is kept, and the OSError says so.
    """
    path = cache_path()
    key = path.stem.split("-", 1)[1]
    model = _from_cache(path, key, device, "The cached reference model")
    if model is not None:
        return model
    if not (download or train):
        raise _not_cached(path)
    _check_writable(path)
    with CacheLock(path, "is downloading" if download else "is training") as lock:
        if lock.waited:
            model = _from_cache(path, key, device, "The reference model the other process left")
            if model is not None:
                return model
        return _fetch_or_train(path, key, device, download, train, progress, lock)


def _fetch_or_train(path: Path, key: str, device, download: bool, train: bool, progress: bool,
                    lock: CacheLock) -> Seq2Seq:
    failure = None
    if download:
        try:
            fetch_published(path, key, progress=progress)
            return _loaded(path, device, "download", key)
        except (DownloadError, CheckpointError, OSError) as e:
            # never leave a file that would win every later call
            _discard(path, "The downloaded reference model is not usable")
            why, failure = f"no usable published checkpoint for key {key} ({e})", e
    else:
        why = "downloading is turned off (download=False)"
    if not train:
        raise _not_cached(path, why if download else None) from failure

    slow = pick_device(device).type == "cpu"
    lock.doing("is training")
    _check_writable(path, _expected_bytes())
    print(f"Training the reference model here, because {why}. This takes "
          f"{'15 to 25 minutes on a CPU' if slow else 'one to two minutes on this GPU'}; "
          f"the result is cached in {path.parent} and later calls load it in seconds.")
    model, _ = train_reference(progress=progress, device=device)
    model.source = "training"
    return model.to(model.device)


class _OtherKey(checkpoint.CheckpointError):
    """A whole checkpoint, but of another key's model (or of none)."""


class _OtherSize(_OtherKey):
    """A whole checkpoint that names this key but whose sizes are not the reference's: the key
    in `extra` is a claim, the stored config is what the weights are."""


def _loaded(path: Path, device, source: str, key: str | None = None) -> Seq2Seq:
    """The model at `path`; with `key`, _OtherKey (a CheckpointError) unless it is that key's
    model (its `extra["key"]`, which training writes), and _OtherSize unless its stored config
    has the reference's sizes (MODEL; the vocabulary sizes follow from the corpus the key
    hashes): a valid file of another key, or another size, is not the one asked for."""
    model = checkpoint.load(path, device=device)
    stored = model.extra.get("key") if isinstance(model.extra, dict) else None
    if key is not None and stored != key:
        raise _OtherKey(f"{path} holds the model of key {stored!r}, not {key!r}")
    if key is not None:
        config = model.config.to_dict()
        diffs = [f"{name} is {config[name]!r}, the reference's is {value!r}"
                 for name, value in _model_fields(MODEL).items() if config[name] != value]
        if diffs:
            raise _OtherSize(f"{path} names key {key!r} but holds a model of other sizes: "
                             f"{'; '.join(diffs)}")
    model.source = source
    return model


def _from_cache(path: Path, key: str, device, what: str) -> Seq2Seq | None:
    """The model cached at `path` for `key`, or None: none there, or a damaged one or another
    key's (then deleted). Stale temporary files of killed downloads and saves go with a hit."""
    if not path.is_file():
        return None
    try:
        model = _loaded(path, device, "cache", key)
    except CheckpointError as e:
        damage = ("is not the reference's size" if isinstance(e, _OtherSize)
                  else "is another key's model" if isinstance(e, _OtherKey) else "was damaged")
        _discard(path, f"{what} {damage}")
        print(f"{what} {damage} and is deleted: {e}")
        return None
    except OSError as e:  # unreadable, not damaged: keep it, say so
        raise type(e)(e.errno, f"{what} cannot be read, so it is kept: {e.strerror or e}; or "
                      f"set SEQ2SEQ_CACHE to another folder", str(path)) from e
    remove_stale_parts(path)
    return model


def _discard(path: Path, what: str) -> None:
    """Delete `path` (gone already is fine); an OSError that says what to do if it cannot be."""
    try:
        path.unlink(missing_ok=True)
    except OSError as e:
        raise type(e)(e.errno, f"{what} ({path}) but cannot be deleted ({e.strerror or e}): "
                      f"delete it by hand, or set SEQ2SEQ_CACHE to a folder that can be "
                      f"written", str(path)) from e


def _expected_bytes() -> int:
    """About the size of the reference checkpoint, from its shape (no weights are made)."""
    corpus = load_corpus(DATA)
    with torch.device("meta"):
        model = Seq2Seq(ModelConfig(len(corpus.src_vocab), len(corpus.tgt_vocab), **MODEL),
                        corpus.src_vocab, corpus.tgt_vocab)
    return expected_bytes(model)


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
        with CacheLock(path) as lock:
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
        bleu = evaluate_bleu(model, load_corpus(DATA).split.test, beam_size=DEFAULT_BEAM)
        print(f"held-out BLEU (beam {DEFAULT_BEAM}, sacrebleu, all references): {bleu:.2f}")


if __name__ == "__main__":
    main()
