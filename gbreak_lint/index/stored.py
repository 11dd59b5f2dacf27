"""A module's index as plain JSON data and back, so a run can reuse it instead of parsing the file.

Parsing is most of what a pre-commit run costs after an edit: the one changed file's work reaches
a few dozen large modules (`modeling_utils.py` alone is 280 KB), and their indexes do not change.
The index holds a few expressions per definition (parameter defaults, decorators, base classes,
attribute and module values); they are kept as their code and parsed alone when read back (a
30th of parsing the whole module). Nodes read back are not the module tree's, exactly as when
the index crosses to a worker process: the analysis finds a definition's nodes through
`ParsedModule.definition`, never through the index's expressions.

Decoding checks the shape of everything and builds only the index types: a document of any
other shape gives None, and the file is parsed as if nothing were stored.
"""
from __future__ import annotations

from types import MappingProxyType

import libcst as cst

from ..parse import ParsedModule
from .symbols import ClassInfo, FunctionInfo, ModuleIndex, Param

PARAM_KINDS = frozenset({"positional", "keyword_only", "star", "double_star"})


class _Shape(ValueError):
    """Stored data of the wrong shape."""


# -- to plain data --------------------------------------------------------------------------------
def module_to_plain(module: ModuleIndex) -> dict:
    return {
        "name": module.name, "path": module.path, "is_package": module.is_package,
        "imports": dict(module.imports), "module_imports": sorted(module.module_imports),
        "star_imports": list(module.star_imports),
        "functions": [_function_to_plain(f) for f in module.functions.values()],
        "classes": [_class_to_plain(c) for c in module.classes.values()],
        "top_level": dict(module.top_level), "values": _codes(module.values),
        "reassigned": sorted(module.reassigned),
    }


def _function_to_plain(fn: FunctionInfo) -> dict:
    return {
        "qualname": fn.qualname, "name": fn.name, "ordinal": fn.ordinal, "def_line": fn.def_line,
        "class_qualname": fn.class_qualname, "parent_function": fn.parent_function,
        "params": [[p.name, p.kind, _code_or_none(p.default), p.annotation] for p in fn.params],
        "decorators": [code_of(d.decorator) for d in fn.decorators], "is_async": fn.is_async,
        "local_functions": dict(fn.local_functions),
    }


def _class_to_plain(cls: ClassInfo) -> dict:
    return {
        "qualname": cls.qualname, "name": cls.name, "ordinal": cls.ordinal, "def_line": cls.def_line,
        "bases": [code_of(b) for b in cls.bases], "methods": dict(cls.methods),
        "attributes": _codes(cls.attributes),
        "init_locals": {name: [code_of(v) for v in values] for name, values in cls.init_locals.items()},
        "reassigned": sorted(cls.reassigned), "decorators": [code_of(d.decorator) for d in cls.decorators],
    }


def _codes(values) -> dict[str, str]:
    return {name: code_of(value) for name, value in values.items()}


def _code_or_none(node: cst.CSTNode | None) -> str | None:
    return code_of(node) if node is not None else None


def code_of(node: cst.CSTNode) -> str:
    """An expression's source text (how the stores keep expressions)."""
    return cst.Module([]).code_for_node(node)


# -- from plain data ------------------------------------------------------------------------------
def module_from_plain(data: object, parsed: ParsedModule, name: str) -> ModuleIndex | None:
    """The index stored as `data` for the file `parsed` (its text, no tree) under import name
    `name`; None when `data` is not a stored index of that file and name."""
    try:
        return _module(data, parsed, name)
    except (_Shape, cst.ParserSyntaxError, RecursionError, TypeError, ValueError, KeyError):
        return None


def _module(data, parsed: ParsedModule, name: str) -> ModuleIndex:
    data = _dict(data)
    path = _str(data["path"])
    if _str(data["name"]) != name or path != str(parsed.path):
        raise _Shape("another module")
    functions = [_function(f, name, parsed) for f in _list(data["functions"])]
    classes = [_class(c, name, parsed) for c in _list(data["classes"])]
    return ModuleIndex(
        name=name, path=path, is_package=_bool(data["is_package"]), parsed=parsed,
        imports=_str_map(data["imports"]), module_imports=frozenset(_strs(data["module_imports"])),
        star_imports=tuple(_strs(data["star_imports"])),
        functions=MappingProxyType({f.qualname: f for f in functions}),
        classes=MappingProxyType({c.qualname: c for c in classes}),
        top_level=_str_map(data["top_level"]), values=_expr_map(data["values"]),
        reassigned=frozenset(_strs(data["reassigned"])),
    )


def _function(data, module: str, parsed: ParsedModule) -> FunctionInfo:
    data = _dict(data)
    return FunctionInfo(
        qualname=_str(data["qualname"]), name=_str(data["name"]), module=module, path=str(parsed.path),
        ordinal=_int(data["ordinal"]), def_line=_int(data["def_line"]), parsed=parsed,
        class_qualname=_optional_str(data["class_qualname"]), parent_function=_optional_str(data["parent_function"]),
        params=tuple(_param(p) for p in _list(data["params"])),
        decorators=_decorators(data["decorators"]), is_async=_bool(data["is_async"]),
        local_functions=_str_map(data["local_functions"]),
    )


def _param(data) -> Param:
    name, kind, default, annotation = _list(data)
    if _str(kind) not in PARAM_KINDS:
        raise _Shape(f"parameter kind {kind!r}")
    return Param(_str(name), kind, _optional_expr(default), _optional_str(annotation))


def _class(data, module: str, parsed: ParsedModule) -> ClassInfo:
    data = _dict(data)
    init_locals = {_str(k): tuple(_expr(v) for v in _list(vs)) for k, vs in _dict(data["init_locals"]).items()}
    return ClassInfo(
        qualname=_str(data["qualname"]), name=_str(data["name"]), module=module, path=str(parsed.path),
        ordinal=_int(data["ordinal"]), def_line=_int(data["def_line"]), parsed=parsed,
        bases=tuple(_expr(b) for b in _list(data["bases"])), methods=_str_map(data["methods"]),
        attributes=_expr_map(data["attributes"]), init_locals=MappingProxyType(init_locals),
        reassigned=frozenset(_strs(data["reassigned"])), decorators=_decorators(data["decorators"]),
    )


def _expr(code) -> cst.BaseExpression:
    """Each occurrence gets its own node, as in the tree: analyses may remember facts per node,
    and two equal texts in two classes are two places."""
    return cst.parse_expression(_str(code))


def _optional_expr(code) -> cst.BaseExpression | None:
    return None if code is None else _expr(code)


def _expr_map(data) -> MappingProxyType:
    return MappingProxyType({_str(k): _expr(v) for k, v in _dict(data).items()})


def _decorators(data) -> tuple[cst.Decorator, ...]:
    return tuple(cst.Decorator(decorator=_expr(code)) for code in _list(data))


def _dict(value) -> dict:
    if not isinstance(value, dict):
        raise _Shape("expected an object")
    return value


def _list(value) -> list:
    if not isinstance(value, list):
        raise _Shape("expected a list")
    return value


def _str(value) -> str:
    if not isinstance(value, str):
        raise _Shape("expected a string")
    return value


def _optional_str(value) -> str | None:
    return None if value is None else _str(value)


def _int(value) -> int:
    if type(value) is not int:
        raise _Shape("expected an integer")
    return value


def _bool(value) -> bool:
    if type(value) is not bool:
        raise _Shape("expected true or false")
    return value


def _strs(value) -> list[str]:
    return [_str(item) for item in _list(value)]


def _str_map(value) -> MappingProxyType:
    return MappingProxyType({_str(k): _str(v) for k, v in _dict(value).items()})
