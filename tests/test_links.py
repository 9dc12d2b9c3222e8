"""lib.course.links: every URL of the course derives from the repository URL written in
_config.yml."""

from __future__ import annotations

import pytest

from lib.course import links
from scripts import colab_setup


def test_the_package_carries_the_repository_of_config_yml():
    url, branch = colab_setup.load_repository()
    assert (links.REPOSITORY, links.BRANCH) == (url, branch), (
        "lib/course/links.py disagrees with _config.yml: run "
        "`python -m scripts.colab_setup --write`")


def test_urls_derived_from_the_repository(monkeypatch):
    monkeypatch.delenv(links.RELEASE_ENV, raising=False)
    repo = "https://github.com/Some-Owner/my-course"
    assert links.owner_and_name(repo) == ("Some-Owner", "my-course")
    assert links.website(repo) == "https://some-owner.github.io/my-course/"
    assert links.colab("encoder.ipynb", repo) == (
        "https://colab.research.google.com/github/Some-Owner/my-course/blob/notebooks/"
        "encoder.ipynb")
    assert links.release_asset("reference-0123", "manifest.json", repo) == (
        "https://github.com/Some-Owner/my-course/releases/download/reference-0123/manifest.json")


@pytest.mark.parametrize("bad", ["https://gitlab.com/o/r", "https://github.com/only-owner",
                                 "https://github.com/o/r/extra", "github.com/o/r"])
def test_a_repository_url_that_is_not_github_owner_name_is_refused(bad):
    with pytest.raises(ValueError, match="expected a repository URL https://github.com/"):
        links.owner_and_name(bad)
