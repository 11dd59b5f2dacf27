"""Indexes and slice bounds whose value Dynamo must read (measured on 2.13).

Dynamo's tensors carry no values. Where Python needs a number out of one to index or slice,
Dynamo reads it with `.item()` and breaks:
- `xs[i]` of a list or tuple with `i` a tensor (GB0124, resumed);
- a slice bound that is a tensor, `x[:n]`, `xs[a:b]` (GB0124 at BINARY_SUBSCR, which cannot be
  resumed), or the builtin `slice(a, b)` (at its call, resumed; its slice breaks again where
  it is used);
- a tensor indexed by a 0-d integer tensor computed from data, `y[b.argmax()]` (GB0033, resumed).

And one subscript that is no index at all: `C[int]` of a project class deriving
`typing.Generic` makes a `typing._GenericAlias`, which Dynamo has no variable for (GB0116
"Unexpected type in sourceless builder", resumed; calling the alias, `C[int]()`, breaks again).
`typing.List[int]`, `list[int]` and `Optional[int]` are traced.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from ..vocab import BreakKind, CauseCheck
from .frame_values import is_sequence_display

if TYPE_CHECKING:
    from .events import FrameBuilder


class IndexReads:
    def __init__(self, b: "FrameBuilder"):
        self.b = b
        self.slices: set[str] = set()  # locals holding `slice(a, b)` of a tensor bound

    def subscript(self, node: cst.Subscript) -> bool:
        """Emit the break reading `node` makes, if any (True then)."""
        return self.sequence_by_tensor(node) or self._sliced_by_tensor(node) or self.by_scalar_tensor(node) \
            or self._generic_alias(node)

    def store(self, node: cst.Subscript) -> bool:
        """Emit the break storing into `node` makes, if any (True then)."""
        return self.sequence_by_tensor(node) or self._sliced_by_tensor(node) or self.by_scalar_tensor(node)

    def assign(self, target: cst.Name, value: cst.BaseExpression) -> None:
        (self.slices.add if self._tensor_slice(value) else self.slices.discard)(target.value)

    def slice_call(self, node: cst.Call) -> bool:
        """`slice(lo, hi)` with a tensor bound: the builtin reads its value (GB0124) and Dynamo
        resumes after the call."""
        if not self._tensor_slice(node) or not self.b.causes.check_enabled(CauseCheck.TENSOR_SLICE_BOUND):
            return False
        self._emit(CauseCheck.TENSOR_SLICE_BOUND, node, node, break_kind=BreakKind.RESUMABLE)
        return True

    def sequence_by_tensor(self, node: cst.Subscript) -> bool:
        """`xs[i]` (or `xs[i] = v`) of a list or tuple with `i` a tensor."""
        b = self.b
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index) \
                or not b.scope.is_tensor(node.slice[0].slice.value) \
                or not b.causes.check_enabled(CauseCheck.SEQUENCE_INDEXED_BY_TENSOR):
            return False
        sequence = node.value
        if not (is_sequence_display(b.function.node, sequence) or b.star_tuple(sequence)
                or isinstance(sequence, cst.Name) and sequence.value in b.scope.tensor_sequences
                or self._tensor_shape(sequence)):
            return False
        b.emit_break(b.causes.rule_for_check(CauseCheck.SEQUENCE_INDEXED_BY_TENSOR), node)
        return True

    def _tensor_shape(self, expr: cst.BaseExpression) -> bool:
        """`x.shape` / `x.size()` of a tensor: a torch.Size, a tuple (measured 2.13: indexed by
        a tensor it reads the index's value, GB0124)."""
        name = "shape"
        if isinstance(expr, cst.Call) and not expr.args:
            expr, name = expr.func, "size"
        return isinstance(expr, cst.Attribute) and expr.attr.value == name and self.b.scope.is_tensor(expr.value)

    def by_scalar_tensor(self, node: cst.Subscript) -> bool:
        """`y[b.argmax()]`, `y[:, m.sum() - 1] = v`: an index of a tensor is a 0-d integer tensor
        holding data, the others slices or numbers. A 1-d index or a tensor made from constants
        (`torch.tensor(2)`) is traced."""
        scope = self.b.scope
        indexes = [el.slice.value for el in node.slice if isinstance(el.slice, cst.Index)]
        scalars = [i for i in indexes if self._scalar_data_integer(i)]
        if not scalars or any(scope.is_tensor(i) for i in indexes if i not in scalars) \
                or not scope.is_tensor(node.value) or not self.b.causes.check_enabled(CauseCheck.SCALAR_TENSOR_INDEX):
            return False
        self._emit(CauseCheck.SCALAR_TENSOR_INDEX, node, scalars[0])
        return True

    def _sliced_by_tensor(self, node: cst.Subscript) -> bool:
        """`x[:n]`, `xs[a:b]`, `x[s]` with `s = slice(a, b)` or `x[slice(a, b)]`, a bound being a
        tensor (of a tensor or a list alike; the call breaks first, then the subscript in the
        function resuming after it)."""
        held = any(isinstance(part, cst.Name) and part.value in self.slices or self._tensor_slice(part)
                   for part in _index_values(node))
        if not (held or any(self._tensor_bound(b) for el in node.slice for b in slice_bounds(el))) \
                or not self.b.causes.check_enabled(CauseCheck.TENSOR_SLICE_BOUND):
            return False
        self._emit(CauseCheck.TENSOR_SLICE_BOUND, node, node)
        return True

    def _generic_alias(self, node: cst.Subscript) -> bool:
        """`C[int]` with `C` a project class deriving `typing.Generic` (directly or not)."""
        b = self.b
        project = b.env.project
        cls = project.klass(b.resolver.qualify(node.value))
        if cls is None or not b.causes.check_enabled(CauseCheck.GENERIC_CLASS_SUBSCRIPT):
            return False
        generic = b.env.knowledge.generic_bases
        if not any(base in generic for c in project.mro(cls) for base in _base_heads(project, c)):
            return False
        self._emit(CauseCheck.GENERIC_CLASS_SUBSCRIPT, node, node.value)
        return True

    def _tensor_slice(self, value: cst.BaseExpression) -> bool:
        return isinstance(value, cst.Call) and self.b.resolver.qualify(value.func) == "builtins.slice" \
            and any(self._tensor_bound(a.value) for a in value.args)

    def _tensor_bound(self, bound: cst.BaseExpression) -> bool:
        """A tensor the frame made, or one a call site passes in as an integer tensor: a
        parameter only assumed to be a tensor (no call site, a library entry) is more likely
        an int (`x[:, :seq_len]`)."""
        b = self.b
        return b.scope.is_tensor(bound) and (not b.is_graph_input(bound) or b.scope.is_integer_tensor(bound))

    def _scalar_data_integer(self, expr: cst.BaseExpression, depth: int = 0) -> bool:
        """A 0-d integer tensor computed from data: an index reduction of a tensor, or a full
        reduction of an integer tensor, with no dim (`b.argmax()`, `mask.long().sum()`), give or
        take an int (`n - 1`)."""
        b, k = self.b, self.b.env.knowledge
        if isinstance(expr, cst.Name) and expr.value in b.built and depth < 3:
            return self._scalar_data_integer(b.built[expr.value], depth + 1)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Subtract)):
            sides = (expr.left, expr.right)
            return any(isinstance(s, cst.Integer) for s in sides) and \
                any(self._scalar_data_integer(s, depth + 1) for s in sides)
        if not (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute)) or expr.args:
            return False
        method, receiver = expr.func.attr.value, expr.func.value
        if not b.scope.is_tensor(receiver):
            return False
        return method in k.index_reductions or method in k.full_reductions and b.scope.is_integer_tensor(receiver)

    def _emit(self, check: CauseCheck, node: cst.CSTNode, shown: cst.CSTNode, **fields) -> None:
        causes = self.b.causes
        self.b.emit_break(causes.rule_for_check(check), node, detail=cst.Module([]).code_for_node(shown), **fields)


def _index_values(node: cst.Subscript) -> list[cst.BaseExpression]:
    """The index expressions, a parenthesized tuple's items one by one (`x[(3, s)]` is `x[3, s]`)."""
    values = [el.slice.value for el in node.slice if isinstance(el.slice, cst.Index)]
    if len(values) == 1 and isinstance(values[0], cst.Tuple):
        return [item.value for item in values[0].elements]
    return values


def slice_bounds(element: cst.SubscriptElement) -> list[cst.BaseExpression]:
    """The bounds and step written in `a:b:c` (those present)."""
    part = element.slice
    if not isinstance(part, cst.Slice):
        return []
    return [b for b in (part.lower, part.upper, part.step) if b is not None]


def _base_heads(project, cls) -> list[str]:
    """The qualified names of a class's bases with their subscripts dropped
    (`typing.Generic[T]` -> `typing.Generic`)."""
    module = project.modules[cls.module]
    heads = (base.value if isinstance(base, cst.Subscript) else base for base in cls.bases)
    return [q for q in (project.qualify(h, module) for h in heads) if q]
