"""GBL401 (safe): `model = torch.compile(model, **kw)` -> `model.compile(**kw)`.

Only when the name is rebound to its own compiled wrapper: afterwards `model` is still the
module, compiled in place, and every later use of the name sees the same calls.
"""
from __future__ import annotations

import libcst as cst

from ..registry import REWRITES
from . import dry_run, enclosing, replace_node


@REWRITES.register("GBL401")
def rewrite(parsed, d):
    for line in enclosing(parsed, d.span.line, (cst.SimpleStatementLine,)):
        if len(line.body) != 1 or not isinstance(line.body[0], cst.Assign):
            continue
        assign = line.body[0]
        call = assign.value
        if (len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name)
                or not isinstance(call, cst.Call) or not call.args or call.args[0].keyword is not None):
            continue
        name = assign.targets[0].target.value
        first = call.args[0].value
        if not (isinstance(first, cst.Name) and first.value == name):
            return None  # `opt = torch.compile(model)`: the wrapper has another name; not safe
        kwargs = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in call.args[1:]]
        if kwargs:
            kwargs[-1] = kwargs[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        new_call = cst.Call(func=cst.Attribute(value=cst.Name(name), attr=cst.Name("compile")),
                            args=[a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                                  for a in kwargs[:-1]] + kwargs[-1:])
        new_line = line.with_changes(body=[cst.Expr(new_call)])
        if dry_run():  # it applies; building it needs the whole module's tree
            return new_line
        return replace_node(parsed.module, line, new_line)
    return None
