"""Download files once, verify them, and never leave a half-written file behind.

Readers' machines fetch the Tatoeba corpus (and later the pretrained checkpoint) from the
internet. A download can be interrupted, a server can send an error page, and a public file can
change upstream. So every download here follows the same recipe:

1. stream into a temporary file *in the destination's directory*, hashing while writing;
2. check the byte count against ``Content-Length`` and the sha256 against the expected one;
3. only then ``os.replace`` the temporary file onto the destination — an atomic rename.

If anything goes wrong (network error, Ctrl-C, bad checksum) the temporary file is deleted and
nothing appears at the destination, so "the file exists" always means "the file is complete".
Only the standard library (``urllib``) is used for the network.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import urllib.error
import urllib.request
import warnings
import zipfile
import zlib
from pathlib import Path
from typing import Optional, Union

from tqdm.auto import tqdm

# The public Tatoeba English-French archive, as packaged by manythings.org. It holds `fra.txt`
# (English<TAB>French<TAB>attribution) and `_about.txt`.
CORPUS_URL = "https://www.manythings.org/anki/fra-eng.zip"
# The public archive is regenerated from Tatoeba from time to time, so its hash changes: we do not
# pin one (None skips the check; the download is still atomic). Pin it here if you mirror a copy.
CORPUS_SHA256: Optional[str] = None
CORPUS_MEMBER = "fra.txt"

_CHUNK = 1 << 20  # read and hash 1 MiB at a time
_USER_AGENT = "Mozilla/5.0 (compatible; seq2seq-course downloader; Python urllib)"

PathLike = Union[str, os.PathLike]


class DownloadError(RuntimeError):
    """The file could not be fetched (network error, HTTP error, truncated transfer)."""


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
    path.mkdir(parents=True, exist_ok=True)
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
    return dest.with_name(f"{dest.name}.part-{secrets.token_hex(4)}")


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass


def _fetch(url: str, tmp: Path, *, progress: bool, timeout: float, desc: str) -> str:
    """Stream ``url`` into the new file ``tmp``; return the sha256 of what was written."""
    request = urllib.request.Request(url, headers={"User-Agent": _USER_AGENT})
    try:
        response = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as e:
        raise DownloadError(f"could not download {url}: HTTP {e.code} {e.reason}") from e
    except urllib.error.URLError as e:
        raise DownloadError(f"could not download {url}: {e.reason}") from e
    except OSError as e:  # timeouts, refused connections, TLS errors
        raise DownloadError(f"could not download {url}: {e}") from e

    digest = hashlib.sha256()
    received = 0
    with response:
        header = response.headers.get("Content-Length")
        expected = int(header) if header and header.isdigit() else None
        bar = tqdm(total=expected, unit="B", unit_scale=True, desc=desc, disable=not progress)
        try:
            with open(tmp, "xb") as f:
                while True:
                    try:
                        chunk = response.read(_CHUNK)
                    except (OSError, ValueError) as e:  # includes http.client errors
                        raise DownloadError(
                            f"download of {url} failed after {received} bytes: {e}"
                        ) from e
                    if not chunk:
                        break
                    f.write(chunk)
                    digest.update(chunk)
                    received += len(chunk)
                    bar.update(len(chunk))
                f.flush()
                os.fsync(f.fileno())
        finally:
            bar.close()
    # http.client returns b"" when the server closes early instead of raising: check ourselves.
    if expected is not None and received != expected:
        raise DownloadError(
            f"download of {url} was interrupted: got {received} of {expected} bytes"
        )
    return digest.hexdigest()


def download(
    url: str,
    dest: PathLike,
    sha256: Optional[str] = None,
    *,
    progress: bool = True,
    timeout: float = 60,
) -> Path:
    """Download ``url`` to ``dest`` once, atomically, checking ``sha256`` if given.

    - If ``dest`` exists and matches ``sha256`` (or no ``sha256`` is given), it is returned
      without touching the network.
    - If ``dest`` exists but its checksum is wrong (a corrupt or outdated copy), it is deleted and
      downloaded again once; if the fresh copy is also wrong, :class:`ChecksumError` is raised.
    - On any failure nothing is left at ``dest`` and no temporary file remains.

    Raises :class:`DownloadError` for network and HTTP errors and truncated transfers, and
    :class:`ChecksumError` when the bytes are not the expected ones; both name the URL and file.
    """
    dest = Path(dest)
    sha256 = sha256.lower() if sha256 else None
    if dest.exists():
        if sha256 is None:
            return dest
        found = sha256_of(dest)
        if found == sha256:
            return dest
        # Known bad: remove it so that "dest exists" keeps meaning "dest is verified".
        warnings.warn(
            f"{dest} has sha256 {found}, expected {sha256}: deleting it and downloading again",
            stacklevel=2,
        )
        _remove(dest)

    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temp_path(dest)
    try:
        got = _fetch(url, tmp, progress=progress, timeout=timeout, desc=dest.name)
        if sha256 is not None and got != sha256:
            raise ChecksumError(
                f"downloaded file for {url} has sha256 {got}, expected {sha256} — the download "
                f"is corrupt or the file changed upstream; nothing was saved at {dest}. Retry, "
                "or update the expected checksum if the new file is trusted."
            )
        os.replace(tmp, dest)
    finally:  # also runs on KeyboardInterrupt
        _remove(tmp)
    return dest


def extract_member(zip_path: PathLike, member: str, dest: PathLike) -> Path:
    """Extract one ``member`` of the zip at ``zip_path`` to ``dest``, atomically.

    The zip's CRC is checked while reading, so a truncated or damaged archive raises
    :class:`ArchiveError` naming the file instead of leaving a half-extracted ``dest``.
    """
    zip_path, dest = Path(zip_path), Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
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
    dest_dir: Optional[PathLike] = None,
    *,
    url: str = CORPUS_URL,
    sha256: Optional[str] = CORPUS_SHA256,
    progress: bool = True,
) -> Path:
    """The path to the Tatoeba ``fra.txt``, downloading and extracting it on first use.

    Files go to ``dest_dir`` (default: ``cache_dir() / "fra-eng"``). The archive is kept beside
    the extracted text so that a deleted ``fra.txt`` is re-extracted without the network.
    """
    folder = Path(dest_dir) if dest_dir is not None else cache_dir() / "fra-eng"
    text = folder / CORPUS_MEMBER
    if text.exists():  # written atomically, so existing means complete
        return text
    archive = download(url, folder / "fra-eng.zip", sha256, progress=progress)
    return extract_member(archive, CORPUS_MEMBER, text)
