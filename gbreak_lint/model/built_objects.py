"""Which attributes of an object built in compiled code hold tensors.

`C(x).value` / `c = C(x); c.get()`: Dynamo inlines `C.__init__` and then the method, so
`self.x` there is the tensor the constructor was given and a branch on it is data-dependent.
The constructor's straight-line statements are read with its parameters bound to the call's
arguments (tensors where the caller's scope says so); what a branch or loop assigns is left
unknown (not a tensor).
"""
from __future__ import annotations

from typing import Callable

import libcst as cst

from ..index.project import ProjectIndex
from ..index.symbols import ClassInfo
from ..knowledge import Knowledge
from .tensors import TensorScope


def tensor_attributes(project: ProjectIndex, knowledge: Knowledge, cls: ClassInfo, call: cst.Call,
                      is_tensor: Callable[[cst.BaseExpression], bool]) -> frozenset[str]:
    init = project.method(cls, "__init__")
    if init is None or any(a.star for a in call.args):
        return frozenset()
    params = [p for p in init.params[1:] if p.kind in ("positional", "keyword_only")]
    positional = [p.name for p in params if p.kind == "positional"]
    given = [a.value for a in call.args if a.keyword is None]
    tensors = {name for name, value in zip(positional, given) if is_tensor(value)}
    tensors |= {a.keyword.value for a in call.args if a.keyword is not None and is_tensor(a.value)}
    module = project.modules[init.module]
    scope = TensorScope(knowledge, lambda expr: project.qualify(expr, module, init), tensors)
    found: set[str] = set()
    for stmt in init.node.body.body:
        for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Assign):
                for target in small.targets:
                    _assign(scope, target.target, small.value, found)
    return frozenset(found)


def _assign(scope: TensorScope, target: cst.BaseExpression, value: cst.BaseExpression, found: set[str]) -> None:
    if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self":
        (found.add if scope.is_tensor(value) else found.discard)(target.attr.value)
    elif isinstance(target, cst.Name):
        scope.assign(target, value)


def attribute_shapes(project: ProjectIndex, cls: ClassInfo, call: cst.Call,
                     shape_of: Callable[[cst.BaseExpression], tuple[int, ...] | None]) -> dict[str, tuple[int, ...]]:
    """`self.<attr>` -> static shape, for the attributes `__init__` sets straight from a
    parameter the call passes a tensor of known shape (`C(x)` with `self.x = x`)."""
    init = project.method(cls, "__init__")
    if init is None or any(a.star for a in call.args):
        return {}
    positional = [p.name for p in init.params[1:] if p.kind == "positional"]
    given = dict(zip(positional, (a.value for a in call.args if a.keyword is None)))
    given.update((a.keyword.value, a.value) for a in call.args if a.keyword is not None)
    found: dict[str, tuple[int, ...]] = {}
    for stmt in init.node.body.body:
        for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
            if not isinstance(small, cst.Assign) or not isinstance(small.value, cst.Name):
                continue
            shape = shape_of(given[small.value.value]) if small.value.value in given else None
            for target in small.targets:
                t = target.target
                if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == "self":
                    if shape is None:
                        found.pop(f"self.{t.attr.value}", None)
                    else:
                        found[f"self.{t.attr.value}"] = shape
    return found
