"""Which notebook-level names a statement binds and reads: what lets the conversion drop a
computation that only fed glue(), or refuse to drop a cell that a later cell needs."""

from __future__ import annotations

import ast

_OWN_SCOPE = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda,
              ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _scoped_walk(node: ast.AST):
    """ast.walk without entering the nodes that have a scope of their own (comprehensions,
    lambdas, functions, classes): what a statement does to the notebook's own names."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(child for child in ast.iter_child_nodes(current)
                     if not isinstance(child, _OWN_SCOPE))


def binds(node: ast.AST) -> set[str]:
    """The notebook-level names a statement binds."""
    names = set()
    for n in _scoped_walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            names.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in n.names)
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(child.name)
    return names


def reads(node: ast.AST) -> set[str]:
    """The notebook-level names a statement reads (a function's parameters and locals are its
    own; what its body reads from outside counts)."""
    reads = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if current is not node and isinstance(current, _OWN_SCOPE):
            reads |= _free_reads(current)
            continue
        if isinstance(current, ast.Name) and isinstance(current.ctx, ast.Load):
            reads.add(current.id)
        stack.extend(ast.iter_child_nodes(current))
    return reads


def _free_reads(scope: ast.AST) -> set[str]:
    """What a function, lambda, class or comprehension reads from the scope around it."""
    local = set()
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        args = scope.args
        local |= {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
        local |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    inner = set()
    for child in ast.iter_child_nodes(scope):
        if isinstance(child, ast.arguments):
            continue
        local |= binds(child)
        inner |= reads(child)
    return inner - local


def deferred_reads(node: ast.AST) -> set[str]:
    """Names read inside the functions and lambdas of a statement: read when they are called,
    which may be after any later statement."""
    return set().union(*(_free_reads(d) for d in ast.walk(node)
                         if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))))


def bound_names(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def loaded_names(tree: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx,
                                                                                   ast.Load)}
