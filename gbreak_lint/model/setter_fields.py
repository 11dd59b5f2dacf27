"""Attributes only a property's setter assigns (`self._loss_function = value` under
`@loss_function.setter`): an instance has none until something assigns the property.

`hasattr(self, "_loss_function")` is then False while Dynamo traces, unless the program
assigns the property (`model.loss_function = f`) somewhere. transformers' `loss_function`
property starts with exactly this test, and what follows it (a logger warning for a model whose
class name names no known loss) is a graph break.
"""
from __future__ import annotations

import re

import libcst as cst

from ..index.project import ProjectIndex
from ..index.symbols import ClassInfo
from ..walk import find_all


def only_setter_assigns(project: ProjectIndex, cls: ClassInfo, name: str) -> bool:
    """Does every assignment of `self.<name>` in `cls`'s classes sit in a property setter
    whose property no loaded module assigns, and no module name the attribute otherwise?"""
    return project.derived(f"setter_only:{cls.qualname}:{name}", lambda: _only_setter_assigns(project, cls, name))


def _only_setter_assigns(project: ProjectIndex, cls: ClassInfo, name: str) -> bool:
    properties: set[str] = set()
    for holder in project.mro(cls):
        if name not in holder.attributes:
            continue
        for method in _methods(holder.node):
            if not _assigns_self(method, name):
                continue
            prop = _setter_of(method)
            if prop is None:
                return False
            properties.add(prop)
    return bool(properties) and not _named_elsewhere(project, name) \
        and not any(_property_assigned(project, p) for p in properties)


def _methods(node: cst.ClassDef) -> list[cst.FunctionDef]:
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    return [stmt for stmt in body if isinstance(stmt, cst.FunctionDef)]


def _assigns_self(method: cst.FunctionDef, name: str) -> bool:
    def is_target(t: cst.BaseExpression) -> bool:
        return isinstance(t, cst.Attribute) and t.attr.value == name and isinstance(t.value, cst.Name) \
            and t.value.value == "self"

    for node in find_all(method, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
        if any(is_target(t) or any(is_target(el) for el in find_all(t, (cst.Attribute,))) for t in targets):
            return True
    return False


def _setter_of(method: cst.FunctionDef) -> str | None:
    """`@loss_function.setter` -> "loss_function"."""
    for d in method.decorators:
        dec = d.decorator
        if isinstance(dec, cst.Attribute) and dec.attr.value == "setter" and isinstance(dec.value, cst.Name):
            return dec.value.value
    return None


# `self.<name>`, `hasattr(self, "<name>")`, `getattr(self, "<name>"...)`: reading it sets nothing
_READS = "".join(rf"(?<!{p})" for p in (r"\bself\.", r"hasattr\(self, \"", r"getattr\(self, \"",
                                         r"hasattr\(self, '", r"getattr\(self, '"))


def _named_elsewhere(project: ProjectIndex, name: str) -> bool:
    """Does a loaded module name the attribute other than as `self.<name>` (a string for
    `setattr(obj, n, v)`, a keyword copied into attributes, another object's attribute)? A
    `setattr` whose name is computed can only set it if the name is spelled somewhere."""
    pattern = re.compile(rf"{_READS}\b{re.escape(name)}\b")
    return any(pattern.search(m.parsed.text) for m in project.mentioning(name))


def _property_assigned(project: ProjectIndex, prop: str) -> bool:
    """`x.prop = v`, `setattr(x, "prop", v)` in any module the run loaded."""
    pattern = re.compile(rf"\.{re.escape(prop)}\s*=(?!=)|setattr\([^)\n]*['\"]{re.escape(prop)}['\"]")
    return any(pattern.search(m.parsed.text) for m in project.mentioning(prop))
