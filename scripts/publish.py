"""Publish what the deployment workflow built: the reference checkpoint and the reader notebooks.

    python -m scripts.publish release _build/release      # make publish-release
    python -m scripts.publish notebooks _build/notebooks  # make publish-notebooks

`release` puts the checkpoint named in DIR/manifest.json and the manifest itself on the GitHub
release `<tag>`, through the GitHub CLI (`gh` from PATH, GH_TOKEN from the environment), then
does the same for each folder of DIR with a manifest (the attention chapter's runs, whose
manifests list their files under "files"). A key's files are published once: readers' manifests
and sha256 checks depend on those bytes never changing, so an existing complete release is left
alone and a partial one only gets what it lacks.

`notebooks` commits DIR's files as the whole tree of a branch (default `notebooks`) and pushes
it, with git plumbing and a temporary index, so the caller's branch, index and working tree are
never touched (the workflow runs it in the checkout it has just built the site from).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

MANIFEST = "manifest.json"
CREDIT = ("Trained on English-French sentence pairs from Tatoeba (https://tatoeba.org/), "
          "used under CC-BY 2.0 FR (https://creativecommons.org/licenses/by/2.0/fr/).")
# Who commits the notebooks when git has no identity configured (a fresh CI runner).
BOT_NAME = "github-actions[bot]"
BOT_EMAIL = "41898282+github-actions[bot]@users.noreply.github.com"
GH_QUICK_S = 120      # a `gh release view` or manifest download
GH_UPLOAD_S = 1800    # a create or upload that sends the checkpoint (tens of MB)
GIT_S = 600
_HEX64 = re.compile(r"[0-9a-f]{64}")
# lib/course/release.py writes the held-out BLEU as `test_bleu` ({"float32": {"greedy": ..}, ..});
# a `bleu` object is accepted too. One must be there: the release notes show the scores.
BLEU_FIELDS = ("test_bleu", "bleu")


class PublishError(RuntimeError):
    """Something to publish is missing or inconsistent, or gh/git refused: the message says what."""


# ---------------------------------------------------------------------------------------------
# release


def read_manifest(directory: Path) -> tuple[dict, list[tuple[dict, Path]], Path]:
    """Validate DIR/manifest.json and the files it names; returns (manifest, [(asset, file)],
    path), an asset being the {"file", "sha256", "bytes"} that describes one file.

    The reference model's manifest describes its checkpoint itself and holds its BLEU; a run's
    (lib.course.chapter_models) lists its files under "files" and says what they are in
    "description". Each file's size and sha256 are checked here, before anything is uploaded: a
    published asset that does not match its manifest would make every reader's download fail.
    """
    directory = Path(directory)
    path = directory / MANIFEST
    if not path.is_file():
        raise PublishError(f"{path}: missing (run `make release` first)")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise PublishError(f"{path}: not valid JSON ({e})") from e
    if not isinstance(manifest, dict):
        raise PublishError(f"{path}: must hold a JSON object, not {type(manifest).__name__}")

    def field(name: str, kind: type, ok=lambda v: True, want: str = "", found=manifest,
              where: str = ""):
        if name not in found:
            raise PublishError(f"{path}: field '{where}{name}' is missing")
        value = found[name]
        if not isinstance(value, kind) or isinstance(value, bool) or not ok(value):
            want_text = want or f"a {kind.__name__}"
            raise PublishError(f"{path}: field '{where}{name}' must be {want_text}, "
                               f"not {value!r}")
        return value

    def asset(found: dict, where: str = "") -> tuple[dict, Path]:
        name = field("file", str, lambda v: v not in ("", ".", "..", MANIFEST) and "/" not in v
                     and "\\" not in v, "a plain file name beside the manifest", found, where)
        sha = field("sha256", str, lambda v: bool(_HEX64.fullmatch(v)), "64 lowercase hex digits",
                    found, where)
        size = field("bytes", int, lambda v: v > 0, "a positive integer", found, where)
        file = directory / name
        if not file.is_file():
            raise PublishError(f"{path}: field '{where}file' names {file}, which does not exist")
        actual = file.stat().st_size
        if actual != size:
            raise PublishError(f"{path}: field '{where}bytes' is {size}, but {file} has "
                               f"{actual} bytes")
        digest = _sha256(file)
        if digest != sha:
            raise PublishError(f"{path}: field '{where}sha256' is {sha}, but {file} hashes to "
                               f"{digest}")
        return found, file

    key = field("key", str, lambda v: bool(v.strip()), "a non-empty string")
    field("tag", str, lambda v: key in v and not re.search(r"\s", v),
          f"a tag name without spaces that contains the key {key!r}")
    for optional in ("dtype", "lib_version"):
        if optional in manifest and not isinstance(manifest[optional], str):
            raise PublishError(f"{path}: field '{optional}' must be a string, "
                               f"not {manifest[optional]!r}")
    if "files" in manifest:  # a run's release
        field("description", str, lambda v: bool(v.strip()), "a non-empty string")
        files = field("files", list, lambda v: bool(v) and all(isinstance(f, dict) for f in v),
                      "a non-empty list of objects")
        assets = [asset(found, f"files[{i}].") for i, found in enumerate(files)]
        names = [found["file"] for found, _ in assets]
        if len(set(names)) != len(names):
            raise PublishError(f"{path}: field 'files' names a file twice: {names}")
        return manifest, assets, path
    bleu = next((name for name in BLEU_FIELDS if name in manifest), None)
    if bleu is None:
        raise PublishError(f"{path}: field '{BLEU_FIELDS[0]}' (or '{BLEU_FIELDS[1]}') is missing")
    field(bleu, dict, bool, "a non-empty object of BLEU scores")
    _bleu_lines(manifest[bleu], path, bleu)
    return manifest, [asset(manifest)], path


def _bleu_lines(bleu: dict, path: Path, field: str, label: str = "") -> list[str]:
    """`float16 greedy: 36.40` lines of a (possibly nested) BLEU object; only numbers allowed."""
    lines = []
    for name, value in bleu.items():
        where, text = f"{field}.{name}", f"{label} {name}".strip()
        if isinstance(value, dict) and value:
            lines += _bleu_lines(value, path, where, text)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            lines.append(f"{text}: {value:.2f}")
        else:
            raise PublishError(f"{path}: field '{where}' must be a number, not {value!r}")
    return lines


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def release_notes(manifest: dict, manifest_path: Path) -> str:
    """The release's description: what the asset is, how to check it, how good it is, credit."""
    if "files" in manifest:
        return _run_notes(manifest)
    dtype = f", {manifest['dtype']}" if manifest.get("dtype") else ""
    lines = [
        f"Reference model for cache key `{manifest['key']}`: the checkpoint that "
        "`lib.pretrained()` downloads when no fresh model is cached.",
        "",
        f"- file: `{manifest['file']}` ({manifest['bytes']:,} bytes{dtype})",
        f"- sha256: `{manifest['sha256']}`",
    ]
    if manifest.get("lib_version"):
        lines.append(f"- lib version: {manifest['lib_version']}")
    bleu = next(name for name in BLEU_FIELDS if name in manifest)
    sentences = manifest.get("test_sentences")
    on = f" on {sentences:,} test sentences" if isinstance(sentences, int) else ""
    lines += [f"- held-out BLEU{on}:"]
    lines += [f"  - {line}" for line in _bleu_lines(manifest[bleu], manifest_path, bleu)]
    lines += ["", CREDIT]
    return "\n".join(lines) + "\n"


def _run_notes(manifest: dict) -> str:
    """A run's release notes: its description, then each file with its size and sha256."""
    lines = [manifest["description"], "", f"Key `{manifest['key']}`."]
    lines += [f"- `{f['file']}` ({f['bytes']:,} bytes), sha256 `{f['sha256']}`"
              for f in manifest["files"]]
    if manifest.get("lib_version"):
        lines.append(f"- lib version: {manifest['lib_version']}")
    return "\n".join(lines + ["", CREDIT]) + "\n"


def release_title(manifest: dict) -> str:
    if "files" in manifest:
        return f"Run {manifest['tag']}"
    return f"Reference model {manifest['key']}"


def _gh(args: list[str], timeout: float) -> subprocess.CompletedProcess:
    """Run gh from PATH; raises PublishError when it is absent or hangs (not when it fails)."""
    exe = shutil.which("gh")
    if exe is None:
        raise PublishError("gh (the GitHub CLI) is not on PATH: install it, or run this in "
                           "the deployment workflow, where it is preinstalled")
    try:
        return subprocess.run([exe, *args], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        raise PublishError(f"`gh {' '.join(args)}` did not finish in {timeout:.0f} s") from e


def _gh_ok(args: list[str], timeout: float) -> str:
    proc = _gh(args, timeout)
    if proc.returncode != 0:
        raise PublishError(f"`gh {' '.join(args)}` failed (exit {proc.returncode}): "
                           f"{proc.stderr.strip() or proc.stdout.strip()}")
    return proc.stdout


def published_assets(tag: str) -> dict[str, dict] | None:
    """The complete assets of release `tag` by name, or None when there is no such release.

    An asset whose upload did not finish (state other than "uploaded") counts as missing.
    """
    proc = _gh(["release", "view", tag, "--json", "assets"], GH_QUICK_S)
    if proc.returncode != 0:
        if "release not found" in (proc.stderr + proc.stdout).lower():
            return None
        raise PublishError(f"`gh release view {tag}` failed (exit {proc.returncode}): "
                           f"{proc.stderr.strip() or proc.stdout.strip()}")
    try:
        assets = json.loads(proc.stdout)["assets"]
        return {a["name"]: a for a in assets if a.get("state", "uploaded") == "uploaded"}
    except (ValueError, KeyError, TypeError) as e:
        raise PublishError(f"`gh release view {tag}` answered something unexpected: "
                           f"{proc.stdout[:200]!r}") from e


def _check_same_asset(tag: str, published: dict | None, asset: dict) -> None:
    """Refuse to complete a release whose file is not the one our manifest describes."""
    if published is None:
        return
    if published.get("size") != asset["bytes"]:
        raise PublishError(
            f"release {tag} already holds {asset['file']} with {published.get('size')} bytes, "
            f"but the local one has {asset['bytes']}: a key is published once, so delete "
            "that release by hand if it is wrong")
    digest = published.get("digest")  # "sha256:<hex>" where GitHub reports it
    if digest and digest != f"sha256:{asset['sha256']}":
        raise PublishError(
            f"release {tag} already holds {asset['file']} with {digest}, but the local one is "
            f"sha256:{asset['sha256']}: a key is published once, so delete that release by "
            "hand if it is wrong")


def _check_same_manifest(tag: str, manifest: dict) -> None:
    """Before adding a file to a release, check that its published manifest describes it."""
    text = _gh_ok(["release", "download", tag, "--pattern", MANIFEST, "--output", "-"],
                  GH_QUICK_S)
    fields = ("key", "files") if "files" in manifest else ("key", "file", "sha256", "bytes")
    try:
        theirs = json.loads(text)
        differs = [k for k in fields if theirs.get(k) != manifest[k]]
    except (ValueError, AttributeError) as e:
        raise PublishError(f"the published {MANIFEST} of release {tag} is not a JSON object") \
            from e
    if differs:
        raise PublishError(f"the published {MANIFEST} of release {tag} differs from the local "
                           f"one in {', '.join(differs)}: delete that release by hand if it is "
                           "wrong")


def publish_release(directory: Path, target: str | None = None) -> str:
    """Create or complete the release of DIR's manifest; returns what it did.

    "created": a new release with every file and the manifest; "uploaded": the missing ones
    added to an existing release; "unchanged": the release already had them all.
    """
    manifest, assets, manifest_path = read_manifest(directory)
    tag = manifest["tag"]
    local = {found["file"]: file for found, file in assets}
    local[MANIFEST] = manifest_path
    names = " and ".join(local)
    published = published_assets(tag)
    if published is None:
        args = ["release", "create", tag, *map(str, local.values()),
                "--title", release_title(manifest),
                "--notes", release_notes(manifest, manifest_path)]
        if target:
            args += ["--target", target]
        _gh_ok(args, GH_UPLOAD_S)
        print(f"release {tag}: created with {names}")
        return "created"
    for found, _ in assets:
        _check_same_asset(tag, published.get(found["file"]), found)
    missing = [name for name in local if name not in published]
    if not missing:
        print(f"release {tag}: already published with {names}; nothing to do")
        return "unchanged"
    if MANIFEST not in missing:
        _check_same_manifest(tag, manifest)
    _gh_ok(["release", "upload", tag, *[str(local[n]) for n in missing], "--clobber"],
           GH_UPLOAD_S)
    print(f"release {tag}: uploaded the missing {' and '.join(missing)}")
    return "uploaded"


def publish_releases(directory: Path, target: str | None = None) -> dict[Path, str]:
    """Publish DIR's release (the reference model) and that of each folder in it that holds a
    manifest (a chapter's runs, `make release`); returns {folder: what publish_release did}.
    Every manifest is checked before GitHub is asked anything."""
    folders = [Path(directory)] + sorted(p for p in Path(directory).iterdir()
                                         if (p / MANIFEST).is_file())
    for folder in folders:
        read_manifest(folder)
    return {folder: publish_release(folder, target) for folder in folders}


# ---------------------------------------------------------------------------------------------
# notebooks


def _git(repo: Path, *args: str, env: dict | None = None, input: str | None = None) -> str:
    """Run git in `repo`; raises PublishError with git's own message when it fails."""
    try:
        proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                              env=env, input=input, timeout=GIT_S)
    except subprocess.TimeoutExpired as e:
        raise PublishError(f"`git {' '.join(args)}` did not finish in {GIT_S} s") from e
    if proc.returncode != 0:
        raise PublishError(f"`git {' '.join(args)}` failed (exit {proc.returncode}): "
                           f"{proc.stderr.strip() or proc.stdout.strip()}")
    return proc.stdout


def collect_files(directory: Path) -> list[tuple[str, Path, str]]:
    """DIR's regular files as (path in the tree, file, git mode), sorted; refuses an empty DIR."""
    directory = Path(directory)
    if not directory.exists():
        raise PublishError(f"{directory}: no such directory (run `make notebooks` first)")
    if not directory.is_dir():
        raise PublishError(f"{directory}: not a directory")
    found = []
    for path in sorted(directory.rglob("*")):
        rel = path.relative_to(directory).as_posix()
        if path.is_symlink():
            raise PublishError(f"{path}: a symbolic link; only regular files are published")
        if ".git" in path.relative_to(directory).parts:
            raise PublishError(f"{path}: a .git entry cannot be committed as a file")
        if path.is_dir():
            continue
        if "\n" in rel or "\0" in rel:
            raise PublishError(f"{path!r}: a file name with a newline cannot be published")
        mode = "100755" if path.stat().st_mode & stat.S_IXUSR else "100644"
        found.append((rel, path.resolve(), mode))
    if not found:
        raise PublishError(f"{directory}: empty; refusing to publish a branch with no files")
    return found


def _identity_env(repo: Path) -> dict:
    """The environment for commit-tree: the bot's identity where git has none configured."""
    env = dict(os.environ)
    for what, fallback in (("name", BOT_NAME), ("email", BOT_EMAIL)):
        configured = subprocess.run(["git", "-C", str(repo), "config", f"user.{what}"],
                                    capture_output=True, text=True).stdout.strip()
        if not configured:
            for role in ("AUTHOR", "COMMITTER"):
                env.setdefault(f"GIT_{role}_{what.upper()}", fallback)
    return env


def publish_notebooks(directory: Path, remote: str = "origin", branch: str = "notebooks",
                      repo: Path = Path("."), message: str | None = None) -> str | None:
    """Commit DIR as the whole tree of `remote`'s `branch` and push it; returns the new commit.

    The commit's parent is the branch's current tip on the remote (none for the first publish),
    so the branch keeps its history. Returns None, and pushes nothing, when the tree is the tip's.
    """
    files = collect_files(directory)
    repo = Path(repo)
    try:
        _git(repo, "remote", "get-url", remote)
    except PublishError as e:
        raise PublishError(f"no git remote named {remote!r} in {repo.resolve()}") from e
    ref = f"refs/heads/{branch}"
    _git(repo, "check-ref-format", ref)
    listed = _git(repo, "ls-remote", remote, ref).split()
    parent = listed[0] if listed else None
    if parent:
        _git(repo, "fetch", "--quiet", "--no-tags", remote, ref)

    with tempfile.TemporaryDirectory(prefix="publish-index-") as tmp:
        env = dict(os.environ, GIT_INDEX_FILE=str(Path(tmp) / "index"))
        blobs = _git(repo, "hash-object", "-w", "--no-filters", "--",
                     *[str(p) for _, p, _ in files]).split()
        if len(blobs) != len(files):
            raise PublishError(f"git hash-object gave {len(blobs)} ids for {len(files)} files")
        entries = "".join(f"{mode} {blob}\t{rel}\0"
                          for (rel, _, mode), blob in zip(files, blobs))
        _git(repo, "update-index", "-z", "--add", "--index-info", env=env, input=entries)
        tree = _git(repo, "write-tree", env=env).strip()

    if parent and _git(repo, "rev-parse", f"{parent}^{{tree}}").strip() == tree:
        print(f"{remote}/{branch}: already holds exactly {directory}; nothing to commit")
        return None
    if message is None:
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True).stdout.strip()
        message = f"Reader notebooks built from {head}" if head else "Reader notebooks"
    args = ["commit-tree", tree, "-m", message] + (["-p", parent] if parent else [])
    commit = _git(repo, *args, env=_identity_env(repo)).strip()
    _git(repo, "push", "--quiet", remote, f"{commit}:{ref}")
    what = f"on top of {parent[:12]}" if parent else "as the first commit of the branch"
    print(f"{remote}/{branch}: pushed {commit[:12]} with {len(files)} files, {what}")
    return commit


# ---------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rel = sub.add_parser("release", help="publish DIR's checkpoint and manifest as a release")
    rel.add_argument("dir", type=Path, help="holds manifest.json and the checkpoint it names")
    rel.add_argument("--target", default=os.environ.get("GITHUB_SHA"),
                     help="commit a new release's tag points at (default: $GITHUB_SHA, which "
                          "Actions sets to the built commit; else gh's default branch)")
    nb = sub.add_parser("notebooks", help="commit DIR as the whole tree of a branch and push it")
    nb.add_argument("dir", type=Path, help="the files of the branch (the reader notebooks)")
    nb.add_argument("--remote", default="origin", help="the remote to push to (origin)")
    nb.add_argument("--branch", default="notebooks", help="the branch to publish (notebooks)")
    nb.add_argument("--repo", type=Path, default=Path("."), help="the git repository (.)")
    nb.add_argument("--message", help="the commit message (default names the built commit)")
    args = parser.parse_args(argv)
    try:
        if args.command == "release":
            publish_releases(args.dir, target=args.target)
        else:
            publish_notebooks(args.dir, remote=args.remote, branch=args.branch, repo=args.repo,
                              message=args.message)
    except PublishError as e:
        print(f"publish.py {args.command}: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
