"""What a frame hands back that Dynamo cannot rebuild when it compiles the frame on its own.

At the `return` of a frame compiled alone, Dynamo rebuilds outside the graph what the frame
returns and the globals and attributes it wrote. Measured on 2.13, these fail there and the
frame runs eagerly from its last checkpoint (BreakKind.OUTPUT; inlined, the value just goes to
the caller, and a frame that traced no op is skipped before its outputs are rebuilt):
- a bound method of a plain object the frame created (GB0092, Reconstruction failure);
- a @contextmanager object the frame created, entered or not (GB2533);
- a union of types written with `|` (`torch.Tensor | None`, GB0092).
Returning the object itself, or one made outside the compiled code, is fine.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from ..index.symbols import FunctionInfo
from ..vocab import CauseCheck
from .side_effects import declared_outer

if TYPE_CHECKING:
    from .events import FrameBuilder


class FrameOutputs:
    def __init__(self, b: "FrameBuilder"):
        self.b = b
        self.held: dict[str, CauseCheck] = {}  # locals holding such a value -> its kind
        self.stored: list[CauseCheck] = []  # the kinds globals or attributes now hold
        self.returned = ""  # the kind a return hands back (FrameInfo.returns_unrebuildable)

    def at_return(self, node: cst.Return) -> None:
        items = list(displayed(node.value)) if node.value is not None else []
        returned = [k for k in map(self.kind, items) if k is not None]
        if node.value is not None and not self.returned:  # for a caller it is inlined into
            self.returned = self.kind(node.value) or ""
        causes = self.b.causes
        for check in self.stored + returned:
            if causes.check_enabled(check):
                self.b.emit_break(causes.rule_for_check(check), node)
                return

    def kind(self, value: cst.BaseExpression) -> CauseCheck | None:
        b, causes = self.b, self.b.causes
        if isinstance(value, cst.Name):
            return CauseCheck.OUTPUT_NEW_OBJECT_METHOD if value.value in b.new_methods else self.held.get(value.value)
        if causes.new_bound_method(value):
            return CauseCheck.OUTPUT_NEW_OBJECT_METHOD
        if isinstance(value, cst.Call) and causes.makes_context_object(value):
            return CauseCheck.OUTPUT_CONTEXT_OBJECT
        if causes.type_union(value):
            return CauseCheck.OUTPUT_TYPE_UNION
        if isinstance(value, cst.Call):  # `return helper(x)` of a function returning one
            target = b.resolver.resolve(value.func)
            info = b.env.frame_if_built(causes.callee_key(target, value)) if target is not None else None
            return CauseCheck(info.returns_unrebuildable) if info is not None and info.returns_unrebuildable else None
        return None

    def assign(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        """A local now holds what `value` is; `self.cb = Helper().run` / `global G; G = cm(x)`
        leaves it behind for the caller."""
        kind = self.kind(value)
        if isinstance(target, cst.Attribute) or isinstance(target, cst.Name) and target.value in self._globals():
            if kind is not None:
                self.stored.append(kind)
        if isinstance(target, cst.Name):
            if kind is None or kind == CauseCheck.OUTPUT_NEW_OBJECT_METHOD:  # those are in new_methods
                self.held.pop(target.value, None)
            else:
                self.held[target.value] = kind

    def holds_context_object(self, name: str) -> bool:
        return self.held.get(name) == CauseCheck.OUTPUT_CONTEXT_OBJECT

    def context_objects(self) -> list[str]:
        """The locals now holding a @contextmanager object the frame made."""
        return [name for name in self.held if self.holds_context_object(name)]

    def _globals(self) -> frozenset[str]:
        b = self.b
        if not isinstance(b.source, FunctionInfo):
            return frozenset()
        node = b.function.node
        return b.env.node_memo("declared_globals", node, lambda: declared_outer(node.body, (cst.Global,)))


def displayed(expr: cst.BaseExpression):
    """The expression and, through tuple, list, set and dict displays, the values in it."""
    yield expr
    if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
        for el in expr.elements:
            yield from displayed(el.value)
    elif isinstance(expr, cst.Dict):
        for item in expr.elements:
            if isinstance(item, cst.DictElement):
                yield from displayed(item.value)
