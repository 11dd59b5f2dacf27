"""Rewrites the rules declare (`fix: {rewrite: ...}`): one module per rewrite, registered under
the codes it fixes (`@REWRITES.register("GBL101")`, see gbreak_lint/registry.py), plus helpers.

`try_rewrite` tells whether a rewrite applies to a finding (used to offer a fix only where
one exists); gbreak_lint/autofix.py applies them until the code converges.
"""
from __future__ import annotations

from contextvars import ContextVar

import libcst as cst

from ..diagnostics import Diagnostic
from ..parse import ParsedModule
from ..registry import REWRITES
from ..walk import children


def try_rewrite(parsed: ParsedModule, d: Diagnostic, rewrite: str) -> cst.Module | None:
    """The module after the rewrite, or None where it does not apply."""
    fn = REWRITES.get(rewrite).fn
    try:
        return fn(parsed, d)
    except (cst.CSTValidationError, ValueError, RecursionError):
        return None


# Set while a scan only asks whether a rewrite applies (to offer its fix): the tree-wide
# replacements, most of a rewrite's cost, are then skipped.
_DRY_RUN: ContextVar[bool] = ContextVar("gbreak_lint_fix_dry_run", default=False)


def dry_run() -> bool:
    """Inside `rewrite_applies`: a rewrite may answer as soon as it knows it applies."""
    return _DRY_RUN.get()


def rewrite_applies(parsed: ParsedModule, d: Diagnostic, rewrite: str) -> bool:
    token = _DRY_RUN.set(True)
    try:
        return try_rewrite(parsed, d, rewrite) is not None
    finally:
        _DRY_RUN.reset(token)


def enclosing(parsed: ParsedModule, line: int, kinds: tuple) -> list[cst.CSTNode]:
    """Nodes of the given types whose lines contain `line`, outermost first, inside the
    innermost def/class holding the line (the module at module level). Only the nodes around
    `line` are visited, and only that definition's positions are computed."""
    innermost = parsed.innermost_definition(line, alone=dry_run())  # a dry run edits no tree
    root, positions = innermost if innermost is not None else (parsed.module, parsed.positions)
    found: list[cst.CSTNode] = []
    if isinstance(root, cst.Module):
        for child in children(root):
            _around(child, positions, line, kinds, found)
    else:
        _around(root, positions, line, kinds, found)
    return found


def _around(node: cst.CSTNode, positions, line: int, kinds: tuple, found: list) -> None:
    r = positions.raw_or_none(node)
    if r is None or not r[0] <= line <= r[2]:
        return  # whitespace, or a node elsewhere: nothing inside it holds the line
    if isinstance(node, kinds):
        found.append(node)
    for child in children(node):
        _around(child, positions, line, kinds, found)


def positions_around(parsed: ParsedModule, line: int):
    """The positions `enclosing` used for `line` (its nodes may come from a tree of that
    definition alone, which the module's positions do not know)."""
    innermost = parsed.innermost_definition(line, alone=dry_run())
    return innermost[1] if innermost is not None else parsed.positions


def replace_node(module: cst.Module, target: cst.CSTNode, new: cst.CSTNode) -> cst.Module:
    if _DRY_RUN.get():
        return module
    return cst.ensure_type(module.deep_replace(target, new), cst.Module)


def replace_with_statements(module: cst.Module, target: cst.CSTNode, statements: list) -> cst.Module:
    """Replace one statement node with several, wherever it sits."""
    if _DRY_RUN.get():
        return module

    class Replace(cst.CSTTransformer):
        def on_leave(self, original, updated):
            if original is target:
                return cst.FlattenSentinel(statements)
            return updated

    return module.visit(Replace())
