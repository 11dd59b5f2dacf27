"""What a constructor parameter was given, where the class's module builds it once.

`self.sub = sub` in `__init__` says nothing about `sub`; the call that built the instance does
(`Outer(torch.jit.script(inner))`, `Encoder(rnn=nn.LSTM(8, 8))`, a local `scripted = ...`
passed on). When the class's module constructs it at exactly one place, the argument there
(or the value the name it passes was bound to once) is what the attribute holds. Two or more
constructions, or a starred call, leave it unknown.
"""
from __future__ import annotations

import libcst as cst

from ..index.project import ProjectIndex
from ..index.symbols import ClassInfo, FunctionInfo, ModuleIndex
from ..walk import NESTED_SCOPES, find_all

Found = tuple[cst.BaseExpression, ModuleIndex, FunctionInfo | None]
WRAPPED = "__wrapped__"  # `f.__wrapped__`: a decorated project function before its decorators


def constructed_argument(project: ProjectIndex, callables, cls: ClassInfo, param: str) -> Found | None:
    """(value, its module, the function it is written in) the single construction of `cls`
    passes for `__init__`'s `param`; None when unknown."""
    return project.derived(f"constructed:{cls.qualname}:{param}",
                           lambda: _find(project, callables, cls, param))


def _find(project: ProjectIndex, callables, cls: ClassInfo, param: str) -> Found | None:
    init = project.method(cls, "__init__")
    if init is None:
        return None
    params = [p for p in init.params if p.kind in ("positional", "keyword_only")]
    position = next((i - 1 for i, p in enumerate(params) if p.name == param and p.kind == "positional"), None)
    calls = list(_constructions(project, cls))
    if len(calls) != 1:
        return None
    call, module, scope = calls[0]
    if any(a.star for a in call.args):
        return None
    positional = [a.value for a in call.args if a.keyword is None]
    passed = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == param), None)
    if passed is None and position is not None and 0 <= position < len(positional):
        passed = positional[position]
    if isinstance(passed, cst.Name):
        value, binder = _bound(callables, module, scope, passed.value)
        if value is not None:  # else a def, a class or an import: the name itself tells
            passed, scope = value, binder
    if isinstance(passed, cst.Call):  # `torch.jit.script(inner)`: `inner` as the scope binds it
        args = []
        for arg in passed.args:
            value = _bound(callables, module, scope, arg.value.value)[0] if isinstance(arg.value, cst.Name) else None
            args.append(arg.with_changes(value=value) if value is not None else arg)
        passed = passed.with_changes(args=args)
    return (passed, module, scope) if passed is not None else None


def _bound(callables, module: ModuleIndex, scope: FunctionInfo | None, name: str):
    """(the value `name` is bound to once where it is read, the function binding it)."""
    bound = callables.enclosing_value(name, module, scope, in_lambda=True) if scope is not None else None
    if bound is not None:
        return bound[1], bound[0]
    value = module.values.get(name) if name not in module.reassigned else None
    return value, None


def constructions_of(project: ProjectIndex, cls: ClassInfo) -> list:
    """(call, module, enclosing function) of every call of the class in its own module."""
    return list(_constructions(project, cls))


def _constructions(project: ProjectIndex, cls: ClassInfo):
    """(call, module, enclosing function) of every call of the class in its own module. Scripts
    and tests build what they compile next to it; looking through every module that mentions a
    library's class costs more than the scan (measured on timm: 1.8x the memory), and a
    library class is built in many places anyway."""
    module = project.modules[cls.module]
    for call, scope in calls_by_name(project, module).get(cls.name, ()):
        if project.qualify(call.func, module, scope) == cls.qualname:
            yield call, module, scope
    for fn in module.functions.values():  # `@Timer def f` builds `Timer(f)`
        scope = module.functions.get(fn.parent_function) if fn.parent_function else None
        for dec in fn.decorators:
            if not isinstance(dec.decorator, cst.Call) \
                    and project.qualify(dec.decorator, module, scope) == cls.qualname:
                undecorated = cst.Attribute(cst.Name(fn.name), cst.Name(WRAPPED))  # what the class gets
                yield cst.Call(dec.decorator, [cst.Arg(undecorated)]), module, scope


def calls_by_name(project: ProjectIndex, module: ModuleIndex) -> dict[str, list]:
    """The module's calls of a name or an attribute (`Net(...)`, `models.Net(...)`), by that
    name, with the function each is written in: one walk per module for every class asked."""
    def compute() -> dict[str, list]:
        out: dict[str, list] = {}
        scopes: list[FunctionInfo | None] = [None, *module.functions.values()]
        roots = [(scope.node.body if scope is not None else module.parsed.module, scope) for scope in scopes]
        # a class body's calls run where the class is defined (`test_x = make_test(SGD)`)
        roots += [(cls.node.body, module.functions.get(cls.qualname.rsplit(".", 1)[0]))
                  for cls in module.classes.values()]
        for root, scope in roots:
            for call in find_all(root, (cst.Call,), skip=NESTED_SCOPES):
                func = call.func
                name = func.value if isinstance(func, cst.Name) else \
                    func.attr.value if isinstance(func, cst.Attribute) else None
                if name is not None:
                    out.setdefault(name, []).append((call, scope))
        return out

    return project.derived(f"calls_by_name:{module.name}", compute)
