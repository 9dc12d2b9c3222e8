"""Continuous delivery, tested without GitHub: the workflows call only make targets that exist
(`make lint` runs actionlint on them), every target is described at the top of the Makefile,
and scripts/publish.py does the right thing against local stand-ins (a fake `gh` on PATH that
records its arguments, and a local bare repository as `origin`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ROOT

from scripts import publish

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
MAKEFILE = ROOT / "Makefile"
PUBLISH = [sys.executable, "-m", "scripts.publish"]  # from the repository root
RUN_STEP = re.compile(r"make ([A-Za-z0-9][\w.-]*)|\.ci/run")


# ---------------------------------------------------------------------------------------------
# The workflows


def load_workflow(path: Path) -> dict:
    workflow = yaml.safe_load(path.read_text(encoding="utf-8"))
    workflow["on"] = workflow.pop(True, workflow.get("on"))  # YAML 1.1 reads `on:` as true
    return workflow


def makefile_targets(text: str) -> set[str]:
    """Targets of `name: ...` rule lines (not `VAR := value`, not `$(STAMP):`)."""
    return set(re.findall(r"^([A-Za-z0-9][\w.-]*)\s*:(?!=)", text, flags=re.M))


def run_step_problems(workflow: dict, targets: set[str]) -> list[str]:
    """Every `run:` that is not one `make <existing target>` or `.ci/run`."""
    problems = []
    for job_name, job in workflow.get("jobs", {}).items():
        for step in job.get("steps", []):
            if "run" not in step:
                continue
            command = str(step["run"]).strip()
            match = RUN_STEP.fullmatch(command)
            if not match:
                problems.append(f"{job_name}: {command!r} is not one make call")
            elif match.group(1) and match.group(1) not in targets:
                problems.append(f"{job_name}: make target {match.group(1)!r} does not exist")
    return problems


def steps(workflow: dict, job: str) -> list[dict]:
    return workflow["jobs"][job]["steps"]


def test_the_workflows_exist():
    assert [p.name for p in WORKFLOWS] == ["deploy.yml", "test.yml"]


def test_makefile_targets_are_parsed():
    targets = makefile_targets(MAKEFILE.read_text(encoding="utf-8"))
    assert {"book", "test", "release", "notebooks", "publish-release",
            "publish-notebooks"} <= targets
    assert not {"SHELL", "PY", "STAMP", "$(STAMP)"} & targets
    assert makefile_targets("A := 1\nb: c\n$(X): y\nc-d.e:\n") == {"b", "c-d.e"}


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_every_run_step_is_one_existing_make_target(path):
    workflow = load_workflow(path)
    targets = makefile_targets(MAKEFILE.read_text(encoding="utf-8"))
    runs = [s["run"] for job in workflow["jobs"] for s in steps(workflow, job) if "run" in s]
    assert runs, f"{path.name} runs nothing"
    assert run_step_problems(workflow, targets) == []


def test_the_run_step_check_rejects_what_it_should():
    workflow = {"jobs": {"j": {"steps": [
        {"run": "make book"}, {"run": ".ci/run"}, {"uses": "actions/checkout@v5"},
        {"run": "make book && make test"}, {"run": "make no-such-target"},
        {"run": "pip install -r requirements.txt"}]}}}
    assert run_step_problems(workflow, {"book", "test"}) == [
        "j: 'make book && make test' is not one make call",
        "j: make target 'no-such-target' does not exist",
        "j: 'pip install -r requirements.txt' is not one make call",
    ]


def test_deploy_builds_publishes_and_deploys_in_order():
    workflow = load_workflow(ROOT / ".github" / "workflows" / "deploy.yml")
    assert workflow["on"] == {"push": {"branches": ["main"]}, "workflow_dispatch": None}
    assert workflow["concurrency"] == {"group": "deploy", "cancel-in-progress": False}

    build = workflow["jobs"]["build"]
    assert build["runs-on"] == "ubuntu-latest"
    assert build["permissions"] == {"contents": "write"}
    uses = [s["uses"].split("@")[0] for s in build["steps"] if "uses" in s]
    runs = [s["run"] for s in build["steps"] if "run" in s]
    assert uses == ["actions/checkout", "actions/setup-python", "actions/cache",
                    "actions/upload-pages-artifact"]
    assert runs == ["make playground", "make book", "make publish-release",
                    "make publish-notebooks"]
    order = [s.get("run") or s["uses"].split("@")[0] for s in build["steps"]]
    # the Playground's model is exported from the cached reference model, before the site build
    assert order.index("actions/cache") < order.index("make playground") < order.index("make book")
    assert order[-1] == "actions/upload-pages-artifact"
    by_use = {s["uses"].split("@")[0]: s for s in build["steps"] if "uses" in s}
    assert by_use["actions/setup-python"]["with"] == {"python-version": "3.11"}
    cache = by_use["actions/cache"]["with"]
    assert cache["path"] == "~/.cache/seq2seq-course"
    assert "hashFiles('lib/**', 'requirements.txt', 'pyproject.toml')" in cache["key"]
    assert by_use["actions/upload-pages-artifact"]["with"] == {"path": "_build/html"}
    release = next(s for s in build["steps"] if s.get("run") == "make publish-release")
    assert release["env"] == {"GH_TOKEN": "${{ github.token }}"}

    deploy = workflow["jobs"]["deploy"]
    assert deploy["needs"] == "build"
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert deploy["environment"]["name"] == "github-pages"
    assert [s["uses"].split("@")[0] for s in deploy["steps"]] == ["actions/deploy-pages"]


def test_test_workflow_lints_and_runs_make_test_on_pull_requests_and_main():
    workflow = load_workflow(ROOT / ".github" / "workflows" / "test.yml")
    assert "pull_request" in workflow["on"]
    assert workflow["on"]["push"] == {"branches": ["main"]}
    assert [s["run"] for s in steps(workflow, "test") if "run" in s] == ["make lint", "make test"]


def test_ci_runs_the_readmes_commands():
    """.ci/run, the CI entry point, runs what the README tells maintainers to run."""
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
          if line.strip().startswith("make ")]
    assert ci == ["make lint", "make test"]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "make lint" in readme and "make test" in readme


def makefile_targets_undescribed(makefile: str) -> list[str]:
    """The targets (rule lines and .PHONY) that the Makefile's opening comment does not describe
    as `make <target>`, sorted."""
    lines = makefile.splitlines()
    top = "\n".join(lines[:next(i for i, line in enumerate(lines) if not line.startswith("#"))])
    described = set(re.findall(r"\bmake ([A-Za-z0-9][\w.-]*)", top))
    phony = re.search(r"^\.PHONY:((?:.*\\\n)*.*)", makefile, re.M)
    targets = set(phony.group(1).replace("\\\n", " ").split()) if phony else set()
    return sorted((targets | makefile_targets(makefile)) - described)


def test_every_make_target_is_described_at_the_top_of_the_makefile():
    """The README sends maintainers to the top of the Makefile for every target."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "described at the top of the `Makefile`" in readme
    missing = makefile_targets_undescribed(MAKEFILE.read_text(encoding="utf-8"))
    assert not missing, f"Makefile targets not described in its opening comment: {missing}"


def test_makefile_rule_finds_an_undescribed_target():
    makefile = ("# Every target:\n#   make book   build it\n#   make test-all  not `test`\n"
                "SHELL := /bin/bash\n# make test (too late: not the opening comment)\n"
                ".PHONY: book test \\\n\tclean\nbook:\nlint: book\n$(STAMP): x\n")
    assert makefile_targets_undescribed(makefile) == ["clean", "lint", "test"]


@pytest.mark.parametrize("target, command", [
    ("publish-release", "-m scripts.publish release _build/release"),
    ("publish-notebooks", "-m scripts.publish notebooks _build/notebooks"),
])
def test_publish_targets_call_the_publish_script(target, command):
    """`make -n` (prints, runs nothing): the target's own recipe ends the plan, after its
    prerequisites (the release or the notebooks it publishes)."""
    # Not the caller's make settings: under `make test` MAKELEVEL makes make print
    # "Leaving directory" lines, and MAKEFLAGS could carry -k or -j.
    env = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
    result = subprocess.run(["make", "-n", "--no-print-directory", target], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert lines[-1] == f".venv/bin/python {command}"
    builds = "lib.course.release --out _build/release" if target == "publish-release" \
        else "-m scripts.reader_notebooks --out _build/notebooks"
    assert any(builds in line for line in lines[:-1])


# ---------------------------------------------------------------------------------------------
# The browser: $CHROMIUM, else Google Chrome (GitHub's runners), else Debian's chromium


def _fake_commands(folder: Path, names: dict[str, str]) -> Path:
    """Executables `name` running the shell script `body`, in folder; returns folder."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, body in names.items():
        (folder / name).write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
        (folder / name).chmod(0o755)
    return folder


def test_the_browser_tests_find_chromium_then_chrome_then_debian_chromium(
        monkeypatch, tmp_path):
    from conftest import chromium_path

    both = _fake_commands(tmp_path / "both", {"google-chrome": "", "chromium": ""})
    debian = _fake_commands(tmp_path / "debian", {"chromium": ""})
    mine = _fake_commands(tmp_path / "mine", {"my-chrome": ""})
    monkeypatch.delenv("CHROMIUM", raising=False)
    monkeypatch.setenv("PATH", str(both))
    assert chromium_path() == str(both / "google-chrome")
    monkeypatch.setenv("PATH", str(debian))
    assert chromium_path() == str(debian / "chromium")
    monkeypatch.setenv("CHROMIUM", str(mine / "my-chrome"))
    assert chromium_path() == str(mine / "my-chrome")
    monkeypatch.setenv("CHROMIUM", str(tmp_path / "no-such-browser"))
    with pytest.raises(FileNotFoundError, match="CHROMIUM=.*no-such-browser.* not an executable"):
        chromium_path()


@pytest.mark.parametrize("present, environment, installed", [
    (["google-chrome"], {}, ""),  # GitHub's runners: nothing to install
    (["chromium"], {}, ""),  # Debian with the package
    ([], {"CHROMIUM": "/opt/any/chrome"}, ""),
    ([], {}, "chromium"),  # Debian without it
])
@pytest.mark.parametrize("cjk_font", [True, False])
def test_make_chromium_installs_only_what_is_missing(tmp_path, present, environment, installed,
                                                    cjk_font):
    """`make chromium` with stand-ins for the browsers, fc-list and apt-get on PATH."""
    log = tmp_path / "apt.log"
    commands = {name: "" for name in present}
    commands["fc-list"] = "echo '/f/wqy.ttc: WenQuanYi Micro Hei'" if cjk_font else ""
    commands["apt-get"] = f'echo "$*" >> {log}'
    bin_dir = _fake_commands(tmp_path / "bin", commands)
    for tool in ("env", "grep", "sudo", "id"):  # the recipe's own tools, nothing else of PATH
        if shutil.which(tool):
            (bin_dir / tool).symlink_to(shutil.which(tool))
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path), **environment}
    result = subprocess.run([shutil.which("make"), "--no-print-directory", "chromium"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    packages = " ".join(filter(None, [installed, "" if cjk_font else "fonts-wqy-microhei"]))
    calls = log.read_text().splitlines() if log.exists() else []
    if packages:
        assert calls[0] == "update" and calls[1].endswith(f"install -y --no-install-recommends "
                                                         f"{packages}"), calls
    else:
        assert calls == [], calls


# ---------------------------------------------------------------------------------------------
# publish.py release, against a fake gh

FAKE_GH = """\
#!{python}
# A stand-in for the GitHub CLI: records argv (and the sha256 of file arguments), answers
# `release view` and `release download` from the scenario file.
import hashlib, json, os, sys
args = sys.argv[1:]
record = {{"argv": args, "files": {{}}}}
for a in args:
    if os.path.isfile(a):
        record["files"][a] = hashlib.sha256(open(a, "rb").read()).hexdigest()
with open(os.environ["FAKE_GH_LOG"], "a") as f:
    f.write(json.dumps(record) + "\\n")
scenario = json.load(open(os.environ["FAKE_GH_SCENARIO"]))
answer = scenario.get(" ".join(args[:2]), {{}})
sys.stdout.write(answer.get("stdout", ""))
sys.stderr.write(answer.get("stderr", ""))
sys.exit(answer.get("exit", 0))
"""

KEY = "71ebfafbf7db18c7"
TAG = f"reference-{KEY}"
CKPT = f"reference-{KEY}.pt"
NOT_FOUND = {"exit": 1, "stderr": "release not found\n"}


class FakeGh:
    """The fake gh's scenario (what each `gh <group> <command>` answers) and its call log."""

    def __init__(self, root: Path):
        self.bin = root / "bin"
        self.bin.mkdir()
        gh = self.bin / "gh"
        gh.write_text(FAKE_GH.format(python=sys.executable), encoding="utf-8")
        gh.chmod(0o755)
        self.log = root / "gh-calls.jsonl"
        self.scenario_file = root / "gh-scenario.json"
        self.scenario({})

    def scenario(self, answers: dict) -> None:
        self.scenario_file.write_text(json.dumps(answers), encoding="utf-8")

    def view_assets(self, *assets: tuple[str, int], state: str = "uploaded") -> None:
        listed = [{"name": n, "size": s, "state": state, "label": ""} for n, s in assets]
        self.scenario({"release view": {"stdout": json.dumps({"assets": listed})}})

    def calls(self) -> list[dict]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text(encoding="utf-8").splitlines()]

    def argvs(self) -> list[list[str]]:
        return [c["argv"] for c in self.calls()]


@pytest.fixture
def gh(tmp_path, monkeypatch):
    fake = FakeGh(tmp_path)
    monkeypatch.setenv("PATH", f"{fake.bin}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_GH_LOG", str(fake.log))
    monkeypatch.setenv("FAKE_GH_SCENARIO", str(fake.scenario_file))
    monkeypatch.delenv("GITHUB_SHA", raising=False)
    return fake


@pytest.fixture
def release_dir(tmp_path):
    """A release directory as `make release` writes it: a checkpoint and its manifest."""
    out = tmp_path / "release"
    out.mkdir()
    data = bytes(range(256)) * 40 + b"weights"
    (out / CKPT).write_bytes(data)
    # As lib/course/release.py writes it (extra fields such as "training" are ignored).
    manifest = {"key": KEY, "file": CKPT, "sha256": hashlib.sha256(data).hexdigest(),
                "bytes": len(data), "dtype": "float16", "lib_version": "0.1.0",
                "test_bleu": {"float32": {"greedy": 36.46, "beam5": 39.52},
                              "float16": {"greedy": 36.4, "beam5": 39.5}},
                "test_sentences": 3802, "training": {"minutes": 13.8}, "tag": TAG}
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return out


def manifest_of(directory: Path) -> dict:
    return json.loads((directory / "manifest.json").read_text(encoding="utf-8"))


def test_new_release_is_created_with_both_files(gh, release_dir, capsys):
    gh.scenario({"release view": NOT_FOUND})
    assert publish.publish_release(release_dir) == "created"
    view, create = gh.calls()
    assert view["argv"] == ["release", "view", TAG, "--json", "assets"]
    ckpt, manifest = str(release_dir / CKPT), str(release_dir / "manifest.json")
    argv = create["argv"]
    assert argv[:5] == ["release", "create", TAG, ckpt, manifest]
    options = dict(zip(argv[5::2], argv[6::2]))
    assert set(options) == {"--title", "--notes"}
    assert options["--title"] == f"Reference model {KEY}"
    sha = manifest_of(release_dir)["sha256"]
    notes = options["--notes"]
    for expected in (KEY, sha, "BLEU on 3,802 test sentences", "float32 greedy: 36.46",
                     "float32 beam5: 39.52", "float16 greedy: 36.40", "float16 beam5: 39.50",
                     "10,247 bytes, float16", "lib version: 0.1.0", "Tatoeba", "CC-BY 2.0 FR",
                     "https://creativecommons.org/licenses/by/2.0/fr/"):
        assert expected in notes
    # gh received the very files the manifest describes.
    assert create["files"][ckpt] == sha
    assert create["files"][manifest] == hashlib.sha256(
        (release_dir / "manifest.json").read_bytes()).hexdigest()
    assert f"release {TAG}: created" in capsys.readouterr().out


def test_a_flat_bleu_field_is_accepted_too(gh, release_dir):
    rewrite(release_dir, test_bleu=..., test_sentences=..., bleu={"greedy": 36.46, "beam5": 39.5})
    gh.scenario({"release view": NOT_FOUND})
    assert publish.publish_release(release_dir) == "created"
    notes = gh.argvs()[1][gh.argvs()[1].index("--notes") + 1]
    assert "- held-out BLEU:\n  - greedy: 36.46\n  - beam5: 39.50\n" in notes


def test_new_release_targets_the_built_commit_from_the_cli(gh, release_dir, monkeypatch):
    """Actions sets GITHUB_SHA: the new tag points at the commit that was built."""
    gh.scenario({"release view": NOT_FOUND})
    monkeypatch.setenv("GITHUB_SHA", "a" * 40)
    result = subprocess.run([*PUBLISH, "release", str(release_dir)],
                            cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    create = gh.argvs()[1]
    assert create[create.index("--target") + 1] == "a" * 40


def test_complete_release_is_left_alone(gh, release_dir, capsys):
    size = manifest_of(release_dir)["bytes"]
    gh.view_assets((CKPT, size), ("manifest.json", 300))
    assert publish.publish_release(release_dir) == "unchanged"
    assert gh.argvs() == [["release", "view", TAG, "--json", "assets"]]
    assert "already published" in capsys.readouterr().out


def test_release_missing_its_manifest_gets_only_the_manifest(gh, release_dir):
    gh.view_assets((CKPT, manifest_of(release_dir)["bytes"]))
    assert publish.publish_release(release_dir) == "uploaded"
    assert gh.argvs()[1:] == [["release", "upload", TAG, str(release_dir / "manifest.json"),
                               "--clobber"]]


def test_release_missing_its_checkpoint_gets_it_after_checking_the_manifest(
        gh, release_dir):
    published = (release_dir / "manifest.json").read_text(encoding="utf-8")
    gh.scenario({"release view": {"stdout": json.dumps({"assets": [
                     {"name": "manifest.json", "size": 300, "state": "uploaded"}]})},
                 "release download": {"stdout": published}})
    assert publish.publish_release(release_dir) == "uploaded"
    assert gh.argvs()[1:] == [
        ["release", "download", TAG, "--pattern", "manifest.json", "--output", "-"],
        ["release", "upload", TAG, str(release_dir / CKPT), "--clobber"]]


def test_an_unfinished_upload_counts_as_missing(gh, release_dir):
    size = manifest_of(release_dir)["bytes"]
    gh.scenario({"release view": {"stdout": json.dumps({"assets": [
        {"name": CKPT, "size": size, "state": "uploaded"},
        {"name": "manifest.json", "size": 0, "state": "starter"}]})}})
    assert publish.publish_release(release_dir) == "uploaded"
    assert gh.argvs()[-1] == ["release", "upload", TAG, str(release_dir / "manifest.json"),
                              "--clobber"]


def test_a_different_published_checkpoint_is_never_completed(gh, release_dir):
    gh.view_assets((CKPT, 999))
    with pytest.raises(publish.PublishError, match=r"already holds .*999 bytes.*published once"):
        publish.publish_release(release_dir)
    assert len(gh.argvs()) == 1  # nothing uploaded


def test_a_different_published_digest_is_never_completed(gh, release_dir):
    size = manifest_of(release_dir)["bytes"]
    gh.scenario({"release view": {"stdout": json.dumps({"assets": [
        {"name": CKPT, "size": size, "state": "uploaded", "digest": "sha256:" + "0" * 64}]})}})
    with pytest.raises(publish.PublishError, match="sha256:0000"):
        publish.publish_release(release_dir)
    assert len(gh.argvs()) == 1


def test_a_published_manifest_for_another_checkpoint_is_not_completed(gh, release_dir):
    theirs = dict(manifest_of(release_dir), sha256="f" * 64)
    gh.scenario({"release view": {"stdout": json.dumps({"assets": [
                     {"name": "manifest.json", "size": 300}]})},
                 "release download": {"stdout": json.dumps(theirs)}})
    with pytest.raises(publish.PublishError, match="differs from the local one in sha256"):
        publish.publish_release(release_dir)
    assert [a[:2] for a in gh.argvs()] == [["release", "view"], ["release", "download"]]


def test_gh_failure_is_reported_with_its_message(gh, release_dir):
    gh.scenario({"release view": {"exit": 4, "stderr": "HTTP 401: Bad credentials\n"}})
    with pytest.raises(publish.PublishError, match=r"release view .*exit 4.*Bad credentials"):
        publish.publish_release(release_dir)


def test_gh_missing_from_path_is_a_clear_error(release_dir, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(publish.PublishError, match=r"gh \(the GitHub CLI\) is not on PATH"):
        publish.publish_release(release_dir)


def rewrite(directory: Path, **changes) -> None:
    manifest = manifest_of(directory)
    for name, value in changes.items():
        if value is ...:
            del manifest[name]
        else:
            manifest[name] = value
    (directory / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


@pytest.mark.parametrize("changes, message", [
    ({"sha256": ...}, "field 'sha256' is missing"),
    ({"key": ""}, "field 'key' must be a non-empty string"),
    ({"file": "../elsewhere.pt"}, "field 'file' must be a plain file name"),
    ({"sha256": "ABC"}, "field 'sha256' must be 64 lowercase hex digits"),
    ({"bytes": "10247"}, "field 'bytes' must be a positive integer"),
    ({"bytes": True}, "field 'bytes' must be a positive integer"),
    ({"bytes": 10}, "field 'bytes' is 10, but .* has 10247 bytes"),
    ({"sha256": "0" * 64}, "field 'sha256' is 0{64}, but .* hashes to"),
    ({"file": "other.pt"}, "field 'file' names .*other.pt, which does not exist"),
    ({"tag": "reference-other"}, "field 'tag' must be a tag name without spaces that contains"),
    ({"test_bleu": ...}, r"field 'test_bleu' \(or 'bleu'\) is missing"),
    ({"test_bleu": {}}, "field 'test_bleu' must be a non-empty object"),
    ({"test_bleu": {"float16": {"greedy": "high"}}},
     "field 'test_bleu.float16.greedy' must be a number, not 'high'"),
    ({"test_bleu": ..., "bleu": {"greedy": None}}, "field 'bleu.greedy' must be a number"),
    ({"dtype": 16}, "field 'dtype' must be a string"),
])
def test_bad_manifest_is_refused_naming_the_field(gh, release_dir, changes, message):
    rewrite(release_dir, **changes)
    with pytest.raises(publish.PublishError, match=message) as caught:
        publish.publish_release(release_dir)
    assert str(release_dir / "manifest.json") in str(caught.value)
    assert gh.calls() == []  # nothing is asked of GitHub before the manifest is right


@pytest.mark.parametrize("content, message", [
    (None, "manifest.json: missing"),
    ("{not json", "manifest.json: not valid JSON"),
    ("[1, 2]", "manifest.json: must hold a JSON object, not list"),
])
def test_missing_or_unreadable_manifest_is_refused(gh, release_dir, content, message):
    path = release_dir / "manifest.json"
    if content is None:
        path.unlink()
    else:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(publish.PublishError, match=message):
        publish.publish_release(release_dir)
    assert gh.calls() == []


def test_cli_reports_errors_on_stderr_with_exit_1(gh, release_dir):
    (release_dir / "manifest.json").unlink()
    result = subprocess.run([*PUBLISH, "release", str(release_dir)],
                            cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert result.stderr.startswith("publish.py release: error: ")
    assert "manifest.json: missing" in result.stderr


# --- the attention chapter's runs: a folder per release beside the reference checkpoint -----

RUN_TAG = "long-inputs-0123456789abcdef"
RUN_FILES = {f"{RUN_TAG}.pt": b"fine-tuned weights" * 100, f"{RUN_TAG}.json": b'{"steps": 200}'}


@pytest.fixture
def run_dir(release_dir):
    """A run's release folder inside the release directory, as lib.course.chapter_models
    writes it: the result, the weights and a manifest that lists them under "files"."""
    folder = release_dir / RUN_TAG
    folder.mkdir()
    for name, data in RUN_FILES.items():
        (folder / name).write_bytes(data)
    manifest = {"key": "0123456789abcdef", "tag": RUN_TAG, "name": "long-inputs",
                "description": "The attention chapter's run 'attention'.", "lib_version": "0.1.0",
                "files": [{"file": n, "sha256": hashlib.sha256(d).hexdigest(), "bytes": len(d)}
                          for n, d in RUN_FILES.items()]}
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return folder


def test_publish_releases_publishes_the_reference_then_each_run(gh, release_dir, run_dir):
    gh.scenario({"release view": NOT_FOUND})
    done = publish.publish_releases(release_dir)
    assert done == {release_dir: "created", run_dir: "created"}
    creates = [a for a in gh.argvs() if a[:2] == ["release", "create"]]
    assert [a[2] for a in creates] == [TAG, RUN_TAG]
    run = creates[1]
    files = [str(run_dir / n) for n in RUN_FILES] + [str(run_dir / "manifest.json")]
    assert run[3:6] == files
    options = dict(zip(run[6::2], run[7::2]))
    assert options["--title"] == f"Run {RUN_TAG}"
    notes = options["--notes"]
    for name, data in RUN_FILES.items():
        assert f"`{name}` ({len(data):,} bytes), sha256 `{hashlib.sha256(data).hexdigest()}`" \
            in notes
    assert notes.startswith("The attention chapter's run 'attention'.") and "CC-BY" in notes
    last = gh.calls()[-1]
    assert all(last["files"][str(run_dir / n)] == hashlib.sha256(d).hexdigest()
               for n, d in RUN_FILES.items())


def test_a_run_release_missing_its_weights_gets_them_after_checking_the_manifest(gh, run_dir):
    published = (run_dir / "manifest.json").read_text(encoding="utf-8")
    json_name = f"{RUN_TAG}.json"
    gh.scenario({"release view": {"stdout": json.dumps({"assets": [
                     {"name": "manifest.json", "size": 300, "state": "uploaded"},
                     {"name": json_name, "size": len(RUN_FILES[json_name])}]})},
                 "release download": {"stdout": published}})
    assert publish.publish_release(run_dir) == "uploaded"
    assert gh.argvs()[1:] == [
        ["release", "download", RUN_TAG, "--pattern", "manifest.json", "--output", "-"],
        ["release", "upload", RUN_TAG, str(run_dir / f"{RUN_TAG}.pt"), "--clobber"]]


def test_a_run_release_with_other_files_is_never_completed(gh, run_dir):
    theirs = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    theirs["files"][0]["sha256"] = "f" * 64
    gh.scenario({"release view": {"stdout": json.dumps({"assets": [
                     {"name": "manifest.json", "size": 300}]})},
                 "release download": {"stdout": json.dumps(theirs)}})
    with pytest.raises(publish.PublishError, match="differs from the local one in files"):
        publish.publish_release(run_dir)
    gh.view_assets((f"{RUN_TAG}.json", 3))
    with pytest.raises(publish.PublishError, match=rf"already holds {RUN_TAG}\.json with 3 "
                                                   r"bytes"):
        publish.publish_release(run_dir)


def rewrite_run(folder: Path, change) -> None:
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    change(manifest)
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


@pytest.mark.parametrize("change, message", [
    (lambda m: m.pop("description"), "field 'description' is missing"),
    (lambda m: m.update(files=[]), "field 'files' must be a non-empty list of objects"),
    (lambda m: m.update(files=["a.pt"]), "field 'files' must be a non-empty list of objects"),
    (lambda m: m["files"][1].update(sha256="0" * 64),
     r"field 'files\[1\]\.sha256' is 0{64}, but .*\.json hashes to"),
    (lambda m: m["files"][0].update(bytes=5), r"field 'files\[0\]\.bytes' is 5, but"),
    (lambda m: m["files"][0].update(file="../x.pt"), r"field 'files\[0\]\.file' must be a plain"),
    (lambda m: m["files"][0].pop("sha256"), r"field 'files\[0\]\.sha256' is missing"),
    (lambda m: m["files"].append(dict(m["files"][0])), "names a file twice"),
    (lambda m: m.update(tag="long-inputs-other"), "field 'tag' must be a tag name"),
])
def test_a_bad_run_manifest_is_refused_naming_the_field(gh, release_dir, run_dir, change,
                                                        message):
    rewrite_run(run_dir, change)
    with pytest.raises(publish.PublishError, match=message) as caught:
        publish.publish_releases(release_dir)
    assert str(run_dir / "manifest.json") in str(caught.value)
    assert gh.calls() == []  # nothing is asked of GitHub before every manifest is right


# ---------------------------------------------------------------------------------------------
# publish.py notebooks, against a local bare repository as origin


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True,
                          check=True, timeout=60).stdout.strip()


@pytest.fixture
def hermetic_git(tmp_path, monkeypatch):
    """No user or system git configuration leaks into the test."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME",
                 "GIT_COMMITTER_EMAIL", "GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def caller(tmp_path, hermetic_git):
    """A checkout on branch main with a staged and an unstaged change, and a bare origin."""
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", str(origin)], check=True)
    repo = tmp_path / "checkout"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    git(repo, "config", "user.name", "Course Maintainer")
    git(repo, "config", "user.email", "maintainer@example.org")
    (repo / "README.md").write_text("course\n", encoding="utf-8")
    (repo / "lib.py").write_text("x = 1\n", encoding="utf-8")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "first")
    git(repo, "remote", "add", "origin", str(origin))
    git(repo, "push", "-q", "origin", "main")
    (repo / "lib.py").write_text("x = 2\n", encoding="utf-8")
    git(repo, "add", "lib.py")
    (repo / "README.md").write_text("course, edited\n", encoding="utf-8")
    (repo / "untracked.txt").write_text("mine\n", encoding="utf-8")
    return repo, origin


def checkout_state(repo: Path) -> dict:
    """Everything of the caller's checkout that publishing must leave alone.

    Only origin/notebooks may move: git's push and fetch keep a remote-tracking ref in step
    with the remote, as they do for any push.
    """
    refs = git(repo, "for-each-ref", "--format=%(refname) %(objectname)").splitlines()
    return {"head": git(repo, "symbolic-ref", "HEAD"), "commit": git(repo, "rev-parse", "HEAD"),
            "refs": [r for r in refs if not r.startswith("refs/remotes/origin/notebooks ")],
            "index": git(repo, "ls-files", "--stage"), "staged": git(repo, "diff", "--cached"),
            "unstaged": git(repo, "diff"), "status": git(repo, "status", "--porcelain", "-uall"),
            "files": {p.name: p.read_bytes() for p in repo.iterdir() if p.is_file()}}


def tree_of(origin: Path, ref: str) -> dict[str, tuple[str, bytes]]:
    """path -> (mode, content) of every file in `ref` of the bare repository."""
    files = {}
    for line in git(origin, "ls-tree", "-r", ref).splitlines():
        meta, path = line.split("\t", 1)
        mode, _, blob = meta.split()
        content = subprocess.run(["git", "-C", str(origin), "cat-file", "blob", blob],
                                 capture_output=True, check=True).stdout
        files[path] = (mode, content)
    return files


def parents(origin: Path, ref: str) -> list[str]:
    return git(origin, "rev-list", "--parents", "-n", "1", ref).split()[1:]


@pytest.fixture
def notebooks(tmp_path):
    out = tmp_path / "notebooks"
    out.mkdir()
    (out / "encoder.ipynb").write_text('{"cells": []}\n', encoding="utf-8")
    (out / "decoder.ipynb").write_text('{"cells": [1]}\n', encoding="utf-8")
    (out / "README.md").write_text("# Reader notebooks\n", encoding="utf-8")
    return out


def test_notebooks_publish_commits_exactly_dir_and_keeps_history(caller, notebooks,
                                                                  capsys):
    repo, origin = caller
    before = checkout_state(repo)
    (notebooks / "run.sh").write_text("#!/bin/sh\n", encoding="utf-8")
    (notebooks / "run.sh").chmod(0o755)

    first = publish.publish_notebooks(notebooks, repo=repo)
    assert git(origin, "rev-parse", "refs/heads/notebooks") == first
    assert parents(origin, first) == []
    assert tree_of(origin, first) == {
        "README.md": ("100644", b"# Reader notebooks\n"),
        "decoder.ipynb": ("100644", b'{"cells": [1]}\n'),
        "encoder.ipynb": ("100644", b'{"cells": []}\n'),
        "run.sh": ("100755", b"#!/bin/sh\n")}
    short = git(repo, "rev-parse", "--short", "HEAD")
    assert git(origin, "log", "-1", "--format=%s|%an", first) == \
        f"Reader notebooks built from {short}|Course Maintainer"
    assert "as the first commit of the branch" in capsys.readouterr().out
    assert checkout_state(repo) == before

    # A change (one file edited, one removed, one added, in a subfolder): one new commit on top.
    (notebooks / "encoder.ipynb").write_text('{"cells": [2]}\n', encoding="utf-8")
    (notebooks / "README.md").unlink()
    (notebooks / "extra").mkdir()
    (notebooks / "extra" / "data.txt").write_text("d\n", encoding="utf-8")
    second = publish.publish_notebooks(notebooks, repo=repo)
    assert second != first
    assert git(origin, "rev-parse", "refs/heads/notebooks") == second
    assert parents(origin, second) == [first]
    assert tree_of(origin, second) == {
        "decoder.ipynb": ("100644", b'{"cells": [1]}\n'),
        "encoder.ipynb": ("100644", b'{"cells": [2]}\n'),
        "extra/data.txt": ("100644", b"d\n"),
        "run.sh": ("100755", b"#!/bin/sh\n")}
    assert f"on top of {first[:12]}" in capsys.readouterr().out
    assert checkout_state(repo) == before

    # Unchanged: no commit, nothing pushed.
    assert publish.publish_notebooks(notebooks, repo=repo) is None
    assert git(origin, "rev-parse", "refs/heads/notebooks") == second
    assert git(origin, "rev-list", "--count", "refs/heads/notebooks") == "2"
    assert "nothing to commit" in capsys.readouterr().out
    assert checkout_state(repo) == before
    assert git(origin, "for-each-ref", "--format=%(refname)").splitlines() == [
        "refs/heads/main", "refs/heads/notebooks"]


def test_notebooks_publish_from_a_shallow_checkout(caller, notebooks, tmp_path):
    """actions/checkout clones main alone at depth 1: the branch's tip is fetched to be parent."""
    repo, origin = caller
    first = publish.publish_notebooks(notebooks, repo=repo)
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", "--branch", "main",
                    f"file://{origin}", str(shallow)], check=True, timeout=60)
    assert git(shallow, "rev-parse", "--is-shallow-repository") == "true"
    (notebooks / "decoder.ipynb").write_text('{"cells": [3]}\n', encoding="utf-8")
    second = publish.publish_notebooks(notebooks, repo=shallow)
    assert parents(origin, second) == [first]
    assert tree_of(origin, second)["decoder.ipynb"] == ("100644", b'{"cells": [3]}\n')
    assert git(shallow, "rev-parse", "--is-shallow-repository") == "true"


def test_notebooks_cli_takes_remote_branch_and_repo(caller, notebooks, tmp_path):
    """A fresh runner has no git identity: the commit is the Actions bot's."""
    repo, origin = caller
    git(repo, "config", "--unset", "user.name")
    git(repo, "config", "--unset", "user.email")
    other = tmp_path / "pages.git"
    subprocess.run(["git", "init", "-q", "--bare", str(other)], check=True)
    git(repo, "remote", "add", "pages", str(other))
    result = subprocess.run(
        [*PUBLISH, "notebooks", str(notebooks), "--remote", "pages",
         "--branch", "reader", "--repo", str(repo), "--message", "Notebooks of the course"],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert set(tree_of(other, "refs/heads/reader")) == {"README.md", "decoder.ipynb",
                                                        "encoder.ipynb"}
    assert git(other, "log", "-1", "--format=%s|%an|%ae", "reader") == (
        "Notebooks of the course|github-actions[bot]|"
        "41898282+github-actions[bot]@users.noreply.github.com")
    assert git(origin, "for-each-ref", "--format=%(refname)") == "refs/heads/main"


def test_notebooks_refuses_a_missing_dir(caller, tmp_path):
    repo, _ = caller
    with pytest.raises(publish.PublishError, match=r"nowhere: no such directory"):
        publish.publish_notebooks(tmp_path / "nowhere", repo=repo)


def test_notebooks_refuses_an_empty_dir(caller, tmp_path):
    repo, origin = caller
    empty = tmp_path / "empty"
    (empty / "sub").mkdir(parents=True)
    with pytest.raises(publish.PublishError, match=r"empty: empty; refusing to publish"):
        publish.publish_notebooks(empty, repo=repo)
    assert git(origin, "for-each-ref", "--format=%(refname)") == "refs/heads/main"


def test_notebooks_refuses_a_file_as_dir(caller, tmp_path):
    repo, _ = caller
    (tmp_path / "file.ipynb").write_text("{}", encoding="utf-8")
    with pytest.raises(publish.PublishError, match=r"file.ipynb: not a directory"):
        publish.publish_notebooks(tmp_path / "file.ipynb", repo=repo)


def test_notebooks_names_a_missing_remote(caller, notebooks):
    repo, _ = caller
    with pytest.raises(publish.PublishError, match=r"no git remote named 'upstream'"):
        publish.publish_notebooks(notebooks, remote="upstream", repo=repo)


def test_notebooks_cli_error_on_stderr_with_exit_1(caller, tmp_path):
    repo, _ = caller
    result = subprocess.run([*PUBLISH, "notebooks", str(tmp_path / "none"), "--repo", str(repo)],
                            cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert result.stderr.startswith("publish.py notebooks: error: ")
    assert "no such directory" in result.stderr
