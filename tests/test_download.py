"""lib.download against an HTTP server on 127.0.0.1 that the tests start: no real internet."""

import hashlib
import http.server
import io
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest

from lib import download as dl

GOOD = b"hello\tbonjour\n" * 5000  # 70 kB: several reads, so progress and hashing are exercised
GOOD_SHA = hashlib.sha256(GOOD).hexdigest()


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Serves the server's directory, counts requests, and has two misbehaving routes."""

    def do_GET(self):  # noqa: N802 (http.server's naming)
        self.server.requests.append(self.path)
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
        super().do_GET()

    def log_message(self, *args):  # keep pytest output clean
        pass


@pytest.fixture
def server(tmp_path):
    """(base URL, served directory, server); ``server.requests`` lists the paths asked for."""
    root = tmp_path / "served"
    root.mkdir()

    def handler(*args, **kwargs):
        return _Handler(*args, directory=str(root), **kwargs)

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    httpd.requests = []
    httpd.release = threading.Event()
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    host, port = httpd.server_address[:2]
    yield f"http://{host}:{port}", root, httpd
    httpd.release.set()
    httpd.shutdown()
    httpd.server_close()


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
    code = "import lib.download, lib; import os, sys; sys.exit(os.path.exists(sys.argv[1]))"
    env_run = subprocess.run(
        [sys.executable, "-c", code, str(target)],
        env={"SEQ2SEQ_CACHE": str(target), "PATH": ""},
        cwd=Path(__file__).resolve().parents[1],
    )
    assert env_run.returncode == 0, "importing lib.download must not create the cache"
    monkeypatch.setenv("SEQ2SEQ_CACHE", str(target))
    assert dl.cache_dir() == target and target.is_dir()
    monkeypatch.delenv("SEQ2SEQ_CACHE")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert dl.cache_dir() == tmp_path / ".cache" / "seq2seq-course"
