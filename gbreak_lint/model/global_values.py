"""The value a module-level name holds while Dynamo traces: a literal bound once, a dict display
of string keys nobody changes (a registry or lookup table: `LOSS_MAPPING`), or an instance
built once at module level and never mutated there. Names imported from another module of the
project are followed (`from .loss_utils import LOSS_MAPPING`). Shared by the frames' values and
the constructors' (model.frame_values, model.instances)."""
from __future__ import annotations

import re

import libcst as cst

from ..index.names import RUNTIME_FALSE
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
            found = project.derived(f"global_dict:{module.name}:{name}",
                                    lambda: _unchanged_dict(project, module, name, value))
        elif found is None:  # an instance never mutated in its module: built once per run
            found = project.derived(f"global_instance:{module.name}:{name}",
                                    lambda: _unmutated_instance(project, dtype_names, module, name))
        return found
    target = module.imports.get(name)  # `from config import DEBUG`
    if target is None:
        return None
    if target in RUNTIME_FALSE:
        return Const(False)
    owner, _, attr = target.rpartition(".")
    other = project.modules.get(owner)
    if other is None or _changes_dict(module.parsed.text, name):
        return None
    return global_value(project, dtype_names, other, attr, hops + 1)


def _unchanged_dict(project: ProjectIndex, module: ModuleIndex, name: str, display: cst.Dict) -> Const | None:
    """A dict display whose keys are all string constants, when every use of the name in the
    loaded modules only reads it (the keys then hold on every run)."""
    if any(_changes_dict(m.parsed.text, name) for m in [module, *project.mentioning(name)]):
        return None
    held = display_keywords(display, literal, lambda e: False)
    return Const(held) if held is not None else None


# uses of a table's name that only read it: an item (`T[k]`, not stored), a read method, a test
# (`k in T`), a builtin or `sep.join` that reads it whole, its import, its binding, a string
_READS_BEFORE = re.compile(r"(?:\bin\s+|\b(?:len|list|tuple|sorted|set|iter|dict|join)\(|\bimport\s+|[\"'])$")
_STORE = r"\s*(?:[-+*/%&|^@]|//|\*\*|<<|>>)?=[^=]"  # `=` or an augmented assignment
_READS_AFTER = re.compile(rf"^(?:\s*\[[^\]\n]*\](?!{_STORE})|\.(?:get|keys|values|items|copy)\(|\s*[:=][^=]|[\"'])")


def _changes_dict(text: str, name: str) -> bool:
    """Could a line change the dict `name` holds: any use other than a plain read (a store,
    `del`, a mutating method, the dict passed to a function or bound to another name)?"""
    for found in re.finditer(rf"(?<![\w.]){re.escape(name)}\b", text):
        before = text[max(0, found.start() - 40):found.start()]
        after = text[found.end():found.end() + 80]
        line_start = text.rfind("\n", 0, found.start()) + 1
        if text[line_start:found.start()].strip() in ("", "global") and re.match(r"\s*(?::[^=\n]*)?=[^=]", after):
            continue  # its binding (`T = {...}`, `T: dict = {...}`)
        if text[line_start:found.start()].lstrip().startswith(("from ", "import ")):
            continue
        if re.search(r"\bdel\s+$", before):
            return True
        if _READS_BEFORE.search(before) and not re.match(r"\s*[.\[]", after) or _READS_AFTER.match(after):
            continue
        return True
    return False


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
