"""What a tensor holds, where the source tells it: made from constants alone.

A data-dependent branch (`if x.sum() > 0:`) breaks the graph whatever the data, but only the
branch the data takes runs on: Dynamo compiles a resume function for the side the jump goes to,
not for the other (measured 2.13: the other side's breaks are never met). Tests and scripts
often call the compiled function with tensors made from constants (`torch.ones(3, 3)`,
`torch.tensor([1, 2])`, `torch.arange(4) * -2`), which tell the side. This module computes the
flat element values of such tensors, and what reductions (`sum`, `max`, `all`, ...), elementwise
arithmetic with numbers and comparisons make of them; anything else is unknown (None).
"""
from __future__ import annotations

import operator
import struct
from typing import Any, Callable

import libcst as cst

from ..index.names import last_name
from ..walk import find_all

MAX_ELEMENTS = 1024  # larger tensors are not followed
Values = tuple  # the elements, flattened in order (numbers or bools)

_FILLED = {"torch.ones": 1.0, "torch.zeros": 0.0}
_ARITHMETIC = {cst.Add: operator.add, cst.Subtract: operator.sub, cst.Multiply: operator.mul,
               cst.Divide: operator.truediv}
_COMPARE = {cst.GreaterThan: operator.gt, cst.GreaterThanEqual: operator.ge, cst.LessThan: operator.lt,
            cst.LessThanEqual: operator.le, cst.Equal: operator.eq, cst.NotEqual: operator.ne}
# methods (and torch functions of one tensor) reducing every element to one
_REDUCTIONS: dict[str, Callable[[Values], object]] = {
    "sum": sum, "max": max, "min": min, "all": lambda v: all(map(bool, v)), "any": lambda v: any(map(bool, v)),
    "mean": lambda v: sum(v) / len(v), "amax": max, "amin": min, "prod": lambda v: _product(v)}
# methods keeping the values (or mapping each one)
_ELEMENTWISE: dict[str, Callable[[Any], Any]] = {
    "float": float, "double": float, "clone": lambda x: x, "detach": lambda x: x, "contiguous": lambda x: x,
    "abs": abs, "neg": operator.neg, "long": int, "int": int, "bool": bool}


def _product(values: Values) -> object:
    out: object = 1
    for v in values:
        out = out * v
    return out


class TensorContents:
    """The known contents of a frame's tensors: its parameters' (from the call site) and the
    locals it computes from them. `qualify` names a call's function; `number` is the Python
    constant an expression holds, if known."""

    def __init__(self, params: dict[str, Values], qualify: Callable, number: Callable) -> None:
        self.known: dict[str, Values] = dict(params)
        self.qualify, self.number = qualify, number

    def assign(self, names: list[str], value: cst.BaseExpression | None) -> None:
        """`y = x * 2` knows `y`; `y = x`, `v = x[0:3]`, `d = x.detach()` make another name for
        (part of) `x`, which an in-place change through it would change: neither is known."""
        found = self.of(value) if value is not None and len(names) == 1 and _fresh(value) else None
        for name in names:
            if found is None:
                self.known.pop(name, None)
            else:
                self.known[name] = found
        if value is not None and not _fresh(value):
            for name in _mentioned(value):
                self.known.pop(name, None)

    def forget(self, name: str) -> None:
        self.known.pop(name, None)

    def forget_changed(self, call: cst.Call, qualified: str | None) -> None:
        """What a call may change in place: the receiver of `x.add_(1)` / `x[0:3].fill_(0)` /
        `x.data.sub_(1)`, the first argument of `torch.neg_(x)` / `nn.init.zeros_(x)`, an `out=`
        tensor, and any tensor handed to a function that is not torch's."""
        for name in changed_by(call, qualified):
            self.known.pop(name, None)

    def forget_all(self, names) -> None:
        for name in names:
            self.known.pop(name, None)

    def truth(self, expr: cst.BaseExpression) -> bool | None:
        """The truth of a condition on tensor contents (`x.sum() > 0`, `a.any() and b.all()`)."""
        if isinstance(expr, cst.BooleanOperation):
            left, right = self.truth(expr.left), self.truth(expr.right)
            if isinstance(expr.operator, cst.And):
                return False if left is False else (None if left is None else right)
            return True if left is True else (None if left is None else right)
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
            inner = self.truth(expr.expression)
            return None if inner is None else not inner
        found = self.of(expr)
        return bool(found[0]) if found is not None and len(found) == 1 else None

    def of(self, expr: cst.BaseExpression, depth: int = 0) -> Values | None:
        if depth > 16:
            return None
        if isinstance(expr, cst.Name):
            return self.known.get(expr.value)
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
            inner = self.of(expr.expression, depth + 1)
            return tuple(-v for v in inner) if inner is not None else None
        if isinstance(expr, cst.BinaryOperation):
            return self._elementwise(expr.left, expr.right, _ARITHMETIC.get(type(expr.operator)), depth)
        if isinstance(expr, cst.Comparison) and len(expr.comparisons) == 1:
            target = expr.comparisons[0]
            return self._elementwise(expr.left, target.comparator, _COMPARE.get(type(target.operator)), depth)
        if isinstance(expr, cst.Call):
            return self._call(expr, depth)
        return None

    def _operand(self, expr: cst.BaseExpression, depth: int) -> Values | None:
        found = self.of(expr, depth + 1)
        if found is not None:
            return found
        known = self.number(expr)
        value = known.value if known is not None else None
        return (_f32(value),) if type(value) in (int, float, bool) else None  # (a float scalar is cast to float32)

    def _elementwise(self, left, right, op, depth: int) -> Values | None:
        if op is None:
            return None
        a, b = self._operand(left, depth), self._operand(right, depth)
        if a is None or b is None or (self.of(left, depth + 1) is None and self.of(right, depth + 1) is None):
            return None  # (two plain numbers: no tensor here)
        if len(a) != len(b) and 1 not in (len(a), len(b)):
            return None
        if not _computable(op, a + b):
            return None
        width = max(len(a), len(b))
        try:
            return tuple(_f32(op(a[i % len(a)], b[i % len(b)])) for i in range(width))
        except (ZeroDivisionError, TypeError, OverflowError):
            return None

    def _call(self, call: cst.Call, depth: int) -> Values | None:
        func = call.func
        if isinstance(func, cst.Attribute) and self.qualify(func) is None:
            receiver = self.of(func.value, depth + 1)
            return _method(receiver, func.attr.value, call) if receiver is not None else None
        qual = self.qualify(func) or ""
        name = qual.removeprefix("torch.")
        if qual.startswith("torch.") and name in {**_REDUCTIONS, **_ELEMENTWISE} and len(call.args) == 1:
            inner = self.of(call.args[0].value, depth + 1)
            return _method(inner, name, call.with_changes(args=())) if inner is not None else None
        return made(call, self.qualify, self.number)


def _computable(op, values: Values) -> bool:
    """Python's arithmetic is torch's on these values: no bool arithmetic (a bool tensor stays
    bool: `t + t` is `t | t`), no equality of fractions (float32 rounding decides it)."""
    if op in _ARITHMETIC.values() and any(type(v) is bool for v in values):
        return False
    if op in (operator.eq, operator.ne) and any(type(v) is float and not v.is_integer() for v in values):
        return False
    return True


def _f32(value: object) -> object:
    """A float as float32 holds it (torch's default dtype): `0.1 + 0.2 == 0.3` there."""
    if type(value) is not float or value != value or value in (float("inf"), float("-inf")):
        return value
    try:
        return struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        return float("inf") if value > 0 else float("-inf")


def _method(values: Values, name: str, call: cst.Call) -> Values | None:
    if any(a.keyword is None for a in call.args) and name not in ("float", "double", "long", "int", "bool"):
        return None  # `x.sum(0)`, `x.max(dim)`: not a reduction over every element
    if name in _REDUCTIONS and not call.args and values:
        if name in ("sum", "mean", "prod") and any(type(v) is bool for v in values):
            values = tuple(int(v) for v in values)
        return (_f32(_REDUCTIONS[name](values)),)
    if name in _ELEMENTWISE and not call.args:
        return tuple(_f32(_ELEMENTWISE[name](v)) for v in values)
    if name == "item" and len(values) == 1:
        return values
    return None


def made(call: cst.Call, qualify: Callable, number: Callable) -> Values | None:
    """The elements a factory call makes from constants: `torch.ones(2, 3)`, `torch.zeros((4,))`,
    `torch.full((2,), 7)`, `torch.arange(1, 5)`, `torch.tensor([[1, 2], [3, 4]])`."""
    qual = qualify(call.func)
    args = [a.value for a in call.args if a.keyword is None and not a.star]
    if any(a.star or a.keyword is not None and a.keyword.value not in ("device", "requires_grad") for a in call.args):
        return None  # (a dtype changes the values: `full((3,), 0.7, dtype=torch.int64)` holds 0)
    if qual in _FILLED or qual == "torch.full":
        sizes = args[:1] if qual == "torch.full" else args
        count = _count(sizes, number)
        fill = _FILLED.get(qual) if qual in _FILLED else _number(args[1], number) if len(args) == 2 else None
        return (_f32(fill),) * count if count is not None and fill is not None and count <= MAX_ELEMENTS else None
    if qual == "torch.arange":
        bounds = [_number(a, number) for a in args]
        if not 1 <= len(bounds) <= 3 or any(b is None for b in bounds):
            return None
        start, end, step = (0, bounds[0], 1) if len(bounds) == 1 else (*bounds, 1)[:3]
        if step == 0 or abs((end - start) / step) > MAX_ELEMENTS:  # type: ignore[operator]
            return None
        out, v = [], start
        while (v < end) if step > 0 else (v > end):  # type: ignore[operator]
            out.append(v)
            v += step  # type: ignore[operator]
        return tuple(_f32(v) for v in out)
    if qual in ("torch.tensor", "torch.as_tensor") and len(args) == 1:
        flat: list = []
        if not _flatten(args[0], number, flat) or len(flat) > MAX_ELEMENTS:
            return None
        if len({type(v) for v in flat}) > 1:  # mixed: torch promotes (bool and int to float)
            flat = [float(v) for v in flat]
        return tuple(_f32(v) for v in flat)
    return None


def _number(expr: cst.BaseExpression, number: Callable) -> object:
    known = number(expr)
    value = known.value if known is not None else None
    return value if type(value) in (int, float, bool) else None


def _count(sizes: list, number: Callable) -> int | None:
    if len(sizes) == 1 and isinstance(sizes[0], (cst.Tuple, cst.List)):
        sizes = [el.value for el in sizes[0].elements]
    dims = [_number(s, number) for s in sizes]
    if not dims or any(type(d) is not int or d < 0 for d in dims):
        return None
    total = 1
    for d in dims:
        total *= d  # type: ignore[operator]
        if total > MAX_ELEMENTS:
            return None
    return total


def _flatten(expr: cst.BaseExpression, number: Callable, out: list, depth: int = 0) -> bool:
    if depth > 8 or len(out) > MAX_ELEMENTS:
        return False
    if isinstance(expr, (cst.List, cst.Tuple)):
        return all(isinstance(el, cst.Element) and _flatten(el.value, number, out, depth + 1) for el in expr.elements)
    value = _number(expr, number)
    if value is None:
        return False
    out.append(value)
    return True


def _fresh(value: cst.BaseExpression) -> bool:
    """An expression making a new tensor (arithmetic, a comparison, a reduction, a factory,
    `.clone()`), not another view of one (a name, an item or slice, `.detach()`, `.view()`)."""
    if isinstance(value, (cst.BinaryOperation, cst.Comparison, cst.UnaryOperation)):
        return True
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
        return value.func.attr.value in _REDUCTIONS or value.func.attr.value in ("clone", "item", "abs", "neg")
    return isinstance(value, cst.Call)


def _mentioned(expr: cst.CSTNode) -> set[str]:
    return {n.value for n in find_all(expr, (cst.Name,))}


def _root(expr: cst.BaseExpression) -> str | None:
    """The name a receiver chain starts from (`x` of `x[0:3].data`)."""
    while isinstance(expr, (cst.Attribute, cst.Subscript, cst.Call)):
        expr = expr.value if not isinstance(expr, cst.Call) else expr.func
    return expr.value if isinstance(expr, cst.Name) else None


def _in_place_roots(call: cst.Call, method_receiver: bool) -> set[str]:
    """What a call changes in place by its own form: the receiver of `x.add_()` (when
    `method_receiver`), the first argument of `f_(x)` or `f(x, inplace=True)`, `out=` tensors."""
    func = call.func
    named = last_name(func)
    in_place = named.endswith("_") and not named.startswith("__")
    out: set[str] = set()
    if method_receiver and in_place and isinstance(func, cst.Attribute):
        out.update(filter(None, [_root(func.value)]))
    inplace_keyword = any(a.keyword is not None and a.keyword.value == "inplace" and not
                          (isinstance(a.value, cst.Name) and a.value.value == "False") for a in call.args)
    if (in_place or inplace_keyword) and call.args:
        out.update(filter(None, [_root(call.args[0].value)]))
    out.update(filter(None, (_root(a.value) for a in call.args if a.keyword is not None and a.keyword.value == "out")))
    return out


def _stored_roots(node: cst.Assign | cst.AugAssign | cst.AnnAssign | cst.For) -> list:
    return [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]


def changed_by(call: cst.Call, qualified: str | None) -> set[str]:
    """The names a call may change in place (see TensorContents.forget_changed): what its form
    says, and every tensor handed to a function that is not torch's."""
    out = _in_place_roots(call, method_receiver=qualified is None)
    if qualified is None or not qualified.startswith("torch."):
        out.update(filter(None, (_root(a.value) for a in call.args)))
    return out


def changed_names(body: cst.CSTNode) -> set[str]:
    """The names a block may rebind or change in place: assignment targets (and the roots of
    item and attribute stores), receivers of in-place methods, and every name handed to a
    call (whatever it does with it)."""
    out: set[str] = set()
    for node in find_all(body, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.For, cst.Call)):
        if isinstance(node, cst.Call):
            out |= _in_place_roots(node, method_receiver=True)
            out.update(filter(None, (_root(a.value) for a in node.args)))
            continue
        for target in _stored_roots(node):
            out.update(_mentioned(target) if isinstance(target, (cst.Tuple, cst.List)) else
                       filter(None, [_root(target)]))
    return out


def changed_in_place(body: cst.CSTNode) -> set[str]:
    """The names a function body changes in place itself: receivers of `x.add_()`, roots of
    `x[0] = v` / `x.data = v`, `out=` tensors and first arguments of `f_(x)` (what a second call
    with the same tensor would then see)."""
    out: set[str] = set()
    for node in find_all(body, (cst.Assign, cst.AugAssign, cst.Call)):
        if isinstance(node, cst.Call):
            out |= _in_place_roots(node, method_receiver=True)
            continue
        out.update(filter(None, (_root(t) for t in _stored_roots(node) if isinstance(t, (cst.Subscript, cst.Attribute)))))
        if isinstance(node, cst.AugAssign):
            out.update(filter(None, [_root(node.target)]))
    return out
