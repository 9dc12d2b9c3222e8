"""Every chapter runs top to bottom in a fresh Colab-like environment (`make colab-test`).

A new virtual environment gets what Colab preinstalls (torch first, then numpy, matplotlib,
tqdm, ipywidgets 7.7.1, ipykernel, IPython; see scripts/colab_env.py), a dummy `google.colab`
module, and nothing of requirements.txt. Each chapter's real setup cell then installs `lib`
from a local git repository standing in for GitHub (same branch, `git+file://` instead of
`git+https://`), and the chapter runs in a kernel of that environment with nbclient, from a
fresh copy of the notebook, with book/ as its working directory. The test fails if the
install changed a preinstalled package (torch, numpy and ipywidgets above all), if the
chapters import `lib` from anywhere but the environment's site-packages, or if any cell fails.

The environment is rebuilt on every run under _build/colab-env/ (kept afterwards for a look:
`executed/` has the chapters with their outputs and cell timings, `timings.json` the time of
each step). It needs the reference model cached (`make reference`): without it a bare `pytest`
skips these tests and `make test` fails them. The helpers' own tests at the end are fast.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path

import nbformat
import pytest
from conftest import ROOT, load_script

WORK = ROOT / "_build" / "colab-env"
ENV = WORK / "venv"
GITHUB = WORK / "github"  # the local stand-in for https://github.com/
BOOK = ROOT / "book"
PROBE = "COLAB-PROBE"
TIMINGS: dict[str, float] = {}


def chapters() -> list[str]:
    """The chapter notebooks in the order of _toc.yml (book/<name>.ipynb)."""
    return load_script("toc").notebooks()


CHAPTERS = chapters()


@pytest.fixture(scope="module")
def colab_env():
    """scripts/colab_env.py; at the end, the time of each step goes to timings.json."""
    TIMINGS.clear()
    yield load_script("colab_env")
    if TIMINGS:
        WORK.mkdir(parents=True, exist_ok=True)
        (WORK / "timings.json").write_text(
            json.dumps({k: round(v, 1) for k, v in TIMINGS.items()}, indent=1), encoding="utf-8")


@pytest.fixture(scope="module")
def kernel_vars():
    """What the kernel needs from this machine: the corpus (Colab would download it) and the
    cached reference model (found through HOME, or $SEQ2SEQ_CACHE, both passed on)."""
    import lib.data
    import lib.reference

    if not lib.reference.cache_path().is_file():
        message = ("the reference model is not cached; run `make reference` first (the chapters "
                   "would otherwise train it, which takes a quarter of an hour)")
        if os.environ.get("COURSE_REQUIRE_SITE"):
            pytest.fail(message)
        pytest.skip(message)
    return {"SEQ2SEQ_DATA": str(lib.data.corpus_path(download=False))}


@pytest.fixture(scope="module")
def fresh_env(colab_env):
    """A new Colab-like environment and what is installed in it before any setup cell ran."""
    TIMINGS.update({f"create {k}": v for k, v in colab_env.create_env(ENV).items()})
    before = colab_env.installed_versions(ENV)
    assert before.get("torch", "").startswith("2.13.0"), before.get("torch")
    assert before.get("ipywidgets") == "7.7.1", before.get("ipywidgets")
    for absent in ("seq2seq-course-lib", "sacrebleu"):  # Colab has neither
        assert absent not in before, f"{absent} is preinstalled; the test would prove nothing"
    return before


@pytest.fixture(scope="module")
def stand_in(colab_env):
    """The repository the setup cell installs from: a local git repository on the branch
    named in _config.yml, at the same owner/name path as on GitHub."""
    url, branch = load_script("colab_setup").load_repository()
    owner_name = url.removeprefix("https://github.com/")
    return colab_env.stand_in_repository(GITHUB / owner_name, branch)


def probe_cell() -> nbformat.NotebookNode:
    """A cell run right after the setup cell: where `lib` comes from, and that the reference
    model the installed `lib` asks for is cached (a chapter would train it otherwise)."""
    return nbformat.v4.new_code_cell(f"""\
import json
from importlib import metadata

import lib
import lib.reference

report = {{"lib": lib.__file__, "version": metadata.version("seq2seq-course-lib"),
          "reference": str(lib.reference.cache_path())}}
print("{PROBE}", json.dumps(report))
assert lib.reference.cache_path().is_file(), (
    f"the installed lib looks for {{report['reference']}}, which is not cached: its training "
    "code differs from the repository's, or `make reference` did not run")
""")


def probe_report(cell) -> dict:
    for output in cell.get("outputs", []):
        for line in output.get("text", "").splitlines():
            if line.startswith(PROBE + " "):
                return json.loads(line[len(PROBE) + 1:])
    raise AssertionError(f"the probe cell printed no report: {cell.get('outputs')}")


def prepared_notebook(colab_env, path: Path, repository: Path):
    """A fresh in-memory copy of `path`: setup cell pointed at `repository`, probe after it."""
    nb = nbformat.read(path, as_version=4)
    i = colab_env.setup_cell_index(nb)
    nb.cells[i].source = colab_env.setup_cell_for(nb.cells[i].source, repository)
    nb.cells.insert(i + 1, probe_cell())
    return nb, i + 1


def execute(colab_env, nb, what: str, kernel_vars: dict) -> None:
    """Run `nb` in a kernel of the Colab-like environment, cwd book/; a failing cell fails the
    test with its traceback."""
    from nbclient.exceptions import CellExecutionError

    try:
        colab_env.run_notebook(nb, ENV, BOOK, kernel_vars)
    except CellExecutionError as error:
        text = re.sub(r"\x1b\[[0-9;]*m", "", str(error))  # the traceback's terminal colours
        pytest.fail(f"{what} failed in the Colab-like environment:\n{text}", pytrace=False)


def check_lib_is_installed(report: dict, site: Path, where: str) -> None:
    lib_file = Path(report["lib"]).resolve()
    assert lib_file.is_relative_to(site.resolve()), (
        f"{where}: `lib` was imported from {lib_file}, not from the Colab-like environment's "
        f"site-packages ({site}): the chapter did not use the installed package"
    )
    assert not lib_file.is_relative_to(ROOT / "lib"), lib_file


@pytest.fixture(scope="module")
def installed(colab_env, fresh_env, stand_in, kernel_vars):
    """Run the first chapter's setup cell alone in a kernel of the fresh environment."""
    site = colab_env.site_packages(ENV)
    first = ROOT / f"{CHAPTERS[0]}.ipynb"
    nb, probe = prepared_notebook(colab_env, first, stand_in)
    nb.cells = nb.cells[probe - 1: probe + 1]  # the setup cell and the probe
    start = time.perf_counter()
    execute(colab_env, nb, f"the setup cell of {CHAPTERS[0]}.ipynb", kernel_vars)
    TIMINGS["setup cell (first run)"] = time.perf_counter() - start
    return {"before": fresh_env, "after": colab_env.installed_versions(ENV), "site": site,
            "report": probe_report(nb.cells[1])}


@pytest.mark.slow
def test_setup_cell_keeps_colab_packages(colab_env, installed):
    before, after = installed["before"], installed["after"]
    changed = colab_env.changed_versions(before, after)
    protected = {name: changed[name] for name in colab_env.PROTECTED if name in changed}
    assert not protected, f"the setup cell changed Colab's own (before, after): {protected}"
    assert not changed, f"the setup cell changed preinstalled packages (before, after): {changed}"
    added = set(after) - set(before)
    assert {"seq2seq-course-lib", "sacrebleu"} <= added, f"installed: {sorted(added)}"
    check_lib_is_installed(installed["report"], installed["site"], "setup cell")


@pytest.mark.slow
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_runs_in_colab(colab_env, installed, stand_in, kernel_vars, chapter):
    nb, probe = prepared_notebook(colab_env, ROOT / f"{chapter}.ipynb", stand_in)
    start = time.perf_counter()
    try:
        execute(colab_env, nb, f"{chapter}.ipynb", kernel_vars)
    finally:
        TIMINGS[chapter] = time.perf_counter() - start
        (WORK / "executed").mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, WORK / "executed" / Path(chapter).with_suffix(".ipynb").name)
    check_lib_is_installed(probe_report(nb.cells[probe]), installed["site"], chapter)
    changed = colab_env.changed_versions(installed["before"], colab_env.installed_versions(ENV))
    assert not changed, f"{chapter} changed preinstalled packages (before, after): {changed}"


# --- the helpers alone (fast) -----------------------------------------------------------------


def test_every_chapter_has_one_setup_cell_the_test_can_redirect(colab_env, tmp_path):
    assert CHAPTERS, "no chapter notebooks in _toc.yml"
    for chapter in CHAPTERS:
        nb = nbformat.read(ROOT / f"{chapter}.ipynb", as_version=4)
        source = nb.cells[colab_env.setup_cell_index(nb)].source
        redirected = colab_env.setup_cell_for(source, tmp_path)
        old, new = source.splitlines(), redirected.splitlines()
        differ = [(a, b) for a, b in zip(old, new) if a != b]
        assert len(old) == len(new) and len(differ) == 1, differ
        _, branch = load_script("colab_setup").load_repository()
        assert differ[0][1] == f'COURSE_PACKAGE = "git+file://{tmp_path.resolve()}@{branch}"'


def test_setup_cell_without_a_github_url_is_refused(colab_env, tmp_path):
    with pytest.raises(colab_env.ColabEnvError, match="COURSE_PACKAGE"):
        colab_env.setup_cell_for('COURSE_PACKAGE = "lib"\n', tmp_path)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import lib")])
    with pytest.raises(colab_env.ColabEnvError, match="colab_setup.py --write"):
        colab_env.setup_cell_index(nb)


def test_changed_versions(colab_env):
    before = {"torch": "2.13.0", "numpy": "2.0.2", "ipywidgets": "7.7.1"}
    after = {"torch": "2.14.0", "numpy": "2.0.2", "sacrebleu": "2.6.0"}
    assert colab_env.changed_versions(before, after) == {
        "torch": ("2.13.0", "2.14.0"), "ipywidgets": ("7.7.1", None)}
    assert colab_env.changed_versions(before, before) == {}


def test_stand_in_repository_holds_the_tracked_work_tree(colab_env, tmp_path):
    source = tmp_path / "source"
    (source / "lib").mkdir(parents=True)
    (source / "lib" / "a.py").write_text("old\n")
    git = ["git", "-C", str(source), "-c", "user.name=t", "-c", "user.email=t@t"]
    for args in (["init", "-q"], ["add", "lib/a.py"], ["commit", "-qm", "one"]):
        subprocess.run(git + args, check=True, capture_output=True)
    (source / "lib" / "a.py").write_text("edited\n")  # tracked, not committed: taken
    (source / "lib" / "new.py").write_text("untracked\n")  # untracked: not on GitHub either
    dest = colab_env.stand_in_repository(tmp_path / "github" / "o" / "r", "dev", root=source)
    assert (dest / "lib" / "a.py").read_text() == "edited\n"
    assert not (dest / "lib" / "new.py").exists()
    head = subprocess.run(["git", "-C", str(dest), "rev-parse", "--abbrev-ref", "HEAD"],
                          capture_output=True, text=True, check=True).stdout.strip()
    assert head == "dev"
    clean = subprocess.run(["git", "-C", str(dest), "status", "--porcelain"],
                           capture_output=True, text=True, check=True).stdout
    assert clean == ""


def test_kernel_env_does_not_leak_the_repository(colab_env, monkeypatch, tmp_path):
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.setenv("VIRTUAL_ENV", str(ROOT / ".venv"))
    env = colab_env.kernel_env(tmp_path / "venv", {"SEQ2SEQ_DATA": "/data/fra.txt"})
    assert "PYTHONPATH" not in env and "VIRTUAL_ENV" not in env
    assert env["PATH"].split(os.pathsep)[0] == str(tmp_path / "venv" / "bin")
    assert env["SEQ2SEQ_DATA"] == "/data/fra.txt"
