"""Download files once, verify them, and never leave a half-written or unverified file behind.

Readers' machines fetch the published reference checkpoint (and, on request, the public Tatoeba
archive) from the internet. A download can be interrupted, a server can send an error page or
drip-feed bytes for ever, a public file can change upstream, and a process can be killed
mid-transfer. So every download here follows the same recipe:

1. remove stale ``<dest>.part-*`` files that a killed download left beside ``dest``: those not
   written for longer than the deadline (no live download is still writing them);
2. stream into a fresh temporary file *in the destination's directory*, hashing while writing,
   under an overall *deadline* (:data:`DEFAULT_DEADLINE`): past it the connection is shut down,
   however slowly the server keeps sending; the per-read ``timeout`` only catches silence;
3. check what arrived: the byte count against ``size`` and ``Content-Length``, the sha256
   against the expected one, and the caller's ``verify`` check (e.g. a zip's CRCs). At least
   one of sha256, ``verify``, ``size`` or ``Content-Length`` must be there, otherwise a
   truncated transfer looks complete, so such a download is refused. A transfer is cut off
   as soon as it passes ``size`` or ``max_bytes``, and refused up front when it is announced
   bigger or the disk has no room for it: an endless response cannot fill the disk;
4. only then ``os.replace`` the temporary file onto the destination: an atomic rename.

If anything goes wrong (network error, deadline, Ctrl-C, failed check) the temporary file is
deleted and nothing appears at the destination, so "the file exists" means "the file was
complete and checked when it was written". An existing destination is re-checked with whatever
the caller gives (sha256, size, verify) and downloaded again if it fails. Only the standard
library (``urllib``) is used for the network.
"""

from __future__ import annotations

import functools
import hashlib
import http.client
import math
import os
import re
import secrets
import shutil
import socket
import threading
import time
import urllib.error
import urllib.request
import warnings
import zipfile
import zlib
from pathlib import Path
from typing import Callable, Iterable, Union

from tqdm.auto import tqdm

from lib.validate import is_int, is_number

# The public Tatoeba English-French archive, as packaged by manythings.org. It holds `fra.txt`
# (English<TAB>French<TAB>attribution) and `_about.txt`.
CORPUS_URL = "https://www.manythings.org/anki/fra-eng.zip"
# The public archive is regenerated from Tatoeba from time to time, so its hash changes: we do not
# pin one (None skips the check). Its zip CRCs are checked instead, which catches truncation.
CORPUS_SHA256: str | None = None
CORPUS_MEMBER = "fra.txt"
# The archive is about 8 MB: a response past this is not it (an endless or wrong one).
CORPUS_MAX_BYTES = 200 * 10**6

# Overall wall-clock limit for one transfer, in seconds. Generous for the files the course
# fetches on a slow connection, yet a stalled server cannot hold a reader's notebook for long.
DEFAULT_DEADLINE = 15 * 60

_CHUNK = 1 << 20  # read and hash 1 MiB at a time
_USER_AGENT = "Mozilla/5.0 (compatible; seq2seq-course downloader; Python urllib)"
_PART = ".part-"  # temporary names are f"{dest.name}.part-{8 hex digits}"

PathLike = Union[str, os.PathLike]  # a runtime value: `|` needs Python 3.10
Verifier = Callable[[Path], None]


class DownloadError(RuntimeError):
    """The file could not be fetched (network or HTTP error, deadline, truncated or unverifiable
    transfer, failed check)."""


class ChecksumError(DownloadError):
    """The bytes arrived but their sha256 is not the expected one."""


class ArchiveError(RuntimeError):
    """A zip archive is corrupt or lacks the member we need."""


def cache_dir() -> Path:
    """Where downloads are kept: ``$SEQ2SEQ_CACHE`` if set, else ``~/.cache/seq2seq-course``.

    The directory is created on first call, never at import.
    """
    root = os.environ.get("SEQ2SEQ_CACHE")
    path = Path(root).expanduser() if root else Path.home() / ".cache" / "seq2seq-course"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        where = f"SEQ2SEQ_CACHE={root!r}" if root else f"the default cache folder {path}"
        what = "is a file, not a folder" if path.is_file() else f"cannot be created ({e.strerror})"
        hint = "point SEQ2SEQ_CACHE to a folder" if root else "set SEQ2SEQ_CACHE to a folder"
        raise type(e)(e.errno, f"{where} {what}: {hint} (it is created if missing)",
                      str(path)) from e
    return path


def sha256_of(path: PathLike) -> str:
    """The hex sha256 of a file, read in chunks so big files need little memory."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _temp_path(dest: Path) -> Path:
    """A fresh temporary name beside ``dest``: same directory, so ``os.replace`` is atomic."""
    return dest.with_name(f"{dest.name}{_PART}{secrets.token_hex(4)}")


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass


def remove_stale_parts(dest: PathLike, older_than: float = DEFAULT_DEADLINE) -> list[Path]:
    """Delete ``dest``'s temporary files not written for more than ``older_than`` seconds.

    A killed download leaves its ``<dest>.part-xxxxxxxx`` file behind. A live download writes
    its file at least once per read timeout and stops at its deadline, so a file untouched for
    longer than that is an orphan; a fresher one may belong to another process and is kept.
    Returns the files removed.
    """
    dest = Path(dest)
    pattern = re.compile(re.escape(dest.name) + re.escape(_PART) + "[0-9a-f]{8}")
    removed = []
    try:
        entries = list(dest.parent.iterdir())
    except FileNotFoundError:
        return removed
    now = time.time()
    for path in entries:
        if not pattern.fullmatch(path.name):
            continue
        try:
            if path.is_file() and now - path.stat().st_mtime > older_than:
                path.unlink()
                removed.append(path)
        except FileNotFoundError:  # another process cleaned or renamed it meanwhile
            pass
    return removed


class _Deadline:
    """Shuts the connection's socket down when the deadline passes.

    A per-read timeout cannot stop a server that sends one byte just before each timeout, and a
    blocked read cannot be interrupted from its own thread; shutting the socket down from a timer
    thread wakes it. The socket is shut down through a duplicate descriptor so that the (possibly
    TLS) socket object the reader is using is never touched from two threads.
    """

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.expired = False
        self._sock: socket.socket | None = None
        self._done = False
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True

    def start(self) -> None:
        self._timer.start()

    def stop(self) -> None:
        """Call before the connection is closed, so the timer never sees a recycled descriptor."""
        with self._lock:
            self._done = True
        self._timer.cancel()

    def attach(self, sock: socket.socket) -> None:
        with self._lock:
            self._sock = sock
            if self.expired:  # the connection was made after the deadline
                self._shutdown()

    def _fire(self) -> None:
        with self._lock:
            if self._done:
                return
            self.expired = True
            self._shutdown()

    def _shutdown(self) -> None:
        if self._sock is None or self._done:
            return
        try:
            fd = self._sock.fileno()
            if fd >= 0:
                with socket.fromfd(fd, self._sock.family, self._sock.type) as dup:
                    dup.shutdown(socket.SHUT_RDWR)
        except OSError:  # already closed or not connected: nothing left to wake
            pass


def _watched(http_class, deadline: _Deadline):
    """A connection factory for ``do_open`` that hands each new socket to ``deadline``."""

    def make(*args, **kwargs):
        conn = http_class(*args, **kwargs)
        connect = conn.connect

        def connect_and_attach():
            connect()
            deadline.attach(conn.sock)

        conn.connect = connect_and_attach
        return conn

    return make


class _HTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, deadline: _Deadline):
        super().__init__()
        self._deadline = deadline

    def do_open(self, http_class, req, **kwargs):
        return super().do_open(_watched(http_class, self._deadline), req, **kwargs)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, deadline: _Deadline):
        super().__init__()
        self._deadline = deadline

    def do_open(self, http_class, req, **kwargs):
        return super().do_open(_watched(http_class, self._deadline), req, **kwargs)


def _fetch(
    url: str,
    tmp: Path,
    dest: Path,
    *,
    progress: bool,
    timeout: float,
    deadline: float,
    size: int | None,
    checked: bool,
    max_bytes: int | None = None,
) -> tuple[str, int]:
    """Stream ``url`` into the new file ``tmp`` within ``deadline`` seconds.

    Returns the sha256 and byte count of what was written. ``checked`` says whether the caller
    can verify the file (sha256 or verify); if not, and neither ``size`` nor ``Content-Length``
    is known, the transfer is refused before its body is read. No more than ``size`` (or
    ``max_bytes``) bytes are ever written: more is refused when announced, cut off when sent.
    """
    cap = min((n for n in (size, max_bytes) if n is not None), default=None)
    nothing = f"nothing was saved at {dest}"
    watch = _Deadline(deadline)
    opener = urllib.request.build_opener(_HTTPHandler(watch), _HTTPSHandler(watch))
    request = urllib.request.Request(url, headers={"User-Agent": _USER_AGENT})
    received = 0

    def too_late() -> DownloadError:
        return DownloadError(
            f"download of {url} exceeded its deadline of {deadline:g} s after {received} bytes "
            f"(the server is too slow or stalled); {nothing}. Retry later, or pass a longer "
            "deadline="
        )

    watch.start()
    try:
        try:
            response = opener.open(request, timeout=min(timeout, deadline))
        except urllib.error.HTTPError as e:
            raise DownloadError(f"could not download {url}: HTTP {e.code} {e.reason}") from e
        except (OSError, http.client.HTTPException) as e:  # URLError, timeouts, TLS, bad status
            if watch.expired:
                raise too_late() from e
            reason = e.reason if isinstance(e, urllib.error.URLError) else e
            raise DownloadError(f"could not download {url}: {reason}") from e

        digest = hashlib.sha256()
        with response:
            try:
                header = response.headers.get("Content-Length")
                announced = int(header) if header and header.strip().isdigit() else None
                if size is not None and announced is not None and announced != size:
                    raise DownloadError(
                        f"{url} announces {announced} bytes (Content-Length) but {size} were "
                        f"expected; {nothing}"
                    )
                if not checked and size is None and announced is None:
                    raise DownloadError(
                        f"refusing the download of {url}: the server sent no Content-Length and "
                        "no sha256, size or verify check was given, so a complete file cannot be "
                        f"told from a truncated one; {nothing}"
                    )
                if cap is not None and announced is not None and announced > cap:
                    raise DownloadError(
                        f"{url} announces {announced} bytes (Content-Length), more than the "
                        f"{cap} this file may have; {nothing}"
                    )
                total = size if size is not None else announced
                _check_space(dest, total, url, nothing)
                # read1 returns what has arrived instead of waiting for a full chunk, so the
                # byte count and the progress bar stay current on a slow line.
                read = getattr(response, "read1", response.read)
                bar = tqdm(total=total, unit="B", unit_scale=True, desc=dest.name,
                           disable=not progress)
                try:
                    with open(tmp, "xb") as f:
                        while True:
                            try:
                                chunk = read(_CHUNK)
                            except (OSError, ValueError, http.client.HTTPException) as e:
                                if watch.expired:
                                    raise too_late() from e
                                raise DownloadError(
                                    f"download of {url} failed after {received} bytes: {e}; "
                                    f"{nothing}"
                                ) from e
                            if watch.expired:
                                raise too_late()
                            if not chunk:
                                break
                            if cap is not None and received + len(chunk) > cap:
                                raise DownloadError(
                                    f"download of {url} sent more than the {cap} bytes this "
                                    f"file may have (an endless or wrong response); cut off "
                                    f"after {received} bytes; {nothing}"
                                )
                            f.write(chunk)
                            digest.update(chunk)
                            received += len(chunk)
                            bar.update(len(chunk))
                        f.flush()
                        os.fsync(f.fileno())
                finally:
                    bar.close()
            finally:
                watch.stop()  # before `with response` closes the socket
    finally:
        watch.stop()
    # http.client returns b"" when the server closes early instead of raising: check ourselves.
    if announced is not None and received != announced:
        raise DownloadError(
            f"download of {url} was interrupted: got {received} of {announced} bytes; {nothing}"
        )
    if size is not None and received != size:
        raise DownloadError(
            f"download of {url} gave {received} bytes but {size} were expected (the transfer "
            f"was truncated or the file changed); {nothing}"
        )
    return digest.hexdigest(), received


def _check_space(dest: Path, total: int | None, url: str, nothing: str) -> None:
    """Refuse a transfer of ``total`` bytes that the destination's disk has no room for."""
    if total is None:
        return
    try:
        free = shutil.disk_usage(dest.parent).free
    except OSError:  # cannot tell: the write itself will say
        return
    if free < total:
        raise DownloadError(
            f"no room for {url}: it has {total / 1e6:.1f} MB and only {free / 1e6:.1f} MB are "
            f"free in {dest.parent}; {nothing}. Free some space, or set SEQ2SEQ_CACHE to "
            "another folder"
        )


def _check_args(sha256, timeout, deadline, size, verify, max_bytes=None) -> str | None:
    """Validate ``download``'s arguments up front; return the normalised sha256."""
    for name, value in (("timeout", timeout), ("deadline", deadline)):
        if not is_number(value) or not 0 < value < math.inf:
            raise ValueError(f"{name} must be a positive, finite number of seconds, got {value!r}")
    for name, value in (("size", size), ("max_bytes", max_bytes)):
        if value is not None and not is_int(value):
            raise TypeError(f"{name} must be an int (a byte count) or None, got {value!r}")
        if value is not None and value < 0:
            raise ValueError(f"{name} must be a byte count >= 0, got {value}")
    if verify is not None and not callable(verify):
        raise TypeError(f"verify must be a callable taking the file's Path, got {verify!r}")
    if not sha256:
        return None
    if not isinstance(sha256, str) or not re.fullmatch(r"[0-9a-f]{64}", sha256.lower()):
        raise ValueError(f"sha256 must be 64 hex digits, got {sha256!r}")
    return sha256.lower()


def _existing_problem(
    dest: Path, sha256: str | None, size: int | None, verify: Verifier | None
) -> str | None:
    """Why the existing ``dest`` fails the caller's checks, or None if it passes them all."""
    found_size = dest.stat().st_size
    if size is not None and found_size != size:
        return f"has {found_size} bytes, expected {size}"
    if sha256 is not None:
        found = sha256_of(dest)
        if found != sha256:
            return f"has sha256 {found}, expected {sha256}"
    if verify is not None:
        try:
            verify(dest)
        except Exception as e:  # the verifier's own error type says what is wrong
            return f"fails its check ({e})"
    return None


def download(
    url: str,
    dest: PathLike,
    sha256: str | None = None,
    *,
    progress: bool = True,
    timeout: float = 60,
    deadline: float = DEFAULT_DEADLINE,
    size: int | None = None,
    verify: Verifier | None = None,
    max_bytes: int | None = None,
) -> Path:
    """Download ``url`` to ``dest`` once, atomically, keeping it only if it is verified.

    - ``timeout`` limits each network wait; ``deadline`` limits the whole transfer (seconds).
    - ``max_bytes`` caps a file of unknown size (a manifest): a bigger one is refused, and an
      endless response is cut off there. ``size`` caps the transfer the same way.
    - The new file must pass every check given: ``size`` (expected bytes), ``sha256``, and
      ``verify(path)``, which raises on a bad file. The server's ``Content-Length`` is always
      checked. With none of the four the file cannot be told from a truncated one, so the
      download is refused.
    - If ``dest`` exists it is checked with the caller's ``size``, ``sha256`` and ``verify`` and
      returned without touching the network if it passes (with no check given it is returned
      as is: this function only ever writes verified files there). If it fails, it is deleted
      (with a warning) and downloaded again once.
    - Before downloading, ``dest``'s stale temporary files are removed (see
      :func:`remove_stale_parts`). On any failure nothing is left at ``dest`` and no temporary
      file of this call remains.

    Raises :class:`DownloadError` for network and HTTP errors, the deadline, truncated,
    unverifiable, wrong-sized or too big transfers, a disk without room, a folder in the way
    and a failed ``verify``, and :class:`ChecksumError` when the bytes are not the expected
    ones; all name the URL. Bad arguments raise ``ValueError`` or ``TypeError`` before
    anything is fetched.
    """
    sha256 = _check_args(sha256, timeout, deadline, size, verify, max_bytes)
    dest = Path(dest)
    if dest.exists() and not dest.is_file():
        raise DownloadError(f"cannot download {url} to {dest}: a folder (or another non-file) "
                            "is in the way; remove it")
    if dest.exists():
        problem = _existing_problem(dest, sha256, size, verify)
        if problem is None:
            return dest
        # Known bad: remove it so that "dest exists" keeps meaning "dest is verified".
        warnings.warn(f"{dest} {problem}: deleting it and downloading again", stacklevel=2)
        _remove(dest)

    dest.parent.mkdir(parents=True, exist_ok=True)
    # Parts of other downloads may use a longer deadline than ours: never remove one sooner
    # than the default allows.
    remove_stale_parts(dest, max(deadline, DEFAULT_DEADLINE))
    tmp = _temp_path(dest)
    nothing = f"nothing was saved at {dest}"
    try:
        got, _ = _fetch(url, tmp, dest, progress=progress, timeout=timeout, deadline=deadline,
                        size=size, checked=sha256 is not None or verify is not None,
                        max_bytes=max_bytes)
        if sha256 is not None and got != sha256:
            raise ChecksumError(
                f"downloaded file for {url} has sha256 {got}, expected {sha256} — the download "
                f"is corrupt or the file changed upstream; {nothing}. Retry, "
                "or update the expected checksum if the new file is trusted."
            )
        if verify is not None:
            try:
                verify(tmp)
            except DownloadError as e:  # the verifier names the problem itself
                raise DownloadError(
                    f"downloaded file for {url} failed its check: {e}; {nothing}") from e
            except Exception as e:  # any complaint of the verifier rejects the file
                raise DownloadError(
                    f"downloaded file for {url} failed its check: {e}; the transfer was "
                    f"truncated or the file is not what was expected; {nothing}"
                ) from e
        os.replace(tmp, dest)
    finally:  # also runs on KeyboardInterrupt
        _remove(tmp)
    return dest


def check_zip(path: PathLike, members: Iterable[str] = ()) -> None:
    """Raise :class:`ArchiveError` unless ``path`` is a zip whose every member passes its CRC
    check and which holds ``members``.

    Used as ``download(verify=...)`` so that a truncated archive is never kept, even when the
    server sent no Content-Length (a zip's directory and CRCs say whether it is complete).
    """
    path = Path(path)
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            missing = [m for m in members if m not in names]
            bad = None if missing else archive.testzip()
    except (zipfile.BadZipFile, EOFError, zlib.error) as e:  # bad header, truncated, bad data
        raise ArchiveError(f"{path} is not a valid zip archive ({e})") from e
    if missing:
        raise ArchiveError(f"{path} has no member {missing[0]!r} (it has {names})")
    if bad is not None:
        raise ArchiveError(f"{path} is damaged: member {bad!r} fails its CRC check")


def extract_member(zip_path: PathLike, member: str, dest: PathLike) -> Path:
    """Extract one ``member`` of the zip at ``zip_path`` to ``dest``, atomically.

    The zip's CRC is checked while reading, so a truncated or damaged archive raises
    :class:`ArchiveError` naming the file instead of leaving a half-extracted ``dest``.
    Temporary files of killed extractions are removed like those of downloads.
    """
    zip_path, dest = Path(zip_path), Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_parts(dest)
    tmp = _temp_path(dest)
    hint = f"delete {zip_path} and download it again"
    try:
        with zipfile.ZipFile(zip_path) as archive:
            if member not in archive.namelist():
                raise ArchiveError(
                    f"{zip_path} has no member {member!r} (it has {archive.namelist()}); {hint}"
                )
            with archive.open(member) as src, open(tmp, "xb") as out:
                shutil.copyfileobj(src, out, _CHUNK)
        os.replace(tmp, dest)
    except (zipfile.BadZipFile, EOFError, zlib.error) as e:  # bad header, truncated, bad CRC
        raise ArchiveError(f"{zip_path} is not a valid zip archive ({e}); {hint}") from e
    finally:
        _remove(tmp)
    return dest


def fetch_corpus(
    dest_dir: PathLike | None = None,
    *,
    url: str = CORPUS_URL,
    sha256: str | None = CORPUS_SHA256,
    progress: bool = True,
    deadline: float = DEFAULT_DEADLINE,
) -> Path:
    """The path to the Tatoeba ``fra.txt``, downloading and extracting it on first use.

    Files go to ``dest_dir`` (default: ``cache_dir() / "fra-eng"``). The archive is kept beside
    the extracted text so that a deleted ``fra.txt`` is re-extracted without the network. The
    archive's CRCs are checked before it is kept (the public file has no pinned sha256 and may
    be served without a Content-Length), so a truncated transfer is rejected.
    """
    folder = Path(dest_dir) if dest_dir is not None else cache_dir() / "fra-eng"
    text = folder / CORPUS_MEMBER
    if text.exists():  # written atomically, so existing means complete
        return text
    archive = download(url, folder / "fra-eng.zip", sha256, progress=progress, deadline=deadline,
                       verify=functools.partial(check_zip, members=(CORPUS_MEMBER,)),
                       max_bytes=CORPUS_MAX_BYTES)
    return extract_member(archive, CORPUS_MEMBER, text)


def public_corpus_path() -> Path:
    """Today's public Tatoeba file (`fetch_corpus`), instead of the course's copy
    (`lib.data.corpus_path`): it is regenerated upstream, so its first pairs, the split and
    every number in the course differ from the website's, which a warning says."""
    warnings.warn("using today's public Tatoeba file, not the course's corpus: the split, "
                  "the vocabularies and every measured number will differ from the course's",
                  stacklevel=2)
    return Path(fetch_corpus())
