"""Rewrites the rules declare (`fix: {rewrite: ...}`): one module per rewrite, plus helpers.

`try_rewrite` tells whether a rewrite applies to a finding (used to offer a fix only where
one exists); fix/engine.py applies them until the code converges.
"""
from __future__ import annotations

from importlib import import_module

import libcst as cst

from ..diagnostics import Diagnostic
from ..parse import ParsedModule
from ..walk import walk


def try_rewrite(parsed: ParsedModule, d: Diagnostic, rewrite: str) -> cst.Module | None:
    """The module after the rewrite, or None where it does not apply."""
    module = import_module(f"{__name__}.{rewrite}")
    try:
        return module.rewrite(parsed, d)
    except (cst.CSTValidationError, ValueError, RecursionError):
        return None


def enclosing(parsed: ParsedModule, line: int, kinds: tuple) -> list[cst.CSTNode]:
    """Nodes of the given types whose lines contain `line`, outermost first."""
    found = []

    class V(cst.CSTVisitor):
        def on_visit(self, node) -> bool:
            if isinstance(node, kinds):
                r = parsed.positions[node]
                if r.start.line <= line <= r.end.line:
                    found.append(node)
            return True

    walk(parsed.module, V())
    return found


def replace_with_statements(module: cst.Module, target: cst.CSTNode, statements: list) -> cst.Module:
    """Replace one statement node with several, wherever it sits."""

    class Replace(cst.CSTTransformer):
        def on_leave(self, original, updated):
            if original is target:
                return cst.FlattenSentinel(statements)
            return updated

    return module.visit(Replace())
