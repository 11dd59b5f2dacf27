"""The message argument of `torch._check*(cond, message)`, as Dynamo converts it.

Dynamo (2.13, variables/torch.py `check_impl`) stores the message in the graph as a real
Python function, so it must be a function the traced code defined (a lambda or a nested
`def`) whose closure cells it can turn into Python constants. A string, or a function defined
outside the compiled code, is "Can't extract message"; a closure over a tensor or over `self`
is "Can't convert ... message closure". Both break the graph at the call, which resumes.
"""
from __future__ import annotations

from typing import NamedTuple

import libcst as cst

from ..walk import STRING_NODES
from .frame_values import free_names



class BadMessage(NamedTuple):
    gb_key: str  # a key of knowledge.gb_codes
    detail: str  # what the message is, for the report


def message_argument(node: cst.Call, qual: str | None, knowledge) -> cst.BaseExpression | None:
    """The `message` argument of a call to one of the torch._check functions, if given."""
    if qual in knowledge.message_checks:
        position = 1
    elif qual in knowledge.message_checks_after_error_type:
        position = 2
    else:
        return None
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == "message":
            return arg.value
    positional = [a.value for a in node.args if a.keyword is None and not a.star]
    return positional[position] if len(positional) > position else None


def unconvertible_message(frame, message: cst.BaseExpression) -> BadMessage | None:
    """Why Dynamo cannot convert `message` in `frame` (an EventBuilder), or None when it can
    or the model does not know."""
    if isinstance(message, STRING_NODES):
        return BadMessage("check_message_not_nested", "a string")
    if isinstance(message, cst.Lambda):
        return _closure_cells(frame, message)
    if not isinstance(message, (cst.Name, cst.Attribute)):
        return None
    if isinstance(message, cst.Name) and message.value in frame.function.local_functions:
        local = frame.env.project.function(frame.function.local_functions[message.value])
        return _closure_cells(frame, local.node) if local is not None else None
    outside = frame.env.project.function(frame.resolver.qualify(message))
    if outside is not None and outside.parent_function is None:
        return BadMessage("check_message_not_nested", f"`{outside.name}`, defined outside the compiled code")
    return None


def _closure_cells(frame, fn: cst.Lambda | cst.FunctionDef) -> BadMessage | None:
    """A closure over one of the frame's variables that is not a Python constant."""
    cells = free_names(fn) & frame.own_variables()
    for name in sorted(cells):
        if _not_constant(frame, name):
            return BadMessage("check_message_closure", f"a closure over `{name}`")
    return None


def _not_constant(frame, name: str) -> bool:
    variable = cst.Name(name)
    if frame.scope.is_tensor(variable) or frame.scope.is_data_scalar(variable):
        return True
    params = frame.function.params
    # a method's receiver is a module or an object, never a constant
    return frame.resolver.cls is not None and bool(params) and params[0].name == name
