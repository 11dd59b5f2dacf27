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

from collections import Counter
from typing import Callable

import libcst as cst

from ..index.names import binding_counts
from ..walk import NESTED_SCOPES, find_all

MUTATION = "mutation"
ALIASING = "aliasing"
SAID = {MUTATION: "changes an input in place", ALIASING: "returns an input, a view of one, or one tensor twice"}
# in-place methods that change a tensor's flags, not its data: allowed
_METADATA_METHODS = frozenset({"requires_grad_", "retain_grad", "share_memory_"})


# what a tensor expression shares storage with: an input of the body (`x`, a view of it), a
# tensor it closes over, or one of its own locals (named, for outputs returned twice)
INPUT, FREE, LOCAL = "input", "free", "local"


class HopInputs:
    """Reads one body: `params` are its inputs, `is_tensor` tells which other names hold a
    tensor (a closed-over one is an input too)."""

    def __init__(self, knowledge, qualify: Callable[[cst.BaseExpression], str | None],
                 params: frozenset[str], is_tensor: Callable[[cst.Name], bool]):
        self.k, self.qualify, self.params, self.is_tensor = knowledge, qualify, params, is_tensor
        self.bound: dict[str, cst.BaseExpression] = {}  # locals assigned once: name -> value
        self.rebound: frozenset[str] = frozenset()  # names the body binds (an in-place `+=` keeps the tensor)

    def faults(self, body: cst.BaseSuite | cst.BaseExpression) -> tuple[str, ...]:
        """The body's faults, in the order Dynamo checks them (mutation first)."""
        statements = find_all(body, (cst.Assign, cst.AugAssign, cst.Call, cst.Return), skip=NESTED_SCOPES)
        self.bound = _single_assignments(body, statements)
        augmented = Counter(s.target.value for s in statements
                            if isinstance(s, cst.AugAssign) and isinstance(s.target, cst.Name))
        self.rebound = frozenset(n for n, count in binding_counts(body).items() if count > augmented[n])
        returned = [s.value for s in statements if isinstance(s, cst.Return) and s.value is not None]
        if isinstance(body, cst.BaseExpression):  # a lambda's body is what it returns
            returned = [body]
        found = []
        if any(self._mutates(node) for node in statements):
            found.append(MUTATION)
        if any(self._aliases(value) for value in returned):
            found.append(ALIASING)
        return tuple(found)

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
        return root is not None and (root[0] == INPUT or root[0] == FREE and self.is_tensor(cst.Name(root[1])))

    # -- aliasing ----------------------------------------------------------------------
    def _aliases(self, value: cst.BaseExpression) -> bool:
        items = [e.value for e in value.elements] if isinstance(value, (cst.Tuple, cst.List)) else [value]
        known = [r for r in map(self._root, items) if r is not None]
        return any(kind == INPUT for kind, _ in known) or len(known) != len(set(known))

    def _root(self, expr: cst.BaseExpression, inside: frozenset[str] = frozenset()) -> tuple[str, str] | None:
        """What `expr` shares storage with, or None for a new tensor (or one not known).
        `inside`: the names whose own binding is being read (`x = x.view(-1)`: the `x` of
        the value is the input)."""
        if isinstance(expr, cst.Name):
            return self._name_root(expr.value, inside)
        base = self._view_base(expr)
        return self._root(base, inside) if base is not None else None

    def _name_root(self, name: str, inside: frozenset[str]) -> tuple[str, str] | None:
        if name in inside or name not in self.rebound:
            return (INPUT, name) if name in self.params else (FREE, name)
        value = self.bound.get(name)
        found = self._root(value, inside | {name}) if value is not None else None
        if found is not None:
            return found
        # bound to a new tensor; an input rebound more than once (or under a branch) is not
        # known to be the input any more either
        return None if name in self.params else (LOCAL, name)

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
