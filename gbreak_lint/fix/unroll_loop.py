"""GBL101 (unsafe): unroll `for i in range(<small constant>)` into calls of a helper function.

The pattern from PyTorch's "skipped functions" docs: the loop body becomes a module-level
function taking the loop variable and the locals it reads, returning the locals it assigns;
the loop becomes one call per iteration. A break in the helper is then a nested, resumable
break instead of a break in a loop that skips the whole frame.

Only loops that are safe to move: constant range of at most MAX_UNROLL iterations, a plain
name as target (not read after the loop), no else, and a body without break, continue,
return, yield, await, global/nonlocal or nested definitions.
"""
from __future__ import annotations

import libcst as cst

from ..model.tensors import target_names
from ..registry import REWRITES
from ..walk import all_params
from . import dry_run, enclosing, positions_around, replace_with_statements

MAX_UNROLL = 8
FORBIDDEN = (cst.Break, cst.Continue, cst.Return, cst.Yield, cst.Await, cst.Global, cst.Nonlocal,
             cst.FunctionDef, cst.ClassDef)


@REWRITES.register("GBL101")
def rewrite(parsed, d):
    defs = enclosing(parsed, d.span.line, (cst.FunctionDef,))
    loops = [n for n in enclosing(parsed, d.span.line, (cst.For,))]
    if not defs or not loops:
        return None
    fn, loop = defs[-1], loops[-1]
    values = _range_values(loop)
    if values is None or not isinstance(loop.target, cst.Name) or loop.orelse is not None \
            or loop.asynchronous is not None or _contains(loop.body, FORBIDDEN):
        return None
    target = loop.target.value
    locals_ = _stored(fn.body) | {p.name.value for p in _params(fn)}
    read, stored = _read(loop.body), _stored(loop.body)
    if target in _read_after(fn, loop, positions_around(parsed, d.span.line)):
        return None
    inputs = sorted((read & locals_) - {target})
    outputs = sorted(stored - {target})
    if any(name not in inputs and name not in _always_stored(loop.body) for name in outputs):
        return None  # a conditionally assigned name needs its value passed in
    if dry_run():  # it applies; building it would need the whole module's tree
        return fn
    helper_name = _unique_name(parsed.module, f"_{fn.name.value}_loop_body_{parsed.line(loop)}")
    helper = _helper(helper_name, target, inputs, outputs, loop.body)
    calls = [_call(helper_name, value, inputs, outputs) for value in values]
    calls[0] = calls[0].with_changes(leading_lines=loop.leading_lines)
    module = replace_with_statements(parsed.module, loop, calls)
    return _insert_before_top_level(module, fn, parsed, helper)


def _range_values(loop: cst.For) -> list[int] | None:
    it = loop.iter
    if not (isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "range"):
        return None
    if not 1 <= len(it.args) <= 2 or any(a.keyword or a.star for a in it.args):
        return None
    bounds = [a.value for a in it.args]
    integers = [b for b in bounds if isinstance(b, cst.Integer)]
    if len(integers) != len(bounds):
        return None
    numbers = [int(b.value, 0) for b in integers]
    values = list(range(*numbers))
    return values if 0 < len(values) <= MAX_UNROLL else None


def _helper(name, target, inputs, outputs, body) -> cst.FunctionDef:
    statements = list(body.body)
    if outputs:
        value = cst.Name(outputs[0]) if len(outputs) == 1 else cst.Tuple(
            [cst.Element(cst.Name(o)) for o in outputs], lpar=[], rpar=[])
        statements.append(cst.SimpleStatementLine([cst.Return(value)]))
    params = [cst.Param(cst.Name(p)) for p in [target, *inputs]]
    return cst.FunctionDef(name=cst.Name(name), params=cst.Parameters(params=params),
                           body=cst.IndentedBlock(statements),
                           leading_lines=[cst.EmptyLine(), cst.EmptyLine()])


def _call(name, value, inputs, outputs) -> cst.SimpleStatementLine:
    call = cst.Call(cst.Name(name), [cst.Arg(cst.Integer(str(value)))] + [cst.Arg(cst.Name(i)) for i in inputs])
    if not outputs:
        return cst.SimpleStatementLine([cst.Expr(call)])
    target = cst.Name(outputs[0]) if len(outputs) == 1 else cst.Tuple(
        [cst.Element(cst.Name(o)) for o in outputs], lpar=[], rpar=[])
    return cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(target)], call)])


def _insert_before_top_level(module: cst.Module, fn, parsed, helper) -> cst.Module:
    line = parsed.line(fn)
    body = list(module.body)
    for i, stmt in enumerate(parsed.module.body):
        r = parsed.positions[stmt]
        if r.start.line <= line <= r.end.line:
            body.insert(i, helper)
            return module.with_changes(body=body)
    return module


def _unique_name(module: cst.Module, base: str) -> str:
    text = module.code
    name, n = base, 2
    while name in text:
        name, n = f"{base}_{n}", n + 1
    return name


def _params(fn: cst.FunctionDef):
    return all_params(fn.params)


def _contains(node, kinds) -> bool:
    found = []

    class V(cst.CSTVisitor):
        def on_visit(self, n) -> bool:
            if isinstance(n, kinds):
                found.append(n)
            return not found

    node.visit(V())
    return bool(found)


def _read(node) -> set[str]:
    """Names loaded (not just stored) in a block."""
    names: set[str] = set()

    class V(cst.CSTVisitor):
        def visit_Name(self, n):
            names.add(n.value)

        def visit_AssignTarget(self, n):
            if not target_names(n.target):  # `a[i] = ...` / `a.b = ...` read their base
                n.target.visit(self)
            return False

        def visit_AnnAssign(self, n):
            if n.value is not None:
                n.value.visit(self)
            return False

        def visit_For(self, n):
            n.iter.visit(self)
            n.body.visit(self)
            return False

        def visit_Attribute(self, n):
            n.value.visit(self)
            return False

        def visit_Arg(self, n):
            n.value.visit(self)
            return False

    node.visit(V())
    return names


def _stored(node) -> set[str]:
    names: set[str] = set()

    class V(cst.CSTVisitor):
        def visit_AssignTarget(self, n):
            names.update(target_names(n.target))

        def visit_AugAssign(self, n):
            names.update(target_names(n.target))

        def visit_AnnAssign(self, n):
            names.update(target_names(n.target))

        def visit_For(self, n):
            names.update(target_names(n.target))

        def visit_NamedExpr(self, n):
            names.update(target_names(n.target))

        def visit_AsName(self, n):
            names.update(target_names(n.name))

        def visit_FunctionDef(self, n):
            return False

    node.visit(V())
    return names


def _always_stored(body) -> set[str]:
    """Names assigned by the body's own top-level statements (assigned on every iteration)."""
    names: set[str] = set()
    for stmt in body.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign):
                    for t in small.targets:
                        names.update(target_names(t.target))
                elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
                    names.update(target_names(small.target))
    return names


def _read_after(fn, loop, positions) -> set[str]:
    end = positions[loop].end.line
    names: set[str] = set()

    class V(cst.CSTVisitor):
        def visit_Name(self, n):
            if positions[n].start.line > end:
                names.add(n.value)

    fn.body.visit(V())
    return names
