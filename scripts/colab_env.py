"""A Colab-like Python environment, and the chapters run in it (used by tests/test_colab.py).

Google Colab preinstalls torch, numpy, ipywidgets 7 and a few hundred other packages, but not
the course's `lib` nor sacrebleu. Every chapter's first code cell (scripts/colab_setup.py) then
installs `lib` from GitHub with `--no-deps` and adds only the dependencies that are missing.
This module rebuilds that situation on this machine:

- `create_env` makes a fresh virtual environment with torch installed first (2.13.0, not
  Colab's 2.11.0: see COLAB_TORCH), then the other packages Colab preinstalls that the chapters
  touch, at Colab's versions (`COLAB_PACKAGES`), and a dummy `google.colab` module so that the
  setup cell believes it runs in Colab. The course's requirements.txt is not used.
  `unmet_pins` says which of these pins an environment does not meet.
- `stand_in_repository` makes a local git repository holding the working tree's tracked files
  on the branch named in `_config.yml`; `setup_cell_for` returns a notebook's real setup cell
  with its `git+https://github.com/...@branch` URL replaced by that repository's `git+file://`
  URL, so the cell's own install logic runs unchanged.
- `run_notebook` executes a notebook with nbclient in a kernel of that environment.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"

# What a Colab runtime has preinstalled that the chapters use, at Colab's versions where this
# machine can install them (googlecolab/backend-info, pip-freeze.txt of 2026-08-19; compare
# with `!pip list` in a Colab notebook when updating). Two differences remain, recorded in
# docs/decisions.md ("What the Colab-shaped test models"): Colab runs Python 3.13 and torch
# 2.11.0, while this environment uses this machine's Python and the torch 2.13.0 CPU build that
# requirements.txt also pins. torch is installed first and alone, as Colab's image does.
COLAB_TORCH = "torch==2.13.0"
COLAB_PACKAGES = [
    "numpy==2.1.3",
    "matplotlib==3.10.0",
    "tqdm==4.67.3",
    "ipywidgets==7.7.1",  # Colab stays on ipywidgets 7 for its own widget manager
    "ipykernel==6.17.1",
    "ipython==7.34.0",
    "notebook==6.5.7",  # also holds jupyter_client below 8, at Colab's 7.4.9
]
# The packages the setup cell must leave exactly as Colab ships them.
PROTECTED = ("torch", "numpy", "ipywidgets")
KERNEL_NAME = "colab-like"
CELL_TIMEOUT = 600  # seconds per cell, as _config.yml's execute.timeout


class ColabEnvError(RuntimeError):
    """The Colab-like environment could not be built or used."""


def _run(cmd: list[str], what: str, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise ColabEnvError(
            f"{what} failed (exit {result.returncode}): {' '.join(map(str, cmd))}\n"
            f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
        )
    return result


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def site_packages(env: Path) -> Path:
    """The environment's site-packages directory."""
    code = "import sysconfig; print(sysconfig.get_path('purelib'))"
    out = _run([str(python_of(env)), "-I", "-c", code], "finding site-packages")
    return Path(out.stdout.strip())


def python_of(env: Path) -> Path:
    return env / "bin" / "python"


def create_env(env: Path, python: str | None = None) -> dict[str, float]:
    """Create a fresh Colab-like environment at `env` (anything there is removed first).

    Returns the seconds each step took. The dummy `google/colab/__init__.py` goes into
    site-packages, where Colab's real one is, so every process of the environment sees it.
    """
    times = {}
    if env.exists():
        shutil.rmtree(env)
    env.parent.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    _run([python or sys.executable, "-m", "venv", str(env)], "creating the virtual environment")
    times["venv"] = time.perf_counter() - start
    # --no-compile: byte-compiling every module of torch and the rest took longer than
    # installing them (39 s against 18 s); Python compiles what a kernel imports, once.
    pip = [str(python_of(env)), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
           "--no-compile"]
    start = time.perf_counter()
    _run(pip + [COLAB_TORCH], f"installing {COLAB_TORCH}")
    times["torch"] = time.perf_counter() - start
    start = time.perf_counter()
    _run(pip + COLAB_PACKAGES, "installing Colab's other packages")
    times["packages"] = time.perf_counter() - start

    colab = site_packages(env) / "google" / "colab"
    colab.mkdir(parents=True, exist_ok=True)
    (colab / "__init__.py").write_text(
        '"""Stands in for Google Colab\'s module: the setup cell only checks that it imports."""\n',
        encoding="utf-8",
    )
    kernel = env / "share" / "jupyter" / "kernels" / KERNEL_NAME
    kernel.mkdir(parents=True, exist_ok=True)
    (kernel / "kernel.json").write_text(json.dumps({
        "argv": [str(python_of(env)), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (Colab-like)",
        "language": "python",
    }, indent=1), encoding="utf-8")
    return times


def pinned_versions() -> dict[str, str]:
    """{normalised distribution name: version} of COLAB_TORCH and COLAB_PACKAGES."""
    pins = {}
    for requirement in [COLAB_TORCH, *COLAB_PACKAGES]:
        name, version = requirement.split("==")
        pins[_normalise(name)] = version
    return pins


def unmet_pins(installed: dict[str, str]) -> dict[str, tuple[str, str | None]]:
    """{name: (pinned, installed)} for each pin of `pinned_versions` that `installed` (as
    `installed_versions` returns) does not meet; a local label (2.13.0+cpu) meets its pin."""
    return {name: (version, installed.get(name)) for name, version in pinned_versions().items()
            if (installed.get(name) or "").split("+")[0] != version}


def installed_versions(env: Path) -> dict[str, str]:
    """{normalised distribution name: version} of everything installed in `env` (pip freeze)."""
    code = ("import json; from importlib import metadata; print(json.dumps("
            "{d.metadata['Name']: d.version for d in metadata.distributions()}))")
    out = _run([str(python_of(env)), "-I", "-c", code], "listing installed packages")
    return {_normalise(k): v for k, v in json.loads(out.stdout).items()}


def changed_versions(before: dict[str, str], after: dict[str, str]) -> dict[str, tuple]:
    """{name: (before, after)} for every package of `before` that was changed or removed."""
    return {name: (old, after.get(name)) for name, old in before.items() if after.get(name) != old}


# --- the stand-in for GitHub ----------------------------------------------------------------


def stand_in_repository(dest: Path, branch: str, root: Path = ROOT) -> Path:
    """A git repository at `dest` whose `branch` holds the tracked files of `root`'s work tree.

    What Colab installs is what was pushed: tracked files only (an untracked new module would
    be missing there too), with their working-tree contents so uncommitted edits are tested.
    """
    if dest.exists():
        shutil.rmtree(dest)
    listed = _run(["git", "ls-files", "-z"], "listing tracked files", cwd=root).stdout
    files = [f for f in listed.split("\0") if f]
    if not files:
        raise ColabEnvError(f"{root} is not a git checkout with tracked files")
    for name in files:
        source = root / name
        if source.is_file():  # a tracked file deleted in the work tree is not copied
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    git = ["git", "-C", str(dest), "-c", "user.name=colab test", "-c", "user.email=colab@test"]
    _run(git + ["init", "--quiet", "--initial-branch", branch], "git init")
    _run(git + ["add", "--all"], "git add")
    _run(git + ["commit", "--quiet", "--no-verify", "-m", "stand-in for GitHub"], "git commit")
    return dest


# The one line of the setup cell that names the package; see scripts/colab_setup.py.
_PACKAGE_LINE = re.compile(r'^COURSE_PACKAGE = "git\+https://github\.com/[^"@]+@([\w./-]+)"$',
                           re.MULTILINE)


def setup_cell_index(nb) -> int:
    """Index of the notebook's Colab setup cell (tagged `colab-setup`)."""
    found = [i for i, c in enumerate(nb.cells) if "colab-setup" in c.metadata.get("tags", [])]
    if len(found) != 1:
        raise ColabEnvError(f"expected one cell tagged colab-setup, found {len(found)}; "
                            "run `python -m scripts.colab_setup --write`")
    return found[0]


def setup_cell_for(source: str, repository: Path) -> str:
    """The setup cell `source` with its GitHub URL replaced by `repository`'s, same branch."""
    matches = _PACKAGE_LINE.findall(source)
    if len(matches) != 1:
        raise ColabEnvError(
            "the setup cell has no single `COURSE_PACKAGE = \"git+https://github.com/...@branch\"`"
            " line to point at the local stand-in; tests/test_colab.py and "
            "scripts/colab_setup.py's TEMPLATE disagree"
        )
    url = f"git+file://{repository.resolve().as_posix()}@{matches[0]}"
    return _PACKAGE_LINE.sub(f'COURSE_PACKAGE = "{url}"', source)


# --- running notebooks ----------------------------------------------------------------------


def kernel_env(env: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The kernel's environment variables: this process's, less what would leak the repository,
    the test runner or this machine's course settings ($SEQ2SEQ_*) into it, plus `extra`."""
    result = {k: v for k, v in os.environ.items()
              if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "MPLBACKEND",
                           "JUPYTER_PATH", "PYTEST_CURRENT_TEST"}
              and not k.startswith("SEQ2SEQ_")}
    result["PATH"] = f"{env / 'bin'}{os.pathsep}{result.get('PATH', '')}"
    result["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"  # ipykernel's debugger: no frozen-module note
    result.update(extra or {})
    return result


def run_notebook(nb, env: Path, cwd: Path, env_vars: dict[str, str] | None = None,
                 timeout: int = CELL_TIMEOUT):
    """Execute `nb` (in place) top to bottom in a kernel of `env` with working directory `cwd`.

    Raises nbclient's CellExecutionError, which names the failing cell and its traceback.
    """
    kernels = KernelSpecManager(kernel_dirs=[str(env / "share" / "jupyter" / "kernels")])
    km = AsyncKernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=kernels)
    client = NotebookClient(nb, km=km, timeout=timeout, allow_errors=False,
                            kernel_name=KERNEL_NAME, resources={"metadata": {"path": str(cwd)}})
    # cleanup_kc: shut the kernel down afterwards even though we made its manager (nbclient
    # leaves such kernels running, and a chapter's idle kernel stalled the next one's widgets).
    client.execute(env=kernel_env(env, env_vars), cleanup_kc=True)
    return nb
