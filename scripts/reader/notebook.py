"""One chapter (the notebook the build executed) -> its reader notebook."""

from __future__ import annotations

import ast
import re

import nbformat

from scripts.reader.convert import Converter
from scripts.reader.errors import ReaderNotebookError
from scripts.reader.glue import glue_inputs, prune_glue_leftovers, strip_glue
from scripts.reader.myst import DIRECTIVE, FENCE, closing_line, details, directive_body, tidy
from scripts.reader.names import bound_names, loaded_names
from scripts.reader.site import Site

# The tags that only steer the website; a reader notebook drops them.
BOOK_TAGS = {"remove-cell", "remove-input", "remove-output", "hide-input", "hide-output",
             "hide-cell", "colab-setup", "reader-only", "skip-execution"}
SETUP_TAG = "colab-setup"
# With remove-cell (and skip-execution, so the build neither runs nor saves it): a cell the
# website leaves out but the reader notebook keeps (a live view, whose controls would be dead on
# a static page).
READER_ONLY = "reader-only"

_GATE = re.compile(r"^(?P<kind>solution|exercise)-(?P<edge>start|end)$")


def _split_gates(nb) -> list[tuple]:
    """The chapter as a flat list: ("md", text), ("code", cell), ("start"/"end", kind, arg, opts).
    Gated directives (solution-start ... solution-end) span cells, so they are cut out of the
    Markdown cells they sit in."""
    items: list[tuple] = []
    for cell in nb.cells:
        if cell.cell_type == "code":
            items.append(("code", cell))
            continue
        if cell.cell_type != "markdown":
            continue
        pending: list[str] = []
        lines = cell.source.split("\n")
        i = 0
        while i < len(lines):
            fence = FENCE.match(lines[i])
            directive = DIRECTIVE.match(fence["rest"]) if fence else None
            gate = _GATE.match(directive["name"]) if directive else None
            if not fence or not directive:
                pending.append(lines[i])
                i += 1
                continue
            end = closing_line(lines, i + 1, fence["fence"][0], len(fence["fence"]))
            if end < 0:
                raise ReaderNotebookError(f"the directive {{{directive['name']}}} opened by "
                                          f"{lines[i].strip()!r} is never closed")
            if not gate:
                pending.extend(lines[i:end + 1])
            else:
                if pending:
                    items.append(("md", "\n".join(pending)))
                    pending = []
                options, body = directive_body(lines[i + 1:end])
                items.append((gate["edge"], gate["kind"], directive["arg"], options, body))
            i = end + 1
        if pending:
            items.append(("md", "\n".join(pending)))
    return items


def _new_code(source: str, metadata: dict) -> nbformat.NotebookNode:
    return nbformat.v4.new_code_cell(source=source, metadata=metadata)


def reader_notebook(nb, site: Site, page: str, setup_source: str | None = None):
    """The reader notebook of chapter `page` (e.g. "book/decoder") from its source notebook."""
    try:
        return _reader_notebook(nb, site, page, setup_source)
    except ReaderNotebookError as error:
        if str(error).startswith(f"{page}: "):
            raise
        raise ReaderNotebookError(f"{page}: {error}") from error


def _reader_notebook(nb, site: Site, page: str, setup_source: str | None):
    conv = Converter(site, page)
    items = _split_gates(nb)
    cells: list = []
    setup = None
    dropped: list[tuple[int, set[str]]] = []  # remove-cell cells: (position, names they bind)
    solution: list[str] | None = None
    solution_label = ""
    glue_fed: set[str] = set()  # names that removed glue() calls read

    def add_markdown(text: str):
        text = tidy(text)
        if text:
            cells.append(nbformat.v4.new_markdown_cell(text))

    for item in items:
        kind = item[0]
        if kind == "md":
            text = conv.convert(item[1])
            if solution is not None:
                solution.append(text)
            else:
                add_markdown(text)
        elif kind == "start":
            _, gate, arg, _options, body = item
            if gate == "exercise":
                heading = conv.exercise_heading(_options.get("label", ""), arg)
                add_markdown(heading + "\n\n" + conv.convert("\n".join(body)))
            else:
                if solution is not None:
                    conv.fail(f"solution {arg!r} starts inside solution {solution_label!r}")
                conv.solution_summary(arg)  # fails early on an unknown exercise
                solution, solution_label = [], arg
        elif kind == "end":
            gate = item[1]
            if gate == "solution":
                if solution is None:
                    conv.fail("a solution-end without its solution-start")
                add_markdown(details(conv.solution_summary(solution_label),
                                     "\n\n".join(s for s in solution if s.strip())))
                solution = None
        else:
            cell = item[1]
            tags = list(cell.metadata.get("tags", []))
            where = f"{page}, code cell {len(cells)}"
            if SETUP_TAG in tags:
                if setup is not None or any(c.cell_type == "code" for c in cells):
                    conv.fail("the Colab setup cell must be the first code cell, and only one")
                setup = _setup_cell(setup_source if setup_source is not None else cell.source)
                cells.append(setup)
                continue
            if "remove-cell" in tags and READER_ONLY not in tags:
                try:
                    dropped.append((len(cells), bound_names(ast.parse(cell.source))))
                except SyntaxError:
                    dropped.append((len(cells), set()))
                continue
            glue_fed |= glue_inputs(cell.source)
            source = strip_glue(cell.source, where)
            if solution is not None:
                if source.strip():
                    solution.append(f"```python\n{source}\n```")
                continue
            if not source.strip():
                continue
            metadata = {}
            reader_tags = [t for t in tags if t not in BOOK_TAGS]
            if reader_tags:
                metadata["tags"] = reader_tags
            if {"remove-input", "hide-input", "hide-cell"} & set(tags):
                # The website shows only what it draws: collapse the code (JupyterLab, Colab).
                metadata["jupyter"] = {"source_hidden": True}
                metadata["cellView"] = "form"
            cells.append(_new_code(source, metadata))
    if solution is not None:
        conv.fail(f"solution {solution_label!r} is never ended (solution-end)")
    if setup is None:
        conv.fail("no Colab setup cell (a code cell tagged colab-setup)")
    code = [c for c in cells if c.cell_type == "code" and c is not setup]
    for cell, source in zip(code, prune_glue_leftovers([c.source for c in code], glue_fed)):
        cell.source = source
    cells = [c for c in cells if c.cell_type != "code" or c.source.strip()]
    _check_dropped(cells, dropped, page)
    out = nbformat.v4.new_notebook(cells=cells)
    out.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
        "colab": {"provenance": [], "toc_visible": True},
    }
    for i, cell in enumerate(out.cells):
        cell["id"] = "colab-setup" if cell is setup else f"cell-{i:03d}"
    nbformat.validate(out)
    return out


def _setup_cell(source: str) -> nbformat.NotebookNode:
    """The setup cell as readers see it: its "generated from _config.yml" line is for the
    course's maintainers, not for readers."""
    lines = [line for line in source.split("\n") if not line.startswith("# Colab setup:")]
    return _new_code("\n".join(lines).strip("\n"), {"tags": [SETUP_TAG]})


def _check_dropped(cells, dropped, page):
    """A remove-cell cell is left out, so nothing after it may need a name only it defines."""
    for position, names in dropped:
        defined_elsewhere = set()
        for cell in cells:
            if cell.cell_type == "code":
                try:
                    defined_elsewhere |= bound_names(ast.parse(cell.source))
                except SyntaxError:
                    pass
        for cell in cells[position:]:
            if cell.cell_type != "code":
                continue
            try:
                needed = loaded_names(ast.parse(cell.source)) & names - defined_elsewhere
            except SyntaxError:
                continue
            if needed:
                raise ReaderNotebookError(
                    f"{page}: a cell tagged remove-cell defines {sorted(needed)}, which a later "
                    "cell uses; the reader notebook leaves remove-cell cells out (website "
                    "machinery), so move that code to a visible cell or tag it remove-input")
