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
from typing import Any, Callable

import libcst as cst

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
        found = self.of(value) if value is not None and len(names) == 1 else None
        for name in names:
            if found is None:
                self.known.pop(name, None)
            else:
                self.known[name] = found

    def forget(self, name: str) -> None:
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
        return (value,) if type(value) in (int, float, bool) else None

    def _elementwise(self, left, right, op, depth: int) -> Values | None:
        if op is None:
            return None
        a, b = self._operand(left, depth), self._operand(right, depth)
        if a is None or b is None or (self.of(left, depth + 1) is None and self.of(right, depth + 1) is None):
            return None  # (two plain numbers: no tensor here)
        if len(a) != len(b) and 1 not in (len(a), len(b)):
            return None
        width = max(len(a), len(b))
        try:
            return tuple(op(a[i % len(a)], b[i % len(b)]) for i in range(width))
        except (ZeroDivisionError, TypeError):
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


def _method(values: Values, name: str, call: cst.Call) -> Values | None:
    if any(a.keyword is None for a in call.args) and name not in ("float", "double", "long", "int", "bool"):
        return None  # `x.sum(0)`, `x.max(dim)`: not a reduction over every element
    if name in _REDUCTIONS and not call.args and values:
        return (_REDUCTIONS[name](values),)
    if name in _ELEMENTWISE and not call.args:
        return tuple(_ELEMENTWISE[name](v) for v in values)
    if name == "item" and len(values) == 1:
        return values
    return None


def made(call: cst.Call, qualify: Callable, number: Callable) -> Values | None:
    """The elements a factory call makes from constants: `torch.ones(2, 3)`, `torch.zeros((4,))`,
    `torch.full((2,), 7)`, `torch.arange(1, 5)`, `torch.tensor([[1, 2], [3, 4]])`."""
    qual = qualify(call.func)
    args = [a.value for a in call.args if a.keyword is None and not a.star]
    if any(a.star for a in call.args):
        return None
    if qual in _FILLED or qual == "torch.full":
        sizes = args[:1] if qual == "torch.full" else args
        count = _count(sizes, number)
        fill = _FILLED.get(qual) if qual in _FILLED else _number(args[1], number) if len(args) == 2 else None
        return (fill,) * count if count is not None and fill is not None and count <= MAX_ELEMENTS else None
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
        return tuple(out)
    if qual in ("torch.tensor", "torch.as_tensor") and len(args) == 1:
        flat: list = []
        return tuple(flat) if _flatten(args[0], number, flat) and len(flat) <= MAX_ELEMENTS else None
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
