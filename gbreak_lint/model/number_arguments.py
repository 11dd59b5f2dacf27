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

from .tensors import TensorScope

NUMBER, SIZE = "#", "*"
FUNCTION_NAMESPACES = ("torch", "torch.nn.functional")


def tensor_in_number_parameter(call: cst.Call, qual: str | None, scope: TensorScope,
                               is_graph_input: Callable[[cst.BaseExpression], bool]) -> str | None:
    """The parameter of `call` given a tensor where it takes a number, or None. A 0-d integer
    tensor the frame was given is specialised on its value instead (measured 2.13: `x.view(n, -1)`
    with `n` an input `torch.tensor(2)` does not break), so only tensors the frame computed count."""
    knowledge = scope.k

    def computed(expr: cst.BaseExpression) -> bool:
        return scope.is_tensor(expr) and not is_graph_input(expr)

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
