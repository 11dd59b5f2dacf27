"""GBL201 (unsafe): put `@torch.compiler.disable` on the helper holding a nested break.

The break is then met once, at the call, instead of once per frame of the chain. Offered only
for helpers with little tensor work (the check decides); the helper then runs eagerly.
"""
from __future__ import annotations

import ast
from functools import lru_cache

import libcst as cst

from ..registry import REWRITES
from . import dry_run, enclosing, replace_node

DECORATOR = "torch.compiler.disable"


@REWRITES.register("GBL201")
def rewrite(parsed, d):
    defs = enclosing(parsed, d.span.line, (cst.FunctionDef,))
    if not defs:
        return None
    fn = defs[-1]
    if any(cst.Module([]).code_for_node(dec.decorator).startswith(DECORATOR) for dec in fn.decorators):
        return None
    torch_name = _torch_alias(parsed.text)
    if torch_name is None:
        return None
    if dry_run():  # it applies; building it needs the whole module's libcst tree
        return fn
    decorator = cst.Decorator(decorator=cst.parse_expression(f"{torch_name}.compiler.disable"))
    return replace_node(parsed.module, fn, fn.with_changes(decorators=[*fn.decorators, decorator]))


@lru_cache(maxsize=32)
def _torch_alias(text: str) -> str | None:
    """The name `torch` is imported under at module level (`import torch [as t]`), read from
    CPython's tree (a fraction of libcst's cost: fix probes ask it for every break site)."""
    try:
        body = ast.parse(text).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    for stmt in body:
        if not isinstance(stmt, ast.Import):
            continue
        for alias in stmt.names:
            if alias.name == "torch":
                return alias.asname or "torch"
            if alias.name.startswith("torch.") and alias.asname is None:
                return "torch"  # `import torch._dynamo` binds `torch` too
    return None
