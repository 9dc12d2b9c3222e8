"""A cold start in a fresh Colab-like runtime: each reader notebook runs top to bottom.

`make colab-test` runs this file alone.

What a reader gets from the Colab button is a reader notebook (`make notebooks`,
_build/notebooks/) in a new runtime. This test rebuilds that: a new virtual environment with
what Colab preinstalls (torch first, then numpy, matplotlib, tqdm, ipywidgets 7.7.1, IPython,
ipykernel and the classic Notebook, at the versions of scripts/colab_env.py, where torch is the
2.13.0 CPU build rather than Colab's 2.11.0), a dummy `google.colab` module, and nothing of
requirements.txt.
Each notebook's own setup cell installs `lib` from a local git repository standing in for
GitHub (same branch, `git+file://` instead of `git+https://`), and the notebook then runs in a
kernel of that environment, with nothing of this machine's state:

- an empty HOME (so an empty cache) of its own per notebook, as every Colab notebook gets its
  own runtime; no $SEQ2SEQ_DATA, no $SEQ2SEQ_CACHE; the working directory is an empty folder,
  so no ../shared beside it either. One exception, FROM_THE_BUILD: the attention chapter's
  reversal toys, which the website build has just trained with the same settings, training
  code version and torch (lib.course.memo's file names key all three), are copied into its
  cache; training them again here would take minutes and prove nothing that the build's run of
  the same cells does not;
- the reference checkpoint and the attention chapter's models published by `make release`
  (_build/release/), served on 127.0.0.1 at the URL the package derives, redirected by the one
  documented override ($SEQ2SEQ_RELEASE_URL).

It fails if the setup cell changed a preinstalled package, if `lib` comes from anywhere but the
installed package, if any cell fails, if the reference model or the attention chapter's models
would be trained (the probe cell replaces the training functions by ones that fail the
notebook), if the corpus is fetched from anywhere (the same for the download function; the
packaged copy must be what is read), if a published file is not fetched exactly once, or if
the first cell that loads the model takes more than FIRST_LOAD_LIMIT seconds.

The environment is rebuilt on every run under _build/colab-env/ and kept for a look
(`executed/`: the notebooks with outputs and cell timings; `timings.json`: each step).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import nbformat
import pytest
from conftest import ROOT, serving

import scripts.colab_env
from lib.experiments import long_inputs
from scripts import colab_setup, toc

WORK = ROOT / "_build" / "colab-env"
ENV = WORK / "venv"
GITHUB = WORK / "github"  # the local stand-in for https://github.com/
RELEASE = ROOT / "_build" / "release"  # written by `make release`
NOTEBOOKS = ROOT / "_build" / "notebooks"  # written by `make notebooks`
PROBE = "COLAB-PROBE"
# {chapter: lib.course.memo names}: results a cold start reads from the build's cache instead of
# computing them. memo names a result's file by what it depends on (here the toy's settings,
# lib.train.TRAINING_VERSION and the torch version, which is the same build here: COLAB_TORCH),
# so a file whose name matches is the result the notebook would compute; one that does not is
# never read.
FROM_THE_BUILD = {"attention": ("bottleneck-reversal",)}
FIRST_LOAD_LIMIT = 30.0  # seconds for the first cell that loads the reference model
TIMINGS: dict[str, float] = {}


def chapters() -> list[str]:
    """The chapter names in the order of _toc.yml (encoder for book/encoder)."""
    return [Path(page).name for page in toc.notebooks()]


CHAPTERS = chapters()


def _require(what: str, ok: bool, hint: str) -> None:
    """Skip under a bare pytest, fail under `make test` (COURSE_REQUIRE_SITE=1)."""
    if not ok:
        message = f"{what} is missing; {hint}"
        if os.environ.get("COURSE_REQUIRE_SITE"):
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="module")
def colab_env():
    """scripts.colab_env; at the end, the time of each step goes to timings.json."""
    TIMINGS.clear()
    yield scripts.colab_env
    if TIMINGS:
        WORK.mkdir(parents=True, exist_ok=True)
        (WORK / "timings.json").write_text(
            json.dumps({k: round(v, 1) for k, v in TIMINGS.items()}, indent=1), encoding="utf-8")


def run_requests() -> list[str]:
    """What the attention chapter fetches from the release server: each run's manifest and
    files (lib.course.chapter_models), in the chapter's order, each once."""
    paths = []
    for config in long_inputs.MODELS.values():
        run = long_inputs.cached_run(config)
        paths += [f"/{run.tag}/manifest.json"] + [f"/{run.tag}/{name}" for name in run.files()]
    return paths


@pytest.fixture(scope="module")
def release_server():
    """_build/release/ laid out as GitHub serves release assets (<tag>/<file>), on 127.0.0.1:
    the reference checkpoint and the attention chapter's runs (a folder per tag); yields (base
    URL for $SEQ2SEQ_RELEASE_URL, the reference's manifest, request log)."""
    import lib.course.reference
    from lib.course.download import sha256_of

    manifest_file = RELEASE / lib.course.reference.MANIFEST
    _require(str(manifest_file), manifest_file.is_file(), "run `make release`")
    manifest = json.loads(manifest_file.read_text(encoding="utf-8"))
    key = lib.course.reference.reference_key()
    assert manifest["key"] == key, (
        f"_build/release holds the checkpoint of key {manifest['key']}, not the current {key}: "
        "run `make release`")
    checkpoint = RELEASE / manifest["file"]
    assert sha256_of(checkpoint) == manifest["sha256"]
    served = WORK / "served" / manifest["tag"]
    if served.parent.exists():
        shutil.rmtree(served.parent)
    served.mkdir(parents=True)
    for path in (checkpoint, manifest_file):
        shutil.copy2(path, served / path.name)
    tags = sorted({path.split("/")[1] for path in run_requests()})
    missing = [tag for tag in tags if not (RELEASE / tag / "manifest.json").is_file()]
    assert not missing, (f"_build/release has no runs of the current keys {missing}: run "
                         "`make release`")
    for tag in tags:
        shutil.copytree(RELEASE / tag, served.parent / tag)
    with serving(served.parent) as (httpd, url):
        yield url.rstrip("/"), manifest, httpd.requests


@pytest.fixture(scope="module")
def fresh_env(colab_env):
    """A new Colab-like environment and what is installed in it before any setup cell ran."""
    TIMINGS.update({f"create {k}": v for k, v in colab_env.create_env(ENV).items()})
    before = colab_env.installed_versions(ENV)
    unmet = colab_env.unmet_pins(before)
    assert not unmet, f"not at the pinned versions (pinned, installed): {unmet}"
    for absent in ("seq2seq-course-lib", "sacrebleu"):  # Colab has neither
        assert absent not in before, f"{absent} is preinstalled; the test would prove nothing"
    return before


@pytest.fixture(scope="module")
def stand_in(colab_env):
    """The repository the setup cell installs from: a local git repository on the branch
    named in _config.yml, at the same owner/name path as on GitHub."""
    url, branch = colab_setup.load_repository()
    owner_name = url.removeprefix("https://github.com/")
    return colab_env.stand_in_repository(GITHUB / owner_name, branch)


def probe_cell() -> nbformat.NotebookNode:
    """Run right after the setup cell: where `lib` comes from; training the reference model or
    the attention chapter's models and fetching the corpus are replaced by functions that fail
    the notebook."""
    return nbformat.v4.new_code_cell(f"""\
import json
from importlib import metadata

import lib
import lib.data
import lib.course.download
import lib.course.reference
import lib.experiments.long_inputs


def _refuse(what):
    def refuse(*args, **kwargs):
        raise AssertionError(f"COLD-START: the notebook {{what}}")
    return refuse


lib.course.reference.train_reference = _refuse("trained the reference model")
lib.experiments.long_inputs.run = _refuse("trained the attention chapter's models")
lib.course.download.fetch_corpus = _refuse("downloaded the corpus")
report = {{"lib": lib.__file__, "version": metadata.version("seq2seq-course-lib"),
          "corpus": str(lib.data.corpus_path()), "packaged": str(lib.data.PACKAGED_CORPUS),
          "cache": str(lib.course.reference.cache_path())}}
print("{PROBE}", json.dumps(report))
""")


def probe_report(cell) -> dict:
    for output in cell.get("outputs", []):
        for line in output.get("text", "").splitlines():
            if line.startswith(PROBE + " "):
                return json.loads(line[len(PROBE) + 1:])
    raise AssertionError(f"the probe cell printed no report: {cell.get('outputs')}")


def reader_notebook(chapter: str) -> Path:
    path = NOTEBOOKS / f"{chapter}.ipynb"
    _require(str(path), path.is_file(), "run `make notebooks`")
    return path


def prepared_notebook(colab_env, path: Path, repository: Path):
    """A fresh in-memory copy of `path`: setup cell pointed at `repository`, probe after it."""
    nb = nbformat.read(path, as_version=4)
    i = colab_env.setup_cell_index(nb)
    nb.cells[i].source = colab_env.setup_cell_for(nb.cells[i].source, repository)
    nb.cells.insert(i + 1, probe_cell())
    return nb, i + 1


def execute(colab_env, nb, cwd: Path, env_vars: dict) -> str | None:
    """Run `nb` in a kernel of the Colab-like environment; None, or the failing cell's
    traceback."""
    from nbclient.exceptions import CellExecutionError

    try:
        colab_env.run_notebook(nb, ENV, cwd, env_vars)
    except CellExecutionError as error:
        return re.sub(r"\x1b\[[0-9;]*m", "", str(error))  # the traceback's terminal colours
    return None


def cold_runtime(name: str, release_url: str) -> tuple[Path, dict]:
    """A new empty working directory and HOME for one notebook, and the kernel's variables."""
    root = WORK / "runtimes" / name
    if root.exists():
        shutil.rmtree(root)
    (root / "home").mkdir(parents=True)
    (root / "content").mkdir()
    return root / "content", {"HOME": str(root / "home"), "SEQ2SEQ_RELEASE_URL": release_url}


def kernel_results(home: Path) -> Path:
    """Where memo keeps results in a kernel with this HOME and no $SEQ2SEQ_CACHE
    (lib.course.download.cache_dir)."""
    return home / ".cache" / "seq2seq-course" / "results"


def copy_from_the_build(names, home: Path) -> int:
    """Copy the build's memo results called `names` into the cache a kernel with this HOME reads;
    returns how many files."""
    from lib.course.download import cache_dir

    source = cache_dir() / "results"
    target = kernel_results(home)
    files = [path for name in names for path in sorted(source.glob(f"{name}-*.json"))]
    target.mkdir(parents=True, exist_ok=True)
    for path in files:
        shutil.copy2(path, target / path.name)
    return len(files)


def check_lib_is_installed(report: dict, site: Path, where: str) -> None:
    lib_file = Path(report["lib"]).resolve()
    assert lib_file.is_relative_to(site.resolve()), (
        f"{where}: `lib` was imported from {lib_file}, not from the Colab-like environment's "
        f"site-packages ({site}): the chapter did not use the installed package"
    )
    assert not lib_file.is_relative_to(ROOT / "lib"), lib_file


def cell_seconds(cell) -> float:
    """How long a cell ran, from the timing nbclient records in its metadata."""
    from datetime import datetime

    timing = cell.metadata["execution"]
    start, end = (datetime.fromisoformat(timing[k].replace("Z", "+00:00"))
                  for k in ("iopub.execute_input", "shell.execute_reply"))
    return (end - start).total_seconds()


def cold_start(colab_env, chapter: str, stand_in: Path, release_server) -> dict:
    """Run `chapter`'s reader notebook in a cold runtime of the Colab-like environment; what
    the tests read afterwards: the notebook, its probe's index, the kernel's variables, what it
    fetched from the release server and the failing cell's traceback (None)."""
    release_url, _, requests = release_server
    nb, probe = prepared_notebook(colab_env, reader_notebook(chapter), stand_in)
    cwd, env_vars = cold_runtime(chapter, release_url)
    if chapter in FROM_THE_BUILD:
        TIMINGS[f"{chapter}: results copied from the build"] = copy_from_the_build(
            FROM_THE_BUILD[chapter], Path(env_vars["HOME"]))
    already = len(requests)
    start = time.perf_counter()
    try:
        error = execute(colab_env, nb, cwd, env_vars)
    finally:
        TIMINGS[chapter] = time.perf_counter() - start
        (WORK / "executed").mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, WORK / "executed" / f"{chapter}.ipynb")
    return {"nb": nb, "probe": probe, "env": env_vars, "fetched": requests[already:],
            "error": error}


@pytest.fixture(scope="module")
def installed(colab_env, fresh_env, stand_in, release_server):
    """The first chapter's cold start, which is also the first install into the fresh
    environment: what its setup cell installed is read after the whole notebook ran (a failing
    later cell fails that chapter's test, not this fixture)."""
    site = colab_env.site_packages(ENV)
    first = cold_start(colab_env, CHAPTERS[0], stand_in, release_server)
    try:
        report = probe_report(first["nb"].cells[first["probe"]])
    except AssertionError:  # the setup cell or the probe failed: say how
        pytest.fail(f"the setup cell of {CHAPTERS[0]}.ipynb failed in the Colab-like "
                    f"environment:\n{first['error']}", pytrace=False)
    return {"before": fresh_env, "after": colab_env.installed_versions(ENV), "site": site,
            "report": report, "first": first}


@pytest.mark.slow
def test_setup_cell_keeps_colab_packages(colab_env, installed):
    before, after = installed["before"], installed["after"]
    changed = colab_env.changed_versions(before, after)
    protected = {name: changed[name] for name in colab_env.PROTECTED if name in changed}
    assert not protected, f"the setup cell changed Colab's own (before, after): {protected}"
    assert not changed, f"the setup cell changed preinstalled packages (before, after): {changed}"
    added = set(after) - set(before)
    assert {"seq2seq-course-lib", "sacrebleu"} <= added, f"installed: {sorted(added)}"
    report = installed["report"]
    check_lib_is_installed(report, installed["site"], "setup cell")
    # The corpus is the copy inside the installed package, found with no network.
    assert report["corpus"] == report["packaged"]
    assert Path(report["corpus"]).resolve().is_relative_to(installed["site"].resolve())


@pytest.mark.slow
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_reader_notebook_cold_start_in_colab(colab_env, installed, stand_in, release_server,
                                             chapter):
    """The first chapter ran in `installed`; every other one runs here."""
    _, manifest, _ = release_server
    run = (installed["first"] if chapter == CHAPTERS[0]
           else cold_start(colab_env, chapter, stand_in, release_server))
    if run["error"]:
        pytest.fail(f"{chapter}.ipynb failed in the Colab-like environment:\n{run['error']}",
                    pytrace=False)
    nb, env_vars, fetched = run["nb"], run["env"], run["fetched"]
    report = probe_report(nb.cells[run["probe"]])
    check_lib_is_installed(report, installed["site"], chapter)
    assert report["corpus"] == report["packaged"], report
    assert Path(report["cache"]).is_relative_to(Path(env_vars["HOME"]))
    if chapter in FROM_THE_BUILD:  # the copies went where the kernel's memo looks
        assert Path(report["cache"]).parent / "results" == kernel_results(Path(env_vars["HOME"]))
    changed = colab_env.changed_versions(installed["before"], colab_env.installed_versions(ENV))
    assert not changed, f"{chapter} changed preinstalled packages (before, after): {changed}"

    runs = [path for path in fetched if not path.startswith(f"/{manifest['tag']}/")]
    fetches_runs = any("cached_runs(" in c.source for c in nb.cells if c.cell_type == "code")
    assert runs == (run_requests() if fetches_runs else []), (
        f"{chapter}: the attention chapter's published runs were not fetched exactly once "
        f"from their releases: {runs}")
    loading = [c for c in nb.cells if c.cell_type == "code" and "pretrained(" in c.source]
    if not loading:
        return  # a chapter without the reference model
    seconds = cell_seconds(loading[0])
    TIMINGS[f"{chapter}: first model-loading cell"] = seconds
    assert seconds <= FIRST_LOAD_LIMIT, (
        f"{chapter}: the first cell that loads the reference model took {seconds:.1f} s "
        f"(limit {FIRST_LOAD_LIMIT:.0f} s, download + load from 127.0.0.1)")
    tag = manifest["tag"]
    assert [p for p in fetched if p not in runs] == [f"/{tag}/manifest.json",
                                                    f"/{tag}/{manifest['file']}"], (
        f"{chapter}: the published checkpoint was not fetched exactly once from the release")


# --- the helpers alone (fast) -----------------------------------------------------------------


def test_every_chapter_has_one_setup_cell_the_test_can_redirect(colab_env, tmp_path):
    assert CHAPTERS, "no chapter notebooks in _toc.yml"
    for page in toc.notebooks():
        nb = toc.read(toc.source(page))
        source = nb.cells[colab_env.setup_cell_index(nb)].source
        redirected = colab_env.setup_cell_for(source, tmp_path)
        old, new = source.splitlines(), redirected.splitlines()
        differ = [(a, b) for a, b in zip(old, new) if a != b]
        assert len(old) == len(new) and len(differ) == 1, differ
        _, branch = colab_setup.load_repository()
        assert differ[0][1] == f'COURSE_PACKAGE = "git+file://{tmp_path.resolve()}@{branch}"'


def test_setup_cell_without_a_github_url_is_refused(colab_env, tmp_path):
    with pytest.raises(colab_env.ColabEnvError, match="COURSE_PACKAGE"):
        colab_env.setup_cell_for('COURSE_PACKAGE = "lib"\n', tmp_path)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import lib")])
    with pytest.raises(colab_env.ColabEnvError, match="scripts.colab_setup --write"):
        colab_env.setup_cell_index(nb)


def test_unmet_pins(colab_env):
    pins = colab_env.pinned_versions()
    assert pins["torch"] == colab_env.COLAB_TORCH.split("==")[1]
    assert pins["ipywidgets"].startswith("7.")
    installed = {**pins, "torch": pins["torch"] + "+cpu", "sacrebleu": "2.6.0"}
    assert colab_env.unmet_pins(installed) == {}
    installed = {**installed, "numpy": "0.0.1"}
    del installed["ipython"]
    assert colab_env.unmet_pins(installed) == {"numpy": (pins["numpy"], "0.0.1"),
                                               "ipython": (pins["ipython"], None)}


def test_changed_versions(colab_env):
    before = {"torch": "2.13.0", "numpy": "2.1.3", "ipywidgets": "7.7.1"}
    after = {"torch": "2.14.0", "numpy": "2.1.3", "sacrebleu": "2.6.0"}
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


def test_kernel_env_does_not_leak_this_machine(colab_env, monkeypatch, tmp_path):
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.setenv("VIRTUAL_ENV", str(ROOT / ".venv"))
    for name in ("SEQ2SEQ_DATA", "SEQ2SEQ_CACHE", "SEQ2SEQ_DEVICE", "SEQ2SEQ_RELEASE_URL"):
        monkeypatch.setenv(name, "/from/this/machine")
    env = colab_env.kernel_env(tmp_path / "venv", {"HOME": "/fresh/home"})
    assert "PYTHONPATH" not in env and "VIRTUAL_ENV" not in env
    assert not [name for name in env if name.startswith("SEQ2SEQ_")]
    assert env["PATH"].split(os.pathsep)[0] == str(tmp_path / "venv" / "bin")
    assert env["HOME"] == "/fresh/home"


def test_cell_seconds_reads_nbclients_timing():
    cell = nbformat.v4.new_code_cell("x = 1")
    cell.metadata["execution"] = {"iopub.execute_input": "2026-11-23T10:00:01.250Z",
                                  "shell.execute_reply": "2026-11-23T10:00:31.750Z"}
    assert cell_seconds(cell) == 30.5


def test_copy_from_the_build_takes_only_the_named_results(monkeypatch, tmp_path):
    build = tmp_path / "build-cache"
    (build / "results").mkdir(parents=True)
    for name in ("bottleneck-reversal-0123.json", "bottleneck-reversal-4567.json",
                 "teacher-forcing-reversal-89ab.json", "corpus-cdef.json"):
        (build / "results" / name).write_text("{}")
    monkeypatch.setenv("SEQ2SEQ_CACHE", str(build))
    home = tmp_path / "home"
    assert copy_from_the_build(("bottleneck-reversal",), home) == 2
    assert sorted(p.name for p in kernel_results(home).iterdir()) == [
        "bottleneck-reversal-0123.json", "bottleneck-reversal-4567.json"]
