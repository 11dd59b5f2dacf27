"""Calls through `functools.partial` objects a frame makes: `make = partial(torch.rand,
requires_grad=True)`, `make_q = partial(make, shape)`, `make_q()` is `torch.rand(shape,
requires_grad=True)` to Dynamo, which traces the partial's call with its stored arguments."""
from __future__ import annotations

from typing import Callable

import libcst as cst

from .frame_values import single_store

PARTIAL = "functools.partial"
MAX_DEPTH = 8  # partials of partials


def through_partials(call: cst.Call, function: cst.CSTNode,
                     qualify: Callable[[cst.BaseExpression], str | None]) -> tuple[str, tuple[cst.Arg, ...]] | None:
    """(the function a partial made in `function` wraps, the arguments the call passes it:
    the partials' stored ones first), for a call of a local name bound once to a partial."""
    func, args, unwrapped = call.func, tuple(call.args), False
    for _ in range(MAX_DEPTH):
        made = _partial_made(func, function, qualify)
        if made is None:
            break
        stored = made.args[1:]
        args = tuple(a for a in stored if a.keyword is None) + tuple(a for a in args if a.keyword is None) \
            + tuple(a for a in stored if a.keyword is not None) + tuple(a for a in args if a.keyword is not None)
        func, unwrapped = made.args[0].value, True
    qual = qualify(func) if unwrapped else None
    return (qual, args) if qual is not None else None


def _partial_made(func: cst.BaseExpression, function: cst.CSTNode, qualify) -> cst.Call | None:
    """`partial(f, ...)` a local name is bound to (once, in `function`)."""
    made = single_store(function, func.value) if isinstance(func, cst.Name) else None
    if isinstance(made, cst.Call) and qualify(made.func) == PARTIAL and made.args and not made.args[0].star:
        return made
    return None
