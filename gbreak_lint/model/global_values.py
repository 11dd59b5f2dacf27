"""The value a module-level name holds while Dynamo traces: a literal bound once, a dict display
of string keys nobody changes (a registry or lookup table: `LOSS_MAPPING`), or an instance
built once at module level and never mutated there. Names imported from another module of the
project are followed (`from .loss_utils import LOSS_MAPPING`). Shared by the frames' values and
the constructors' (model.frame_values, model.instances)."""
from __future__ import annotations

import re

import libcst as cst

from ..index.project import ProjectIndex
from ..index.symbols import ModuleIndex
from .dict_locals import display_keywords
from .values import Const, literal

MAX_IMPORT_HOPS = 2


def global_value(project: ProjectIndex, dtype_names, module: ModuleIndex, name: str, hops: int = 0) -> Const | None:
    if name in module.reassigned or hops > MAX_IMPORT_HOPS:
        return None
    if name in module.values:
        value = module.values[name]
        found = literal(value)
        if found is None and isinstance(value, cst.Dict):
            found = project.derived(f"global_dict:{module.name}:{name}", lambda: _unchanged_dict(module, name, value))
        elif found is None:  # an instance never mutated in its module: built once per run
            found = project.derived(f"global_instance:{module.name}:{name}",
                                    lambda: _unmutated_instance(project, dtype_names, module, name))
        return found
    target = module.imports.get(name)  # `from config import DEBUG`
    if target is None:
        return None
    owner, _, attr = target.rpartition(".")
    other = project.modules.get(owner)
    if other is None or _changes_dict(module.parsed.text, name):
        return None
    return global_value(project, dtype_names, other, attr, hops + 1)


def _unchanged_dict(module: ModuleIndex, name: str, display: cst.Dict) -> Const | None:
    """A dict display whose keys are all string constants, when no line of its module stores,
    deletes or updates an item of it (the keys then hold on every run)."""
    if _changes_dict(module.parsed.text, name):
        return None
    held = display_keywords(display, literal, lambda e: False)
    return Const(held) if held is not None else None


def _changes_dict(text: str, name: str) -> bool:
    escaped = re.escape(name)
    return re.search(rf"\b{escaped}\s*\[[^\]\n]*\]\s*=(?!=)|\bdel\s+{escaped}\s*\[|"
                     rf"\b{escaped}\.(?:update|pop|popitem|setdefault|clear|__setitem__|__delitem__)\b", text) is not None


def _unmutated_instance(project: ProjectIndex, dtype_names, module: ModuleIndex, name: str) -> Const | None:
    if re.search(rf"\b{re.escape(name)}\.\w+\s*=(?!=)", module.parsed.text):
        return None
    return _global_instance(project, dtype_names, module, module.values[name])


def _global_instance(project: ProjectIndex, dtype_names, module: ModuleIndex, value: cst.BaseExpression) -> Const | None:
    """`CFG = Config(verbose=False)` at module level: the instance with the attributes its
    constructor sets from those arguments."""
    if not isinstance(value, cst.Call):
        return None
    cls = project.klass(project.qualify(value.func, module))
    if cls is None:
        return None
    from .instances import built_at_top  # instances builds on frame_values, which imports this module

    return Const(built_at_top(project, dtype_names, cls, value, module))
