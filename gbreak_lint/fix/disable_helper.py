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
    if dry_run():  # whether it applies, without the whole module's libcst tree
        return fn if _imports_torch(parsed.text) else None
    torch_name = _torch_alias(parsed.module)
    if torch_name is None:
        return None
    decorator = cst.Decorator(decorator=cst.parse_expression(f"{torch_name}.compiler.disable"))
    return replace_node(parsed.module, fn, fn.with_changes(decorators=[*fn.decorators, decorator]))


def _torch_alias(module: cst.Module) -> str | None:
    """The name `torch` is imported under at module level (`import torch [as t]`)."""
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    name = cst.Module([]).code_for_node(alias.name)
                    if name == "torch":
                        return cst.ensure_type(alias.asname.name, cst.Name).value if alias.asname else "torch"
                    if name.startswith("torch.") and alias.asname is None:
                        return "torch"  # `import torch._dynamo` binds `torch` too
    return None


@lru_cache(maxsize=32)
def _imports_torch(text: str) -> bool:
    """`_torch_alias` is not None, read from CPython's tree (a fraction of libcst's cost)."""
    try:
        body = ast.parse(text).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return any(alias.name == "torch" or (alias.name.startswith("torch.") and alias.asname is None)
               for stmt in body if isinstance(stmt, ast.Import) for alias in stmt.names)
