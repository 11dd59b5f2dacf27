"""GBL201 (unsafe): put `@torch.compiler.disable` on the helper holding a nested break.

The break is then met once, at the call, instead of once per frame of the chain. Offered only
for helpers with little tensor work (the check decides); the helper then runs eagerly.
"""
from __future__ import annotations


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
    torch_name = parsed.torch_alias()
    if torch_name is None:
        return None
    if dry_run():  # it applies; building it needs the whole module's libcst tree
        return fn
    decorator = cst.Decorator(decorator=cst.parse_expression(f"{torch_name}.compiler.disable"))
    return replace_node(parsed.module, fn, fn.with_changes(decorators=[*fn.decorators, decorator]))
