"""Shared pytest fixtures: paths, the site tooling in scripts/, and the built site on 127.0.0.1.

Markers (declared in pyproject.toml): `browser` drives headless Chromium against the built site,
`slow` needs the trained model or a built site. Unit tests alone: `pytest -m "not browser"`.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import os
import shutil
import threading
import urllib.parse
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "_build" / "html"


def load_script(name: str):
    """Import scripts/<name>.py (site tooling, not part of the `lib` package)."""
    path = ROOT / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"scripts_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def one_thread():
    """Tiny models run fastest on one thread; on 2 shared cores more threads thrash (about 20x).
    A module of tiny-model tests opts in: `pytestmark = pytest.mark.usefixtures("one_thread")`."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def colab_setup():
    """scripts/colab_setup.py as a module."""
    return load_script("colab_setup")


@pytest.fixture(scope="session")
def site_dir() -> Path:
    """The built website. `make test` builds it first and sets COURSE_REQUIRE_SITE=1, so a
    missing site fails there; a bare `pytest` skips the tests that need it."""
    if not (SITE / "index.html").is_file():
        message = f"the website is not built ({SITE}); run `make book` or `make test`"
        if os.environ.get("COURSE_REQUIRE_SITE"):
            pytest.fail(message)
        pytest.skip(message)
    return SITE


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - signature of the base class
        pass


def serve_directory(directory: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    """Serve `directory` on 127.0.0.1 at a free port from a daemon thread; returns (server, url)."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


@pytest.fixture(scope="session")
def site_url(site_dir):
    """Base URL (ending in /) of the built site, served on 127.0.0.1 for this test session."""
    server, url = serve_directory(site_dir)
    yield url
    server.shutdown()
    server.server_close()


# ---------------------------------------------------------------------------------------------
# Headless Chromium, shared by every browser test (one Playwright instance per session: a second
# sync_playwright() inside the first fails with "Sync API inside the asyncio loop")
# ---------------------------------------------------------------------------------------------

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
LOCAL_HOSTS = {"127.0.0.1", "localhost"}


def chromium_path() -> str | None:
    return shutil.which("chromium") or (
        "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None
    )


@pytest.fixture(scope="session")
def browser():
    path = chromium_path()
    if path is None:
        message = "Debian's chromium is not installed (`make test` installs it)"
        if os.environ.get("COURSE_REQUIRE_SITE"):
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    # Playwright gives every launch a fresh temporary profile (--user-data-dir).
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=path, headless=True, args=CHROMIUM_FLAGS)
        yield browser
        browser.close()


def open_page(browser, url: str, mirror: tuple[str, Path] | None = None):
    """Open `url` with the network cut off beyond 127.0.0.1; returns (page, context, problems).
    With `mirror` = (address, folder), requests under that address are answered from the
    folder (a reader notebook's figures, linked on the website, from the built website)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    problems: dict[str, list[str]] = {"external": [], "console": [], "failed": []}

    def route(route):
        host = urllib.parse.urlsplit(route.request.url).hostname
        if host in LOCAL_HOSTS:
            route.continue_()
        elif mirror and route.request.url.startswith(mirror[0]):
            path = mirror[1] / urllib.parse.unquote(
                urllib.parse.urlsplit(route.request.url[len(mirror[0]):]).path)
            if path.is_file():
                route.fulfill(path=str(path))
            else:
                problems["failed"].append(f"{route.request.url}: not in {mirror[1]}")
                route.fulfill(status=404)
        else:
            problems["external"].append(route.request.url)
            route.abort()

    page.route("**/*", route)
    page.on(
        "console",
        lambda m: m.type == "error" and problems["console"].append(f"{m.text} @ {m.location}"),
    )
    page.on("pageerror", lambda e: problems["console"].append(f"uncaught: {e}"))
    page.on(
        "requestfailed",
        lambda r: problems["failed"].append(f"{r.url}: {r.failure}")
        if urllib.parse.urlsplit(r.url).hostname in LOCAL_HOSTS
        else None,
    )
    page.on(
        "response",
        lambda r: r.status >= 400 and problems["failed"].append(f"{r.url}: HTTP {r.status}"),
    )
    page.goto(url, wait_until="load")
    return page, context, problems


# --- exercise checkers (tests/test_checks_*.py) ----------------------------------------------


def skeleton(*args):
    """A learner's untouched exercise cell: the checker must say "not done", not "wrong"."""
    raise NotImplementedError


def assert_rejects(result, *words):
    """The checker ran, refused the answer, and its message names each of `words`."""
    text = str(result)
    assert result.done and not result.ok, text
    for w in words:
        assert w in text, text
