"""Which project function a callable *value* is: how real code reaches a break without calling
it by name.

Dynamo inlines whatever function object a call meets: a closure a factory returned, a
decorator's wrapper (holding the decorated function in a cell), a `functools.partial`, a
function taken from a registry dict or list by a constant key, `torch.no_grad()(fn)`. A
`FnValue` is such a function plus the functions its free variables hold, so the wrapper's
frame knows what its `fn(...)` calls, and each wrapper is a frame of the chain (traced again
on a nested break, as Dynamo does).
"""
from __future__ import annotations

from dataclasses import replace
from typing import TypeGuard

import libcst as cst

from ..index.entries import call_argument
from ..index.names import decorator_callee, is_none_literal
from ..index.project import ProjectIndex
from ..index.symbols import FunctionInfo, ModuleIndex
from ..knowledge import Knowledge
from ..walk import NESTED_SCOPES, find_all
from .frame_values import binding_counts
from .types import TRANSFORMED_PER_SAMPLE, TRANSFORMED_SAME_SIZES, TRANSFORMED_UNKNOWN_SIZES, FnValue, batch_levels
from .values import literal

MAX_DEPTH = 6
PARTIAL = "functools.partial"


class Callables:
    def __init__(self, project: ProjectIndex, knowledge: Knowledge):
        self.project = project
        self.k = knowledge

    def value(self, expr: cst.BaseExpression, module: ModuleIndex, function: FunctionInfo | None,
              bindings: dict[str, FnValue], local: dict[str, FnValue], depth: int = 0) -> FnValue | None:
        """The function value an expression evaluates to, where the source tells it."""
        if depth > MAX_DEPTH:
            return None
        if isinstance(expr, cst.Name):
            if expr.value in bindings:
                return bindings[expr.value]
            if expr.value in local:
                return local[expr.value]
            enclosing = self.enclosing_value(expr.value, module, function)
            if enclosing is not None:  # `add3 = make_adder(3)` in the test that defines the frame's function
                scope, bound = enclosing
                defs = {name: FnValue(qual) for name, qual in scope.local_functions.items()}
                return self.value(bound, module, scope, {}, defs, depth + 1)
        if isinstance(expr, cst.Attribute) and expr.attr.value == "__wrapped__":
            undecorated = self.project.function(self.project.qualify(expr.value, module, function))
            if undecorated is not None and undecorated.decorators:  # what functools.wraps kept
                return FnValue(undecorated.qualname)
        if isinstance(expr, cst.Attribute) and expr.attr.value == "apply":
            found = self.autograd_apply(self.project.klass(self.project.qualify(expr.value, module, function)))
            if found is not None:
                return found
        if isinstance(expr, cst.Call):
            return self._call_result(expr, module, function, bindings, local, depth)
        if isinstance(expr, cst.Subscript):
            return self._registry_item(expr, module, function, bindings, local, depth)
        qual = self.project.qualify(expr, module, function)
        fn = self.project.function(qual)
        if fn is not None:
            return self.decorated(fn, depth)
        if self._module_global(expr, module, function):  # `scale3 = make_scaler(3.0)` at module level
            value = module.values.get(expr.value)
            if value is not None and expr.value not in module.reassigned:
                return self.value(value, module, None, {}, {}, depth + 1)
        return None

    def enclosing_value(self, name: str, module: ModuleIndex, function: FunctionInfo | None,
                        in_lambda: bool = False, receiver: bool = False
                        ) -> tuple[FunctionInfo, cst.BaseExpression] | None:
        """The value a free variable of a nested function holds: the enclosing function (the
        nearest that binds the name) assigns it once, by a plain `name = value`. Tests,
        notebooks and scripts build what they compile inside `main()` or `test_x()`.
        `in_lambda`: the code is a lambda written in `function`, whose own names are free.
        `receiver`: the code calls a method of it or reads an attribute, so it is not None
        when the code runs: `name = None` assignments (a test dropping the object afterwards,
        `optimizer = None`) do not count."""
        if function is None:
            return None
        if in_lambda:
            scope: FunctionInfo | None = function
        elif function.parent_function is None or name in self.bound_in(function):
            return None
        else:
            scope = module.functions.get(function.parent_function)
        while scope is not None:
            if name in self.bound_in(scope):
                single = self.single_assignments(scope, receiver)
                value = single[name] if name in single else self.passed_once(scope, name, module)
                return (scope, value) if value is not None else None
            scope = module.functions.get(scope.parent_function) if scope.parent_function else None
        return None

    def bound_in(self, fn: FunctionInfo) -> frozenset[str]:
        """Names a function binds: its parameters, local definitions and assignments."""
        return self.project.derived(f"bound:{fn.qualname}", lambda: frozenset(
            {p.name for p in fn.params} | set(fn.local_functions) | set(binding_counts(fn.node.body))))

    def single_assignments(self, fn: FunctionInfo, skip_none: bool = False) -> dict[str, cst.BaseExpression]:
        """name -> value of the names a function binds exactly once, by `name = value` (not a
        parameter); `skip_none`: not counting `name = None`."""
        def find() -> dict[str, cst.BaseExpression]:
            counts = binding_counts(fn.node.body)
            params = {p.name for p in fn.params}
            assigns = [(t.target.value, a.value) for a in find_all(fn.node.body, (cst.Assign,), skip=NESTED_SCOPES)
                       for t in a.targets if isinstance(t.target, cst.Name) and len(a.targets) == 1]
            if skip_none:
                cleared = [n for n, v in assigns if is_none_literal(v)]
                counts.update((n, counts[n] - cleared.count(n)) for n in set(cleared))
                assigns = [(n, v) for n, v in assigns if not is_none_literal(v)]
            return {name: value for name, value in assigns if counts.get(name) == 1 and name not in params}
        return self.project.derived(f"single-assignments:{fn.qualname}:{skip_none}", find)

    def passed_once(self, fn: FunctionInfo, name: str, module: ModuleIndex) -> cst.BaseExpression | None:
        """What a module-level function's parameter holds when the module calls the function
        once, by name, and the body never rebinds it: `main(_Case())` for `def main(self)`
        (scripts and adapted tests hand the objects a `main()` works on in one call)."""
        def find() -> cst.BaseExpression | None:
            params = [p.name for p in fn.params]
            if fn.parent_function or fn.class_qualname or name not in params or name in binding_counts(fn.node.body):
                return None
            calls = [c for c in find_all(module.parsed.module, (cst.Call,))
                     if isinstance(c.func, cst.Name) and c.func.value == fn.name]
            if len(calls) != 1:
                return None
            value = call_argument(calls[0], name, params.index(name))
            if isinstance(value, cst.Name):  # `model = Net(); main(model)` at module level
                value = module.values.get(value.value) if value.value not in module.reassigned else None
            # read in the function's scope: only what names nothing of the caller's (`Case()`)
            return value if isinstance(value, cst.Call) and not _names_locals(value, module) else None
        return self.project.derived(f"passed-once:{fn.qualname}:{name}", find)

    def _module_global(self, expr, module: ModuleIndex, function: FunctionInfo | None) -> TypeGuard[cst.Name]:
        """A bare name that is neither a parameter nor a local def of the enclosing functions."""
        if not isinstance(expr, cst.Name):
            return False
        scope = function
        while scope is not None:
            if expr.value in scope.local_functions or expr.value in {p.name for p in scope.params}:
                return False
            scope = module.functions.get(scope.parent_function) if scope.parent_function else None
        return True

    def autograd_apply(self, cls) -> FnValue | None:
        """`Fn.apply` of a torch.autograd.Function: Dynamo traces its `forward` with the
        context object bound to the first parameter (a break there breaks at the apply call;
        run eagerly after it, `forward` is a frame Dynamo compiles); not a class marked
        `allow_in_graph`."""
        if cls is None or not self.project.external_bases(cls) & self.k.autograd_function_bases:
            return None
        module = self.project.modules[cls.module]
        if any(self.project.qualify(d.decorator, module) in self.k.opaque_decorators for d in cls.decorators):
            return None  # `@allow_in_graph` on the class: put in the graph untraced
        forward = self.project.method(cls, "forward")
        return FnValue(forward.qualname, skip=1) if forward is not None else None

    def autograd_backward(self, forward: FunctionInfo) -> FunctionInfo | None:
        """The `backward` of the torch.autograd.Function whose `forward` this is (Dynamo
        traces it at the apply call when an input needs grad)."""
        cls = self.project.klass(forward.class_qualname) if forward.class_qualname else None
        if forward.name != "forward" or self.autograd_apply(cls) is None:
            return None
        backward = self.project.method(cls, "backward") if cls is not None else None
        return backward if backward is not None and backward.class_qualname is not None else None

    # -- kinds of values -------------------------------------------------------------
    def decorated(self, fn: FunctionInfo, depth: int = 0) -> FnValue:
        """`fn` after its decorators (applied bottom-up); decorators we cannot read leave it."""
        result = FnValue(fn.qualname)
        module = self.project.modules[fn.module]
        parent = self.project.function(fn.parent_function) if fn.parent_function else None
        for dec in reversed(fn.decorators):
            if self.project.qualify(dec.decorator, module, parent) == "builtins.classmethod":
                result = FnValue(result.qualname, result.captured, result.skip + 1, result.constants)
                continue  # `Cls.method(x)`: the class is bound to its first parameter
            instance_call = self._decorator_instance_call(dec.decorator, module, parent)
            if instance_call is not None:  # `@Timer`: the name holds a Timer; calling it runs `__call__`
                result = instance_call
                continue
            deco = self.value(dec.decorator, module, parent, {}, {}, depth + 1)
            if deco is not None:
                result = self.apply(deco, [result]) or result
        return result

    def _decorator_instance_call(self, decorator: cst.BaseExpression, module: ModuleIndex,
                                 parent: FunctionInfo | None) -> FnValue | None:
        """A project class used as a decorator (not a module): its `__call__`, `self` bound."""
        cls = self.project.klass(self.project.qualify(decorator, module, parent))
        if cls is None:
            return None
        call = self.project.method(cls, "__call__")
        if call is None or self.project.external_bases(cls) & self.k.nn_module_bases:
            return None
        return FnValue(call.qualname, skip=1)

    def replaced_in_class(self, cls, name: str) -> FnValue | None:
        """What calling method `name` on an instance of `cls` runs when Python replaced it as
        classes were made (see replaced_method); memoised per class (reading the decorators
        parses the class)."""
        mro = self.project.mro(cls)
        at = next((i for i, owner in enumerate(mro) if name in owner.methods), None)
        if at is None:
            return None
        return self.project.derived(f"replaced:{cls.qualname}.{name}", lambda: self.replaced_method(mro[:at + 1], name))

    def replaced_method(self, chain: list, name: str) -> FnValue | None:
        """What calling method `name` of `chain[0]` runs when Python replaced it as classes were
        made; `chain` runs from that class up its MRO to the one defining the method (`owner`).
        A decorator of the owner may put its own function there; then each class of the chain,
        owner first, may be wrapped by a base's `__init_subclass__`, around what it inherited.
        None when nothing replaced it."""
        owner = chain[-1]
        decorated = self._decorated_class_method(owner, name)
        inner = decorated or FnValue(owner.methods[name])
        wrapped = False
        for cls in reversed(chain):
            layer = self._subclass_hook_layer(cls, name, inner)
            if layer is not None:
                inner, wrapped = layer, True
        return inner if decorated is not None or wrapped else None

    def _decorated_class_method(self, cls, name: str) -> FnValue | None:
        """The function a class decorator puts in place of a method (`cls.forward = forward`,
        its own def, as transformers' `@use_experts_implementation` does), its cells holding
        the methods it read off the class first (`original_forward = cls.forward`)."""
        module = self.project.modules[cls.module]
        for dec in cls.decorators:
            factory = self.project.function(self.project.qualify(decorator_callee(dec), module))
            inner = [self.project.function(q) for q in factory.local_functions.values()] if factory else []
            for candidate in [factory, *inner]:
                found = _assigned_method(candidate, name) if candidate is not None else None
                if found is not None and candidate is not None:
                    local, cells = found
                    captured = tuple(sorted((cell, FnValue(q)) for cell, attr in cells.items()
                                            if (q := cls.methods.get(attr)) is not None))
                    return FnValue(candidate.local_functions[local], captured)
        return None

    def _method_value(self, cls, name: str) -> FnValue | None:
        method = self.project.method(cls, name)
        return FnValue(method.qualname) if method is not None else None

    def _subclass_hook_layer(self, cls, name: str, inner: FnValue) -> FnValue | None:
        """The wrapper a base's `__init_subclass__` puts around the method when Python makes
        `cls` (`forward = cls.forward; def wrapper(self, *a, **k): ... forward(self, *a, **k);
        cls.forward = wrapper`, transformers' GradientCheckpointingLayer), holding what the
        class had (`inner`); None when no hook wraps it or the hook returns first for the
        class's keywords (`class Block(Base, checkpointable=False)`). Dynamo inlines the
        wrapper, a frame of the chain, before the method."""
        for base in self.project.mro(cls)[1:]:  # a class's own hook runs for its subclasses only
            hook = self.project.function(base.methods.get("__init_subclass__"))
            found = _assigned_method(hook, name) if hook is not None else None
            if hook is None or found is None:
                continue  # (a hook that only calls super() passes the class on)
            if _returns_first(hook, cls):
                return None
            local, cells = found
            held = {attr: inner if attr == name else self._method_value(cls, attr) for attr in cells.values()}
            captured = tuple(sorted((cell, value) for cell, attr in cells.items() if (value := held[attr]) is not None))
            return FnValue(hook.local_functions[local], captured)
        return None

    def apply(self, fn: FnValue, args: list[FnValue | None], kwargs: dict | None = None,
              depth: int = 0, literals: dict | None = None) -> FnValue | None:
        """What calling a project function returns, when that is a function: a local def it
        returns (a closure holding the function arguments in cells), an argument it returns
        unchanged (an identity decorator), or what a call it returns gives (`return inner(func)`).
        Returns behind an `if` on whether an argument was passed (`if func is not None:`, the
        decorator that takes optional arguments) follow the branch the call selects."""
        info = self.project.function(fn.qualname)
        if info is None or depth > MAX_DEPTH:
            return None
        params = [p for p in info.params if p.kind == "positional"][fn.skip:]
        cells = dict(fn.captured)
        passed = {p.name for p in params[:len(args)]} | set(kwargs or ())
        for param, arg in zip(params, args):
            if arg is not None:
                cells[param.name] = arg
        for name, arg in (kwargs or {}).items():
            if arg is not None:
                cells[name] = arg
        absent = {p.name for p in info.params if p.name not in passed and is_none_literal(p.default)}
        constants = dict(fn.constants)
        constants.update((p.name, literal(p.default)) for p in info.params if p.name not in passed)
        constants.update(literals or {})
        constants = {name: c for name, c in constants.items() if c is not None and name not in cells}
        local = {name: FnValue(qual, tuple(sorted(cells.items())), constants=tuple(sorted(constants.items())))
                 for name, qual in info.local_functions.items()}
        module = self.project.modules[info.module]
        results = {self.value(expr, module, info, cells, local, depth + 1)
                   for expr in _returned(_body(info.node), passed, absent)}
        return results.pop() if len(results) == 1 else None

    def _call_result(self, call: cst.Call, module, function, bindings, local, depth) -> FnValue | None:
        args = [a for a in call.args if not a.star]
        positional = [self.value(a.value, module, function, bindings, local, depth + 1)
                      for a in args if a.keyword is None]
        qual = self.project.qualify(call.func, module, function)
        if qual in self.k.disable_decorators and positional and positional[0] is not None:
            return replace(positional[0], disabled="nonrecursive" if nonrecursive(call) else "recursive")
        applied = call.func  # `torch._dynamo.disable(recursive=False)(fn)`: the decorator it returned, applied
        if isinstance(applied, cst.Call) and self.project.qualify(applied.func, module, function) in self.k.disable_factories \
                and all(a.keyword is not None for a in applied.args) and positional and positional[0] is not None:
            return replace(positional[0], disabled="nonrecursive" if nonrecursive(applied) else "recursive")
        if qual in self.k.opaque_decorators and positional and positional[0] is not None and len(args) == 1:
            return replace(positional[0], opaque=qual or "")  # `f = torch._dynamo.nonstrict_trace(g)`
        if qual in self.k.compile_functions and positional and positional[0] is not None:
            return positional[0]  # `cg = torch.compile(f)`: calling cg runs f (through torch.compile's wrapper)
        if qual == PARTIAL and positional and positional[0] is not None:
            target = positional[0]
            return FnValue(target.qualname, target.captured, target.skip + len(positional) - 1)
        if qual in self.k.function_transforms and positional and positional[0] is not None:
            # `torch.vmap(g)`: calling it runs g (through functorch's frames) on other tensors
            return replace(positional[0], transformed=_transformed_sizes(qual, args, self.k, positional[0].transformed))
        if positional and context_wrapped(call, lambda e: self.project.qualify(e, module, function), self.k):
            return positional[0]  # `torch.no_grad()(fn)`: runs fn inside
        factory = self.value(call.func, module, function, bindings, local, depth + 1)
        if factory is None:
            return None
        kwargs = {a.keyword.value: self.value(a.value, module, function, bindings, local, depth + 1)
                  for a in args if a.keyword is not None}
        return self.apply(factory, positional, kwargs, depth + 1, _literal_arguments(factory, args, self.project))

    def _registry_item(self, expr: cst.Subscript, module, function, bindings, local, depth) -> FnValue | None:
        """`HANDLERS["relu"](x)` / `STEPS[0](x)`: a module-level dict or list literal indexed by
        a constant."""
        if len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, cst.Index) \
                or not isinstance(expr.value, cst.Name):
            return None
        key = literal(expr.slice[0].slice.value)
        container = module.values.get(expr.value.value)
        if key is None or container is None or expr.value.value in module.reassigned:
            return None
        item = _item(container, key.value)
        return self.value(item, module, None, {}, {}, depth + 1) if item is not None else None


def _item(container: cst.BaseExpression, key) -> cst.BaseExpression | None:
    if isinstance(container, cst.Dict):
        for element in container.elements:
            found = literal(element.key) if isinstance(element, cst.DictElement) else None
            if found is not None and found.value == key:
                return element.value
        return None
    if isinstance(container, (cst.List, cst.Tuple)) and isinstance(key, int) and not isinstance(key, bool):
        items = [el.value for el in container.elements if isinstance(el, cst.Element)]
        if len(items) == len(container.elements) and -len(items) <= key < len(items):
            return items[key]
    return None


def _literal_arguments(fn: FnValue, args: list[cst.Arg], project: ProjectIndex) -> dict:
    """Parameter -> the constant a call passes for it (`@scaled("attn_kwargs", flag=True)`)."""
    info = project.function(fn.qualname)
    if info is None:
        return {}
    params = [p for p in info.params if p.kind == "positional"][fn.skip:]
    given = [a for a in args if a.keyword is None]
    out = {p.name: literal(a.value) for p, a in zip(params, given)}
    out.update((a.keyword.value, literal(a.value)) for a in args if a.keyword is not None)
    return {name: c for name, c in out.items() if c is not None}


def _body(node: cst.FunctionDef) -> tuple[cst.BaseStatement | cst.BaseSmallStatement, ...]:
    return tuple(node.body.body) if isinstance(node.body, cst.IndentedBlock) else ()


def _returned(body, passed: set[str], absent: set[str]) -> list[cst.BaseExpression]:
    """The expressions a function returns, in order, until one is returned on every path;
    an `if` on whether a parameter was passed takes one branch, any other `if` both."""
    out: list[cst.BaseExpression] = []
    for stmt in body:
        if isinstance(stmt, cst.SimpleStatementLine):
            returns = [s for s in stmt.body if isinstance(s, cst.Return)]
            if returns:
                out += [r.value for r in returns if r.value is not None]
                return out
        elif isinstance(stmt, cst.If):
            taken = _passed_test(stmt.test, passed, absent)
            branches = [stmt.body.body] if taken is True else [] if taken is False else [stmt.body.body]
            orelse = stmt.orelse
            if taken is not True and orelse is not None:
                branches.append([orelse] if isinstance(orelse, cst.If) else orelse.body.body)
            found = [_returned(b, passed, absent) for b in branches]
            out += [expr for exprs in found for expr in exprs]
            if taken is True and found[0] and _always_returns(stmt.body.body):
                return out
    return out


def _always_returns(body) -> bool:
    last = body[-1] if body else None
    return isinstance(last, cst.SimpleStatementLine) and any(isinstance(s, cst.Return) for s in last.body)


def _passed_test(test: cst.BaseExpression, passed: set[str], absent: set[str]) -> bool | None:
    """`func` / `func is not None` / `not func` / `func is None` on a parameter: True when the
    call passed a function for it, False when it left it at its `None` default; else unknown."""
    negate = False
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, negate = test.expression, True
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 \
            and isinstance(test.comparisons[0].comparator, cst.Name) \
            and test.comparisons[0].comparator.value == "None":
        op = test.comparisons[0].operator
        if isinstance(op, cst.Is):
            negate = not negate
        elif not isinstance(op, cst.IsNot):
            return None
        test = test.left
    if not isinstance(test, cst.Name):
        return None
    known = True if test.value in passed else False if test.value in absent else None
    return None if known is None else known != negate


def _returns_first(hook: FunctionInfo, cls) -> bool:
    """Does `__init_subclass__` return before its assignments for this class: a top-level
    `if not flag: return` (or `if flag:`, `is None`, `is not None`) on a parameter, given the
    class's keyword (`class Block(Base, flag=True)`) or the parameter's default?"""
    given = {k.keyword.value: k.value for k in getattr(cls.node, "keywords", ()) if k.keyword is not None}
    defaults = {p.name: p.default for p in hook.params}
    for stmt in _body(hook.node):
        if not isinstance(stmt, cst.If) or stmt.orelse is not None:
            continue
        body = stmt.body.body
        if not (len(body) == 1 and isinstance(body[0], cst.SimpleStatementLine)
                and isinstance(body[0].body[0], cst.Return)):
            continue
        decided = _flag_test(stmt.test, given, defaults)
        if decided is not None:
            return decided
    return False


def _flag_test(test: cst.BaseExpression, given: dict, defaults: dict) -> bool | None:
    negate = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
    inner = test.expression if isinstance(test, cst.UnaryOperation) and negate else test
    compared = None
    if isinstance(inner, cst.Comparison) and len(inner.comparisons) == 1 \
            and is_none_literal(inner.comparisons[0].comparator):
        compared = inner.comparisons[0].operator
        inner = inner.left
    if not isinstance(inner, cst.Name) or inner.value not in defaults:
        return None
    value = literal(given.get(inner.value, defaults[inner.value]))
    if value is None:
        return None
    if isinstance(compared, cst.Is):
        result = value.value is None
    elif isinstance(compared, cst.IsNot):
        result = value.value is not None
    else:
        result = bool(value.value)
    return not result if negate else result


def _attribute_read(value: cst.BaseExpression, params: set[str]) -> str | None:
    """The attribute `<param>.<attr>` or `getattr(<param>, "<attr>")` reads."""
    if isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name) and value.value.value in params:
        return value.attr.value
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "getattr" \
            and len(value.args) == 2 and isinstance(value.args[0].value, cst.Name) and value.args[0].value.value in params:
        key = literal(value.args[1].value)
        return key.value if key is not None and isinstance(key.value, str) else None
    return None


def _setattr_of(small, params: set[str], name: str, info: FunctionInfo) -> str | None:
    """The local def `setattr(<param>, "<name>", <local def>)` puts on the class."""
    call = small.value if isinstance(small, cst.Expr) else None
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == "setattr"
            and len(call.args) == 3):
        return None
    owner, attr, value = (a.value for a in call.args)
    key = literal(attr)
    if isinstance(owner, cst.Name) and owner.value in params and key is not None and key.value == name \
            and isinstance(value, cst.Name) and value.value in info.local_functions:
        return value.value
    return None


def _assigned_method(info: FunctionInfo, name: str) -> tuple[str, dict[str, str]] | None:
    """`param.<name> = <local def>` at the top of a function taking the class as `param`:
    (that def's name, {local: attribute} for `local = param.<attribute>` reads before it)."""
    params = {p.name for p in info.params}
    cells: dict[str, str] = {}
    for stmt in _body(info.node):
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            set_by_call = _setattr_of(small, params, name, info)
            if set_by_call is not None:  # `setattr(cls, "forward", wrapper)`
                return set_by_call, cells
            if not isinstance(small, cst.Assign) or len(small.targets) != 1:
                continue
            target, value = small.targets[0].target, small.value
            read = _attribute_read(value, params)
            if isinstance(target, cst.Name) and read is not None:
                cells[target.value] = read
            elif isinstance(target, cst.Attribute) and target.attr.value == name \
                    and isinstance(target.value, cst.Name) and target.value.value in params \
                    and isinstance(value, cst.Name) and value.value in info.local_functions:
                return value.value, cells
    return None


def context_wrapped(call: cst.Call, qualify, knowledge: Knowledge) -> cst.BaseExpression | None:
    """`torch.no_grad()(fn)`: a context manager object applied to a function as a decorator,
    which runs `fn` inside it; the expression of `fn`."""
    maker = call.func
    given = [a.value for a in call.args if a.keyword is None and not a.star]
    if not isinstance(maker, cst.Call) or len(given) != 1 or len(call.args) != 1:
        return None
    return given[0] if qualify(maker.func) in knowledge.resumable_context_managers else None


def nonrecursive(call: cst.Call) -> bool:
    """`torch.compiler.disable(fn, recursive=False)`."""
    return any(a.keyword is not None and a.keyword.value == "recursive" and isinstance(a.value, cst.Name)
               and a.value.value == "False" for a in call.args)


def _names_locals(value: cst.Call, module: ModuleIndex) -> bool:
    """Does an expression read a name the module does not bind (a caller's local)? (`attr` of
    `x.attr` and a keyword's name are no reads.)"""
    bound = set(module.values) | set(module.top_level) | set(module.imports)
    not_reads = {id(n.attr) if isinstance(n, cst.Attribute) else id(n.keyword)
                 for n in find_all(value, (cst.Attribute, cst.Arg))}
    return any(n.value not in bound for n in find_all(value, (cst.Name,)) if id(n) not in not_reads)


def _transformed_sizes(transform: str | None, args, k: Knowledge, inner: str) -> str:
    """What sizes the function a transform runs gets (types.TRANSFORMED_*): vmap takes the
    dimension `in_dims` names off each tensor (the leading one by default; `(0, None)`: per
    argument), before what a vmap inside it takes off (`vmap(vmap(f))`); an `in_dims` that is
    not a literal is not followed."""
    if transform not in k.batching_transforms:
        return inner or TRANSFORMED_SAME_SIZES
    inner_levels = batch_levels(inner) if inner and inner != TRANSFORMED_SAME_SIZES else []
    dims = call_argument(cst.Call(cst.Name("vmap"), args), "in_dims", 1)
    level = _in_dims(dims) if dims is not None else "0"
    if level is None or inner_levels is None:
        return TRANSFORMED_UNKNOWN_SIZES
    return f"{TRANSFORMED_PER_SAMPLE}:" + "|".join([level] + [",".join(dims) for dims in inner_levels])


def _in_dims(expr: cst.BaseExpression) -> str | None:
    """`1` -> "1", `(0, None)` -> "0,-"; None for what is not a literal of ints and None."""
    known = literal(expr)
    held = known.value if known is not None else ()
    items = held if isinstance(held, tuple) else (held,)
    if not items or not all(i is None or type(i) is int for i in items):
        return None
    return ",".join("-" if i is None else str(i) for i in items)
