"""What an allow_in_graph / nonstrict_trace function is given: Dynamo puts the call in the
graph, so each argument must be something a graph node takes (tensors, numbers, strings,
pytree containers). The kinds it rejects are named in the knowledge file (fake_run
`arguments`); this module tells an argument's kind from the source."""
from __future__ import annotations

import libcst as cst

from ..index.project import ProjectIndex
from ..walk import find_all

# the calls that make a class a pytree node (its instances then flatten into their fields)
PYTREE_REGISTRATIONS = ("register_pytree_node", "register_dataclass", "register_constant")


def argument_kind(project: ProjectIndex, resolver, arg: cst.Arg) -> str | None:
    """"none" (a literal None), "module" (a layer, torch's or the project's), "object" (an
    instance of a plain project class: no base outside the project, not a pytree node), or
    None when nothing is known or the kind passes anywhere."""
    value = arg.value
    if arg.star:
        return None
    if isinstance(value, cst.Name) and value.value == "None":
        return "none"
    if resolver.torch_layer(value):
        return "module"
    cls = resolver.class_of(value)
    if cls is None:
        return None
    if resolver.is_nn_module(cls):
        return "module"
    plain = not project.external_bases(cls) and cls.qualname not in pytree_classes(project)
    return "object" if plain else None


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
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    return name.lstrip("_") in PYTREE_REGISTRATIONS
