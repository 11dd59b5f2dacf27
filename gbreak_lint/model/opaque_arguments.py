"""What an allow_in_graph / nonstrict_trace function is given: Dynamo puts the call in the
graph, so each argument must be something a graph node takes (tensors, numbers, strings,
pytree containers). The kinds it rejects are named in the knowledge file (fake_run
`arguments`); this module tells an argument's kind from the source."""
from __future__ import annotations

import libcst as cst

from ..index.names import last_name
from ..index.project import ProjectIndex
from ..walk import find_all
from .values import Const

# the calls that make a class a pytree node (its instances then flatten into their fields)
PYTREE_REGISTRATIONS = ("register_pytree_node", "register_dataclass", "register_constant")
# bases a plain class may have (Enum, NamedTuple, Tensor and the like are taken as they are)
PLAIN_BASES = frozenset({"object", "builtins.object", "abc.ABC", "typing.Generic", "typing.Protocol"})
MAX_NESTING = 3  # containers looked into


def argument_kind(project: ProjectIndex, resolver, arg: cst.Arg) -> str | None:
    """What kind of value an argument is, of those that can be rejected: "none", "module" (a
    layer, torch's or the project's), "object" (an instance of a plain project class: no base
    but `object`, `ABC`, `Generic`, `Protocol`), "pytree_object" (one of a class registered as a
    pytree node), "class" / "function" (a project class or function itself); searched inside
    list, tuple and dict displays. None when nothing is known or the kind passes anywhere."""
    return None if arg.star else _kind(project, resolver, arg.value, 0)


def _kind(project: ProjectIndex, resolver, value: cst.BaseExpression, depth: int) -> str | None:
    if isinstance(value, (cst.List, cst.Tuple, cst.Set, cst.Dict)):
        elements = [el.value for el in value.elements if isinstance(el, (cst.Element, cst.DictElement))]
        return next((k for el in elements if (k := _kind(project, resolver, el, depth + 1)) is not None), None) \
            if depth < MAX_NESTING else None
    if isinstance(value, cst.Name) and (value.value == "None" or resolver.arguments.get(value.value) == Const(None)):
        return "none"  # written, or a parameter of the compiled function left at its default None
    if resolver.torch_layer(value):
        return "module"
    named = resolver.qualify(value) if isinstance(value, (cst.Name, cst.Attribute)) else None
    if project.klass(named) is not None:
        return "class"
    if project.function(named) is not None:
        return "function"
    cls = resolver.class_of(value)
    if cls is not None and resolver.is_nn_module(cls):
        return "module"
    if cls is None or project.external_bases(cls) - PLAIN_BASES:
        return None
    return "pytree_object" if cls.qualname in pytree_classes(project) else "object"


def pytree_classes(project: ProjectIndex) -> frozenset[str]:
    """Project classes a module registers as pytree nodes (`register_pytree_node(Point, ...)`,
    `register_dataclass(Cfg)`, `@register_dataclass`)."""
    def compute() -> frozenset[str]:
        found: set[str] = set()
        for module in {m.name: m for name in PYTREE_REGISTRATIONS for m in project.mentioning(name)}.values():
            for call in find_all(module.parsed.module, (cst.Call,)):
                if _registration(call.func) and call.args:
                    found.add(project.qualify(call.args[0].value, module) or "")
            for cls in module.classes.values():
                if any(_registration(dec.decorator) for dec in cls.decorators):
                    found.add(cls.qualname)
        return frozenset(found)
    return project.derived("pytree-classes", compute)


def _registration(func: cst.BaseExpression) -> bool:
    return last_name(func).lstrip("_") in PYTREE_REGISTRATIONS
