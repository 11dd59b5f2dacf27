"""`del obj.attr` / `del d["key"]` and a later read of the same member in the frame.

Python raises at the read (AttributeError / KeyError) and so does Dynamo, which traces the
deletion as a side effect and the read on it: an exception nothing in the frame catches, the
frame skipped (GB0088, measured 2.13). A member is forgotten when the statement stores it
again or hands its object to anything that could (a call argument, a method called on it, a
new binding of the name). Only string keys count: `del xs[0]` of a list shifts the rest.
"""
from __future__ import annotations

import libcst as cst

from .values import literal
from ..walk import NESTED_SCOPES, find_all


def member_key(node: cst.CSTNode) -> tuple[str, str] | None:
    """(base name, key) of `name.attr` or `name["text"]`, else None."""
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
        return node.value.value, f"{node.value.value}.{node.attr.value}"
    if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and len(node.slice) == 1 \
            and isinstance(node.slice[0].slice, cst.Index):
        key = literal(node.slice[0].slice.value)
        if key is not None and isinstance(key.value, str):
            return node.value.value, f"{node.value.value}[{key.value!r}]"
    return None


def deleted(node: cst.Del) -> list[tuple[cst.BaseExpression, str, str, str]]:
    """(target, base name, key, exception a later read raises) for each member `node` deletes."""
    targets = [el.value for el in node.target.elements] if isinstance(node.target, (cst.Tuple, cst.List)) \
        else [node.target]
    found = []
    for target in targets:
        key = member_key(target)
        if key is not None:
            found.append((target, key[0], key[1], "AttributeError" if isinstance(target, cst.Attribute) else "KeyError"))
    return found


def first_read(stmt: cst.BaseSmallStatement, keys: set[str]) -> tuple[cst.CSTNode, str] | None:
    """The first member load in `stmt` (its value before its targets) whose key is in `keys`."""
    for node in _loads(stmt):
        key = member_key(node)
        if key is not None and key[1] in keys:
            return node, key[1]
    return None


def touched_bases(stmt: cst.BaseSmallStatement) -> set[str]:
    """Names whose object `stmt` may change a member of: stored into (`d["k"] = v`, `o.a = v`),
    rebound, passed to a call or with a method called on them (`d.update(...)`)."""
    touched: set[str] = set()
    for target in assignment_targets(stmt):
        for node in find_all(target, (cst.Name,)):
            touched.add(node.value)
    for call in find_all(stmt, (cst.Call,), skip=NESTED_SCOPES):
        if isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Name):
            touched.add(call.func.value.value)
        for arg in call.args:
            touched.update(n.value for n in find_all(arg.value, (cst.Name,), skip=NESTED_SCOPES))
    return touched


def class_body_binds(node: cst.ClassDef, name: str) -> bool:
    """Whether the class body binds `name` (an attribute, a method, a nested class)."""
    for stmt in node.body.body if isinstance(node.body, cst.IndentedBlock) else ():
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) and stmt.name.value == name:
            return True
        for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
            if any(isinstance(t, cst.Name) and t.value == name for t in assignment_targets(small)):
                return True
    return False


def assignment_targets(stmt: cst.BaseSmallStatement) -> list[cst.BaseExpression]:
    """What an assignment statement stores into (none for other statements)."""
    if isinstance(stmt, cst.Assign):
        return [t.target for t in stmt.targets]
    if isinstance(stmt, (cst.AugAssign, cst.AnnAssign)):
        return [stmt.target]
    return []


def _loads(stmt: cst.BaseSmallStatement) -> list[cst.CSTNode]:
    value = getattr(stmt, "value", None) if not isinstance(stmt, cst.Del) else None
    if isinstance(stmt, cst.Assert):
        value = stmt.test
    loads = find_all(value, (cst.Attribute, cst.Subscript), skip=NESTED_SCOPES) if isinstance(value, cst.CSTNode) else []
    if isinstance(stmt, cst.AugAssign):  # `d["k"] += 1` reads the member first
        loads = [stmt.target, *loads]
    return loads
