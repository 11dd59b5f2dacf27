"""Dotted names: module names from paths, and qualified names of expressions."""
from __future__ import annotations

from pathlib import Path

import libcst as cst

from ..walk import NESTED_SCOPES, find_all


def module_name_for(path: Path, packages: dict[Path, str] | None = None) -> str:
    """The import name of a file, found from its chain of `__init__.py` folders.

    `src/pkg/sub/mod.py` with `pkg/__init__.py` and `pkg/sub/__init__.py` -> `pkg.sub.mod`;
    a file outside any package is a top-level module named after its stem. `packages`: folder
    -> its dotted package name ("" outside any package), shared between calls (naming a whole
    tree would otherwise ask the file system about the same folders again for every file).
    """
    package = _package_of(path.parent, {} if packages is None else packages)
    name = package if path.stem == "__init__" else ".".join(filter(None, (package, path.stem)))
    return name or path.parent.name


def _package_of(folder: Path, packages: dict[Path, str]) -> str:
    found = packages.get(folder)
    if found is None:
        if folder.parent != folder and (folder / "__init__.py").is_file():
            found = ".".join(filter(None, (_package_of(folder.parent, packages), folder.name)))
        else:
            found = ""
        packages[folder] = found
    return found


# names false whenever the program runs (true only to a type checker reading it)
RUNTIME_FALSE = frozenset({"typing.TYPE_CHECKING", "typing_extensions.TYPE_CHECKING"})


def dotted(expr: cst.BaseExpression) -> str | None:
    """`a.b.c` -> "a.b.c"; anything that is not a plain attribute chain -> None."""
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        base = dotted(expr.value)
        return f"{base}.{expr.attr.value}" if base else None
    return None


def is_super(expr: cst.BaseExpression) -> bool:
    """`super()` or `super(Cls, self)`: what a method calls its base class's methods through."""
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "super"


def resolve_relative(module: str, is_package: bool, level: int, target: str | None) -> str:
    """Absolute module named by `from <level dots><target> import ...` inside `module`."""
    parts = module.split(".")
    if not is_package:
        parts = parts[:-1]
    if level > 1:
        parts = parts[: len(parts) - (level - 1)] if level - 1 <= len(parts) else []
    if target:
        parts.append(target)
    return ".".join(p for p in parts if p)


def unpacked(target, value) -> list[tuple]:
    """`a, b = A(), B()`: each name with its own value (as two assignments would bind them);
    any other target with the whole value."""
    if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)) \
            and len(target.elements) == len(value.elements) \
            and not any(isinstance(e, cst.StarredElement) for e in (*target.elements, *value.elements)):
        return [(t.value, v.value) for t, v in zip(target.elements, value.elements)]
    return [(target, value)]


# what stands for each replacement field of an f-string naming an attribute (see attribute_name)
NAME_FIELD = "__field__"


def decorator_callee(decorator: cst.Decorator) -> cst.BaseExpression:
    """What a decorator names: `f` of `@f` and of `@f(...)`."""
    expr = decorator.decorator
    return expr.func if isinstance(expr, cst.Call) else expr


def is_none_literal(expr: cst.BaseExpression | None) -> bool:
    """The literal `None`."""
    return isinstance(expr, cst.Name) and expr.value == "None"


def last_name(func: cst.BaseExpression) -> str:
    """The name a callee ends in: `f` of `f(...)`, `g` of `mod.g(...)`; "" otherwise."""
    return func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""


def attribute_name(expr: cst.BaseExpression) -> str | None:
    """The attribute `setattr(self, name, v)` / `self.add_module(name, v)` / `getattr(self,
    name)` names: a string literal's value; for an f-string (`f"layer{i}"`) the family of
    names it makes, each replacement field written NAME_FIELD (`layer__field__`): what a
    class sets under one template it reads back under the same one."""
    if isinstance(expr, cst.SimpleString):
        value = expr.evaluated_value
        return value if isinstance(value, str) and value.isidentifier() else None
    if not isinstance(expr, cst.FormattedString) or not expr.parts:
        return None
    name = "".join(part.value if isinstance(part, cst.FormattedStringText) else NAME_FIELD for part in expr.parts)
    return name if name.isidentifier() else None


FULLGRAPH_KEYWORDS = ("fullgraph", "nopython")  # torch.compile's, and the legacy optimize()'s


def string_key(node: cst.Subscript) -> str | None:
    """The key of `d["key"]`: a single string constant index (None for anything else)."""
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return None
    key = node.slice[0].slice.value
    return key.evaluated_value if isinstance(key, cst.SimpleString) else None  # type: ignore[return-value]


def keyword_true(call: cst.Call, names: tuple[str, ...]) -> bool:
    """Is the first of these keywords the call passes written `True`?"""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in names:
            return isinstance(arg.value, cst.Name) and arg.value.value == "True"
    return False


def target_names(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        names: list[str] = []
        for el in target.elements:
            names += target_names(el.value)
        return names
    if isinstance(target, cst.StarredElement):
        return target_names(target.value)
    return []


def binding_counts(node: cst.CSTNode) -> dict[str, int]:
    """How many statements or expressions of a block bind each name (not in nested definitions)."""
    counts: dict[str, int] = {}
    for n in find_all(node, _BINDERS, skip=NESTED_SCOPES):
        if isinstance(n, (cst.FunctionDef, cst.ClassDef)):
            names = {n.name.value}
        elif isinstance(n, cst.AsName):
            names = set(target_names(n.name))
        else:
            names = set(target_names(n.target))
        for name in names:
            counts[name] = counts.get(name, 0) + 1
    return counts


_BINDERS = (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.AsName, cst.NamedExpr,
            cst.FunctionDef, cst.ClassDef)
