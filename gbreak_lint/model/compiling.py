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
from ..walk import NESTED_SCOPES, find_all

MAX_DEPTH = 3  # helpers calling helpers calling the predicate


class CompileTimeValues:
    def __init__(self, project: ProjectIndex, predicates: frozenset[str], constants: Mapping[str, object] | None = None):
        self.project = project
        self.predicates = predicates
        # calls whose truth Dynamo knows (knowledge: constant_calls; `is_exporting()` is False)
        self.known = {name: value for name, value in (constants or {}).items() if isinstance(value, bool)}
        self._returns: dict[str, bool | None] = {}
        self._constant_returns: dict[str, tuple[bool, object]] = {}

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

    def constant_return(self, fn: FunctionInfo) -> tuple[bool, object]:
        """(True, value) when the compiling path through `fn` (the branches the predicates
        decide) reaches a `return` of None, True or False (`if is_torchdynamo_compiling():
        self.x = v; return None`, or falls off the end); (False, None) otherwise."""
        if fn.decorators or fn.is_async or fn.is_generator:
            return False, None  # it returns a generator, a coroutine, or what a decorator makes
        if fn.qualname not in self._constant_returns:
            module = self.project.modules[fn.module]
            walk = _ReturnWalk(self, lambda expr: self.project.qualify(expr, module, fn))
            found = walk.block(fn.node.body)
            self._constant_returns[fn.qualname] = (True, found.value) if isinstance(found, _Returned) else \
                (True, None) if found is None else (False, None)
        return self._constant_returns[fn.qualname]


_GIVE_UP = object()  # a way out the walk does not follow (an undecided branch that returns, a raise)
_LITERALS = {"None": None, "True": True, "False": False}


class _Returned:
    def __init__(self, value: object):
        self.value = value


class _ReturnWalk:
    """The first `return` on the compiling path: a _Returned, _GIVE_UP, or None (none met)."""

    def __init__(self, values: CompileTimeValues, qualify: Callable):
        self.values, self.qualify = values, qualify

    def block(self, block) -> object:
        for stmt in block.body if isinstance(block, (cst.IndentedBlock, cst.SimpleStatementSuite)) else ():
            found = self.statement(stmt)
            if found is not None:
                return found
        return None

    def statement(self, stmt) -> object:
        if isinstance(stmt, cst.SimpleStatementLine):
            return next((self._small(small) for small in stmt.body if isinstance(small, (cst.Return, cst.Raise))), None)
        if isinstance(stmt, cst.If):
            taken = self.values.value(stmt.test, self.qualify)
            if taken is None:
                return _GIVE_UP if _leaves(stmt) else None
            if taken:
                return self.block(stmt.body)
            other = stmt.orelse
            return self.statement(other) if isinstance(other, cst.If) else \
                self.block(other.body) if isinstance(other, cst.Else) else None
        if isinstance(stmt, (cst.Try, cst.TryStar)):
            return self.block(stmt.body)  # no exception while compiling
        return _GIVE_UP if _leaves(stmt) else None

    @staticmethod
    def _small(small) -> object:
        if isinstance(small, cst.Raise):
            return _GIVE_UP
        value = small.value
        if value is None:
            return _Returned(None)
        if isinstance(value, cst.Name) and value.value in _LITERALS:
            return _Returned(_LITERALS[value.value])
        return _GIVE_UP


def _leaves(node: cst.CSTNode) -> bool:
    """Does a statement hold a `return` or `raise` of its own function?"""
    return bool(find_all(node, (cst.Return, cst.Raise), skip=NESTED_SCOPES))
