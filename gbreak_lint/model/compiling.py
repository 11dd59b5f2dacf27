"""Conditions whose value Dynamo knows while it traces: `torch.compiler.is_compiling()` is True.

Model code guards eager-only work with it (`if not is_torchdynamo_compiling() and mask.all():`);
Dynamo constant-folds the guard and never evaluates the other side, so nothing behind it can
break the graph. Project helpers that just return such a predicate (transformers'
`is_torchdynamo_compiling()`, `is_tracing()`) count too: their returns are evaluated with the
few local assignments (`x = ...`, `x |= ...`) they make.
"""
from __future__ import annotations

from typing import Mapping, Callable

import libcst as cst

from ..index.project import ProjectIndex
from ..index.symbols import FunctionInfo

MAX_DEPTH = 3  # helpers calling helpers calling the predicate


class CompileTimeValues:
    def __init__(self, project: ProjectIndex, predicates: frozenset[str], constants: Mapping[str, object] | None = None):
        self.project = project
        self.predicates = predicates
        # calls whose truth Dynamo knows (knowledge: constant_calls; `is_exporting()` is False)
        self.known = {name: value for name, value in (constants or {}).items() if isinstance(value, bool)}
        self._returns: dict[str, bool | None] = {}

    def value(self, expr: cst.BaseExpression, qualify: Callable, local: dict | None = None,
              depth: int = 0) -> bool | None:
        """True / False when the expression's truth is fixed under Dynamo, else None."""
        if isinstance(expr, cst.Name):
            if expr.value in ("True", "False"):
                return expr.value == "True"
            return (local or {}).get(expr.value)
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
            inner = self.value(expr.expression, qualify, local, depth)
            return None if inner is None else not inner
        if isinstance(expr, cst.BooleanOperation):
            return self._boolean(expr, qualify, local, depth)
        if isinstance(expr, cst.Call) and depth <= MAX_DEPTH:
            return self._call(expr, qualify, depth)
        return None

    def _boolean(self, expr: cst.BooleanOperation, qualify, local, depth) -> bool | None:
        left = self.value(expr.left, qualify, local, depth)
        right = self.value(expr.right, qualify, local, depth)
        if isinstance(expr.operator, cst.Or):
            return True if True in (left, right) else (False if left is False and right is False else None)
        return False if False in (left, right) else (True if left is True and right is True else None)

    def _call(self, call: cst.Call, qualify, depth: int) -> bool | None:
        qual = qualify(call.func)
        if qual in self.predicates:
            return True
        if qual in self.known:
            return self.known[qual]
        fn = self.project.function(qual)
        return self.returns(fn, depth + 1) if fn is not None else None

    def returns(self, fn: FunctionInfo, depth: int) -> bool | None:
        """What a helper returns under Dynamo when that is fixed (all its returns agree)."""
        if fn.qualname in self._returns:
            return self._returns[fn.qualname]
        self._returns[fn.qualname] = None  # recursion guard
        module = self.project.modules[fn.module]

        def qualify(expr):
            return self.project.qualify(expr, module, fn)

        local: dict[str, bool | None] = {}
        results: list[bool | None] = []
        self._walk(fn.node.body, qualify, local, results, depth)
        value = results[0] if results and all(r == results[0] for r in results) else None
        self._returns[fn.qualname] = value
        return value

    def _walk(self, block, qualify, local, results, depth) -> None:
        body = block.body if isinstance(block, (cst.IndentedBlock, cst.SimpleStatementSuite)) else ()
        for stmt in body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    self._small(small, qualify, local, results, depth)
            elif isinstance(stmt, (cst.Try, cst.TryStar)):
                self._walk(stmt.body, qualify, local, results, depth)  # no exception while compiling
            elif isinstance(stmt, cst.If):
                self._walk(stmt.body, qualify, dict(local), results, depth)  # `x |= ...` keeps x True
                if stmt.orelse is not None:
                    results.append(None)  # two ways out: only simple helpers are evaluated
            elif not isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                results.append(None)

    def _small(self, small, qualify, local, results, depth) -> None:
        if isinstance(small, cst.Return):
            results.append(self.value(small.value, qualify, local, depth) if small.value else None)
        elif isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
            local[small.targets[0].target.value] = self.value(small.value, qualify, local, depth)
        elif isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name) \
                and isinstance(small.operator, cst.BitOrAssign):
            if local.get(small.target.value) is not True:  # True | anything stays True
                local[small.target.value] = None
