"""lib.course.download against an HTTP server on 127.0.0.1 that the tests start: no real
internet."""

import contextlib
import hashlib
import io
import math
import os
import re
import shutil
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse
import warnings
import zipfile
from pathlib import Path

import pytest
from conftest import QuietHandler, serving

from lib.course import download as dl

GOOD = b"hello\tbonjour\n" * 5000  # 70 kB: several reads, so progress and hashing are exercised
GOOD_SHA = hashlib.sha256(GOOD).hexdigest()


class _Handler(QuietHandler):
    """Serves the server's directory, counts requests, and has misbehaving routes.

    ``/chunked/<name>`` and ``/close/<name>`` send a served file with no Content-Length (chunked
    encoding, or until the connection closes); ``?cut=N`` sends only its first N bytes, as a
    complete-looking transfer. ``/drip`` and ``/drip-headers`` send one byte every 50 ms;
    ``/endless`` streams 64 kB every millisecond with no Content-Length.
    """

    def answer(self):
        path, _, query = self.path.partition("?")
        if path.startswith(("/chunked/", "/close/")):
            return self._send_without_length(path, urllib.parse.parse_qs(query))
        if path == "/drip":  # promises a megabyte, then one byte at a time until released
            self.send_response(200)
            self.send_header("Content-Length", "1000000")
            self.end_headers()
            self._drip(lambda: self.wfile.write(b"x"))
            return
        if path == "/endless":  # no Content-Length, and a body that never ends
            self.send_response(200)
            self.end_headers()
            self._drip(lambda: self.wfile.write(b"{" * 65536), every=0.001)
            return
        if path == "/drip-headers":  # a status line, then a header that never ends
            self.wfile.write(b"HTTP/1.0 200 OK\r\nX-Slow: ")
            self._drip(lambda: self.wfile.write(b"z"))
            return
        if self.path == "/truncated":  # promises 1000 bytes, sends 100, hangs up
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b"x" * 100)
            self.wfile.flush()
            self.close_connection = True
            return
        if self.path == "/stall":  # headers, then silence until the test is over
            self.send_response(200)
            self.send_header("Content-Length", "10")
            self.end_headers()
            self.wfile.flush()
            self.server.release.wait(10)
            return
        super().answer()

    def _drip(self, send_one, every=0.05):
        """A byte every 50 ms for 30 s at most: a broken deadline fails a test, not hangs it."""
        stop = time.monotonic() + 30
        try:
            while not self.server.release.wait(every) and time.monotonic() < stop:
                send_one()
                self.wfile.flush()
        except OSError:  # the client hung up, as it should
            pass

    def _send_without_length(self, path, query):
        kind, name = path.strip("/").split("/", 1)
        data = (Path(self.directory) / name).read_bytes()
        if "cut" in query:
            data = data[: int(query["cut"][0])]
        if kind == "chunked":
            self.protocol_version = "HTTP/1.1"
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Connection", "close")
            self.end_headers()
            for start in range(0, len(data), 4096):
                piece = data[start : start + 4096]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.write(b"0\r\n\r\n")  # a proper end: the transfer looks complete
        else:  # HTTP/1.0 style: the body ends when the connection closes
            self.send_response(200)
            self.end_headers()
            self.wfile.write(data)
        self.close_connection = True


@contextlib.contextmanager
def _serving(root: Path, context: ssl.SSLContext | None = None):
    """Serve ``root`` on 127.0.0.1 (over TLS with ``context``): yields (base URL, server)."""
    with serving(root, _Handler, context) as (httpd, url):
        yield url.rstrip("/"), httpd


@pytest.fixture
def server(tmp_path):
    """(base URL, served directory, server); ``server.requests`` lists the paths asked for."""
    root = tmp_path / "served"
    root.mkdir()
    with _serving(root) as (base, httpd):
        yield base, root, httpd


@pytest.fixture
def out(tmp_path):
    folder = tmp_path / "cache"
    folder.mkdir()
    return folder


def _leftovers(folder: Path):
    return sorted(p.name for p in folder.iterdir() if ".part-" in p.name)


def _zip_bytes(members: dict) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def test_good_download_lands_with_right_content(server, out):
    base, root, _ = server
    (root / "f.txt").write_bytes(GOOD)
    dest = dl.download(f"{base}/f.txt", out / "f.txt", GOOD_SHA, progress=True)
    assert dest == out / "f.txt"
    assert dest.read_bytes() == GOOD
    assert dl.sha256_of(dest) == GOOD_SHA
    assert _leftovers(out) == []


def test_second_call_does_not_touch_the_network(server, out):
    base, root, httpd = server
    (root / "f.txt").write_bytes(GOOD)
    dl.download(f"{base}/f.txt", out / "f.txt", GOOD_SHA, progress=False)
    dl.download(f"{base}/f.txt", out / "f.txt", GOOD_SHA, progress=False)
    dl.download(f"{base}/f.txt", out / "f.txt", None, progress=False)  # no hash: trust the file
    assert httpd.requests == ["/f.txt"]


def test_checksum_mismatch_raises_and_leaves_nothing(server, out):
    base, root, _ = server
    (root / "f.txt").write_bytes(GOOD)
    wrong = "0" * 64
    with pytest.raises(dl.ChecksumError) as err:
        dl.download(f"{base}/f.txt", out / "f.txt", wrong, progress=False)
    msg = str(err.value)
    assert f"{base}/f.txt" in msg and GOOD_SHA in msg and wrong in msg
    assert str(out / "f.txt") in msg
    assert list(out.iterdir()) == []


def test_corrupt_existing_file_is_downloaded_again(server, out):
    base, root, httpd = server
    (root / "f.txt").write_bytes(GOOD)
    (out / "f.txt").write_bytes(b"half a fi")
    with pytest.warns(UserWarning, match="deleting it and downloading again"):
        dl.download(f"{base}/f.txt", out / "f.txt", GOOD_SHA, progress=False)
    assert (out / "f.txt").read_bytes() == GOOD
    assert httpd.requests == ["/f.txt"]


def test_corrupt_existing_file_and_corrupt_download_raise(server, out):
    base, root, _ = server
    (root / "f.txt").write_bytes(b"changed upstream")
    (out / "f.txt").write_bytes(b"half a fi")
    with pytest.warns(UserWarning), pytest.raises(dl.ChecksumError):
        dl.download(f"{base}/f.txt", out / "f.txt", GOOD_SHA, progress=False)
    assert list(out.iterdir()) == []


def test_interrupted_download_leaves_no_partial_file(server, out):
    base, _, _ = server
    with pytest.raises(dl.DownloadError, match="interrupted: got 100 of 1000 bytes") as err:
        dl.download(f"{base}/truncated", out / "t.bin", None, progress=False)
    assert f"{base}/truncated" in str(err.value)
    assert list(out.iterdir()) == []


def test_stalled_download_times_out_cleanly(server, out):
    base, _, _ = server
    with pytest.raises(dl.DownloadError, match="/stall"):
        dl.download(f"{base}/stall", out / "s.bin", None, progress=False, timeout=0.5)
    assert list(out.iterdir()) == []


def test_ctrl_c_mid_download_leaves_no_partial_file(server, out, monkeypatch):
    base, root, _ = server
    (root / "f.txt").write_bytes(GOOD)

    class InterruptingBar:
        def __init__(self, *args, **kwargs):
            pass

        def update(self, n):
            raise KeyboardInterrupt

        def close(self):
            pass

    monkeypatch.setattr(dl, "tqdm", InterruptingBar)
    with pytest.raises(KeyboardInterrupt):
        dl.download(f"{base}/f.txt", out / "f.txt", GOOD_SHA)
    assert list(out.iterdir()) == []


def test_http_404_names_the_url(server, out):
    base, _, _ = server
    with pytest.raises(dl.DownloadError, match="HTTP 404") as err:
        dl.download(f"{base}/missing.zip", out / "m.zip", None, progress=False)
    assert f"{base}/missing.zip" in str(err.value)
    assert list(out.iterdir()) == []


def test_unreachable_host_is_a_download_error(out):
    with pytest.raises(dl.DownloadError, match="127.0.0.1:9"):
        dl.download("http://127.0.0.1:9/x", out / "x", None, progress=False, timeout=2)
    assert list(out.iterdir()) == []


def test_zip_round_trip(out):
    (out / "a.zip").write_bytes(_zip_bytes({"fra.txt": GOOD, "_about.txt": b"about"}))
    dest = dl.extract_member(out / "a.zip", "fra.txt", out / "sub" / "fra.txt")
    assert dest.read_bytes() == GOOD
    assert _leftovers(out / "sub") == []


def test_missing_member_is_named(out):
    (out / "a.zip").write_bytes(_zip_bytes({"_about.txt": b"about"}))
    with pytest.raises(dl.ArchiveError, match="no member 'fra.txt'"):
        dl.extract_member(out / "a.zip", "fra.txt", out / "fra.txt")
    assert not (out / "fra.txt").exists()


@pytest.mark.parametrize("damage", ["garbage", "truncated", "flipped"])
def test_corrupt_zip_names_the_file(out, damage):
    data = bytearray(_zip_bytes({"fra.txt": GOOD}))
    if damage == "garbage":
        data = bytearray(b"<html>Service unavailable</html>")
    elif damage == "truncated":
        data = data[: len(data) // 2]
    else:  # one flipped byte inside the compressed data: caught by zlib or the CRC check
        data[len(data) // 4] ^= 0xFF
    (out / "a.zip").write_bytes(bytes(data))
    with pytest.raises(dl.ArchiveError) as err:
        dl.extract_member(out / "a.zip", "fra.txt", out / "fra.txt")
    assert str(out / "a.zip") in str(err.value)
    assert sorted(p.name for p in out.iterdir()) == ["a.zip"]


def test_fetch_corpus_downloads_once_and_extracts(server, out):
    base, root, httpd = server
    archive = _zip_bytes({"fra.txt": GOOD, "_about.txt": b"about"})
    (root / "fra-eng.zip").write_bytes(archive)
    sha = hashlib.sha256(archive).hexdigest()
    url = f"{base}/fra-eng.zip"
    text = dl.fetch_corpus(out, url=url, sha256=sha, progress=False)
    assert text == out / "fra.txt" and text.read_bytes() == GOOD
    assert dl.fetch_corpus(out, url=url, sha256=sha, progress=False) == text
    text.unlink()  # re-extracted from the kept archive, still without the network
    assert dl.fetch_corpus(out, url=url, sha256=sha, progress=False).read_bytes() == GOOD
    assert httpd.requests == ["/fra-eng.zip"]


def test_corpus_constants():
    assert dl.CORPUS_URL == "https://www.manythings.org/anki/fra-eng.zip"
    assert dl.CORPUS_SHA256 is None or len(dl.CORPUS_SHA256) == 64


def test_cache_dir_honours_env_and_is_created_lazily(tmp_path, monkeypatch):
    target = tmp_path / "my-cache"
    code = "import lib.course.download, lib; import os, sys; sys.exit(os.path.exists(sys.argv[1]))"
    env_run = subprocess.run(
        [sys.executable, "-c", code, str(target)],
        env={"SEQ2SEQ_CACHE": str(target), "PATH": ""},
        cwd=Path(__file__).resolve().parents[1],
    )
    assert env_run.returncode == 0, "importing lib.course.download must not create the cache"
    monkeypatch.setenv("SEQ2SEQ_CACHE", str(target))
    assert dl.cache_dir() == target and target.is_dir()
    monkeypatch.delenv("SEQ2SEQ_CACHE")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert dl.cache_dir() == tmp_path / ".cache" / "seq2seq-course"


def test_a_cache_variable_that_names_a_file_says_so(tmp_path, monkeypatch):
    """SEQ2SEQ_CACHE at a file once gave a bare FileExistsError that did not name the variable."""
    a_file = tmp_path / "notes.txt"
    a_file.write_text("not a folder")
    monkeypatch.setenv("SEQ2SEQ_CACHE", str(a_file))
    with pytest.raises(FileExistsError, match=re.escape(f"SEQ2SEQ_CACHE={str(a_file)!r} is a "
                                                        f"file, not a folder: point "
                                                        f"SEQ2SEQ_CACHE to a folder")):
        dl.cache_dir()
    monkeypatch.setenv("SEQ2SEQ_CACHE", str(a_file / "below"))
    with pytest.raises(NotADirectoryError, match=r"SEQ2SEQ_CACHE=.* cannot be created \(Not a "
                                                 r"directory\)"):
        dl.cache_dir()


# --- the overall deadline ---------------------------------------------------------------------


def _deadline_bytes(message: str) -> int:
    """The byte count a deadline error reports."""
    return int(re.search(r"after (\d+) bytes", message).group(1))


def test_drip_feeding_server_is_stopped_at_the_deadline(server, out):
    base, _, _ = server
    start = time.monotonic()
    with pytest.raises(dl.DownloadError, match=r"exceeded its deadline of 1\.5 s") as err:
        # The default 60 s per-read timeout never fires: a byte arrives every 50 ms.
        dl.download(f"{base}/drip", out / "d.bin", GOOD_SHA, progress=False, deadline=1.5)
    elapsed = time.monotonic() - start
    assert 1.4 < elapsed < 10, elapsed
    assert f"{base}/drip" in str(err.value) and str(out / "d.bin") in str(err.value)
    assert 0 < _deadline_bytes(str(err.value)) < 1_000_000  # some bytes came, not all
    assert list(out.iterdir()) == []


def test_drip_fed_headers_are_stopped_at_the_deadline(server, out):
    base, _, _ = server
    start = time.monotonic()
    with pytest.raises(dl.DownloadError, match=r"deadline of 1 s after 0 bytes") as err:
        dl.download(f"{base}/drip-headers", out / "h.bin", GOOD_SHA, progress=False, deadline=1)
    assert time.monotonic() - start < 10
    assert f"{base}/drip-headers" in str(err.value)
    assert list(out.iterdir()) == []


def _self_signed(folder: Path) -> Path:
    """A certificate and key for 127.0.0.1 in one PEM file, made with the openssl command."""
    pem = folder / "localhost.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
         "-keyout", str(pem), "-out", str(folder / "cert.pem")],
        check=True, capture_output=True, timeout=60,
    )
    pem.write_text(pem.read_text() + (folder / "cert.pem").read_text())
    return pem


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
def test_deadline_also_stops_a_drip_over_tls(tmp_path, out, monkeypatch):
    """Over HTTPS the deadline shuts down the socket under the TLS layer; the test trusts its own
    certificate through SSL_CERT_FILE, which the default context reads."""
    root = tmp_path / "served"
    root.mkdir()
    (root / "f.txt").write_bytes(GOOD)
    pem = _self_signed(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(pem))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pem)
    with _serving(root, context) as (base, _):
        assert base.startswith("https://")
        got = dl.download(f"{base}/f.txt", out / "f.txt", GOOD_SHA, progress=False, deadline=30)
        assert got.read_bytes() == GOOD  # TLS itself works, so the failure below is the deadline
        start = time.monotonic()
        with pytest.raises(dl.DownloadError, match=r"deadline of 1\.5 s after \d+ bytes"):
            dl.download(f"{base}/drip", out / "d.bin", GOOD_SHA, progress=False, deadline=1.5)
        assert time.monotonic() - start < 10
    assert sorted(p.name for p in out.iterdir()) == ["f.txt"]


def test_a_fast_download_leaves_no_deadline_timer_running(server, out):
    base, root, _ = server
    (root / "f.txt").write_bytes(GOOD)
    dl.download(f"{base}/f.txt", out / "f.txt", GOOD_SHA, progress=False, deadline=600)
    timers = [t for t in threading.enumerate() if isinstance(t, threading.Timer)]
    for t in timers:
        t.join(5)
    assert not any(t.is_alive() for t in timers)


# --- no file is kept unverified ---------------------------------------------------------------


@pytest.mark.parametrize("route", ["chunked", "close"])
def test_no_length_and_no_check_is_refused(server, out, route):
    base, root, _ = server
    (root / "f.txt").write_bytes(GOOD)
    url = f"{base}/{route}/f.txt"
    with pytest.raises(dl.DownloadError, match="no Content-Length") as err:
        dl.download(url, out / "f.txt", progress=False)
    msg = str(err.value)
    assert url in msg and "cannot be told from a truncated one" in msg
    assert f"nothing was saved at {out / 'f.txt'}" in msg
    assert list(out.iterdir()) == []


def test_no_length_with_an_accepting_verify_is_kept(server, out):
    base, root, _ = server
    (root / "f.txt").write_bytes(GOOD)
    seen = []

    def verify(path):
        seen.append((path.name, path.read_bytes()))

    got = dl.download(f"{base}/chunked/f.txt", out / "f.txt", progress=False, verify=verify)
    assert got.read_bytes() == GOOD
    # It ran once, on the complete temporary file, before the rename.
    assert len(seen) == 1 and re.fullmatch(r"f\.txt\.part-[0-9a-f]{8}", seen[0][0])
    assert seen[0][1] == GOOD
    assert sorted(p.name for p in out.iterdir()) == ["f.txt"]


@pytest.mark.parametrize("check", ["sha256", "size"])
def test_no_length_with_a_sha256_or_size_is_kept(server, out, check):
    base, root, _ = server
    (root / "f.txt").write_bytes(GOOD)
    kwargs = {"sha256": GOOD_SHA} if check == "sha256" else {"size": len(GOOD)}
    got = dl.download(f"{base}/chunked/f.txt", out / "f.txt", progress=False, **kwargs)
    assert got.read_bytes() == GOOD


@pytest.mark.parametrize("check", ["sha256", "size", "verify"])
def test_truncated_chunked_transfer_is_rejected_by_each_check(server, out, check):
    base, root, _ = server
    (root / "f.txt").write_bytes(GOOD)

    def verify(path):
        if path.stat().st_size != len(GOOD):
            raise ValueError(f"{path.name} is short")

    kwargs = {"sha256": {"sha256": GOOD_SHA}, "size": {"size": len(GOOD)},
              "verify": {"verify": verify}}[check]
    url = f"{base}/chunked/f.txt?cut=1000"
    expected = {"sha256": "has sha256", "size": f"gave 1000 bytes but {len(GOOD)} were expected",
                "verify": r"failed its check: f\.txt\.part-[0-9a-f]{8} is short"}[check]
    with pytest.raises(dl.DownloadError, match=expected) as err:
        dl.download(url, out / "f.txt", progress=False, **kwargs)
    assert url in str(err.value)
    if check == "verify":
        assert isinstance(err.value.__cause__, ValueError)  # the verifier's own error is kept
    assert list(out.iterdir()) == []


def test_size_disagreeing_with_content_length_is_refused_before_the_body(server, out):
    base, root, _ = server
    (root / "f.txt").write_bytes(GOOD)
    url = f"{base}/f.txt"
    with pytest.raises(dl.DownloadError) as err:
        dl.download(url, out / "f.txt", GOOD_SHA, size=len(GOOD) + 1, progress=False)
    msg = str(err.value)
    assert msg.startswith(f"{url} announces {len(GOOD)} bytes (Content-Length) but "
                          f"{len(GOOD) + 1} were expected")
    assert list(out.iterdir()) == []


def test_right_size_with_content_length_is_kept(server, out):
    base, root, _ = server
    (root / "f.txt").write_bytes(GOOD)
    got = dl.download(f"{base}/f.txt", out / "f.txt", size=len(GOOD), progress=False)
    assert got.read_bytes() == GOOD


@pytest.mark.parametrize("damage", ["truncated", "flipped"])
def test_fetch_corpus_rejects_a_damaged_zip_sent_without_length(server, out, damage):
    base, root, _ = server
    archive = _zip_bytes({"fra.txt": GOOD, "_about.txt": b"about"})
    (root / "fra-eng.zip").write_bytes(archive)
    if damage == "truncated":  # a chunked transfer cut short but ended properly
        url = f"{base}/chunked/fra-eng.zip?cut={len(archive) // 2}"
    else:  # right length, one byte of compressed data flipped: only the CRC check can tell
        data = bytearray(archive)
        data[60] ^= 0xFF
        (root / "bad.zip").write_bytes(bytes(data))
        url = f"{base}/chunked/bad.zip"
    with pytest.raises(dl.DownloadError, match="failed its check") as err:
        dl.fetch_corpus(out, url=url, sha256=None, progress=False)
    assert url in str(err.value) and isinstance(err.value.__cause__, dl.ArchiveError)
    assert list(out.iterdir()) == []


def test_fetch_corpus_keeps_a_whole_zip_sent_without_length(server, out):
    base, root, _ = server
    (root / "fra-eng.zip").write_bytes(_zip_bytes({"fra.txt": GOOD, "_about.txt": b"about"}))
    text = dl.fetch_corpus(out, url=f"{base}/chunked/fra-eng.zip", sha256=None, progress=False)
    assert text.read_bytes() == GOOD
    assert sorted(p.name for p in out.iterdir()) == ["fra-eng.zip", "fra.txt"]


def test_fetch_corpus_replaces_a_damaged_cached_zip(server, out):
    base, root, httpd = server
    archive = _zip_bytes({"fra.txt": GOOD})
    (root / "fra-eng.zip").write_bytes(archive)
    (out / "fra-eng.zip").write_bytes(archive[: len(archive) // 2])  # an old truncated copy
    with pytest.warns(UserWarning, match="fails its check.*deleting it and downloading again"):
        text = dl.fetch_corpus(out, url=f"{base}/fra-eng.zip", sha256=None, progress=False)
    assert text.read_bytes() == GOOD and (out / "fra-eng.zip").read_bytes() == archive
    assert httpd.requests == ["/fra-eng.zip"]


def test_check_zip_names_a_missing_member(out):
    (out / "a.zip").write_bytes(_zip_bytes({"_about.txt": b"about"}))
    with pytest.raises(dl.ArchiveError, match=r"a\.zip has no member 'fra\.txt'"):
        dl.check_zip(out / "a.zip", members=["fra.txt"])
    dl.check_zip(out / "a.zip")  # no member asked for: a sound archive passes


# --- an existing destination ------------------------------------------------------------------


def test_existing_file_of_the_right_size_or_verified_is_reused(server, out):
    base, root, httpd = server
    (root / "f.txt").write_bytes(GOOD)
    (out / "f.txt").write_bytes(GOOD)
    calls = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dl.download(f"{base}/f.txt", out / "f.txt", size=len(GOOD), progress=False)
        dl.download(f"{base}/f.txt", out / "f.txt", verify=calls.append, progress=False)
    assert httpd.requests == [] and calls == [out / "f.txt"]


@pytest.mark.parametrize("check", ["size", "verify"])
def test_existing_file_failing_size_or_verify_is_downloaded_again(server, out, check):
    base, root, httpd = server
    (root / "f.txt").write_bytes(GOOD)
    (out / "f.txt").write_bytes(b"half a fi")

    def verify(path):
        if path.read_bytes() != GOOD:
            raise ValueError("not the greeting")

    kwargs = {"size": {"size": len(GOOD)}, "verify": {"verify": verify}}[check]
    expected = {"size": f"has 9 bytes, expected {len(GOOD)}",
                "verify": r"fails its check \(not the greeting\)"}[check]
    with pytest.warns(UserWarning, match=expected + ": deleting it and downloading again"):
        dl.download(f"{base}/f.txt", out / "f.txt", progress=False, **kwargs)
    assert (out / "f.txt").read_bytes() == GOOD
    assert httpd.requests == ["/f.txt"]


# --- stale temporary files --------------------------------------------------------------------


def _part(path: Path, age: float) -> Path:
    """A leftover file at ``path`` last written ``age`` seconds ago."""
    path.write_bytes(b"part")
    then = time.time() - age
    os.utime(path, (then, then))
    return path


def test_stale_parts_are_removed_and_fresh_ones_kept(server, out):
    base, root, _ = server
    (root / "f.txt").write_bytes(GOOD)
    stale = _part(out / "f.txt.part-0123abcd", 2 * 3600)  # a killed download, long ago
    fresh = _part(out / "f.txt.part-89abcdef", 0)  # another process may be writing it now
    # Older than this call's 2 s deadline but not the default's: another process's download
    # may have a longer deadline than this call.
    recent = _part(out / "f.txt.part-00ff00ff", dl.DEFAULT_DEADLINE / 2)
    others = [  # another file's part, and names the downloader never makes
        _part(out / name, 2 * 3600)
        for name in ["g.txt.part-0123abcd", "f.txt.part-notmine!", "f.txt.partial"]
    ]
    dl.download(f"{base}/f.txt", out / "f.txt", GOOD_SHA, progress=False, deadline=2)
    assert not stale.exists()
    assert fresh.exists() and recent.exists() and all(p.exists() for p in others)
    assert (out / "f.txt").read_bytes() == GOOD


def test_remove_stale_parts_uses_the_age_it_is_given(out):
    old = _part(out / "m.pt.part-aaaaaaaa", 30)
    new = _part(out / "m.pt.part-bbbbbbbb", 0)
    assert dl.remove_stale_parts(out / "m.pt", older_than=10) == [old]
    assert not old.exists() and new.exists()
    assert dl.remove_stale_parts(out / "missing-dir" / "m.pt") == []


def test_killed_extraction_parts_are_cleaned_too(out):
    (out / "a.zip").write_bytes(_zip_bytes({"fra.txt": GOOD}))
    _part(out / "fra.txt.part-0000beef", 2 * dl.DEFAULT_DEADLINE)
    dl.extract_member(out / "a.zip", "fra.txt", out / "fra.txt")
    assert sorted(p.name for p in out.iterdir()) == ["a.zip", "fra.txt"]


# --- bad arguments ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"deadline": 0}, ValueError, "deadline must be a positive, finite number"),
        ({"deadline": -5}, ValueError, "deadline must be .* got -5"),
        ({"deadline": math.inf}, ValueError, "deadline must be .* got inf"),
        ({"deadline": "60"}, ValueError, "deadline must be .* got '60'"),
        ({"timeout": 0}, ValueError, "timeout must be a positive"),
        ({"size": -1}, ValueError, "size must be a byte count >= 0, got -1"),
        ({"size": 1.5}, TypeError, "size must be an int"),
        ({"size": True}, TypeError, "size must be an int"),
        ({"max_bytes": -1}, ValueError, "max_bytes must be a byte count >= 0, got -1"),
        ({"max_bytes": 2.0}, TypeError, "max_bytes must be an int"),
        ({"verify": "zip"}, TypeError, "verify must be a callable"),
        ({"sha256": "abc"}, ValueError, "sha256 must be 64 hex digits, got 'abc'"),
    ],
)
def test_bad_arguments_are_named_before_anything_is_fetched(server, out, kwargs, error, match):
    base, root, httpd = server
    (root / "f.txt").write_bytes(GOOD)
    with pytest.raises(error, match=match):
        dl.download(f"{base}/f.txt", out / "f.txt", progress=False, **kwargs)
    assert httpd.requests == [] and list(out.iterdir()) == []


# --- what a download may take: a cap on its size, the disk's room, a file's place -------------


def test_an_endless_response_is_cut_off_at_max_bytes(server, out):
    """A small file of unknown size (a manifest) cannot fill the disk until the deadline."""
    base, _, _ = server
    start = time.monotonic()
    with pytest.raises(dl.DownloadError, match=r"sent more than the 100000 bytes this file may "
                                               r"have .* cut off after \d+ bytes; nothing"):
        dl.download(f"{base}/endless", out / "m.json", progress=False, deadline=20,
                    verify=lambda path: None, max_bytes=100_000)
    assert time.monotonic() - start < 10
    assert list(out.iterdir()) == []


def test_an_endless_response_is_cut_off_at_the_expected_size(server, out):
    base, _, _ = server
    start = time.monotonic()
    with pytest.raises(dl.DownloadError, match="sent more than the 100000 bytes"):
        dl.download(f"{base}/endless", out / "m.pt", "0" * 64, progress=False, deadline=8,
                    size=100_000)
    assert time.monotonic() - start < 6  # cut off at once, not at the deadline
    assert list(out.iterdir()) == []


def test_a_file_announced_bigger_than_its_cap_is_refused_before_its_body(server, out):
    base, root, _ = server
    (root / "f.txt").write_bytes(GOOD)
    with pytest.raises(dl.DownloadError, match=f"announces {len(GOOD)} bytes .*more than the "
                                               f"1000 this file may have"):
        dl.download(f"{base}/f.txt", out / "f.txt", GOOD_SHA, progress=False, max_bytes=1000)
    assert list(out.iterdir()) == []
    # within the cap, the cap changes nothing
    dl.download(f"{base}/f.txt", out / "f.txt", GOOD_SHA, progress=False, max_bytes=len(GOOD))
    assert (out / "f.txt").read_bytes() == GOOD


def test_a_disk_without_room_for_the_file_is_refused_before_its_body(server, out, monkeypatch):
    base, root, _ = server
    (root / "f.txt").write_bytes(GOOD)
    full = shutil.disk_usage(out)._replace(free=1000)
    monkeypatch.setattr(dl.shutil, "disk_usage", lambda path: full)
    with pytest.raises(dl.DownloadError, match=r"no room for .*f\.txt: it has 0\.1 MB and only "
                                               r"0\.0 MB are free in .*SEQ2SEQ_CACHE"):
        dl.download(f"{base}/f.txt", out / "f.txt", GOOD_SHA, progress=False)
    assert list(out.iterdir()) == []


def test_a_folder_at_the_destination_is_named(server, out):
    base, root, httpd = server
    (root / "f.txt").write_bytes(GOOD)
    (out / "f.txt").mkdir()
    with pytest.raises(dl.DownloadError, match=r"f\.txt: a folder .* is in the way; remove it"):
        dl.download(f"{base}/f.txt", out / "f.txt", GOOD_SHA, progress=False)
    assert httpd.requests == [] and (out / "f.txt").is_dir()


def test_the_corpus_download_is_capped_too(server, out, monkeypatch):
    base, _, _ = server
    monkeypatch.setattr(dl, "CORPUS_MAX_BYTES", 100_000)
    with pytest.raises(dl.DownloadError, match="sent more than the 100000 bytes"):
        dl.fetch_corpus(out, url=f"{base}/endless", progress=False, deadline=20)
    assert list(out.iterdir()) == []
