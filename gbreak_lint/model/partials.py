"""Calls through `functools.partial` objects a frame makes: `make = partial(torch.rand,
requires_grad=True)`, `make_q = partial(make, shape)`, `make_q()` is `torch.rand(shape,
requires_grad=True)` to Dynamo, which traces the partial's call with its stored arguments."""
from __future__ import annotations

from typing import Callable

import libcst as cst

from ..walk import NESTED_SCOPES, find_all
from .frame_values import single_store

PARTIAL = "functools.partial"
MAX_DEPTH = 8  # partials of partials


def partial_bindings(function: cst.CSTNode, qualify: Callable[[cst.BaseExpression], str | None]) -> dict:
    """Local name -> the `partial(f, ...)` call it is bound to (once) in `function`. Walked once
    per function (the caller memoises it): most frames make no partial at all."""
    out = {}
    body = function.body if isinstance(function, cst.FunctionDef) else function  # (a def is a nested scope)
    for node in find_all(body, (cst.Assign,), skip=NESTED_SCOPES):
        made = node.value
        if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name) \
                or not isinstance(made, cst.Call) or qualify(made.func) != PARTIAL or not made.args \
                or made.args[0].star:
            continue
        name = node.targets[0].target.value
        if single_store(function, name) is made:
            out[name] = made
    return out


def through_partials(call: cst.Call, bindings: dict,
                     qualify: Callable[[cst.BaseExpression], str | None]) -> tuple[str, tuple[cst.Arg, ...]] | None:
    """(the function a partial the frame made wraps, the arguments the call passes it: the
    partials' stored ones first), for a call of a local name bound once to a partial
    (`bindings`: partial_bindings of the frame's function)."""
    func, args, unwrapped = call.func, tuple(call.args), False
    for _ in range(MAX_DEPTH):
        made = bindings.get(func.value) if isinstance(func, cst.Name) else None
        if made is None:
            break
        stored = made.args[1:]
        args = tuple(a for a in stored if a.keyword is None) + tuple(a for a in args if a.keyword is None) \
            + tuple(a for a in stored if a.keyword is not None) + tuple(a for a in args if a.keyword is not None)
        func, unwrapped = made.args[0].value, True
    qual = qualify(func) if unwrapped else None
    return (qual, args) if qual is not None else None
