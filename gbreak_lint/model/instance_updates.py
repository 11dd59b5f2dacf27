"""What a program does to a compiled module instance between building it and calling it:
`model.encoder.gradient_checkpointing = True`, or a method of its class that stores constants
on `self` (`model.gradient_checkpointing_enable()`, `model.set_grad_checkpointing(True)`).
Dynamo guards on those attributes, so the compiled code sees the values as updated."""
from __future__ import annotations

import libcst as cst

from ..index.project import ProjectIndex
from ..index.symbols import ClassInfo, FunctionInfo, ModuleIndex
from ..walk import NESTED_SCOPES, find_all
from .values import Const, Obj, literal

UNKNOWN = None  # a store whose value is not a constant the source spells: the attribute is unknown


def updated_instance(project: ProjectIndex, module: ModuleIndex, cls: ClassInfo, built: Obj, name: str,
                     before: int) -> Obj:
    """`built` with the stores the module's statements make through `name` (directly, or by
    calling a method of `cls` or of a sub-module's class) after its last binding before line
    `before` (where the compiled module is first called)."""
    lines = [(module.parsed.line(line), line) for line in find_all(module.parsed.module, (cst.SimpleStatementLine,))]
    bound = [at for at, line in lines if at < before and any(
        isinstance(s, cst.Assign) and any(_is_name(t.target, name) for t in s.targets) for s in line.body)]
    if not bound:
        return built
    for at, line in lines:
        if not bound[-1] < at < before:
            continue
        for small in line.body:
            for path, value in _stores_through(project, module, cls, built, name, small):
                built = _with_attribute(built, path, value)
    return built


def _stores_through(project: ProjectIndex, module: ModuleIndex, cls: ClassInfo, built: Obj, name: str,
                    small: cst.BaseSmallStatement) -> list[tuple[tuple[str, ...], Const | None]]:
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        path = _path(small.targets[0].target, name)
        return [(path, literal(small.value))] if path else []
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) \
            and isinstance(small.value.func, cst.Attribute):
        call = small.value
        owner = _path(call.func.value, name) if not _is_name(call.func.value, name) else ()  # type: ignore[attr-defined]
        if owner is None:
            return []
        holder = _class_at(project, cls, built, owner)
        method = project.method(holder, call.func.attr.value) if holder is not None else None  # type: ignore[attr-defined]
        if method is None:
            return []
        return [(owner + path, value) for path, value in _method_stores(method, call)]
    return []


def _method_stores(method: FunctionInfo, call: cst.Call) -> list[tuple[tuple[str, ...], Const | None]]:
    """The `self.<...> = <value>` statements a method runs at its top level, with its
    parameters bound to the call's literal arguments (or their literal defaults); a store under
    a condition or a loop, or of another value, leaves its attribute unknown."""
    args = _bound_arguments(method, call)
    stores = []
    for stmt in method.node.body.body:
        smalls = stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ()
        for small in smalls:
            if isinstance(small, cst.Assign) and len(small.targets) == 1:
                path = _path(small.targets[0].target, "self")
                if path:
                    value = small.value
                    known = args.get(value.value) if isinstance(value, cst.Name) and value.value in args else literal(value)
                    stores.append((path, known))
        if not isinstance(stmt, cst.SimpleStatementLine):
            for node in find_all(stmt, (cst.Assign,), skip=NESTED_SCOPES):
                for target in node.targets:
                    path = _path(target.target, "self")
                    if path:
                        stores.append((path, UNKNOWN))
    return stores


def _bound_arguments(method: FunctionInfo, call: cst.Call) -> dict[str, Const | None]:
    params = [p for p in method.params if p.kind in ("positional", "keyword_only")][1:]
    given = [a for a in call.args if a.keyword is None and not a.star]
    bound: dict[str, Const | None] = {p.name: literal(p.default) for p in params}
    for param, arg in zip(params, given):
        bound[param.name] = literal(arg.value)
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in bound:
            bound[arg.keyword.value] = literal(arg.value)
    return bound


def _path(target: cst.BaseExpression, root: str) -> tuple[str, ...] | None:
    """`root.a.b` -> ("a", "b"); None when the expression is not an attribute chain on `root`."""
    parts: list[str] = []
    while isinstance(target, cst.Attribute):
        parts.append(target.attr.value)
        target = target.value
    return tuple(reversed(parts)) if parts and _is_name(target, root) else None


def _is_name(expr: cst.BaseExpression, name: str) -> bool:
    return isinstance(expr, cst.Name) and expr.value == name


def _class_at(project: ProjectIndex, cls: ClassInfo, built: Obj, path: tuple[str, ...]) -> ClassInfo | None:
    """The class of the sub-module `path` names (the instance's own for an empty path)."""
    obj: Obj | None = built
    for part in path:
        held = obj.get(part) if obj is not None else None
        obj = held.value if held is not None and isinstance(held.value, Obj) else None
    return cls if not path else project.klass(obj.cls) if obj is not None else None


def _with_attribute(obj: Obj, path: tuple[str, ...], value: Const | None) -> Obj:
    attrs = dict(obj.attrs)
    if len(path) == 1:
        new: Const | None = value
    else:
        held = attrs.get(path[0])
        if held is None or not isinstance(held.value, Obj):
            return obj  # a store into something not followed
        new = Const(_with_attribute(held.value, path[1:], value))
    if new is None:
        attrs.pop(path[0], None)
    else:
        attrs[path[0]] = new
    return Obj(obj.cls, tuple(sorted(attrs.items())), obj.shared)
