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


def _bound_init(project: ProjectIndex, cls: ClassInfo, call: cst.Call):
    """`C.__init__` and its parameters bound to the call's arguments (name -> expression),
    or None when the call spreads `*args` / `**kwargs` or the class has no `__init__`."""
    init = project.method(cls, "__init__")
    if init is None or any(a.star for a in call.args):
        return None
    positional = [p.name for p in init.params[1:] if p.kind == "positional"]
    given = dict(zip(positional, (a.value for a in call.args if a.keyword is None)))
    given.update((a.keyword.value, a.value) for a in call.args if a.keyword is not None)
    return init, given


def _assignments(init) -> list[cst.Assign]:
    """The constructor's top-level `a = b` statements, in order."""
    return [small for stmt in init.node.body.body if isinstance(stmt, cst.SimpleStatementLine)
            for small in stmt.body if isinstance(small, cst.Assign)]


def tensor_attributes(project: ProjectIndex, knowledge: Knowledge, cls: ClassInfo, call: cst.Call,
                      is_tensor: Callable[[cst.BaseExpression], bool]) -> frozenset[str]:
    bound = _bound_init(project, cls, call)
    if bound is None:
        return frozenset()
    init, given = bound
    tensors = {name for name, value in given.items() if is_tensor(value)}
    module = project.modules[init.module]
    scope = TensorScope(knowledge, lambda expr: project.qualify(expr, module, init), tensors)
    found: set[str] = set()
    for small in _assignments(init):
        for target in small.targets:
            _assign(scope, target.target, small.value, found)
    return frozenset(found)


def _assign(scope: TensorScope, target: cst.BaseExpression, value: cst.BaseExpression, found: set[str]) -> None:
    attr = _self_attribute(target)
    if attr is not None:
        (found.add if scope.is_tensor(value) else found.discard)(attr)
    elif isinstance(target, cst.Name):
        scope.assign(target, value)


def _self_attribute(target: cst.BaseExpression) -> str | None:
    if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self":
        return target.attr.value
    return None


def attribute_shapes(project: ProjectIndex, cls: ClassInfo, call: cst.Call,
                     shape_of: Callable[[cst.BaseExpression], tuple[int, ...] | None]) -> dict[str, tuple[int, ...]]:
    """`self.<attr>` -> static shape, for the attributes `__init__` sets straight from a
    parameter the call passes a tensor of known shape (`C(x)` with `self.x = x`)."""
    bound = _bound_init(project, cls, call)
    if bound is None:
        return {}
    init, given = bound
    found: dict[str, tuple[int, ...]] = {}
    for small in _assignments(init):
        value = small.value
        shape = shape_of(given[value.value]) if isinstance(value, cst.Name) and value.value in given else None
        for target in small.targets:
            attr = _self_attribute(target.target)
            if attr is not None and shape is not None:
                found[f"self.{attr}"] = shape
            elif attr is not None:
                found.pop(f"self.{attr}", None)
    return found
