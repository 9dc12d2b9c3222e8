"""The course's website and notebook tooling: a package, so that its modules import each other
and `lib` without path loaders.

Run a tool from the repository root as a module, e.g. `python -m scripts.colab_setup --check`;
the tests import it (`from scripts import toc`) with the root on the path (pyproject.toml's
pytest `pythonpath`), and Sphinx loads `scripts.course_site`, `scripts.vendor_assets` and
`scripts.playground_site` as extensions (`_config.yml` `local_extensions` puts the root on the
path). Not part of the installed `lib` package: readers never need it.
"""
