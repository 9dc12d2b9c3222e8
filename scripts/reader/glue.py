"""Code cells without the website's glue() calls, and without what only fed them."""

from __future__ import annotations

import ast
import re

from scripts.reader.errors import ReaderNotebookError
from scripts.reader.names import binds, deferred_reads, loaded_names, reads

GLUE_MODULES = {"lib.course.notebook", "myst_nb"}


def _is_glue_call(node: ast.AST) -> bool:
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name) and node.value.func.id == "glue")


def _pure_glue(node: ast.stmt) -> bool:
    """A statement that only glues: a glue() call, or a loop/if/with of nothing but those."""
    if _is_glue_call(node):
        return True
    if isinstance(node, (ast.For, ast.If, ast.With)):
        bodies = node.body + list(getattr(node, "orelse", []))
        return bool(bodies) and all(_pure_glue(child) for child in bodies)
    return False


def strip_glue(source: str, where: str = "a code cell") -> str:
    """The code without its glue() statements and without the import of glue."""
    if "glue" not in source:
        return source
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        raise ReaderNotebookError(f"{where} does not parse, so its glue() calls cannot be "
                                  f"removed: {error}") from error
    lines = source.split("\n")
    drop: set[int] = set()  # 0-based line numbers

    def visit(body: list[ast.stmt]):
        keep = [s for s in body if not _pure_glue(s)]
        if not keep:
            return False  # the caller removes the whole compound statement
        for stmt in body:
            if _pure_glue(stmt):
                drop.update(range(stmt.lineno - 1, stmt.end_lineno))
            else:
                for field in ("body", "orelse", "finalbody"):
                    child = getattr(stmt, field, None)
                    if isinstance(child, list) and child and isinstance(child[0], ast.stmt):
                        visit(child)
                for handler in getattr(stmt, "handlers", []):
                    visit(handler.body)
        return True

    if not visit(tree.body):
        return ""
    for stmt in ast.walk(tree):
        if isinstance(stmt, ast.ImportFrom) and stmt.module in GLUE_MODULES:
            names = [a for a in stmt.names if a.name != "glue"]
            if len(names) == len(stmt.names):
                continue
            first = stmt.lineno - 1
            drop.update(range(first + 1, stmt.end_lineno))
            if names:
                listed = ", ".join(a.name + (f" as {a.asname}" if a.asname else "")
                                   for a in names)
                indent = lines[first][: len(lines[first]) - len(lines[first].lstrip())]
                lines[first] = f"{indent}from {stmt.module} import {listed}"
            else:
                drop.add(first)
    kept = [line for i, line in enumerate(lines) if i not in drop]
    result = tidy_code("\n".join(kept))
    if re.search(r"\bglue\b", result):
        raise ReaderNotebookError(f"{where} still uses glue after its glue() statements were "
                                  "removed (glue inside an expression?):\n" + result)
    return result


def glue_inputs(source: str) -> set[str]:
    """The names the glue() calls of `source` read: what may have been computed only for them."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {name for node in ast.walk(tree) if _is_glue_call(node)
            for name in loaded_names(node)} - {"glue"}


# Calls that compute without side effects: a statement that calls nothing else may go.
PURE_CALLS = {"abs", "all", "any", "bool", "dict", "enumerate", "float", "format", "int",
              "isinstance", "len", "list", "max", "min", "range", "reversed", "round", "set",
              "sorted", "str", "sum", "tuple", "zip"}



def _only_binds(stmt: ast.stmt) -> bool:
    """A statement that only binds names from side-effect-free expressions: no output, no
    attribute or item assignment, no call but PURE_CALLS."""
    if isinstance(stmt, (ast.For, ast.If)):
        if not all(_only_binds(child) for child in stmt.body + stmt.orelse):
            return False
    elif not isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        return False
    for n in ast.walk(stmt):
        if isinstance(n, (ast.Attribute, ast.Subscript)) and isinstance(n.ctx, ast.Store):
            return False
        if isinstance(n, ast.Call) and not (isinstance(n.func, ast.Name)
                                            and n.func.id in PURE_CALLS):
            return False
        if isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await, ast.NamedExpr)):
            return False
    return True


def prune_glue_leftovers(sources: list[str], candidates: set[str]) -> list[str]:
    """The cells' code (in notebook order) without the computations that only fed glue(): a
    top-level statement that only binds names, one of them read by a removed glue() call,
    none read by a later statement or by any function. Repeated, since removing one can free
    another (the sentence a chapter glued, then the comparisons it was built from)."""
    sources = list(sources)
    candidates = set(candidates)
    while True:
        statements = []
        for i, source in enumerate(sources):
            try:
                statements.extend((i, stmt) for stmt in ast.parse(source).body)
            except SyntaxError:
                continue
        deferred = set().union(*(deferred_reads(stmt) for _, stmt in statements))
        removed = None
        for k, (i, stmt) in enumerate(statements):
            bound = binds(stmt)
            if not bound & candidates or not _only_binds(stmt):
                continue
            after = [other for _, other in statements[k + 1:]]
            later = set().union(*(reads(other) for other in after))
            if isinstance(stmt, ast.For):
                # A loop variable that a later statement binds again is read from there on.
                rebound = set().union(*(binds(other) for other in after))
                bound -= binds(stmt.target) & rebound
            if not bound & (later | deferred):
                removed = (i, stmt)
                break
        if removed is None:
            return [tidy_code(s) for s in sources]
        i, stmt = removed
        lines = sources[i].split("\n")
        first = stmt.lineno - 1
        while first > 0 and lines[first - 1].lstrip().startswith("#"):
            first -= 1  # the comment that introduces the statement goes with it
        del lines[first:stmt.end_lineno]
        sources[i] = "\n".join(lines)
        candidates |= reads(stmt)


def tidy_code(code: str) -> str:
    code = re.sub(r"\n{4,}", "\n\n\n", code)
    return code.strip("\n")

