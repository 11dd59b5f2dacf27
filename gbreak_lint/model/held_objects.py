"""What a name holds across the functions of a test: its assignment, or the arguments a
function's callers pass for it.

Tests and scripts build the object a compiled closure uses several functions away from the
closure: `make_test(torch.optim.Adam)` builds `opt = optim_cls(...)`, a helper takes `opt` and
returns `def fn(): step_fn(opt)`. Dynamo sees the object; the frame's own bindings do not say
what it is. A name is followed to the nearest function that binds it (a single plain
assignment, or a parameter: then to every call of that function in the module) and on to
module level; each step stays in the module, so the answer is as good as the module's calls.
"""
from __future__ import annotations

import libcst as cst

from ..index.entries import call_argument
from ..index.project import ProjectIndex
from ..index.symbols import FunctionInfo, ModuleIndex
from .callables import Callables
from .constructions import calls_by_name

MAX_DEPTH = 6  # names followed through assignments and call sites
MAX_CALLERS = 8  # call sites read per parameter

Held = tuple[cst.BaseExpression, FunctionInfo | None]  # an expression and the scope reading it


class HeldValues:
    def __init__(self, project: ProjectIndex, callables: Callables, module: ModuleIndex):
        self.project, self.callables, self.module = project, callables, module

    def held(self, expr: cst.BaseExpression, scope: FunctionInfo | None, depth: int = 0) -> list[Held]:
        """The expressions `expr` may stand for where `scope`'s code reads it (itself when it
        is not a name followed further); empty when a parameter has no call site telling."""
        if not isinstance(expr, cst.Name) or depth > MAX_DEPTH:
            return [(expr, scope)]
        name, binder = expr.value, scope
        while binder is not None:
            if name in self.callables.bound_in(binder):
                return self._bound_by(name, binder, depth)
            binder = self.module.functions.get(binder.parent_function) if binder.parent_function else None
        value = self.module.values.get(name)
        if value is not None and name not in self.module.reassigned:
            return self.held(value, None, depth + 1)
        return [(expr, scope)]

    def classes(self, expr: cst.BaseExpression, scope: FunctionInfo | None) -> frozenset[str]:
        """The qualified classes (or factories) that made the object `expr` holds."""
        out: set[str] = set()
        for value, reader in self.held(expr, scope):
            if not isinstance(value, cst.Call):
                return frozenset()
            for maker, maker_scope in self.held(value.func, reader):
                qual = self.project.qualify(maker, self.module, maker_scope)
                if qual is None:
                    return frozenset()
                out.add(qual)
        return frozenset(out)

    def _bound_by(self, name: str, binder: FunctionInfo, depth: int) -> list[Held]:
        single = self.callables.single_assignments(binder, skip_none=True)
        if name in single:
            return self.held(single[name], binder, depth + 1)
        positional = [p.name for p in binder.params if p.kind == "positional"]
        if name not in {p.name for p in binder.params}:
            return []  # bound otherwise (several assignments, a loop, a def)
        out: list[Held] = []
        for call, caller in self._calls_of(binder.name)[:MAX_CALLERS]:
            arg = call_argument(call, name, positional.index(name) if name in positional else None)
            if arg is None:
                return []  # a default or a star argument: not followed
            out += self.held(arg, caller, depth + 1)
        return out

    def _calls_of(self, name: str) -> list[tuple[cst.Call, FunctionInfo | None]]:
        """The calls `name(...)` in the module, each with the function it is written in."""
        return [(call, scope) for call, scope in calls_by_name(self.project, self.module).get(name, ())
                if isinstance(call.func, cst.Name)]
