"""Where the course lives on the web, all derived from one repository URL.

`_config.yml` (`repository.url`, `repository.branch`) is the one place the URL is written; the
two constants below are generated from it by `scripts/colab_setup.py --write` (the hygiene test
fails when they disagree), because an installed `lib` has no `_config.yml` to read.

A published reference checkpoint is a GitHub release asset named by its cache key. Tests point
the downloads at a server of their own with the one override, $SEQ2SEQ_RELEASE_URL.
"""

from __future__ import annotations

import os

# --- generated from _config.yml by scripts/colab_setup.py --write; do not edit by hand ---
REPOSITORY = "https://github.com/rnn-seq2seq/course"
BRANCH = "main"
# --- end of generated part ---

RELEASE_ENV = "SEQ2SEQ_RELEASE_URL"  # replaces <repository>/releases/download
NOTEBOOKS_BRANCH = "notebooks"  # where the generated reader notebooks are published


def owner_and_name(repository: str = REPOSITORY) -> tuple[str, str]:
    """("rnn-seq2seq", "course") for https://github.com/rnn-seq2seq/course."""
    prefix = "https://github.com/"
    if not repository.startswith(prefix) or repository[len(prefix):].count("/") != 1:
        raise ValueError(f"expected a repository URL https://github.com/<owner>/<name>, "
                         f"got {repository!r}")
    owner, name = repository[len(prefix):].split("/")
    return owner, name


def website(repository: str = REPOSITORY) -> str:
    """The GitHub Pages address of the course website, with a trailing slash."""
    owner, name = owner_and_name(repository)
    return f"https://{owner.lower()}.github.io/{name}/"


def release_asset(tag: str, name: str, repository: str = REPOSITORY) -> str:
    """The download URL of release asset `name` of release `tag` ($SEQ2SEQ_RELEASE_URL first)."""
    base = os.environ.get(RELEASE_ENV) or f"{repository}/releases/download"
    return f"{base.rstrip('/')}/{tag}/{name}"


def colab(notebook: str, repository: str = REPOSITORY) -> str:
    """The Colab link of a reader notebook (e.g. "encoder.ipynb") on the notebooks branch."""
    owner, name = owner_and_name(repository)
    return (f"https://colab.research.google.com/github/{owner}/{name}/blob/"
            f"{NOTEBOOKS_BRANCH}/{notebook}")
