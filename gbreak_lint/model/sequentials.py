"""The modules an `nn.Sequential` is built from: its arguments, an OrderedDict's values, and
for a project subclass of `nn.Sequential` keeping torch's `forward` (timm's `Stage`, a
`class Blocks(nn.Sequential)` building its layers in `__init__`): calling it runs torch's
Sequential.forward over the modules it was given, as for `nn.Sequential(...)` itself (measured
2.13: `super().__init__(*[Block() for _ in range(n)])` built with `n=2` and called inside a
compiled forward traces a break in Block three times, as a plain Sequential of two does).
"""
from __future__ import annotations

import libcst as cst

from ..index.project import ProjectIndex
from ..index.symbols import ModuleIndex
from ..walk import NESTED_SCOPES, find_all
from .values import literal

MAX_UNROLLED_ELEMENTS = 64  # (elements past it add no frame the first ones do not)


def subclass_items(project: ProjectIndex, containers: frozenset[str], made: cst.Call,
                   module: ModuleIndex) -> tuple[list[cst.BaseExpression], ModuleIndex] | None:
    """The module expressions a Sequential subclass instance built by `made` holds, and the
    module they are written in; None unless `made` builds such a subclass."""
    cls = project.klass(project.qualify(made.func, module))
    if cls is None or not (project.external_bases(cls) & containers) \
            or any("forward" in c.methods for c in project.mro(cls)):
        return None
    init = next((project.function(c.methods["__init__"]) for c in project.mro(cls) if "__init__" in c.methods), None)
    if init is None:
        return sequential_items(made), module  # `Blocks(A(), B())`: torch's __init__ takes them
    base_call = _base_init_call(init.node)
    if base_call is None:
        return None
    bound = _literal_arguments(init, made)
    return sequential_items(base_call.visit(_Substitute(bound))), project.modules[init.module]  # type: ignore[arg-type]


def _base_init_call(init: cst.FunctionDef) -> cst.Call | None:
    """`super().__init__(...)` (or `nn.Sequential.__init__(self, ...)`) in `__init__`."""
    for call in find_all(init.body, (cst.Call,), skip=NESTED_SCOPES):
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "__init__":
            if isinstance(func.value, cst.Call) and isinstance(func.value.func, cst.Name) \
                    and func.value.func.value == "super":
                return call
            if call.args and isinstance(call.args[0].value, cst.Name) and call.args[0].value.value == "self":
                return call.with_changes(args=call.args[1:])
    return None


def _literal_arguments(init, made: cst.Call) -> dict[str, cst.BaseExpression]:
    """`__init__` parameters the construction passes a literal for (`Stage(2)`: n=2)."""
    params = [p for p in init.params if p.kind == "positional"][1:]
    bound: dict[str, cst.BaseExpression] = {}
    positional = [a for a in made.args if a.keyword is None and not a.star]
    for param, arg in zip(params, positional):
        bound[param.name] = arg.value
    bound.update((a.keyword.value, a.value) for a in made.args if a.keyword is not None)
    for p in init.params:
        if p.name not in bound and p.default is not None:
            bound[p.name] = p.default
    return {name: value for name, value in bound.items() if literal(value) is not None}


class _Substitute(cst.CSTTransformer):
    """Parameter names replaced by the literals the construction passes (`range(n)`)."""

    def __init__(self, bound: dict[str, cst.BaseExpression]):
        super().__init__()
        self.bound = bound

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        return self.bound.get(original.value, updated)


def sequential_items(made: cst.Call) -> list[cst.BaseExpression]:
    """The modules an `nn.Sequential(...)` call is given: its arguments (`*[...]` spread), or
    the values of the one `OrderedDict([(name, module), ...])` (or dict display) it is given."""
    args = [a.value for a in made.args if a.keyword is None]
    if len(args) == 1 and not made.args[0].star:
        pairs = _named_modules(args[0])
        if pairs is not None:
            return pairs
    return [i for arg in made.args for i in (starred_items(arg.value) if arg.star == "*" else [arg.value])]


def _named_modules(arg: cst.BaseExpression) -> list[cst.BaseExpression] | None:
    if isinstance(arg, cst.Dict):
        return [el.value for el in arg.elements if isinstance(el, cst.DictElement)]
    if isinstance(arg, cst.Call) and isinstance(arg.func, (cst.Name, cst.Attribute)) \
            and (arg.func.value if isinstance(arg.func, cst.Name) else arg.func.attr.value) == "OrderedDict" \
            and len(arg.args) == 1 and isinstance(arg.args[0].value, (cst.List, cst.Tuple)):
        rows = [el.value for el in arg.args[0].value.elements]
        return [r.elements[1].value for r in rows if isinstance(r, cst.Tuple) and len(r.elements) == 2]
    return None



def starred_items(expr: cst.BaseExpression) -> list:
    """The items `*[A(), B()]` / `*(A() for _ in range(2))` spreads (a comprehension over
    `range(<int>)` repeats its element that many times; other iterables: once)."""
    if isinstance(expr, (cst.List, cst.Tuple)):
        return [el.value for el in expr.elements]
    if isinstance(expr, (cst.ListComp, cst.GeneratorExp)):
        it = expr.for_in.iter
        count = 1
        if isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "range" \
                and len(it.args) == 1 and (n := literal(it.args[0].value)) is not None:
            count = max(0, min(int(n.value), MAX_UNROLLED_ELEMENTS))  # type: ignore[call-overload]  # a literal count
        return [expr.elt] * count
    return [expr]
