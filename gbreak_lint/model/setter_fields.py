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
from ..index.symbols import ClassInfo, property_accessor
from ..walk import find_all


def only_setter_assigns(project: ProjectIndex, cls: ClassInfo, name: str) -> bool:
    """Does every assignment of `self.<name>` in `cls`'s classes sit in a property setter
    whose property no loaded module assigns, and no module name the attribute otherwise?"""
    return project.derived(f"setter_only:{cls.qualname}:{name}", lambda: _only_setter_assigns(project, cls, name))


def _only_setter_assigns(project: ProjectIndex, cls: ClassInfo, name: str) -> bool:
    properties: set[str] = set()
    for holder in project.mro(cls):
        if any(_may_set_by_name(method, name) for method in _methods(holder.node)):
            return False  # `setattr(self, key, value)` over keywords: any attribute, this one too
        if name not in holder.attributes:
            continue
        for method in _methods(holder.node):
            if not _assigns_self(method, name):
                continue
            prop = property_accessor(method.decorators)
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
        if any(is_target(el) for t in targets for el in find_all(t, (cst.Attribute,))):  # (t itself included)
            return True
    return False


def _may_set_by_name(method: cst.FunctionDef, name: str) -> bool:
    """Could a `setattr(self, n, v)` of the method set `name`: `n` is not known to be another
    name (a string constant, a name bound only to string constants, an f-string of those:
    `for plan in ("tp_plan", "ep_plan"): setattr(self, f"_{plan}", ...)`), and the call is not
    under `if hasattr(self, n):` (which sets only what exists)? Or does it write `self.__dict__`?"""
    if re.search(r"\bself\.__dict__(?:\[[^\]\n]*\]\s*=[^=]|\.(?:update|setdefault)\()",
                 cst.Module([]).code_for_node(method)):
        return True
    existing = {id(call) for test, body in _hasattr_guards(method) for call in find_all(body, (cst.Call,))
                if _setattr_on_self(call) and _same_name(call.args[1].value, test)}
    for call in find_all(method, (cst.Call,)):
        if not _setattr_on_self(call) or id(call) in existing:
            continue
        possible = _possible_strings(method, call.args[1].value)
        if possible is None or name in possible:
            return True
    return False


def _setattr_on_self(call: cst.Call) -> bool:
    return isinstance(call.func, cst.Name) and call.func.value == "setattr" and len(call.args) >= 2 \
        and isinstance(call.args[0].value, cst.Name) and call.args[0].value.value == "self"


def _hasattr_guards(method: cst.FunctionDef):
    """(the name tested, the block) of each `if hasattr(self, n):`."""
    for node in find_all(method, (cst.If,)):
        test = node.test
        if isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "hasattr" \
                and len(test.args) == 2 and isinstance(test.args[0].value, cst.Name) \
                and test.args[0].value.value == "self":
            yield test.args[1].value, node.body


def _same_name(a: cst.BaseExpression, b: cst.BaseExpression) -> bool:
    return isinstance(a, cst.Name) and isinstance(b, cst.Name) and a.value == b.value


MAX_STRINGS = 64  # names an f-string over loop variables may spell, past which it is unknown


def _possible_strings(method: cst.FunctionDef, expr: cst.BaseExpression, depth: int = 0) -> set[str] | None:
    """The strings `expr` may hold in `method`: a constant; a name bound only to displays of
    constants or looping over them (or over another such name); an f-string of those. None when
    it may hold anything else."""
    if depth > 4:
        return None
    if isinstance(expr, cst.SimpleString):
        found = expr.evaluated_value
        return {found} if isinstance(found, str) else None
    if isinstance(expr, cst.FormattedString):
        out = {""}
        for part in expr.parts:
            if isinstance(part, cst.FormattedStringText):
                out = {o + part.value for o in out}
                continue
            held = _possible_strings(method, part.expression, depth + 1) \
                if isinstance(part, cst.FormattedStringExpression) and part.format_spec is None else None
            if held is None or len(out) * len(held) > MAX_STRINGS:
                return None
            out = {o + h for o in out for h in held}
        return out
    if not isinstance(expr, cst.Name):
        return None
    bound = [node.iter for node in find_all(method, (cst.For,))
             if isinstance(node.target, cst.Name) and node.target.value == expr.value]
    bound += [node.value for node in find_all(method, (cst.Assign,))
              if any(isinstance(t.target, cst.Name) and t.target.value == expr.value for t in node.targets)]
    strings: set[str] = set()
    for value in bound:
        if isinstance(value, (cst.List, cst.Tuple)):
            parts = [_possible_strings(method, el.value, depth + 1) if isinstance(el, cst.Element) else None
                     for el in value.elements]
        elif isinstance(value, cst.Name) and value.value != expr.value:
            parts = [_possible_strings(method, value, depth + 1)]
        else:
            return None
        if any(p is None for p in parts):
            return None
        strings = strings.union(*parts)  # type: ignore[arg-type]
    return strings or None


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
    """`x.prop = v` (or `+=`, or as one of several targets), `prop=` as a keyword,
    `setattr(x, "prop", v)` in any module the run loaded."""
    escaped = re.escape(prop)
    pattern = re.compile(rf"\.{escaped}\s*(?:[-+*/%&|^@]|//|\*\*|<<|>>)?=(?!=)"  # `x.prop = v`, `x.prop += 1`
                         rf"|\.{escaped}\s*,[^\n]*[^=!<>]=(?!=)"  # `x.prop, y = pair`
                         rf"|\b{escaped}\s*=(?!=)"  # a keyword copied into attributes: `Model(prop=f)`
                         rf"|setattr\([^)\n]*['\"]{escaped}['\"]")
    return any(pattern.search(m.parsed.text) for m in project.mentioning(prop))
