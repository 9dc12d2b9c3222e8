"""Real Jupyter front ends for the reader-notebook tests (tests/test_frontends.py).

Two front ends, each a Jupyter server whose own Python runs the kernel (so `lib`, torch and the
widget packages the page talks to are the ones of that environment):

- **JupyterLab 4 with ipywidgets 8**: the project's own environment (.venv, requirements.txt),
  what a reader gets locally after `make setup`.
- **The classic Notebook with ipywidgets 7.7.1**, shaped like Google Colab's runtime: Colab's
  torch and preinstalled packages (`COLAB_TORCH`, `COLAB_PACKAGES` of scripts/colab_env.py)
  plus the Jupyter packages Colab's image carries beside them (`CLASSIC_FRONTEND`, from
  googlecolab/backend-info's pip-freeze.txt), and `lib` installed from this working tree.
  Colab draws widgets with its own front end, never with the widgetsnbextension it ships, but
  that is the extension a reader who pins Colab's versions locally gets, and 3.6.7-3.6.10 break
  every ipywidgets Output there (an ES class extended the Backbone way), which is why the live
  views use no Output (lib/widgets/live.py).

`classic_env()` builds the classic environment once under `_build/frontends/classic-<key>/`,
where the key hashes the Python version and every pin: changing a pin builds a new one, and an
interrupted build (no `env.json` written last) is never reused. `lab_env()` checks .venv.
`serve()` starts a server on 127.0.0.1 with its own configuration, data, runtime and settings
folders (nothing of ~/.jupyter leaks in) and stops it afterwards.

    python -m scripts.frontend_env            # build (or find) the classic environment
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from scripts import colab_env

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "_build" / "frontends"
LAB_ENV = ROOT / ".venv"
FORMAT = 1  # bump when the way an environment is built changes

# What Colab's runtime carries beside ipywidgets 7.7.1 for the classic Notebook's widgets
# (googlecolab/backend-info, pip-freeze.txt, unchanged from 2025-03 to 2026-08): the page side of
# the widgets and the Notebook 6.5 server, plus the kernel-side packages they talk to.
CLASSIC_FRONTEND = [
    "notebook==6.5.7",
    "widgetsnbextension==3.6.10",
    "jupyterlab_widgets==3.0.16",
    "traitlets==5.7.1",
    "jupyter_client==7.4.9",
]
LAB_MINIMUM = {"jupyterlab": (4,), "ipywidgets": (8,)}


class FrontendEnvError(RuntimeError):
    """A front-end environment could not be built, found or started."""


def _name(requirement: str) -> str:
    return re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9._-]+", requirement).group(0)).lower()


def _requirement(name: str) -> str:
    """requirements.txt's line for `name` (e.g. "sacrebleu==2.6.0")."""
    for line in (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if line and _name(line) == _name(name):
            return line
    raise FrontendEnvError(f"requirements.txt names no {name}")


def classic_pins() -> list[str]:
    """Every pin of the classic environment: Colab's torch and packages, then the front end's
    (a package Colab's list already pins keeps that pin), then what `lib` needs that Colab lacks
    (requirements.txt's version: the setup cell would install it)."""
    pins = [colab_env.COLAB_TORCH, *colab_env.COLAB_PACKAGES]
    names = {_name(p) for p in pins}
    pins += [p for p in CLASSIC_FRONTEND if _name(p) not in names]
    pins.append(_requirement("sacrebleu"))
    return pins


def classic_key(pins: list[str] | None = None) -> str:
    """The cache key of the classic environment: Python version, pins, build format."""
    blob = json.dumps({"python": list(sys.version_info[:2]), "pins": pins or classic_pins(),
                       "format": FORMAT}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def python_of(env: Path) -> Path:
    return env / "bin" / "python"


def _run(cmd: list, what: str, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise FrontendEnvError(f"{what} failed (exit {result.returncode}): "
                               f"{' '.join(map(str, cmd))}\n{result.stdout[-3000:]}\n"
                               f"{result.stderr[-3000:]}")
    return result


def installed_versions(env: Path) -> dict[str, str]:
    """{normalised distribution name: version} of everything installed in `env`."""
    code = ("import json; from importlib import metadata; print(json.dumps("
            "{d.metadata['Name']: d.version for d in metadata.distributions()}))")
    out = _run([python_of(env), "-I", "-c", code], "listing installed packages")
    return {_name(k): v for k, v in json.loads(out.stdout).items()}


def _check_pins(versions: dict[str, str], pins: list[str]) -> None:
    wrong = {}
    for pin in pins:
        name, _, want = pin.partition("==")
        have = versions.get(_name(name))
        if not have or have.split("+")[0] != want:
            wrong[name] = (want, have)
    if wrong:
        raise FrontendEnvError(f"pip resolved other versions than pinned: {wrong}")


def classic_env(log=print) -> Path:
    """The classic Notebook environment (its folder; Python in bin/), built if missing."""
    pins = classic_pins()
    home = WORK / f"classic-{classic_key(pins)}"
    env, stamp = home / "venv", home / "env.json"
    if stamp.is_file() and python_of(env).is_file():
        return env
    for stale in WORK.glob("classic-*"):  # other keys: other pins, or an interrupted build
        shutil.rmtree(stale, ignore_errors=True)
    home.mkdir(parents=True)
    start = time.perf_counter()
    log(f"building the classic Notebook environment in {home} (a few minutes, once)")
    _run([sys.executable, "-m", "venv", env], "creating the virtual environment")
    # --no-compile: Python compiles what the server and its kernels import, once (as in
    # colab_env.create_env: byte-compiling everything took longer than installing it)
    pip = [python_of(env), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
           "--no-compile"]
    _run(pip + [pins[0]], f"installing {pins[0]}")  # torch first and alone, as Colab's image
    _run(pip + pins[1:], "installing the pinned packages")
    _run(pip + ["--no-deps", "-e", ROOT], "installing lib from the working tree")
    versions = installed_versions(env)
    _check_pins(versions, pins)
    stamp.write_text(json.dumps({"pins": pins, "seconds": round(time.perf_counter() - start),
                                 "versions": versions}, indent=1, sort_keys=True),
                     encoding="utf-8")
    return env


def lab_env() -> Path:
    """The project's environment, checked to hold JupyterLab 4 and ipywidgets 8."""
    if not python_of(LAB_ENV).is_file():
        raise FrontendEnvError(f"{LAB_ENV} does not exist: run `make setup`")
    versions = installed_versions(LAB_ENV)
    for name, minimum in LAB_MINIMUM.items():
        have = versions.get(name)
        if not have or tuple(int(x) for x in have.split(".")[:len(minimum)]) < minimum:
            raise FrontendEnvError(f"{LAB_ENV} has {name} {have}, the test needs "
                                   f"{'.'.join(map(str, minimum))} or later: `make setup` "
                                   "installs requirements.txt")
    return LAB_ENV


# --- servers --------------------------------------------------------------------------------


# JupyterLab settings: every cell in the page (the test reads them all), start the notebook's
# kernel without asking, no news or update checks (nothing leaves 127.0.0.1).
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none",
                                               "autoStartDefaultKernel": True},
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false",
                                                    "checkForUpdates": False},
}


def server_environ(env: Path, home: Path) -> dict[str, str]:
    """The server's (and so its kernels') environment: this process's, less what would leak
    the test runner's Python or Jupyter configuration, with `env` first on PATH."""
    environ = {k: v for k, v in os.environ.items()
               if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "MPLBACKEND",
                            "JUPYTER_PATH", "JUPYTER_CONFIG_PATH", "PYTEST_CURRENT_TEST"}}
    environ["PATH"] = f"{env / 'bin'}{os.pathsep}{environ.get('PATH', '')}"
    for var, sub in (("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_DATA_DIR", "data"),
                     ("JUPYTER_RUNTIME_DIR", "runtime"), ("JUPYTERLAB_SETTINGS_DIR", "settings"),
                     ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"), ("IPYTHONDIR", "ipython")):
        environ[var] = str(home / sub)
    environ["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
    return environ


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A running Jupyter server: `url(path)` gives an address with its token."""

    def __init__(self, kind: str, base: str, token: str, process: subprocess.Popen, log: Path):
        self.kind, self.base, self.token, self.process, self.log = kind, base, token, process, log

    def url(self, notebook: str) -> str:
        """The notebook's page; in JupyterLab alone in a fresh workspace of its own."""
        if self.kind == "lab":
            space = re.sub(r"\W+", "-", notebook)
            return f"{self.base}lab/workspaces/{space}/tree/{notebook}?reset&token={self.token}"
        return f"{self.base}notebooks/{notebook}?token={self.token}"


@contextlib.contextmanager
def serve(kind: str, env: Path, root_dir: Path, home: Path, timeout: float = 90):
    """Run `jupyter lab` (kind "lab") or the classic `jupyter notebook` (kind "classic") of `env`
    on `root_dir`; its settings and state live in `home` (emptied first)."""
    if kind not in ("lab", "classic"):
        raise ValueError(f"kind must be 'lab' or 'classic', got {kind!r}")
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    for name, values in LAB_SETTINGS.items():
        path = home / "settings" / f"{name}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values), encoding="utf-8")
    port, token = _free_port(), secrets.token_hex(16)
    common = ["--no-browser", "--allow-root", "--ip=127.0.0.1", f"--port={port}"]
    if kind == "lab":
        cmd = [env / "bin" / "jupyter", "lab", *common, f"--IdentityProvider.token={token}",
               f"--ServerApp.root_dir={root_dir}"]
    else:
        cmd = [env / "bin" / "jupyter", "notebook", *common, f"--NotebookApp.token={token}",
               f"--notebook-dir={root_dir}", "--NotebookApp.show_banner=False"]
    log = home / "server.log"
    with open(log, "w", encoding="utf-8") as out:
        process = subprocess.Popen([str(c) for c in cmd], cwd=root_dir, stdout=out,
                                   stderr=subprocess.STDOUT, env=server_environ(env, home),
                                   start_new_session=True)
    base = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                raise FrontendEnvError(f"the {kind} server exited ({process.returncode}):\n"
                                       + log.read_text(encoding="utf-8")[-3000:])
            try:
                urllib.request.urlopen(f"{base}api/status?token={token}", timeout=5).close()
                break
            except (urllib.error.URLError, OSError):
                if time.monotonic() > deadline:
                    raise FrontendEnvError(f"the {kind} server did not answer in {timeout} s:\n"
                                           + log.read_text(encoding="utf-8")[-3000:]) from None
                time.sleep(0.5)
        yield Server(kind, base, token, process, log)
    finally:
        _stop(process)


def _stop(process: subprocess.Popen) -> None:
    """Stop the server we started, then anything left in its session (its kernels)."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)  # the server shuts its kernels down
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)  # its own process group (start_new_session)


if __name__ == "__main__":
    print(classic_env())
    print(json.dumps(json.loads((classic_env().parent / "env.json").read_text())["pins"],
                     indent=1))
