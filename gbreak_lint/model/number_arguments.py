"""A tensor passed where a torch op takes a Python number: `torch.zeros(n)`, `x.view(n, 4)`,
`F.softmax(x, dim)` with `n` / `dim` a tensor (`lengths.max()`, a traced `random.randint`), or
to a function of Python numbers (`math.sqrt(t)`).

Fake tensors carry no values, so Dynamo cannot give the op the number it needs and breaks the
graph there ("Data dependent operator", GB0033). Which parameters take numbers is knowledge
(`number_parameters`, generated from the ATen schemas and measured).
"""
from __future__ import annotations

from typing import Callable, Iterator

import libcst as cst

from .frame_values import single_store
from .tensors import TensorScope

NUMBER, SIZE = "#", "*"
MAX_DEPTH = 8  # names bound to names bound to ...
FUNCTION_NAMESPACES = ("torch", "torch.nn.functional")


def tensor_in_number_parameter(call: cst.Call, qual: str | None, scope: TensorScope,
                               is_graph_input: Callable[[cst.BaseExpression], bool],
                               function: cst.CSTNode) -> str | None:
    """The parameter of `call` given a tensor where it takes a number, or None. A 0-d integer
    tensor the frame was given is specialised on its value instead (measured 2.13: `x.view(n, -1)`
    with `n` an input `torch.tensor(2)` does not break), so only tensors the frame computed
    count, and not those made from Python numbers alone, whose value fake tensors keep."""
    knowledge = scope.k

    def computed(expr: cst.BaseExpression) -> bool:
        return scope.is_tensor(expr) and not is_graph_input(expr) and not _valued(expr, scope, function, 0)

    if qual in knowledge.number_functions:  # `math.sqrt(t)`: every argument is a number
        # (a random module number is no tensor here: Dynamo fails otherwise, measured 2.13)
        return "x" if any(computed(arg.value) and not scope.is_random_number(arg.value)
                          for arg in call.args if not arg.star) else None
    op, method = _op(call, qual, scope.is_tensor)
    signature = knowledge.number_parameters.get(op) if op is not None else None
    if signature is None:
        return None
    positional, keywords = signature
    if method and positional and not positional[0].endswith((NUMBER, SIZE)):
        positional = positional[1:]  # the receiver is the tensor the op works on
    for parameter, value in _bound(call, positional, keywords):
        if any(computed(v) for v in _numbers(value, parameter)):
            return parameter.rstrip(NUMBER + SIZE)
    starred = _unpacked_tensor(call, positional, lambda e: scope.is_tensor(e) and not is_graph_input(e))
    return starred.rstrip(NUMBER + SIZE) if starred is not None else None


def _unpacked_tensor(call: cst.Call, positional: tuple[str, ...], is_tensor) -> str | None:
    """`x.permute(*order)` with `order` a tensor the frame made: unpacking it yields the
    tensor's elements, 0-d tensors computed from it (even of `torch.tensor([0, 2, 1])`), where
    the op takes numbers (measured 2.13: GB0033). The parameter the first such element lands
    on. (A parameter of the frame is left out: `*grid_size` is more likely a tuple of ints.)"""
    index = 0
    for arg in call.args:
        if arg.keyword is not None:
            continue
        if arg.star == "*" and is_tensor(arg.value):
            if not positional:
                return None
            parameter = positional[min(index, len(positional) - 1)]
            fits = index < len(positional) or parameter.endswith(SIZE)
            return parameter if fits and parameter.endswith((NUMBER, SIZE)) else None
        if arg.star:
            return None
        index += 1
    return None


def _op(call: cst.Call, qual: str | None, is_tensor) -> tuple[str | None, bool]:
    if qual is not None:
        namespace, _, name = qual.rpartition(".")
        if namespace in FUNCTION_NAMESPACES:
            return name, False
    func = call.func
    if isinstance(func, cst.Attribute) and is_tensor(func.value):
        return func.attr.value, True
    return None, False


def _bound(call: cst.Call, positional: tuple[str, ...], keywords: tuple[str, ...]) -> Iterator[tuple[str, cst.BaseExpression]]:
    """(parameter, argument) pairs of the marked parameters; a star argument ends the matching."""
    by_keyword = {k.rstrip(NUMBER + SIZE): k for k in keywords}
    index = 0
    for arg in call.args:
        if arg.star:
            return
        if arg.keyword is not None:
            parameter = by_keyword.get(arg.keyword.value)
        elif index < len(positional):
            parameter = positional[index]
        else:  # the rest of the positional arguments go to a last size (`x.view(n, 4)`)
            parameter = positional[-1] if positional and positional[-1].endswith(SIZE) else None
        index += arg.keyword is None
        if parameter is not None and parameter.endswith((NUMBER, SIZE)):
            yield parameter, arg.value


def _numbers(value: cst.BaseExpression, parameter: str) -> list[cst.BaseExpression]:
    """The values a parameter reads: a size's tuple or list display gives its elements."""
    if parameter.endswith(SIZE) and isinstance(value, (cst.Tuple, cst.List)):
        return [e.value for e in value.elements if not isinstance(e, cst.StarredElement)]
    return [value]


def _valued(expr: cst.BaseExpression, scope: TensorScope, function: cst.CSTNode, depth: int) -> bool:
    """A tensor made from Python numbers alone, not by a factory (`torch.tensor(3)`,
    `torch.div(seq_len, 2, rounding_mode="trunc") - 1` of ints): fake tensors keep its value."""
    if depth > MAX_DEPTH:
        return False
    if isinstance(expr, cst.Name):
        store = single_store(function, expr.value)
        return store is not None and _valued(store, scope, function, depth + 1)
    if isinstance(expr, (cst.BinaryOperation, cst.UnaryOperation)):
        operands = (expr.left, expr.right) if isinstance(expr, cst.BinaryOperation) else (expr.expression,)
        return all(not scope.is_tensor(o) or _valued(o, scope, function, depth + 1) for o in operands)
    if not isinstance(expr, cst.Call):
        return False
    qual = scope.qualify(expr.func)
    k = scope.k
    if qual is None or not scope.is_torch_function(qual) or qual in k.sized_tensor_factories \
            or qual in k.valueless_factories:
        return False
    return all(not scope.is_tensor(a.value) or _valued(a.value, scope, function, depth + 1) for a in expr.args)
