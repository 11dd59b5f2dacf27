"""`C.name` of a project class that has no such member: AttributeError while Dynamo traces.

Dynamo loads a class attribute from the class object itself, so a name neither the class nor
any of its bases binds raises as it does in Python (measured 2.13: "Observed exception",
GB0088, for a plain class; for an Enum the error comes from `EnumType.__getattr__`, where
Dynamo gives up the same way). A class is only judged when everything about its members is in
the source: its bases are project classes, `object` or an Enum, no metaclass, no decorator, and
nothing in its module assigns a member of that name to any object (`C.x = 1`, `cls.x = 1`).
"""
from __future__ import annotations

import enum
import re

import libcst as cst

from ..index.symbols import ClassInfo
from .frame_values import binding_counts

# bases whose members are known: every name either one has is excluded below
_KNOWN_BASES = {"builtins.object": object, "enum.Enum": enum.Enum, "enum.IntEnum": enum.IntEnum,
                "enum.Flag": enum.Flag, "enum.IntFlag": enum.IntFlag}


def missing_member(project, module, resolver, node: cst.CSTNode) -> str | None:
    """"AttributeError" when `node` is `C.name` of a project class without `name`."""
    if not isinstance(node, cst.Attribute) or not isinstance(node.value, cst.Name):
        return None
    name = node.attr.value
    cls = project.klass(resolver.qualify(node.value))
    if cls is None or name.startswith("__"):
        return None
    texts = {module.parsed.text, cls.parsed.text}
    if any(re.search(rf"\.{name}\s*=[^=]|setattr\(", text) for text in texts):
        return None
    external = project.external_bases(cls)
    if any(base not in _KNOWN_BASES for base in external):
        return None
    known = [object, type] + [_KNOWN_BASES[base] for base in external]
    if any(hasattr(kind, name) for kind in known):
        return None
    if any(_binds(c, name) for c in project.mro(cls)):
        return None
    return "AttributeError"


def _binds(cls: ClassInfo, name: str) -> bool:
    """Does the class body bind `name`, or could something outside the body's text add it?"""
    node = cls.node
    if cls.decorators or any(kw.keyword is not None for kw in node.keywords):
        return True  # a decorator or a metaclass may add members
    bound = binding_counts(node.body)
    return name in bound or "__slots__" in bound or name in cls.methods
