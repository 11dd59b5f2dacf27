"""A mapping proxy made before the compiled code, read after that code changed a dict.

Measured on 2.13: Dynamo cannot tell which dict an existing `types.MappingProxyType` object
(a global or a closure cell bound to one, or a class's `__dict__`) shows. Once the traced code
has changed any dict it did not make itself (`d["k"] = v`, `del d[k]`, `d.update(...)` of a
global, a closure cell, a parameter or an attribute), reading such a proxy by key or calling
one of its methods (`mp["a"]`, `mp.keys()`) raises "mapping proxy affected by dictionary
mutation" (GB0198); the graph breaks there and Dynamo resumes after it. `len(mp)` and `k in mp`
read nothing through the proxy's methods: no break. A proxy read before the change, a change
to a dict the frame made, or a proxy the frame made itself is fine. A change made by an
inlined callee counts (to a global's or a closure cell's dict); a graph break in between
starts a new trace, which has changed nothing yet.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from ..index.names import string_key
from ..vocab import CauseCheck
from .values import Keywords

if TYPE_CHECKING:
    from .events import FrameBuilder

_DICT_DISPLAYS = (cst.Dict, cst.DictComp)
# methods only a dict has among the containers: a parameter they change is a dict
_DICT_ONLY_MUTATORS = frozenset({"update", "popitem"})
# not counted: `setdefault` changes the dict only for a new key (measured 2.13: no break after
# it on a key the dict holds); `update()` given nothing changes nothing (see `call`)
_NOT_CHANGING = frozenset({"setdefault"})


class MappingProxies:
    def __init__(self, b: "FrameBuilder"):
        self.b = b
        self.dict_changed = False  # the trace changed a dict it did not make since its last break
        self.outer_dict_changed = False  # the frame changed a global's or a cell's dict (FrameInfo)

    def callee(self, changes_outer_dict: bool, breaks: bool) -> None:
        """An inlined callee ran: its changes to globals and cells are the trace's too; a
        break in it starts a new trace (taken as after its changes: `change(); print()`)."""
        self.dict_changed = not breaks and (self.dict_changed or changes_outer_dict)

    def broke(self) -> None:
        self.dict_changed = False

    def store(self, target: cst.Subscript) -> None:
        """`d[k] = v` / `del d[k]`: notes a change to an existing dict."""
        self._change(target.value, string_key(target) is not None)

    def call(self, node: cst.Call) -> bool:
        """A method call: notes `d.update(...)` of an existing dict; emits the break of a
        proxy's method called after such a change (True then)."""
        func = node.func
        if not isinstance(func, cst.Attribute):
            return False
        method = func.attr.value
        if method in self.b.env.knowledge.container_mutators:
            if method not in _NOT_CHANGING and (node.args or method != "update"):
                self._change(func.value, method in _DICT_ONLY_MUTATORS)
            return False
        return self._read(func.value, node)

    def subscript(self, node: cst.Subscript) -> bool:
        """`mp["a"]` after a change: emits the break (True then)."""
        return self._read(node.value, node)

    def _read(self, receiver: cst.BaseExpression, node: cst.CSTNode) -> bool:
        if not self.dict_changed or not self._existing_proxy(receiver):
            return False
        check = CauseCheck.MAPPING_PROXY_AFTER_DICT_CHANGE
        if not self.b.causes.check_enabled(check):
            return False
        self.b.emit_break(self.b.causes.rule_for_check(check), node)
        return True

    def _change(self, expr: cst.BaseExpression, dict_use: bool) -> None:
        if self._existing_dict(expr, dict_use):
            self.dict_changed = True
            # (a parameter's dict may be one the caller made: no change of the caller's then)
            self.outer_dict_changed = self.outer_dict_changed or not self._parameter(expr)

    def _parameter(self, expr: cst.BaseExpression) -> bool:
        b = self.b
        return isinstance(expr, cst.Name) and expr.value in b.frame_parameters and expr.value not in b.rebound

    def _existing_dict(self, expr: cst.BaseExpression, dict_use: bool) -> bool:
        """A dict the frame did not make: a parameter given one (or changed as only a dict
        is, `dict_use`: `p["key"] = v`, `p.update(...)`), or a global, a closure cell or an
        attribute bound to a dict display or a dict-making call."""
        if self._parameter(expr):
            held = self.b.values.value(expr)
            return isinstance(held.value, Keywords) if held is not None else dict_use
        return isinstance(self._held_outside(expr)[0], _DICT_DISPLAYS) \
            or self._made_outside_by(expr, self.b.env.knowledge.dict_factories)

    def _existing_proxy(self, expr: cst.BaseExpression) -> bool:
        """A proxy made outside the frame: a name bound to `types.MappingProxyType(...)`, or
        `C.__dict__` of a class the frame did not define."""
        b = self.b
        if isinstance(expr, cst.Attribute) and expr.attr.value == "__dict__":
            return self._outside_name(expr.value) and b.env.project.klass(b.resolver.qualify(expr.value)) is not None
        return self._made_outside_by(expr, b.env.knowledge.mapping_proxy_factories)

    def _made_outside_by(self, expr: cst.BaseExpression, factories: frozenset) -> bool:
        """Is what `expr` holds, bound outside the frame, made by a call of one of `factories`
        (qualified in the module that binds it)?"""
        value, module = self._held_outside(expr)
        return isinstance(value, cst.Call) and module is not None \
            and self.b.env.project.qualify(value.func, module) in factories

    def _held_outside(self, expr: cst.BaseExpression):
        """(what a global, a closure cell or an attribute is bound to, the module binding it);
        (None, None) for a local."""
        if isinstance(expr, cst.Name) and not self._outside_name(expr) \
                or not isinstance(expr, (cst.Name, cst.Attribute)):
            return None, None
        return self.b.resolver.held_value(expr)

    def _outside_name(self, expr: cst.BaseExpression) -> bool:
        return isinstance(expr, cst.Name) and expr.value not in self.b.own_variables()

