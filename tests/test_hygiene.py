"""Repository hygiene: clean notebooks, a table of contents that matches book/, the chapters' lint
tool, the Colab setup cell in sync with `_config.yml`, and the site tooling in scripts/ (fast; no
site needed). Whether the code and the chapters pass ruff is `make lint`'s to say.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import yaml
from conftest import ROOT

from scripts import colab_setup, toc, vendor_assets

BOOK = ROOT / "book"
# Files in book/ that are not pages: bibliography, images, helpers. Pages are .md and .ipynb.
PAGE_SUFFIXES = {".md", ".ipynb"}
NOT_PAGES: set[str] = set()  # e.g. {"book/README.md"} for a note that must not be built


def book_pages() -> set[str]:
    """Every page source under book/, as toc paths without suffix (e.g. `book/intro`)."""
    skip = {".ipynb_checkpoints", "_build", "jupyter_execute", "_static"}
    pages = set()
    for path in BOOK.rglob("*"):
        rel = path.relative_to(ROOT)
        if path.suffix in PAGE_SUFFIXES and not skip.intersection(rel.parts):
            if rel.as_posix() not in NOT_PAGES:
                pages.add(rel.with_suffix("").as_posix())
    return pages


def toc_entries() -> list[str]:
    return toc.pages()


def test_notebooks_are_committed_without_outputs():
    """A MyST Markdown chapter cannot hold outputs; an .ipynb one (still allowed) must not."""
    problems = []
    notebooks = colab_setup.find_notebooks(BOOK)
    assert notebooks, "no chapter notebook found in book/"
    for path in notebooks:
        nb = toc.read(path)
        dirty = [
            i for i, cell in enumerate(nb.cells)
            if cell.cell_type == "code" and (cell.get("outputs") or cell.get("execution_count"))
        ]
        if dirty:
            problems.append(f"{path.relative_to(ROOT)}: cells {dirty}")
        if "widgets" in nb.get("metadata", {}):
            problems.append(f"{path.relative_to(ROOT)}: saved widget state in the metadata")
    assert not problems, (
        "notebooks carry outputs or execution counts; clear them (e.g. `jupyter nbconvert "
        "--clear-output --inplace book/*.ipynb`) before committing:\n" + "\n".join(problems)
    )


def test_chapters_are_myst_markdown_notebooks():
    """Chapters are text (jupytext `myst`), so that a change is a readable diff; every chapter of
    the table of contents is one, with its kernelspec, and reads back as a notebook."""
    chapters = toc.notebooks()
    assert len(chapters) >= 8, chapters
    for page in chapters:
        path = toc.source(page)
        assert path.suffix == ".md", f"{path}: chapters are MyST Markdown, not .ipynb"
        meta = toc.front_matter(path.read_text(encoding="utf-8"))
        assert meta["kernelspec"]["name"] == "python3", path
        nb = toc.read(path)
        assert sum(c.cell_type == "code" for c in nb.cells) >= 5, path
    assert not toc.is_notebook(toc.source("book/intro")), "intro.md is a plain page"


def comment_lines(text: str) -> list[int]:
    """Line numbers of prose lines that MyST reads as a comment (a line starting with %), so
    that the rest of the line vanishes from the page; code blocks are skipped."""
    found, fence = [], None
    for number, line in enumerate(text.splitlines(), 1):
        mark = re.match(r"^(`{3,}|~{3,})", line)
        if mark and (fence is None or line.startswith(fence)):
            fence = None if fence else mark.group(1)
        elif fence is None and line.startswith("%"):
            found.append(number)
    return found


def test_no_prose_line_starts_with_a_comment_mark():
    pages = sorted((toc.ROOT / "book").glob("*.md"))
    found = {p.name: comment_lines(p.read_text(encoding="utf-8")) for p in pages}
    assert not {name: lines for name, lines in found.items() if lines}, \
        "a prose line starting with % is a MyST comment: rewrap it"
    text = "A share of 71.6\n%: the verdict.\n```python\n% not prose\n```\n"
    assert comment_lines(text) == [2]


def test_chapter_source_errors_are_clear(tmp_path):
    (tmp_path / "_toc.yml").write_text("root: book/intro\n")
    with pytest.raises(FileNotFoundError, match="'book/intro' has no source"):
        toc.source("book/intro", tmp_path)
    plain = tmp_path / "plain.md"
    plain.write_text("# Just text\n")
    with pytest.raises(ValueError, match="not a MyST Markdown notebook"):
        toc.read(plain)
    broken = tmp_path / "broken.md"
    broken.write_text("---\nkernelspec: {name: python3}\n")
    with pytest.raises(ValueError, match="never closed"):
        toc.is_notebook(broken)


def test_colab_setup_cells_are_in_sync():
    result = subprocess.run(
        [sys.executable, "-m", "scripts.colab_setup", "--check"],
        capture_output=True, text=True, cwd=ROOT,
    )
    assert result.returncode == 0, result.stdout + result.stderr


# --- the table of contents ------------------------------------------------------------------


def test_toc_and_book_agree():
    entries = toc_entries()
    assert len(entries) == len(set(entries)), f"pages listed twice in _toc.yml: {entries}"
    assert all(e.startswith("book/") for e in entries), "every page lives in book/"
    pages = book_pages()
    missing = sorted(set(entries) - pages)
    unlisted = sorted(pages - set(entries))
    assert not missing, f"_toc.yml lists pages that do not exist: {missing}"
    assert not unlisted, f"pages in book/ missing from _toc.yml: {unlisted}"


def test_each_page_has_one_source():
    for entry in toc_entries():
        sources = [ROOT / f"{entry}{suffix}" for suffix in sorted(PAGE_SUFFIXES)]
        assert sum(s.exists() for s in sources) == 1, f"{entry}: both .md and .ipynb exist"


# --- lint (`make lint` runs it on the code and the chapters) -----------------------------------


def test_chapter_lint_finds_a_problem(tmp_path):
    chapter = tmp_path / "chapter.md"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# A chapter"),
                                         nbformat.v4.new_code_cell("import os\nx = 1")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    toc.write(nb, chapter)
    status, report = toc.lint([chapter])
    assert status == 1 and "F401" in report and "`os` imported but unused" in report, report


# Imports sit at the top of a file. One inside a function or class is allowed only where the
# top cannot hold it (an import cycle, an optional or heavy dependency that some callers lack),
# and a comment says so: on the import (or its group of imports), on the line just above it,
# or, for an import tried in `try: ... except ImportError`, on the `try`/`except` lines.
IMPORT_ROOTS = ("lib", "scripts", "bench")


def unexplained_imports(source: str) -> list[int]:
    """Line numbers of the imports inside a function or class that no comment explains."""
    lines = source.splitlines()

    def commented(first: int, last: int) -> bool:
        return any("#" in lines[i - 1] for i in range(first, last + 1))

    def comment_above(lineno: int) -> bool:
        return lineno > 1 and lines[lineno - 2].lstrip().startswith("#")

    found = []

    def visit(node, nested: bool) -> None:
        nested = nested or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        for field, body in ast.iter_fields(node):
            if not (isinstance(body, list) and body and isinstance(body[0], ast.stmt)):
                continue
            for i, stmt in enumerate(body):
                if not (nested and isinstance(stmt, (ast.Import, ast.ImportFrom))):
                    continue
                first = i
                while first and isinstance(body[first - 1], (ast.Import, ast.ImportFrom)):
                    first -= 1  # a group of imports shares one comment
                start = body[first].lineno
                why = commented(start, stmt.end_lineno) or comment_above(start)
                if not why and first == 0 and isinstance(node, ast.Try) and field == "body":
                    why = comment_above(node.lineno) or any(
                        commented(n.lineno, n.lineno) for n in (node, *node.handlers))
                if not why:
                    found.append(stmt.lineno)
        for child in ast.iter_child_nodes(node):
            visit(child, nested)

    visit(ast.parse(source), False)
    return found


def test_imports_are_at_the_top_or_say_why_not():
    found = []
    for root in IMPORT_ROOTS:
        for path in sorted((ROOT / root).rglob("*.py")):
            name = path.relative_to(ROOT).as_posix()
            found += [f"{name}:{n}" for n in unexplained_imports(path.read_text("utf-8"))]
    assert not found, ("imports inside functions with no comment saying why (move them to the "
                       "top of the file, or say what forces them there): " + ", ".join(found))


def test_import_rule_finds_an_unexplained_import():
    source = """import os


def top():
    return os


def lazy():
    import json
    from pathlib import Path

    return json, Path


def cycle():
    from lib import search  # a cycle: search imports this module
    import math

    return search, math


class Optional:
    def glue(self):
        try:
            import myst_nb
        except ImportError:  # optional: only the book build has it
            return None
        # Windows has no fcntl
        import fcntl

        return myst_nb, fcntl

    def late(self):
        import sys

        return sys
"""
    assert unexplained_imports(source) == [9, 10, 34]


# --- the site configuration -----------------------------------------------------------------


def test_repository_url_is_written_once():
    """_config.yml is the only place that names the repository; everything else derives it."""
    url, _ = colab_setup.load_repository()
    tracked = subprocess.run(
        ["git", "ls-files"], capture_output=True, text=True, cwd=ROOT
    ).stdout.split()
    if not tracked:
        pytest.skip("not a git checkout")
    skip = {"_config.yml", "README.md"}  # README: checked against _config.yml below
    # The chapters' setup cell and lib/course/links.py's constants are generated from _config.yml
    # and checked by `colab_setup.py --check` above.
    skip |= {p.relative_to(ROOT).as_posix() for p in colab_setup.find_notebooks()}
    skip.add("lib/course/links.py")
    holders = []
    for name in tracked:
        path = ROOT / name
        if name in skip or path.suffix in {".png", ".jpg", ".ipynb"} or not path.is_file():
            continue
        if url in path.read_text(encoding="utf-8", errors="ignore"):
            holders.append(name)
    assert not holders, f"{url} is written in {holders}; derive it from _config.yml instead"


def test_readme_links_match_config():
    """The README shows people the repository and Colab links; they must be _config.yml's, and
    a Colab link opens a chapter's reader notebook on the notebooks branch."""
    url, _ = colab_setup.load_repository()
    slug = url.removeprefix("https://github.com/")
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    repos = set(re.findall(r"github\.com/([\w.-]+/[\w.-]+)", text))
    assert repos <= {slug}, f"README names {repos - {slug}}; _config.yml says {slug}"
    links = re.findall(r"https://colab\.research\.google\.com/[^\s)\]`\"']+", text)
    assert links, "the README has no Colab link"
    chapters = {Path(p).name for p in toc.notebooks()}
    allowed = {colab_setup.colab_url(c) for c in chapters}
    pattern = colab_setup.colab_url("CHAPTER").replace("CHAPTER", "<chapter>")
    wrong = [link for link in links if link not in allowed and link != pattern]
    assert not wrong, f"README Colab links must be {pattern} for a chapter; found {wrong}"


def test_site_loads_no_script_from_a_cdn():
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["sphinx"]
    scripts = [config["config"]["mathjax_path"], *config["config"]["nb_ipywidgets_js"]]
    remote = [s for s in scripts if "://" in s or s.startswith("//")]
    assert not remote, f"scripts loaded from outside the site: {remote}"
    assert not (ROOT / "_static").exists() or not list((ROOT / "_static").rglob("*.js")), (
        "no .js under _static/: Jupyter Book 1 adds every one of them to every page"
    )


def test_package_lock_matches_package_json():
    package = json.loads((ROOT / "package.json").read_text(encoding="utf-8"))
    lock = json.loads((ROOT / "package-lock.json").read_text(encoding="utf-8"))
    assert lock["packages"][""]["dependencies"] == package["dependencies"], "run `npm install`"


def test_widget_manager_matches_ipywidgets():
    """ipywidgets names the html-manager it renders with (a ^major.minor.patch range)."""
    from ipywidgets import _version

    wanted = _version.__html_manager_version__.lstrip("^~")
    lock = json.loads((ROOT / "package-lock.json").read_text(encoding="utf-8"))
    have = lock["packages"]["node_modules/@jupyter-widgets/html-manager"]["version"]
    assert have.split(".")[0] == wanted.split(".")[0], (have, wanted)
    assert tuple(map(int, have.split("."))) >= tuple(map(int, wanted.split("."))), (have, wanted)


def test_vendor_assets_copy(tmp_path):
    """The copy step finds every file it needs in node_modules (after `npm ci`)."""
    if vendor_assets.missing_packages():
        pytest.skip("node_modules is not installed (`make book` runs `npm ci`)")
    copied = vendor_assets.copy_assets(tmp_path)
    names = {p.relative_to(tmp_path).as_posix() for p in copied}
    needed = {
        "course/widgets-setup.js",
        "npm/mathjax/es5/tex-mml-chtml.js",
        "npm/requirejs/require.js",
        "npm/@jupyter-widgets/html-manager/dist/embed-amd.js",
    }
    assert needed <= names
    assert any(n.startswith("npm/mathjax/es5/output/chtml/fonts/") for n in names)
    fonts = "npm/@jupyter-widgets/html-manager/dist/"
    assert any(n.startswith(fonts) and n.endswith(".woff2") for n in names)


# --- scripts/colab_setup.py on temporary notebooks ------------------------------------------


def _notebook(path: Path, cells) -> Path:
    nb = nbformat.v4.new_notebook(cells=cells)
    nbformat.write(nb, path)
    return path


def test_colab_setup_renders_from_config(tmp_path):
    config = tmp_path / "_config.yml"
    config.write_text("repository:\n  url: https://github.com/someone/elsewhere/\n  branch: dev\n")
    source = colab_setup.render_cell(config)
    assert 'COURSE_PACKAGE = "git+https://github.com/someone/elsewhere.git@dev"' in source
    assert "--no-deps" in source
    compile(source, "<setup cell>", "exec")
    for chapter in ("book/encoder", "book/encoder.md", "encoder.ipynb"):
        assert colab_setup.colab_url(chapter, config) == (
            "https://colab.research.google.com/github/someone/elsewhere/blob/notebooks/"
            "encoder.ipynb")
    assert colab_setup.website_url(config) == "https://someone.github.io/elsewhere/"
    assert colab_setup.render_links(config) == (
        'REPOSITORY = "https://github.com/someone/elsewhere"\nBRANCH = "dev"\n')


def test_links_constants_follow_config(tmp_path):
    """lib/course/links.py's generated constants: --check notices a stale pair, --write
    restores it."""
    config = tmp_path / "_config.yml"
    config.write_text("repository:\n  url: https://github.com/someone/elsewhere\n  branch: dev\n")
    links = tmp_path / "links.py"
    original = (ROOT / "lib" / "course" / "links.py").read_text(encoding="utf-8")
    links.write_text(original, encoding="utf-8")
    assert colab_setup.sync_links(ROOT / "lib" / "course" / "links.py") is True  # in sync
    assert colab_setup.sync_links(links, config) is False
    assert links.read_text(encoding="utf-8") == original  # a check writes nothing
    assert colab_setup.sync_links(links, config, write=True) is False
    assert colab_setup.sync_links(links, config) is True
    text = links.read_text(encoding="utf-8")
    assert 'REPOSITORY = "https://github.com/someone/elsewhere"\nBRANCH = "dev"\n' in text
    assert text.replace("someone/elsewhere", "rnn-seq2seq/course").replace(
        'BRANCH = "dev"', 'BRANCH = "main"') == original  # nothing else changed
    links.write_text("REPOSITORY = 'x'\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no block generated by scripts/colab_setup.py"):
        colab_setup.sync_links(links, config)


def test_colab_setup_cell_does_nothing_outside_colab():
    namespace: dict = {}
    exec(colab_setup.render_cell(), namespace)  # noqa: S102 - our own generated code
    assert namespace["IN_COLAB"] is False


def test_colab_setup_write_then_check(tmp_path):
    nb_path = _notebook(tmp_path / "chapter.ipynb", [
        nbformat.v4.new_markdown_cell("# A chapter"),
        nbformat.v4.new_code_cell("import lib"),
    ])
    assert colab_setup.main(["--check", str(nb_path)]) == 1
    assert colab_setup.main(["--write", str(nb_path)]) == 0
    assert colab_setup.main(["--check", str(nb_path)]) == 0

    nb = nbformat.read(nb_path, as_version=4)
    nbformat.validate(nb)
    kinds = [(c.cell_type, c.source.splitlines()[0]) for c in nb.cells]
    assert kinds[0] == ("markdown", "# A chapter")
    assert nb.cells[1].source == colab_setup.render_cell()
    assert "remove-cell" in nb.cells[1].metadata["tags"]
    assert nb.cells[1].outputs == [] and nb.cells[1].execution_count is None
    assert kinds[2] == ("code", "import lib")

    # Idempotent: a second write changes nothing.
    before = nb_path.read_bytes()
    colab_setup.main(["--write", str(nb_path)])
    assert nb_path.read_bytes() == before

    # A hand edit of the cell is caught, and --write restores it in place (no duplicate).
    nb.cells[1].source += "\nprint('edited')"
    nbformat.write(nb, nb_path)
    assert colab_setup.main(["--check", str(nb_path)]) == 1
    colab_setup.main(["--write", str(nb_path)])
    nb = nbformat.read(nb_path, as_version=4)
    tagged = [c for c in nb.cells if "colab-setup" in c.metadata.get("tags", [])]
    assert len(tagged) == 1 and nb.cells[1] is tagged[0]


def test_colab_setup_moves_a_misplaced_cell(tmp_path):
    nb_path = _notebook(tmp_path / "chapter.ipynb", [nbformat.v4.new_code_cell("x = 1")])
    colab_setup.main(["--write", str(nb_path)])
    nb = nbformat.read(nb_path, as_version=4)
    nb.cells = nb.cells[::-1]  # setup cell now second
    nbformat.write(nb, nb_path)
    assert colab_setup.main(["--check", str(nb_path)]) == 1
    colab_setup.main(["--write", str(nb_path)])
    nb = nbformat.read(nb_path, as_version=4)
    assert [c.source for c in nb.cells] == [colab_setup.render_cell(), "x = 1"]


def test_colab_setup_with_no_notebooks(tmp_path, monkeypatch):
    assert colab_setup.find_notebooks(tmp_path) == []
    monkeypatch.setattr(colab_setup, "find_notebooks", lambda book=None: [])
    assert colab_setup.main(["--check"]) == 0
    assert colab_setup.main(["--write"]) == 0


def test_colab_setup_on_a_markdown_chapter(tmp_path):
    """--write adds the cell to a MyST Markdown chapter and keeps the file MyST Markdown."""
    chapter = tmp_path / "chapter.md"
    chapter.write_text(
        "---\njupytext:\n  text_representation:\n    format_name: myst\nkernelspec:\n"
        "  display_name: Python 3\n  language: python\n  name: python3\n---\n\n# A chapter\n\n"
        "```{code-cell} ipython3\nimport lib\n```\n", encoding="utf-8")
    assert colab_setup.find_notebooks(tmp_path) == [chapter]
    assert colab_setup.main(["--check", str(chapter)]) == 1
    assert colab_setup.main(["--write", str(chapter)]) == 0
    assert colab_setup.main(["--check", str(chapter)]) == 0
    text = chapter.read_text(encoding="utf-8")
    assert text.startswith("---\n"), text[:200]
    assert "```{code-cell} ipython3\n:tags: [colab-setup, remove-cell]" in text, text
    nb = toc.read(chapter)
    assert [c.cell_type for c in nb.cells] == ["markdown", "code", "code"]
    assert nb.cells[1].source == colab_setup.render_cell()
    assert nb.cells[2].source == "import lib"


# A reader meets the idea, not the build's machinery: glue() calls and bookkeeping go into cells
# the website hides (remove-input / remove-cell / hide-input), and a visible cell stays short.
HIDING_TAGS = {"remove-cell", "remove-input", "hide-input", "hide-cell"}
MAX_VISIBLE_LINES = 40
GLUE_CALL = re.compile(r"(?<![\w.])glue\s*\(")


def visible_cell_problems(nb) -> list[str]:
    """Each visible code cell that is too long or calls glue(), as 'cell N: why'."""
    problems = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or HIDING_TAGS & set(cell.metadata.get("tags", [])):
            continue
        lines = cell.source.strip("\n").count("\n") + 1 if cell.source.strip() else 0
        if lines > MAX_VISIBLE_LINES:
            problems.append(f"cell {i}: {lines} lines (at most {MAX_VISIBLE_LINES} visible)")
        if GLUE_CALL.search(cell.source):
            problems.append(f"cell {i}: calls glue() in a visible cell")
    return problems


@pytest.mark.parametrize("page", toc.notebooks())
def test_visible_cells_are_short_and_free_of_glue(page):
    problems = visible_cell_problems(toc.read(toc.source(page)))
    assert not problems, f"{page}: " + "; ".join(problems)


def test_visible_cell_rule_finds_long_and_glue_cells():
    hidden_glue = nbformat.v4.new_code_cell('glue("x", 1)', metadata={"tags": ["remove-input"]})
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("\n".join(f"x{i} = {i}" for i in range(41))),
        nbformat.v4.new_code_cell("\n".join(f"x{i} = {i}" for i in range(40))),
        nbformat.v4.new_code_cell('n = 3\nglue("n", n, display=False)'),
        nbformat.v4.new_code_cell("fn = lib.course.notebook.glue  # named, not called"),
        hidden_glue,
    ])
    assert visible_cell_problems(nb) == ["cell 0: 41 lines (at most 40 visible)",
                                         "cell 2: calls glue() in a visible cell"]
