"""Does a higher-order op's body change or hand back its inputs?

cond, while_loop (with grad on), map, scan and associative_scan refuse a body that mutates one
of its inputs in place ("Encountered input mutation during higher order op tracing", GB0041;
a tensor it closes over counts, as Dynamo lifts it to an input) or returns a tensor sharing
storage with an input or with another output ("Encountered aliasing ...", GB0040): `return x`,
a view (`x.view(-1)`, `x[0]`, `x.T`, `x.split(1)[0]`) or an op returning its receiver as is
(`x.contiguous()`, `x.reshape(-1)`). Measured on 2.13, each a compile error even without
fullgraph. Mutation is checked first.
"""
from __future__ import annotations

from typing import Callable

import libcst as cst

from ..index.names import binding_counts
from ..walk import NESTED_SCOPES, find_all

MUTATION = "mutation"
ALIASING = "aliasing"
SAID = {MUTATION: "changes an input in place", ALIASING: "returns an input, a view of one, or one tensor twice"}
# in-place methods that change a tensor's flags, not its data: allowed
_METADATA_METHODS = frozenset({"requires_grad_", "retain_grad", "share_memory_"})


class HopInputs:
    """Reads one body: `params` are its inputs, `is_tensor` tells which other names hold a
    tensor (a closed-over one is an input too)."""

    def __init__(self, knowledge, qualify: Callable[[cst.BaseExpression], str | None],
                 params: frozenset[str], is_tensor: Callable[[cst.Name], bool]):
        self.k, self.qualify, self.params, self.is_tensor = knowledge, qualify, params, is_tensor
        self.bound: dict[str, cst.BaseExpression] = {}  # locals assigned once: name -> value
        self.locals: frozenset[str] = frozenset()

    def fault(self, body: cst.BaseSuite | cst.BaseExpression) -> str:
        statements = find_all(body, (cst.Assign, cst.AugAssign, cst.Call, cst.Return), skip=NESTED_SCOPES)
        self.bound = _single_assignments(body, statements)
        self.locals = frozenset(binding_counts(body))
        if any(self._mutates(node) for node in statements):
            return MUTATION
        returned = [s.value for s in statements if isinstance(s, cst.Return) and s.value is not None]
        if isinstance(body, cst.BaseExpression):  # a lambda's body is what it returns
            returned = [body]
        return ALIASING if any(self._aliases(value) for value in returned) else ""

    # -- mutation ----------------------------------------------------------------------
    def _mutates(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            method = node.func.attr.value
            return method.endswith("_") and not method.startswith("_") and method not in _METADATA_METHODS \
                and self._input(node.func.value)
        if isinstance(node, cst.AugAssign):
            return self._input(node.target)
        if isinstance(node, cst.Assign):
            return any(isinstance(t.target, cst.Subscript) and self._input(t.target.value) for t in node.targets)
        return False

    def _input(self, expr: cst.BaseExpression) -> bool:
        """An input of the body or a view of one (`x`, `x[0]`, `x.view(-1)`), or a tensor it
        closes over."""
        root = self._root(expr)
        return root in self.params or root is not None and root not in self.locals \
            and self.is_tensor(cst.Name(root))

    # -- aliasing ----------------------------------------------------------------------
    def _aliases(self, value: cst.BaseExpression) -> bool:
        items = [e.value for e in value.elements] if isinstance(value, (cst.Tuple, cst.List)) else [value]
        roots = [self._root(item) for item in items]
        known = [r for r in roots if r is not None]
        return any(r in self.params for r in known) or len(known) != len(set(known))

    def _root(self, expr: cst.BaseExpression, depth: int = 0) -> str | None:
        """The name whose storage `expr` shares: itself for a name, its base for a view."""
        if depth > 20:
            return None
        if isinstance(expr, cst.Name):
            value = self.bound.get(expr.value)
            inner = self._root(value, depth + 1) if value is not None else None
            return inner if inner is not None else expr.value
        base = self._view_base(expr)
        return self._root(base, depth + 1) if base is not None else None

    def _view_base(self, expr: cst.BaseExpression) -> cst.BaseExpression | None:
        k = self.k
        if isinstance(expr, cst.Attribute) and expr.attr.value in k.view_attributes:
            return expr.value
        if isinstance(expr, cst.Subscript):
            inner = expr.value
            if isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute) \
                    and inner.func.attr.value in k.view_sequence_methods:
                return inner.func.value  # `x.split(1)[0]`
            return inner if all(_basic_index(el.slice) for el in expr.slice) else None
        if not isinstance(expr, cst.Call):
            return None
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in k.view_methods \
                and self.qualify(expr.func) is None:
            return expr.func.value
        if self.qualify(expr.func) in k.view_functions and expr.args:
            return expr.args[0].value
        return None


def _basic_index(part: cst.BaseSlice) -> bool:
    """A slice, an integer, None or `...`: basic indexing, which makes a view."""
    if isinstance(part, cst.Slice):
        return True
    if not isinstance(part, cst.Index):
        return False
    value = part.value
    if isinstance(value, cst.UnaryOperation):
        value = value.expression
    return isinstance(value, (cst.Integer, cst.Ellipsis)) or isinstance(value, cst.Name) and value.value == "None"


def _single_assignments(body: cst.CSTNode, statements: list) -> dict[str, cst.BaseExpression]:
    """Locals a body binds exactly once, with a plain `name = value`."""
    counts = binding_counts(body)
    return {t.target.value: node.value for node in statements if isinstance(node, cst.Assign)
            for t in node.targets if isinstance(t.target, cst.Name) and counts.get(t.target.value) == 1}
