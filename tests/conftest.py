"""Shared pytest fixtures: paths, the built site on 127.0.0.1, headless Chromium.

The site tooling is the `scripts` package: tests import it (`from scripts import toc`), with the
repository root on the path (pyproject.toml's `pythonpath`).

Markers (declared in pyproject.toml): `browser` drives headless Chromium, `slow` needs the trained
model or a built site. A test that asks for the `browser` fixture is marked `browser`, one that
asks for the built site (`site_dir`, and the fixtures made from it) `slow`, here at collection;
a test that needs the trained model says so itself. The rest: `make test-fast`
(`pytest -m "not browser and not slow"`).
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import shutil
import ssl
import threading
import urllib.parse
from pathlib import Path

import pytest
import torch

from lib.data import PAD
from lib.widgets import (
    beam_explorer,
    bleu_explorer,
    context_map,
    decoder_stepper,
    hidden_state_explorer,
)

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "_build" / "html"


def with_attention(model, attention: bool = True, max_len: int = 100, seed: int = 0):
    """A model of `model`'s sizes and weights whose decoder attends (attention=True: a new
    additive attention layer drawn from `seed`) or not, its caps raised to `max_len` tokens:
    tests' small attention models, made from their small fixed-vector ones."""
    import dataclasses

    from lib.model import Seq2Seq

    config = dataclasses.replace(model.config, attention=attention, max_src_len=max_len,
                                 max_tgt_len=max_len)
    torch.manual_seed(seed)
    copy = Seq2Seq(config, model.src_vocab, model.tgt_vocab)
    copy.load_state_dict(model.state_dict(), strict=False)  # all but the attention layer
    return copy.to(model.device)


def pytest_collection_modifyitems(items):
    """Mark each test by what its fixtures need: Chromium (`browser`), the built site (`slow`)."""
    for item in items:
        needs = set(getattr(item, "fixturenames", ()))
        if "browser" in needs:
            item.add_marker(pytest.mark.browser)
        if "site_dir" in needs:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="module")
def one_thread():
    """Tiny models run fastest on one thread: on a few shared cores, more threads mostly wait for
    each other. A module of tiny-model tests opts in:
    `pytestmark = pytest.mark.usefixtures("one_thread")`."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def wide_beam(model, max_len: int) -> int:
    """A beam that never prunes: at step t there are (w+1) w^(t-1) candidates (w words that
    continue, plus <eos>), all of which must rank in the top k, and w^max_len at the cap."""
    w = len(model.tgt_vocab) - 3  # not <pad>, <sos>, <eos>
    return max((w + 1) * w ** (max_len - 1), w ** max_len)


def rows(tokens) -> list[list[int]]:
    """Id rows (a (B, T) tensor) without their <pad>."""
    return [[i for i in row if i != PAD] for row in tokens.tolist()]


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


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves its directory without logging, and appends each path asked for to
    `server.requests`. A client that hangs up, as some tests make it, is no error. A test's
    subclass answers some paths its own way by overriding `answer`."""

    def handle(self):
        try:
            super().handle()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_GET(self):  # noqa: N802 - http.server's naming
        self.server.requests.append(self.path)
        self.answer()

    def answer(self):
        """The file asked for, from the served directory."""
        super().do_GET()

    def log_message(self, format, *args):  # noqa: A002 - signature of the base class
        pass


def serve_directory(directory: Path, handler: type = QuietHandler,
                    context: ssl.SSLContext | None = None
                    ) -> tuple[http.server.ThreadingHTTPServer, str]:
    """Serve `directory` on 127.0.0.1 at a free port from a daemon thread (over TLS with
    `context`); returns (server, url ending in /). `server.requests` lists the paths asked for;
    `server.release`, an event, is set when the server stops (a handler that holds a connection
    open waits on it). Stop it with `stop_serving`."""
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(directory)))
    if context is not None:
        server.socket = context.wrap_socket(server.socket, server_side=True)
    server.daemon_threads = True
    server.requests = []
    server.release = threading.Event()
    # a short poll interval: shutdown() returns within 50 ms instead of half a second
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    host, port = server.server_address[:2]
    return server, f"{'https' if context else 'http'}://{host}:{port}/"


def stop_serving(server: http.server.ThreadingHTTPServer) -> None:
    server.release.set()
    server.shutdown()
    server.server_close()


@contextlib.contextmanager
def serving(directory: Path, handler: type = QuietHandler,
            context: ssl.SSLContext | None = None):
    """`serve_directory` for a with-block: yields (server, url ending in /), then stops it."""
    server, url = serve_directory(directory, handler, context)
    try:
        yield server, url
    finally:
        stop_serving(server)


@pytest.fixture(scope="session")
def reader_texts(site_dir):
    """(the built website as scripts.reader reads it, {page: its reader notebook's text}): the
    reader notebooks are rendered once for every test that reads them."""
    from scripts import reader  # the website's tooling: only for the tests of the built site

    site = reader.load_site(site_dir.parent)
    return site, reader.render_all(site)


@pytest.fixture(scope="session")
def widget_views() -> dict:
    """The static views of test_widgets' tiny model, {name: view}: what the widget browser
    tests and the accessibility tests check (hidden, map, beam, stepper, bleu)."""
    from test_widgets import SENTENCES, make_model  # a test module: only when a test asks

    torch.manual_seed(0)
    model = make_model(hidden=64, max_tgt_len=10).eval()
    return {
        "hidden": hidden_state_explorer(model, "She is reading a zorglub.",
                                        map_sentences=SENTENCES * 3),
        "map": context_map(model, SENTENCES, highlight=["I am cold."]),
        "beam": beam_explorer(model, "Where is the station?", beam_size=3),
        "stepper": decoder_stepper(model, "I am cold.", prefix="Tu es", top_k=6),
        "bleu": bleu_explorer("Le le chat est sur le tapis.",
                              ["Le chat est sur le tapis.", "Il y a un chat sur le tapis."]),
    }


@pytest.fixture(scope="session")
def widget_site(widget_views, tmp_path_factory):
    """The widget views as standalone pages <name>.html, served on 127.0.0.1; its URL ends in /."""
    folder = tmp_path_factory.mktemp("widgets")
    for name, view in widget_views.items():
        view.save_html(folder / f"{name}.html")
    with serving(folder) as (_, url):
        yield url


@pytest.fixture(scope="session")
def site_url(site_dir):
    """Base URL (ending in /) of the built site, served on 127.0.0.1 for this test session."""
    with serving(site_dir) as (_, url):
        yield url


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
    """The Chromium-family browser the browser tests drive (never `playwright install`, which
    downloads one): $CHROMIUM (a path or a command), else Google Chrome when present (GitHub's
    Ubuntu runners ship it, and Ubuntu's `chromium` package is a snap stub), else Debian's
    chromium; None when there is none. A $CHROMIUM that names no executable is an error."""
    named = os.environ.get("CHROMIUM", "").strip()
    if named:
        found = shutil.which(os.path.expanduser(named))
        if found is None:
            raise FileNotFoundError(f"CHROMIUM={named!r} is not an executable browser")
        return found
    for command in ("google-chrome", "google-chrome-stable", "chromium"):
        found = shutil.which(command)
        if found:
            return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


# The fonts every browser test sees, whatever the machine has installed: rendered widths (text,
# and MathJax, which scales its math to the x-height of the surrounding font) then come out the
# same everywhere. DejaVu comes with matplotlib (a requirement), so it is always there; a CJK
# font (`make test` installs fonts-wqy-microhei) only draws characters DejaVu lacks, such as
# the introduction's Chinese example, so whether one is installed changes no Latin width.
FONT_FAMILIES = {  # as Debian's fontconfig maps the generic names
    "serif": "DejaVu Serif",
    "sans-serif": "DejaVu Sans",
    "monospace": "DejaVu Sans Mono",
}
CJK_FAMILIES = ["WenQuanYi Micro Hei", "Noto Sans CJK SC", "Noto Serif CJK SC",
                "Droid Sans Fallback"]
# Debian's rendering settings (/etc/fonts/conf.d/10-*): slight hinting, antialiased glyphs.
FONT_RENDERING = ('<match target="font"><edit name="antialias" mode="assign"><bool>true</bool>'
                  '</edit><edit name="hinting" mode="assign"><bool>true</bool></edit>'
                  '<edit name="hintstyle" mode="assign"><const>hintslight</const></edit>'
                  '<edit name="rgba" mode="assign"><const>none</const></edit>'
                  '<edit name="lcdfilter" mode="assign"><const>lcddefault</const></edit></match>')


def cjk_font_files() -> list[Path]:
    """The installed fonts with Chinese glyphs (fontconfig's view), for the pinned font set."""
    fc_list = shutil.which("fc-list")
    if fc_list is None:
        return []
    import subprocess

    listed = subprocess.run([fc_list, ":lang=zh", "file"], capture_output=True, text=True,
                            timeout=60).stdout
    return sorted({Path(line.split(":")[0]) for line in listed.splitlines() if ":" in line})


def pinned_fonts(folder: Path, extra: list[Path] | None = None) -> Path:
    """Write a fontconfig file under `folder` that offers the browser matplotlib's DejaVu fonts
    (and `extra`, by default the installed CJK fonts) and nothing else; returns its path, for
    FONTCONFIG_FILE."""
    import matplotlib

    dejavu = sorted((Path(matplotlib.get_data_path()) / "fonts" / "ttf").glob("DejaVu*.ttf"))
    if not dejavu:
        raise FileNotFoundError("matplotlib's DejaVu fonts are missing: reinstall matplotlib")
    fonts = folder / "fonts"
    fonts.mkdir(parents=True, exist_ok=True)
    for i, path in enumerate([*dejavu, *(cjk_font_files() if extra is None else extra)]):
        link = fonts / f"{i:02d}-{path.name}"
        if not link.exists():
            link.symlink_to(path)
    rules = [f'<alias binding="same"><family>{generic}</family><prefer><family>{family}'
             f"</family>{''.join(f'<family>{f}</family>' for f in CJK_FAMILIES)}</prefer></alias>"
             for generic, family in FONT_FAMILIES.items()]
    conf = folder / "fonts.conf"
    conf.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">\n'
        f"<fontconfig>\n<dir>{fonts}</dir>\n<cachedir>{folder / 'cache'}</cachedir>\n"
        # a family that is not here falls back to sans-serif, as Debian's 49-sansserif.conf does
        '<match target="pattern"><test qual="all" name="family" compare="not_eq">'
        "<string>sans-serif</string></test>"
        '<test qual="all" name="family" compare="not_eq"><string>serif</string></test>'
        '<test qual="all" name="family" compare="not_eq"><string>monospace</string></test>'
        '<edit name="family" mode="append_last"><string>sans-serif</string></edit></match>\n'
        + "\n".join([*rules, FONT_RENDERING]) + "\n</fontconfig>\n",
        encoding="utf-8",
    )
    return conf


@pytest.fixture(scope="session")
def browser(tmp_path_factory):
    """Headless Chromium with the pinned fonts (`pinned_fonts`)."""
    try:
        path = chromium_path()
    except FileNotFoundError as error:
        pytest.fail(str(error))
    if path is None:
        message = ("no Chromium-family browser: set CHROMIUM to one, or install Debian's "
                   "chromium (`make test` does)")
        if os.environ.get("COURSE_REQUIRE_SITE"):
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    env = {**os.environ, "FONTCONFIG_FILE": str(pinned_fonts(tmp_path_factory.mktemp("fonts")))}
    # Playwright gives every launch a fresh temporary profile (--user-data-dir).
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=path, headless=True, args=CHROMIUM_FLAGS,
                                    env=env)
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
