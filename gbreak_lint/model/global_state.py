"""The global torch state a compiled call runs under, which Dynamo's guards check.

Every compiled code object carries a guard on torch's global state: grad mode, inference mode,
autocast, the default dtype, deterministic algorithms. Calling the compiled function again
under another state recompiles it, and coming back to a state seen before reuses that compile
(measured 2.13: `f(x)`, then `with torch.no_grad(): f(x)`, then `f(x)` compiles twice; the same
for `inference_mode`, `autocast`, `set_grad_enabled(False)`, `set_default_dtype(torch.float64)`
and `use_deterministic_algorithms(True)`; `no_grad` and `set_grad_enabled(False)` are one
state). Not exact for `inference_mode` after `no_grad`: Dynamo then recompiles the entry
frame but not a helper frame below it (measured: a nested break hit 5 times where this model
counts 6). A state is a set of tags: the contexts in force and the setters called before, each
with the value that differs from torch's default. A project context manager counts by what it
sets up: a `@contextmanager` function's body before its `yield`, a class's `__enter__` (its
parameters and `self.` attributes read from the call; measured the same way).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import libcst as cst

from ..index.symbols import FunctionInfo, ModuleIndex, has_yield
from .values import Const, literal

State = frozenset[str]
DEFAULT: State = frozenset()
GRAD_OFF = "grad=off"
INFERENCE = "inference_mode"


@dataclass(frozen=True)
class _Scope:
    """Where an expression is read: its module and function, the parameters of a user
    context manager bound to the call's arguments (each read where the call is), and for a
    context manager class the attributes its `__init__` set (`self.mode = mode`)."""
    module: ModuleIndex
    function: FunctionInfo | None = None
    bound: Mapping[str, tuple[cst.BaseExpression, "_Scope"]] = field(default_factory=dict)
    attributes: Mapping[str, tuple[cst.BaseExpression, "_Scope"]] = field(default_factory=dict)


class StateReader:
    """`knowledge`: which calls change the state (`grad_off_contexts`, `inference_contexts`,
    `grad_on_contexts`, `grad_mode_setters`, `autocast_contexts`, `global_state_setters`);
    `module`: where the calls are read."""

    def __init__(self, knowledge, project, module: ModuleIndex):
        self.k, self.project, self.module = knowledge, project, module

    def entered(self, state: State, item: cst.BaseExpression, function: FunctionInfo | None = None,
                scope: _Scope | None = None, depth: int = 0) -> State:
        """The state inside `with item:` (or a function decorated with it)."""
        scope = scope or _Scope(self.module, function)
        if not isinstance(item, cst.Call):
            return state
        qual = self._qualify(item.func, scope)
        if qual in self.k.grad_mode_setters or qual in self.k.global_state_setters:
            return self.set(state, item, scope=scope)
        if _switched_off(item):
            return state  # `inference_mode(False)`, `autocast(..., enabled=False)`
        if qual in self.k.grad_off_contexts:
            return state | {GRAD_OFF}
        if qual in self.k.inference_contexts:
            return state | {GRAD_OFF, INFERENCE}
        if qual in self.k.grad_on_contexts:
            return state - {GRAD_OFF}
        if qual in self.k.autocast_contexts:
            return state | {"autocast"}
        return self._user_context(state, item, qual, scope, depth)

    def set(self, state: State, call: cst.BaseExpression, function: FunctionInfo | None = None,
            scope: _Scope | None = None) -> State:
        """The state after a setter call (`torch.set_grad_enabled(False)`), or `state`."""
        scope = scope or _Scope(self.module, function)
        if not isinstance(call, cst.Call) or not call.args:
            return state
        qual = self._qualify(call.func, scope)
        value, where = _resolved(call.args[0].value, scope)
        known = literal(value)
        if qual in self.k.grad_mode_setters:
            if known is None or not isinstance(known.value, bool):
                return state
            return state - {GRAD_OFF} if known.value else state | {GRAD_OFF}
        if qual not in self.k.global_state_setters:
            return state
        shown = repr(known.value) if known is not None else self._qualify(value, where) or "?"
        shown = self.k.dtype_names.get(shown, shown)  # `torch.float` is `torch.float32`
        kept = frozenset(t for t in state if not t.startswith(f"{qual}="))
        return kept if shown == self.k.global_state_setters[qual] else kept | {f"{qual}={shown}"}

    def _qualify(self, expr: cst.BaseExpression, scope: _Scope) -> str | None:
        expr, scope = _resolved(expr, scope)
        return self.project.qualify(expr, scope.module, scope.function)

    def _user_context(self, state: State, call: cst.Call, qual: str | None, scope: _Scope, depth: int) -> State:
        """A project `@contextmanager` function: the state its body sets up before it yields
        (`torch.set_default_dtype(dtype)` then `yield`), with its parameters bound to the call's
        arguments. A project class: what its `__enter__` sets, reading the attributes its
        `__init__` set from the call's arguments."""
        if depth > _MAX_DEPTH:
            return state
        fn = self.project.function(qual)
        if fn is not None and self.project.decorated_with(fn.decorators, fn.module, self.k.contextmanager_decorators):
            inner = _Scope(self.project.modules[fn.module], fn, _bind(fn, call, scope, self.project))
            return self._before_yield(state, fn.node.body.body, inner, depth + 1)[0]
        cls = self.project.klass(qual)
        enter = self.project.method(cls, "__enter__") if cls is not None else None
        if cls is None or enter is None:
            return state
        init = self.project.method(cls, "__init__")
        attributes = self._set_by_init(init, call, scope) if init is not None else {}
        inner = _Scope(self.project.modules[enter.module], enter, attributes=attributes)
        return self._before_yield(state, enter.node.body.body, inner, depth + 1)[0]

    def _set_by_init(self, init: FunctionInfo, call: cst.Call, scope: _Scope) -> dict:
        """`self.name = value` statements of `__init__`'s body, each value read with the
        parameters bound to the construction's arguments."""
        inner = _Scope(self.project.modules[init.module], init, _bind(init, call, scope, self.project, skip=1))
        found: dict = {}
        for stmt in init.node.body.body:
            for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
                if isinstance(small, cst.Assign) and len(small.targets) == 1 and _self_attribute(small.targets[0].target):
                    found[small.targets[0].target.attr.value] = (small.value, inner)  # type: ignore[attr-defined]
        return found

    def _before_yield(self, state: State, body, scope: _Scope, depth: int) -> tuple[State, bool]:
        """The state the statements set up until the first `yield`, and whether one was reached."""
        for stmt in body:
            if not has_yield(stmt):
                if isinstance(stmt, cst.SimpleStatementLine):
                    for small in stmt.body:
                        if isinstance(small, cst.Expr):
                            state = self.set(state, small.value, scope=scope)
                continue
            if isinstance(stmt, cst.With):
                for item in stmt.items:
                    state = self.entered(state, item.item, scope=scope, depth=depth)
            if isinstance(stmt, (cst.With, cst.Try)):
                return self._before_yield(state, stmt.body.body, scope, depth)
            return state, True  # the `yield` itself, or one under a branch: what ran is known
        return state, False


_MAX_DEPTH = 4  # user context managers entered inside each other's bodies


def _bind(fn: FunctionInfo, call: cst.Call, scope: _Scope, project, skip: int = 0) -> dict:
    """The parameters of `fn` the call passes (positionally or by keyword), read where the call
    is, and those it leaves at their default, read where `fn` is defined. `skip`: leading
    parameters the call does not pass (`self`)."""
    defined = _Scope(project.modules[fn.module])
    bound: dict = {p.name: (p.default, defined) for p in fn.params if p.default is not None}
    positional = [p for p in fn.params if p.kind == "positional"][skip:]
    for param, arg in zip(positional, [a for a in call.args if a.keyword is None and not a.star]):
        bound[param.name] = (arg.value, scope)
    for arg in call.args:
        if arg.keyword is not None:
            bound[arg.keyword.value] = (arg.value, scope)
    return bound


def _resolved(expr: cst.BaseExpression, scope: _Scope) -> tuple[cst.BaseExpression, _Scope]:
    """A bound parameter's argument, where the call passes it; `self.name` of a context
    manager class, what its `__init__` set it to."""
    for _ in range(_MAX_DEPTH * 2):
        if isinstance(expr, cst.Name) and expr.value in scope.bound:
            expr, scope = scope.bound[expr.value]
        elif _self_attribute(expr) and expr.attr.value in scope.attributes:  # type: ignore[attr-defined]
            expr, scope = scope.attributes[expr.attr.value]  # type: ignore[attr-defined]
        else:
            break
    return expr, scope


def _self_attribute(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self"


def _switched_off(call: cst.Call) -> bool:
    given = [a.value for a in call.args if a.keyword is None][:1] + \
        [a.value for a in call.args if a.keyword is not None and a.keyword.value in ("mode", "enabled")]
    return Const(False) in map(literal, given)
