"""Statements that change state outside a function: what Dynamo cannot replay from a body it
traces speculatively as a higher-order op (a tensor hook registered in compiled code).

Measured on 2.13: in such a body, `self.grads = grad`, `store["g"] = grad`,
`seen.append(grad)` on a list the function did not make, and an assignment to a `global` or
`nonlocal` name each raise "HOP: Unsafe side effect" (GB0067); Dynamo then breaks the graph
at the call that started the speculation. Changing what the function made itself is fine.
A generator the compiled function returns is rebuilt by tracing the rest of its body, where
the same writes cannot be replayed (GB8335): `escaping_generator_calls` finds those generators.
"""
from __future__ import annotations

import libcst as cst

from ..walk import NESTED_SCOPES, find_all


SAME_STORAGE_ATTRIBUTES = frozenset({"data"})  # Python semantics of torch.Tensor, not Dynamo's


def outer_write(node: cst.BaseSmallStatement, local: frozenset[str], declared: frozenset[str],
                mutators: frozenset[str]) -> bool:
    """Does this statement write state the function does not own? `local`: names the
    function binds (parameters included); `declared`: its `global` / `nonlocal` names."""
    if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
        return any(_outer_target(t, local, declared) for t in targets)
    if isinstance(node, cst.Del):  # `del obj.val`, `del store[k]`, `del counter` (global)
        return _outer_target(node.target, local, declared)
    if isinstance(node, cst.Expr):
        return any(_outer_mutation(call, local, mutators) for call in find_all(node, (cst.Call,), skip=NESTED_SCOPES))
    return False


def _outer_target(target: cst.BaseExpression, local: frozenset[str], declared: frozenset[str]) -> bool:
    if isinstance(target, cst.Name):
        return target.value in declared
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(_outer_target(el.value, local, declared) for el in target.elements)
    if isinstance(target, cst.Attribute):  # `self.grads = g`: an object's attribute
        return True
    if isinstance(target, cst.Subscript):  # `store["g"] = g`: a container made elsewhere
        return not _owned(target.value, local)
    return False


def _outer_mutation(call: cst.Call, local: frozenset[str], mutators: frozenset[str]) -> bool:
    func = call.func
    return isinstance(func, cst.Attribute) and func.attr.value in mutators and not _owned(func.value, local)


def _owned(expr: cst.BaseExpression, local: frozenset[str]) -> bool:
    """A container the function made (a local name), or a tensor's `.data` (the same storage:
    `g.data[mask] = 0` of a local `g` writes `g`); anything reached otherwise is shared."""
    while isinstance(expr, cst.Subscript) or isinstance(expr, cst.Attribute) and expr.attr.value in SAME_STORAGE_ATTRIBUTES:
        expr = expr.value
    return isinstance(expr, cst.Name) and expr.value in local


def declared_outer(body: cst.CSTNode, kinds: tuple[type, ...] = (cst.Global, cst.Nonlocal),
                   nested: bool = False) -> frozenset[str]:
    """Names a function declares `global` or `nonlocal` (or only those of `kinds`); `nested`:
    the functions defined in it too."""
    return frozenset(n.name.value for d in find_all(body, kinds, skip=() if nested else NESTED_SCOPES)
                     for n in d.names)


def escaping_generator_calls(fn: cst.FunctionDef) -> frozenset[int]:
    """id(call) of the calls whose generator the function returns directly: `return make(t)`,
    `return t, make(t)` (one held in a local first is followed through the frame's events)."""
    found: set[int] = set()
    for ret in find_all(fn.body, (cst.Return,), skip=NESTED_SCOPES):
        value = ret.value
        items = [el.value for el in value.elements] if isinstance(value, cst.Tuple) else [value]
        found.update(id(item) for item in items if isinstance(item, cst.Call))
    return frozenset(found)
