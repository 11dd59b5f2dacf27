"""The values a program compiles its entry with: how it built the module, how it calls it.

Dynamo specialises on the Python values of the first call (and recompiles for others), so an
entry is simulated once per distinct set of Python values its program calls it with: the
constants passed at each call site, `PASSED_UNKNOWN` for other non-tensor arguments, tensors
for torch calls; the module instance's attributes come from its construction call. With no
call site (a named entry, a library) the parameters keep their defaults.
"""
from __future__ import annotations

import itertools
import re
from dataclasses import replace
from typing import NamedTuple, cast

import libcst as cst

from ..index.entries import CALLED_AT_ONCE, EntryPoint, call_argument, called_at_once, loop_items
from ..index.names import decorator_callee
from ..index.project import COPYING_FUNCTIONS, ProjectIndex, returned_values
from ..index.symbols import FunctionInfo
from ..knowledge import Knowledge
from ..walk import NESTED_SCOPES, children, find_all, walk
from .callables import Callables
from .dict_locals import display_keywords
from .empty_modules import empty_module
from .instance_updates import updated_instance
from .instances import built_at_top, is_optimizer_class
from .resolve import decorators_wrapper, method_wrapper
from .frame_values import assigned_names
from .global_state import DEFAULT, GRAD_OFF, State, StateReader
from .grad_leaks import made_with_grad
from .types import FnValue, FrameKey
from .tensor_contents import TensorContents, changed_in_place
from .tensors import makes_integer_tensor
from .values import (PASSED_BOOL_TENSOR, PASSED_CONTEXT_MANAGER_INPUT, PASSED_GENERATOR, PASSED_INTEGER_TENSOR,
                     PASSED_ITERATOR, PASSED_NUMPY_SCALAR, PASSED_TENSOR_SET, PASSED_TENSOR_SUBCLASS, PASSED_UNKNOWN,
                     Const, Keywords, Obj, Seq, display_kind, display_length, factory_shape, literal, makes_generator, makes_iterator,
                     star_arguments)

MAX_VARIANTS = 4  # distinct call-site value sets simulated per entry
MAX_APPLIED = 64  # functions one decorator is applied to, each run by the entry it compiles


class EntryCall(NamedTuple):
    """One way a program calls its compiled entry."""

    key: FrameKey
    strict: bool  # called inside `error_on_graph_break(True)`
    fresh: bool = False  # after `torch._dynamo.reset()`: Dynamo compiles it again from nothing
    # under set_stance("eager_then_compile"), the first call: run eagerly, its values recorded
    observe_only: bool = False
    reset_by_itself: bool = False  # fresh because the compiled code calls the reset itself


MAX_REBOUND_TEXT = 400  # `x = x * 2` is read in terms of what `x` held before, up to this size


class _Renamed(cst.CSTTransformer):
    def __init__(self, name: str, value: cst.BaseExpression):
        self.name, self.value = name, value

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        return self.value if updated.value == self.name else updated


def _in_terms_of(value: cst.BaseExpression, name: str, before: cst.BaseExpression | None) -> cst.BaseExpression:
    """`x = x * 2` after `x = torch.randn(4)`: `torch.randn(4) * 2`, what `x` holds now."""
    mentions = any(n.value == name for n in find_all(value, (cst.Name,)))
    if not mentions or before is None or len(cst.Module([]).code_for_node(before)) > MAX_REBOUND_TEXT:
        return value
    return cast(cst.BaseExpression, value.visit(_Renamed(name, before)))


class _Call(NamedTuple):
    call: cst.Call
    strict: bool
    local_values: dict  # the plain `name = value` assignments of its function seen before it
    caller: FunctionInfo | None
    resets: int  # how many `torch._dynamo.reset()` calls come before it in the module
    stance: str = "default"  # the torch.compiler.set_stance in force where it is
    state: State = DEFAULT  # torch's global state there: grad mode, autocast, default dtype...


def entry_variants(project: ProjectIndex, knowledge: Knowledge, entry: EntryPoint,
                   base: FrameKey) -> list[EntryCall]:
    """Each distinct way the entry is called, and for each way the function around it is
    called when its free names are that function's parameters (a test parametrized by the
    class or function its closure uses)."""
    variants = _call_variants(project, knowledge, entry, base)
    fn = project.function(entry.function)
    module = project.modules.get(project.by_path.get(entry.path, ""))
    cells = _enclosing_arguments(project, knowledge, module, fn) if fn is not None and module is not None else []
    if not cells:
        return variants
    out: list[EntryCall] = []
    for variant in variants:
        for bound in cells:
            key, bindings = variant.key, {**dict(variant.key.bindings), **bound}
            made = variant._replace(key=FrameKey(**{
                **_fields(key), "bindings": tuple(sorted(bindings.items(), key=lambda kv: kv[0])),
                "cells": tuple(sorted((k, v.qualname) for k, v in bound.items()))}))
            if made.fresh or made not in out:
                out.append(made)
    return out[:max(MAX_VARIANTS, min(len(cells), MAX_APPLIED))]


def _enclosing_arguments(project, knowledge, module, fn: FunctionInfo) -> list[dict[str, FnValue]]:
    """For each call of the function enclosing `fn` (`test(CtxA)`), the functions and classes
    it passes for the parameters `fn` reads as free names."""
    parent = project.function(fn.parent_function) if fn.parent_function else None
    if parent is None:
        return []
    read = {n.value for n in find_all(fn.node.body, (cst.Name,))}
    own = {p.name for p in fn.params} | assigned_names(fn.node.body)
    positional = [p.name for p in parent.params if p.kind == "positional"]
    wanted = [p.name for p in parent.params if p.name in read - own and p.kind in ("positional", "keyword_only")]
    decorated = _decorated_cells(project, parent, read - own - {p.name for p in parent.params})
    if not wanted:
        return decorated
    callables = Callables(project, knowledge)
    found: list[dict[str, FnValue]] = []
    for found_call in _calls_named(project, knowledge, module, parent.name):
        if not _sees_definition(found_call.caller, parent):
            continue  # another function's local of the same name (two decorators' `runner`)
        options: dict[str, list[FnValue]] = {}
        for name in wanted:
            arg = call_argument(found_call.call, name, positional.index(name) if name in positional else None)
            values = _argument_values(project, callables, module, found_call.caller, arg) if arg is not None else []
            if values:
                options[name] = values
        for combination in itertools.islice(itertools.product(*options.values()), MAX_APPLIED):
            bound = dict(zip(options, combination))
            for cells in decorated or [{}]:
                if {**bound, **cells} and {**bound, **cells} not in found:
                    found.append({**bound, **cells})
    return found or decorated


def _decorated_cells(project, wrapper: FunctionInfo, free: set[str]) -> list[dict[str, FnValue]]:
    """A closure made in a decorator's wrapper reading the decorator's own parameter (`def
    make_test(fn): def test_fn(self): def dummy(): fn(self) ...`): `fn` is each function the
    decorator is applied to."""
    for name in sorted(free):
        functions = _decorated_functions(project, wrapper, cst.Name(name))
        if functions:
            return [{name: function} for function in functions]
    return []


def _sees_definition(caller: FunctionInfo | None, fn: FunctionInfo) -> bool:
    """Can a call written in `caller` name `fn`: a local function only from inside the
    function defining it (or one nested there)."""
    scope = fn.parent_function
    if scope is None:
        return True
    return caller is not None and (caller.qualname == scope or caller.qualname.startswith(scope + "."))


def _argument_values(project, callables: Callables, module, caller, arg) -> list[FnValue]:
    value = _function_or_class(project, callables, module, caller, arg)
    return [value] if value is not None else _decorated_functions(project, caller, arg)


def _decorated_functions(project, caller: FunctionInfo | None, arg) -> list[FnValue]:
    """A decorator's wrapper passing on the function it wraps (`def make_test(fn): def
    test_fn(self): return run(self, fn=fn)`): `fn` is each function the decorator is applied
    to (`@make_test def test_x(self): ...`, or `@make_test("eager")` when an outer factory
    returns it), in the decorator's module and the modules importing it."""
    if not isinstance(arg, cst.Name) or caller is None or caller.parent_function is None:
        return []
    factory = project.function(caller.parent_function)
    first = next((p.name for p in factory.params if p.kind == "positional"), None) if factory else None
    if factory is None or arg.value != first or arg.value in {p.name for p in caller.params}:
        return []
    outer = factory.parent_function  # `def dynamo_test(backend): def deco(fn): ...; return deco`
    applied_by_call = {factory.qualname} | ({outer} if outer else set())
    home = project.modules[factory.module]
    top_name = (outer or factory.qualname).rsplit(".", 1)[-1]
    modules = [home] + [m for m in project.mentioning(top_name) if m is not home]
    applied = []
    for module in modules:
        for fn in module.functions.values():
            for d in fn.decorators:
                qual = project.qualify(decorator_callee(d), module)
                called = isinstance(d.decorator, cst.Call)
                if (qual in applied_by_call if called else qual == factory.qualname) and project.may_run(module, fn.name):
                    applied.append(FnValue(fn.qualname))
    return applied[:MAX_APPLIED]


def _function_or_class(project, callables: Callables, module, caller, arg) -> FnValue | None:
    value = callables.value(arg, module, caller, {}, {})
    if value is not None:
        return value
    cls = project.klass(project.qualify(arg, module, caller))
    return FnValue(cls.qualname) if cls is not None else None


def _call_variants(project: ProjectIndex, knowledge: Knowledge, entry: EntryPoint,
                   base: FrameKey) -> list[EntryCall]:
    key = base
    module = project.modules.get(project.by_path.get(entry.path, ""))
    if module is None:
        return [EntryCall(key, False)]
    cls = project.klass(entry.self_class) if entry.self_class else None
    built = built_at_top(project, knowledge.dtype_names, cls, entry.construction, module) \
        if cls is not None and entry.construction is not None else None
    updated = entry.instance_name is not None and entry.instance_name.isidentifier()

    def attributes_at(line: int) -> tuple:
        """The instance's attributes when the program calls it at `line`, after what it stored
        on it before (`model.gradient_checkpointing_enable()`, `m.check = True`)."""
        assert cls is not None and built is not None
        return (updated_instance(project, module, cls, built, entry.instance_name or "", line) if updated else built).attrs

    if built is not None:
        key = FrameKey(**{**_fields(key), "attributes": attributes_at(
            min(entry.call_lines) if entry.call_lines else entry.line)})
    if not entry.called_as:
        return [EntryCall(key, False)]
    variants: list[EntryCall] = []
    called = _through_decorators(project, knowledge, key)
    resets, eager_calls, observed = 0, 0, False
    resets_itself = _resets_caches(project, knowledge, module, entry)
    calls = _calls_of_binding(module, entry, _calls_named(project, knowledge, module, entry.called_as, entry.function))
    program_calls = [c for c in calls if not _in_compiled_function(project, knowledge, c.caller)]
    if calls and not program_calls:
        return []  # called from compiled code only: reached there (through torch.compile's wrapper)
    for found in program_calls:
        if found.stance in knowledge.stances_not_compiling:
            eager_calls += 1  # runs eagerly: compiles nothing
            continue
        observe = found.stance in knowledge.stances_observing_first_call and not observed
        observed |= observe
        made = _with_call_site(project, knowledge, module, called, found.call, cls is not None,
                               found.local_values, found.caller)
        made = FrameKey(**{**_fields(made), "global_state": tuple(sorted(found.state))})
        if built is not None and updated and made.attributes == key.attributes:  # (stores between calls)
            made = FrameKey(**{**_fields(made), "attributes": attributes_at(_line_of(module, found))})
        # the code's own reset restarts the compile ids, and its resume function takes the
        # first: the second call compiles under a new id, later ones repeat the second's
        again = resets_itself and bool(variants) and found.resets == resets
        variant = EntryCall(made, found.strict, found.resets > resets or again, observe_only=observe,
                            reset_by_itself=again and len(variants) == 1)
        resets = found.resets
        if variant.fresh or variant not in variants:
            variants.append(variant)
    if not variants and eager_calls:
        return []  # every call runs under a stance that compiles nothing
    return _agreed_contents(variants[:MAX_VARIANTS]) or [EntryCall(key, False)]


def _line_of(module, found: _Call) -> int:
    anchor = (found.caller.node, found.caller.def_line) if found.caller is not None else None
    return module.parsed.span(found.call, anchor).line


def _calls_of_binding(module, entry: EntryPoint, calls: list[_Call]) -> list[_Call]:
    """`opt = torch.compile(f)` bound again later in the same scope (`opt = torch.compile(f)`
    after a `torch._dynamo.reset()`): each call belongs to the binding last run before it."""
    name = entry.called_as or ""
    if not name.isidentifier() or len(re.findall(rf"^\s*{re.escape(name)}\s*=[^=]", module.parsed.text, re.M)) < 2:
        return calls
    return [c for c in calls if _bound_by_entry(module, entry, name, c)]


def _bound_by_entry(module, entry: EntryPoint, name: str, found: _Call) -> bool:
    scope = found.caller.node.body if found.caller is not None else module.parsed.module
    anchor = (found.caller.node, found.caller.def_line) if found.caller is not None else None
    spans = [module.parsed.span(a, anchor) for a in find_all(scope, (cst.Assign,), skip=NESTED_SCOPES)
             if any(isinstance(t.target, cst.Name) and t.target.value == name for t in a.targets)]
    line = module.parsed.span(found.call, anchor).line
    before = [s for s in spans if s.end_line < line]
    if len(spans) < 2 or not before:
        return True  # bound once here, or elsewhere (a global called in a function)
    last = max(before, key=lambda s: s.line)
    return last.line <= entry.line <= last.end_line


def first_input_plain(project: ProjectIndex, knowledge: Knowledge, entry: EntryPoint) -> bool:
    """Does every call the program makes of the compiled object pass a first argument known
    not to need grad (`seq(torch.randn(2, 8))`)?"""
    module = project.modules.get(project.by_path.get(entry.path, ""))
    if module is None or not entry.called_as:
        return False
    calls = _calls_named(project, knowledge, module, entry.called_as, entry.function)
    firsts = [next((a.value for a in c.call.args if a.keyword is None and not a.star), None) for c in calls]
    return bool(calls) and all(first is not None and _made_plain(project, knowledge, module, first, c.local_values,
                                                                 c.caller) for first, c in zip(firsts, calls))


def _agreed_contents(variants: list[EntryCall]) -> list[EntryCall]:
    """Contents only where every call passes the same: a later call with other data reuses the
    compiled code and takes the other side of a data-dependent branch there (its resume
    function), which one trace of the first call's data would not see."""
    if not variants:
        return variants
    agreed = set(variants[0].key.contents)
    for variant in variants[1:]:
        agreed &= set(variant.key.contents)
    return [v if set(v.key.contents) == agreed else v._replace(key=FrameKey(**{
        **_fields(v.key), "contents": tuple(sorted(agreed))})) for v in variants]


def _in_compiled_function(project: ProjectIndex, knowledge: Knowledge, caller: FunctionInfo | None) -> bool:
    """A call inside a function `@torch.compile` decorates: it runs when Dynamo traces that
    function, which inlines it, not as a call the program makes."""
    return caller is not None and project.decorated_with(caller.decorators, caller.module, knowledge.compilers)


def _resets_caches(project: ProjectIndex, knowledge: Knowledge, module, entry: EntryPoint) -> bool:
    """Does the compiled function's own body call `torch._dynamo.reset()`? Then each call
    finds the cache empty: Dynamo compiles it again, and traces its breaks again (measured on
    2.13: two calls, two hits)."""
    fn = project.function(entry.function)
    if fn is None:
        return False
    return any(project.qualify(call.func, module, fn) in knowledge.cache_resets
               for call in find_all(fn.node.body, (cst.Call,), skip=NESTED_SCOPES))


def _through_decorators(project: ProjectIndex, knowledge: Knowledge, key: FrameKey) -> FrameKey:
    """A compiled function, or a module whose `forward` is, decorated: calling it runs the
    decorators' wrapper (Dynamo's first frame), which calls the function. The call site's arguments bind to the
    wrapper's parameters (`*args, **kwargs`). Without a call site the entry stays `forward`
    itself with its defaults (a wrapper called with nothing would pass no tensors)."""
    fn = project.function(key.qualname)
    callables = Callables(project, knowledge)
    if fn is not None and fn.class_qualname is None:
        found = decorators_wrapper(project, callables, fn)
    else:
        found = method_wrapper(project, callables, fn) if fn is not None else None
    if found is None and fn is not None:
        found = _replaced_by_class(project, callables, key, fn)
    if found is None:
        return key
    wrapper, wrapped = found
    return FrameKey(**{**_fields(key), "qualname": wrapper.qualname, "tensor_params": frozenset(),
                       "bindings": tuple(sorted(wrapped.captured, key=lambda kv: kv[0])),
                       "arguments": tuple(sorted(wrapped.constants, key=lambda kv: kv[0]))})


def _replaced_by_class(project: ProjectIndex, callables: Callables, key: FrameKey,
                      fn: FunctionInfo) -> tuple[FunctionInfo, FnValue] | None:
    """`forward` replaced as the module's class was made (a class decorator, a base's
    `__init_subclass__`): calling the module runs the function put in its place."""
    cls = project.klass(key.self_class) if key.self_class else None
    replaced = callables.replaced_in_class(cls, fn.name) if cls is not None else None
    wrapper = project.function(replaced.qualname) if replaced is not None else None
    return (wrapper, replaced) if wrapper is not None and replaced is not None else None


def _is_generator_function(project: ProjectIndex, qual: str) -> bool:
    fn = project.function(qual)
    return fn is not None and fn.is_generator


def _fields(key: FrameKey) -> dict:
    return {f: getattr(key, f) for f in key.__dataclass_fields__}


def _with_call_site(project, knowledge, module, key: FrameKey, call: cst.Call, skip_self: bool,
                    local_values: dict | None = None, caller: FunctionInfo | None = None) -> FrameKey:
    fn = project.function(key.qualname)
    written, call = call, _spread(call, local_values or {})
    if fn is None or any(a.star for a in call.args):
        return key
    # a method's wrapper taking `(*args, **kwargs)`: the instance is `args[0]`
    receiver_first = bool(fn.params) and fn.params[0].kind == "star" and (skip_self or bool(fn.class_qualname))
    params = list(fn.params)[1:] if (skip_self or fn.class_qualname) and not receiver_first else list(fn.params)
    positional = [p for p in params if p.kind == "positional"]
    tensors = set(key.tensor_params)
    arguments: dict[str, object] = dict(key.arguments)  # a wrapper's cells holding constants
    bindings = dict(key.bindings)
    callables = Callables(project, knowledge)
    pairs = [(p.name, a.value) for p, a in zip(positional, [a for a in call.args if a.keyword is None])]
    pairs += [(a.keyword.value, a.value) for a in call.args if a.keyword is not None]
    shapes: dict[str, tuple[int, ...]] = {}
    contents: dict[str, tuple] = {}
    callees = frozenset({fn.name} | ({call.func.value} if isinstance(call.func, cst.Name) else set()))
    grad_inputs: set[str] = set()
    plain_inputs: set[str] = set()
    for name, value in pairs:
        shape = _made_shape(project, knowledge, module, value, local_values or {})
        if shape is not None:
            shapes[name] = shape
        held_contents = _made_contents(project, module, value, local_values or {}, caller, callees)
        if held_contents is not None:
            contents[name] = held_contents
        if made_with_grad(project, knowledge, module, value, local_values or {}, caller):
            grad_inputs.add(name)
        elif _made_plain(project, knowledge, module, value, local_values or {}, caller):
            plain_inputs.add(name)
        if isinstance(value, cst.Name) and local_values and value.value in local_values \
                and literal(local_values[value.value]) is not None:
            value = local_values[value.value]  # `x = True; opt(x, y)`: the constant it holds
        held = local_values.get(value.value) if isinstance(value, cst.Name) and local_values else None
        made = held if held is not None else _bound_value(module, value)
        qualify = lambda f: project.qualify(f, module, caller)  # noqa: E731
        if makes_generator(made, knowledge, qualify):
            tensors.discard(name)  # `opt(x, torch.Generator())`: an object Dynamo cannot trace
            arguments[name] = PASSED_GENERATOR
            continue
        if isinstance(made, cst.Call) and qualify(made.func) in knowledge.input_unenterable_context_managers:
            tensors.discard(name)
            arguments[name] = PASSED_CONTEXT_MANAGER_INPUT  # `opt(x, torch.no_grad())`: entered, it skips the frame
            continue
        if makes_iterator(made, knowledge, qualify, lambda q: _is_generator_function(project, q)):
            tensors.discard(name)  # `opt(x, zip(a, b))`: an iterator Dynamo cannot wrap
            arguments[name] = PASSED_ITERATOR
            continue
        if _tensor_set(project, knowledge, module, made, qualify):
            tensors.discard(name)  # `opt(x, {a, b})`: a set Dynamo cannot wrap
            arguments[name] = PASSED_TENSOR_SET
            continue
        subclass = _tensor_subclass_made(project, module, made, caller)
        if subclass is not None:  # `opt(t.as_subclass(Sub))`: a tensor whose class is the project's
            tensors.add(name)
            arguments[name] = PASSED_TENSOR_SUBCLASS + subclass
            continue
        if isinstance(made, cst.Call) and qualify(made.func) in knowledge.numpy_scalar_types:
            tensors.discard(name)
            arguments[name] = PASSED_NUMPY_SCALAR  # `opt(np.int64(12), t)`
            continue
        instance = _passed_instance(project, knowledge, module, value, local_values or {}, caller)
        if instance is not None:  # `obj = Helper(); opt(x, obj)`: its methods are the class's
            tensors.discard(name)
            obj = instance.value  # (only for an empty module does a change elsewhere matter: GBL608)
            arguments[name] = Const(replace(obj, shared=True)) \
                if isinstance(obj, Obj) and empty_module(project, knowledge, obj) \
                and _shared(module, value, local_values or {}, caller, callees) else instance
            continue
        optimizer = _passed_optimizer(made, qualify)
        if optimizer is not None:  # `train_step(model, opt)`: its step() / zero_grad() break
            tensors.discard(name)
            arguments[name] = Const(Obj(optimizer))
            continue
        shown = _tensor_display(project, knowledge, module, value) or _tensor_display(project, knowledge, module, made)
        if shown is not None:  # `combine((a, b))`: a tuple of tensors whose length is fixed
            tensors.add(name)
            arguments[name] = Const(Seq(display_length(shown), display_kind(shown)))  # type: ignore[arg-type]
            continue
        if display_length(value) is not None:  # `fn(x, [])`, `fn(x, (4, 4))`: no tensor in it
            tensors.discard(name)
            arguments[name] = literal(value) or Const(Seq(display_length(value), display_kind(value)))  # type: ignore[arg-type]
            continue
        function = callables.value(value, module, caller, {}, {}) or \
            (callables.value(held, module, caller, {}, {}) if held is not None else None)
        if function is not None:  # `outer(f, x)`: calls of `fn` in the entry run `f`
            tensors.discard(name)
            bindings[name] = function
            continue
        returned = _project_return(project, module, made, local_values or {}, caller)
        made_in, made = (returned if returned is not None else (module, made))
        stored = _with_items_stored(_scope_of(module, value.value, local_values or {}, caller), value.value, made,
                                    written) \
            if isinstance(made, cst.Dict) and returned is None and isinstance(value, cst.Name) else made
        holding = _tensor_dict(project, knowledge, made_in, stored)
        if holding is not None and not _shared(module, value, local_values or {}, caller, callees,
                                               items=returned is None):
            # `step({"x": torch.randn(4)})`: `batch["x"]` is a tensor (other stores into it: not known)
            tensors.discard(name)
            arguments[name] = Const(holding)
            continue
        if (_is_tensor_expr(project, knowledge, module, value) or returned is not None
                and _is_tensor_expr(project, knowledge, made_in, made)
                or name in plain_inputs and not isinstance(made, _NON_TENSOR_DISPLAYS)) \
                and not isinstance(held, _NON_TENSOR_DISPLAYS):
            tensors.add(name)  # (a local holding `{f, "a"}` or `{"k": v}` is no tensor)
            if isinstance(made, cst.Call) and makes_integer_tensor(made, knowledge, qualify):
                arguments[name] = PASSED_INTEGER_TENSOR  # `opt(torch.tensor([7, 3]))`
            elif _makes_bool_tensor(made, qualify):
                arguments[name] = PASSED_BOOL_TENSOR  # `opt(x, ids > 2)`
            continue
        tensors.discard(name)
        found = literal(value)
        arguments[name] = found if found is not None else PASSED_UNKNOWN
    passed = {name for name, _ in pairs}
    tensors -= {p.name for p in params if p.name not in passed}  # left at its default (`x=None`)
    for p in params:  # a call site seen leaving it out: its default is what the trace sees
        default = literal(p.default) if p.name not in passed and p.name not in arguments else None
        if default is not None:
            arguments[p.name] = default
    arguments.update(star_arguments(params, positional, call.args,
                                    lambda value: _is_tensor_expr(project, knowledge, module, value),
                                    value_of=literal, receiver_first=receiver_first))
    tensors.update(name for name, held in arguments.items()  # `f(*args)` given a tensor among them
                   if isinstance(held, Const) and isinstance(held.value, Seq) and held.value.tensors
                   and any(held.value.tensors) and any(p.name == name and p.kind == "star" for p in params))
    for name in changed_in_place(fn.node.body):  # a second call with the same tensor sees the change
        contents.pop(name, None)
    passed_names = [value.value for _, value in pairs if isinstance(value, cst.Name)]
    for name, value in pairs:  # `opt(t, t)`: a change through one parameter changes the other
        if isinstance(value, cst.Name) and passed_names.count(value.value) > 1:
            contents.pop(name, None)
    return FrameKey(**{**_fields(key), "tensor_params": frozenset(tensors),
                       "bindings": tuple(sorted(bindings.items(), key=lambda kv: kv[0])),
                       "arguments": tuple(sorted(arguments.items(), key=lambda kv: kv[0])),
                       "shapes": tuple(sorted((n, s) for n, s in shapes.items() if n in tensors)),
                       "contents": tuple(sorted((n, c) for n, c in contents.items() if n in tensors)),
                       "grad_inputs": frozenset(grad_inputs & tensors),
                       "plain_inputs": frozenset(plain_inputs & (tensors | _dicts_of_tensors(arguments)))})


def _spread(call: cst.Call, local_values: dict) -> cst.Call:
    """`f(*args)` with `args` a tuple display the scope (or the loop row) binds: its items
    passed one by one."""
    args: list[cst.Arg] = []
    for arg in call.args:
        held = local_values.get(arg.value.value) if arg.star == "*" and isinstance(arg.value, cst.Name) else None
        if isinstance(held, (cst.Tuple, cst.List)) and not any(isinstance(el, cst.StarredElement) for el in held.elements):
            args += [cst.Arg(el.value) for el in held.elements]
        else:
            args.append(arg)
    return call.with_changes(args=args)


def _made_shape(project, knowledge, module, value, local_values: dict, depth: int = 0) -> tuple[int, ...] | None:
    """The size of the tensor an entry is called with: made by a factory in the call, or bound
    to a name (in the calling function, else at module level) that was."""
    if isinstance(value, cst.Name) and depth < 4:
        bound = local_values.get(value.value, module.values.get(value.value))
        return _made_shape(project, knowledge, module, bound, local_values, depth + 1) if bound is not None else None
    value = _signed_operand(value)  # `-torch.ones(3, 4)`: the same size
    if not isinstance(value, cst.Call):
        return None
    return factory_shape(value, lambda expr: project.qualify(expr, module), knowledge.sized_tensor_factories,
                         knowledge.shape_preserving | knowledge.self_returning_tensor_methods,
                         knowledge.data_tensor_factories)


def _made_contents(project, module, value, local_values: dict, caller, callees: frozenset[str],
                   depth: int = 0) -> tuple | None:
    """The elements of the tensor an entry is called with, when it is made from constants in
    the call, or bound to a name (in the calling function, else at module level) that the
    program only ever passes to the entry (`callees`: its names) or to a compiled call: any
    other use might change it in place (`x.add_(1)`, `init.zeros_(x)`, `v = x[0]`, a helper)."""
    if isinstance(value, cst.Name) and depth < 4:
        bound = local_values.get(value.value, module.values.get(value.value))
        found = _made_contents(project, module, bound, local_values, caller, callees, depth + 1) \
            if bound is not None else None
        if found is None:
            return None  # (the walk over the scope below only for a tensor of known contents)
        local = caller is not None and value.value in local_values
        if not local and f"global {value.value}" in module.parsed.text:
            return None
        return found if _only_passed(caller.node if local else module.parsed.module, value.value, callees) else None
    if not isinstance(value, (cst.Call, cst.BinaryOperation, cst.UnaryOperation)):
        return None
    found = TensorContents({}, lambda f: project.qualify(f, module, caller), literal).of(value)
    return found if found is not None and all(type(v) in (int, float, bool) for v in found) else None


def _made_plain(project, knowledge, module, value, local_values: dict, caller, depth: int = 0) -> bool:
    """A tensor argument known not to need grad: made by a torch factory (`torch.randn(2, 4)`,
    `torch.tensor([1, 2])`, `.float()` of one, arithmetic on them) without `requires_grad`,
    here or bound to a name (in the calling function, else at module level) that was."""
    if isinstance(value, cst.Name):
        if depth >= 4 or f"{value.value}.requires_grad" in module.parsed.text:
            return False
        if _bound_with_grad_off(project, knowledge, module, value.value, local_values, caller):
            return True  # `with torch.no_grad(): x = pre(x)`
        bound = local_values.get(value.value, module.values.get(value.value))
        return bound is not None and _made_plain(project, knowledge, module, bound, local_values, caller, depth + 1)
    if isinstance(value, cst.Dict):  # `m({"x": torch.randn(2, 8), "train": True})`: its tensors
        tensors = [el.value for el in value.elements if isinstance(el, cst.DictElement) and literal(el.value) is None]
        return bool(tensors) and all(_made_plain(project, knowledge, module, item, local_values, caller, depth + 1)
                                     for item in tensors)
    if isinstance(value, cst.BinaryOperation):
        return all(_made_plain(project, knowledge, module, side, local_values, caller, depth)
                   for side in (value.left, value.right) if not isinstance(side, (cst.Integer, cst.Float)))
    if not isinstance(value, cst.Call) or made_with_grad(project, knowledge, module, value, local_values, caller):
        return False
    if isinstance(value.func, cst.Attribute) and value.func.attr.value == "detach":
        return True  # `pre(x).detach()`
    returned = _project_return(project, module, value, local_values, caller)
    if returned is not None and depth < 4:  # `model(make_input())`: what the function returns
        return _made_plain(project, knowledge, returned[0], returned[1], {}, None, depth + 1)
    qual = project.qualify(value.func, module, caller) or ""
    if qual in knowledge.plain_tensor_factories:
        return True
    if qual.startswith("torch.") and value.args:  # `torch.stack([torch.randn(8), ...])`: of plain tensors
        items = [el.value for a in value.args for el in (a.value.elements if isinstance(a.value, (cst.List, cst.Tuple))
                                                         else [a])]
        return all(literal(item) is not None or _made_plain(project, knowledge, module, item, local_values, caller,
                                                            depth + 1) for item in items)
    return isinstance(value.func, cst.Attribute) and value.func.attr.value in knowledge.shape_preserving \
        and _made_plain(project, knowledge, module, value.func.value, local_values, caller, depth)


def _dicts_of_tensors(arguments: dict) -> set[str]:
    return {name for name, held in arguments.items() if isinstance(held, Const) and isinstance(held.value, Keywords)
            and held.value.tensors}


def _bound_with_grad_off(project, knowledge, module, name: str, local_values: dict, caller) -> bool:
    """Is the last `name = ...` where the argument is bound inside `with torch.no_grad():`
    (or another block turning grad off), or after `torch.set_grad_enabled(False)` run as a
    statement before it? What is computed there needs no grad."""
    states: list[State] = []
    _assignment_states(_scope_of(module, name, local_values, caller), name, DEFAULT,
                       StateReader(knowledge, project, module), caller, states)
    return bool(states) and GRAD_OFF in states[-1]


def _assignment_states(node: cst.CSTNode, name: str, state: State, reader: StateReader, caller,
                       found: list[State]) -> State:
    """Appends, for each `name = ...` under `node` in order (not in nested scopes), the grad
    state there: the `with` blocks around it and the setter statements run before it (a setter
    inside a `with` block is not followed out of it). Returns the state after `node`."""
    for child in children(node):
        if isinstance(child, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == name
                                                 for t in child.targets):
            found.append(state)
        elif isinstance(child, cst.Expr):
            state = reader.set(state, child.value, caller)  # `torch.set_grad_enabled(False)`
        elif isinstance(child, cst.With):
            inner = state
            for item in child.items:
                inner = reader.entered(inner, item.item, caller)
            _assignment_states(child.body, name, inner, reader, caller, found)
        elif not isinstance(child, NESTED_SCOPES):
            state = _assignment_states(child, name, state, reader, caller, found)
    return state


def _shared(module, value, local_values: dict, caller, callees: frozenset[str], items: bool = False) -> bool:
    """A module instance the program changes besides passing it to the entry: an attribute
    stored on it, `setattr`, or handed to a function that is not a builtin (`init(m)`,
    `nn.Module.__init__(m)`). Reading it (`isinstance(m, ...)`, `type(m)`) is not a change.
    `items`: item stores are known (`_with_items_stored`), not a change either."""
    if not isinstance(value, cst.Name):
        return False
    changes = ("store", "handed") if items else ("store", "handed", "item")
    return any(kind in changes for kind in _uses(_scope_of(module, value.value, local_values, caller), value.value,
                                                 callees))


def _scope_of(module, name: str, local_values: dict, caller) -> cst.CSTNode:
    """Where the name an argument is passed by is bound: its function, else the module."""
    return caller.node if caller is not None and name in local_values else module.parsed.module


def _with_items_stored(scope: cst.CSTNode, name: str, display: cst.Dict, call: cst.Call) -> cst.Dict | None:
    """The dict display `name` is bound to, with the items the program stores into it by
    constant keys before `call` (`batch["n"] = t`, `batch.update(n=t)`, `batch.update({"n":
    t})`) added; None when it changes it another way (`pop`, `del`, `|=`, a key not written
    down)."""
    added: list[cst.DictElement] = []
    for node in _before(scope, call, (cst.AssignTarget, cst.AugAssign, cst.Call, cst.Del)):
        if isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Name) and node.target.value == name:
            return None  # `batch |= {...}`
        if isinstance(node, (cst.AssignTarget, cst.AugAssign)) and _item_of(node.target, name):
            key = node.target.slice[0].slice.value  # type: ignore[attr-defined]
            if not isinstance(key, cst.SimpleString):
                return None
            held = _assigned_value(scope, node) if isinstance(node, cst.AssignTarget) else None
            added.append(cst.DictElement(key, held if held is not None else cst.Name("unknown")))
        elif isinstance(node, cst.Del) and any(_item_of(t, name) for t in find_all(node.target, (cst.Subscript,))):
            return None
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and isinstance(node.func.value, cst.Name) and node.func.value.value == name:
            method = node.func.attr.value
            if method == "update":
                updated = _update_items(node)
                if updated is None:
                    return None
                added += updated
            elif method in _DICT_CHANGING_METHODS:
                return None
    if not added:
        return display
    last = {_key_text(el): i for i, el in enumerate([*display.elements, *added])}  # a later store replaces
    return display.with_changes(elements=[el for i, el in enumerate([*display.elements, *added])
                                          if last[_key_text(el)] == i])


def _key_text(element) -> str | int:
    key = getattr(element, "key", None)
    return str(key.evaluated_value) if isinstance(key, cst.SimpleString) else id(element)


def _before(scope: cst.CSTNode, stop: cst.CSTNode, kinds: tuple) -> list:
    """The nodes of `kinds` under `scope` that may run before `stop`: those before it in
    source order, and those of a loop around it (a later pass of the loop runs them first)."""
    found: list = []
    loops: list[cst.CSTNode] = []

    def visit(node: cst.CSTNode, around: tuple) -> bool:
        if node is stop:
            loops.extend(around[-1:])
            return False
        if isinstance(node, kinds):
            found.append(node)
        inner = around + (node,) if isinstance(node, (cst.For, cst.While)) else around
        return all(visit(child, inner) for child in children(node))

    visit(scope, ())
    later = [n for loop in loops for n in find_all(loop, kinds) if not any(n is f for f in found)]
    return found + later


_DICT_CHANGING_METHODS = frozenset({"pop", "popitem", "clear", "setdefault", "__setitem__", "__delitem__"})


def _item_of(target: cst.BaseExpression, name: str) -> bool:
    return isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and target.value.value == name \
        and len(target.slice) == 1 and isinstance(target.slice[0].slice, cst.Index)


def _assigned_value(scope: cst.CSTNode, target: cst.AssignTarget) -> cst.BaseExpression | None:
    owner = next((a for a in find_all(scope, (cst.Assign,)) if any(t is target for t in a.targets)), None)
    return owner.value if owner is not None else None


def _update_items(call: cst.Call) -> list[cst.DictElement] | None:
    """The items `d.update(k=v)` / `d.update({"k": v})` stores (None: not written down)."""
    if all(a.keyword is not None for a in call.args):
        return [cst.DictElement(cst.SimpleString(repr(a.keyword.value)), a.value) for a in call.args]  # type: ignore[union-attr]
    if len(call.args) == 1 and isinstance(call.args[0].value, cst.Dict) and all(
            isinstance(el, cst.DictElement) and isinstance(el.key, cst.SimpleString) for el in call.args[0].value.elements):
        return list(call.args[0].value.elements)  # type: ignore[arg-type]
    return None


def _only_passed(scope: cst.CSTNode, name: str, callees: frozenset[str]) -> bool:
    """`name` is bound once in `scope`, and every other use of it leaves the tensor as it is:
    passed (positionally or by keyword) to the entry (`callees`: its names), to a compiled
    object called at once (`torch.compile(f)(x)`) or to a builtin that only reads it (`print`,
    `len`), or a read of its size or dtype. An in-place method, a store, another name for it
    (`y = x`, `v = x[0]`) or a function it is handed to might change it."""
    stores = [t for node in find_all(scope, (cst.Assign,)) for t in node.targets
              if isinstance(t.target, cst.Name) and t.target.value == name]
    return len(stores) == 1 and all(kind in ("passed", "read") for kind in _uses(scope, name, callees))


# builtins that read an object without changing it
_READING_BUILTINS = frozenset({"print", "len", "isinstance", "type", "id", "repr", "str", "hash", "issubclass"})
# attributes and methods of a tensor whose use leaves it as it is
_READING_MEMBERS = frozenset({"shape", "dtype", "device", "ndim", "size", "dim", "numel", "is_contiguous",
                              "requires_grad", "sum", "mean", "max", "min", "item", "tolist", "clone", "stride"})


def _uses(scope: cst.CSTNode, name: str, callees: frozenset[str]) -> list[str]:
    """How each read of `name` in `scope` uses it: "passed" to a callee or a compiled call,
    "read" (a reading builtin or member), "store" (an attribute stored on it, `setattr`),
    "item" (an item stored into it), "handed" (another call), "other" (anything else: an alias, an operand)."""
    out: list[str] = []

    def visit(node: cst.CSTNode, parent: cst.CSTNode | None, grand: cst.CSTNode | None) -> None:
        if isinstance(node, cst.Name) and node.value == name and not _binds(parent, node):
            out.append(_use_kind(node, parent, grand, callees))
        for child in children(node):
            visit(child, node, parent)

    visit(scope, None, None)
    return out


def _binds(parent: cst.CSTNode | None, node: cst.Name) -> bool:
    return isinstance(parent, cst.AssignTarget) and parent.target is node


def _use_kind(node: cst.Name, parent, grand, callees: frozenset[str]) -> str:
    if isinstance(parent, cst.Arg) and isinstance(grand, cst.Call) and parent.value is node:
        func = grand.func
        if isinstance(func, cst.Call) or isinstance(func, cst.Name) and func.value in callees:
            return "passed"
        if isinstance(func, cst.Name) and func.value in _READING_BUILTINS:
            return "read"
        return "store" if isinstance(func, cst.Name) and func.value == "setattr" else "handed"
    if isinstance(parent, cst.Attribute) and parent.value is node:
        if isinstance(grand, cst.AssignTarget):
            return "store"
        return "read" if parent.attr.value in _READING_MEMBERS else "other"
    if isinstance(parent, cst.Subscript) and isinstance(grand, cst.AssignTarget):
        return "item"
    return "other"


def _passed_instance(project, knowledge, module, value, local_values: dict, caller) -> Const | None:
    """An instance of a project class passed to the entry, built where the caller is
    (`Helper(...)` itself, or a local or module-level name bound to it once)."""
    if isinstance(value, cst.Name):
        value = local_values.get(value.value) or _bound_value(module, value)
    if not isinstance(value, cst.Call):
        return None
    cls = project.created_class(value, module, caller)
    if cls is None:
        return None
    return Const(built_at_top(project, knowledge.dtype_names, cls, value, module))


def _tensor_display(project, knowledge, module, made) -> cst.BaseExpression | None:
    """The list or tuple display a name passed to the entry is bound to, when it holds a
    tensor (`lst = [torch.tensor(4), ...]; opt(lst)`)."""
    if display_length(made) is None or not any(
            isinstance(el, cst.Element) and _is_tensor_expr(project, knowledge, module, el.value) for el in made.elements):
        return None
    return made


def _tensor_subclass_made(project, module, made, caller) -> str | None:
    """The project tensor subclass an argument is an instance of: `t.as_subclass(Sub)` or
    `Sub(...)` of a class deriving from torch.Tensor."""
    if not isinstance(made, cst.Call):
        return None
    func = made.func
    if isinstance(func, cst.Attribute) and func.attr.value == "as_subclass" and made.args:
        cls = project.klass(project.qualify(made.args[0].value, module, caller))
    else:
        cls = project.klass(project.qualify(func, module, caller))
    if cls is None or "torch.Tensor" not in project.external_bases(cls):
        return None
    return cls.qualname


_NON_TENSOR_DISPLAYS = (cst.Set, cst.Dict, cst.SetComp, cst.DictComp)


def _tensor_set(project, knowledge, module, made, qualify) -> bool:
    """A set display, or `set(...)` / `frozenset(...)` of a display, holding a tensor (`{a, b}`,
    `set([a, b])`): Dynamo wraps a set input only when its items are constants."""
    if isinstance(made, cst.Call) and qualify(made.func) in ("builtins.set", "builtins.frozenset") \
            and len(made.args) == 1 and isinstance(made.args[0].value, (cst.List, cst.Tuple, cst.Set)):
        made = made.args[0].value
    elif not isinstance(made, cst.Set):
        return False
    return any(isinstance(el, cst.Element) and _is_tensor_expr(project, knowledge, module, el.value)
               for el in made.elements)


def _project_return(project, module, made, local_values: dict, caller):
    """What a call of a project function or method returns, with the module it is written in
    (`make_input()`, `Loader().batch()`, `loader.batch()`): its one top-level `return`'s value."""
    if not isinstance(made, cst.Call):
        return None
    func = made.func
    fn = project.function(project.qualify(func, module, caller))
    if fn is None and isinstance(func, cst.Attribute):  # a method of an instance built here
        receiver = func.value
        if isinstance(receiver, cst.Name):
            receiver = local_values.get(receiver.value, module.values.get(receiver.value))
        cls = project.klass(project.qualify(receiver.func, module, caller)) if isinstance(receiver, cst.Call) else None
        fn = project.method(cls, func.attr.value) if cls is not None else None
    returned = returned_values(fn.node) if fn is not None else []
    home = project.modules.get(fn.module) if fn is not None else None
    # (a returned local name is left unknown: what the function bound it to is not read here)
    return (home, returned[0]) if len(returned) == 1 and home is not None \
        and not isinstance(returned[0], cst.Name) else None


def _tensor_dict(project, knowledge, module, made) -> Keywords | None:
    """The keys of a dict display of string keys holding a tensor, which hold tensors, and the
    constants the others hold."""
    if not isinstance(made, cst.Dict):
        return None
    held = display_keywords(made, literal, lambda expr: _is_tensor_expr(project, knowledge, module, expr))
    return held if held is not None and held.tensors else None


def _bound_value(module, value):
    """What a module-level name never rebound holds (`opt = torch.optim.SGD(...)` under
    `if __name__ == "__main__":`); anything else as it is."""
    if isinstance(value, cst.Name) and value.value not in module.reassigned:
        return module.values.get(value.value, value)
    return value


def _passed_optimizer(made, qualify) -> str | None:
    """The class of a torch.optim optimizer built where the caller passes it."""
    qual = qualify(made.func) if isinstance(made, cst.Call) else None
    return qual if is_optimizer_class(qual) else None


def _signed_operand(value):
    """The operand of `-x`, `+x`, `~x` (a tensor's sign or bits: the same tensor's kind and
    size); anything else as it is."""
    if isinstance(value, cst.UnaryOperation) and not isinstance(value.operator, cst.Not):
        return value.expression
    return value


def _makes_bool_tensor(made, qualify) -> bool:
    """`ids > 2`, `~mask`, `t.bool()`, `torch.ones(3, dtype=torch.bool)`: a bool tensor (the
    operand of a comparison is a tensor when the caller passes the result as one)."""
    if isinstance(made, cst.Comparison):
        return True
    if isinstance(made, cst.UnaryOperation) and isinstance(made.operator, cst.BitInvert):
        return _makes_bool_tensor(made.expression, qualify)
    if not isinstance(made, cst.Call):
        return False
    if isinstance(made.func, cst.Attribute) and made.func.attr.value == "bool" and not made.args:
        return True
    dtype = next((a.value for a in made.args if a.keyword is not None and a.keyword.value == "dtype"), None)
    return dtype is not None and qualify(dtype) == "torch.bool"


def _is_tensor_expr(project, knowledge, module, value, depth: int = 0) -> bool:
    """A torch call (`torch.randn(...)`, `torch.tensor(...).half()`), a module-level name bound
    to one, or a name the program binds locally: tensors are what programs pass to compiled
    code."""
    if isinstance(value, cst.Name) and value.value in module.values and depth < 4:
        return _is_tensor_expr(project, knowledge, module, module.values[value.value], depth + 1)
    value = _signed_operand(value)  # `-torch.ones(3)`
    if isinstance(value, cst.Comparison) and len(value.comparisons) == 1 and isinstance(value.left, cst.Call) \
            and not isinstance(value.comparisons[0].operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)):
        value = value.left  # `torch.randint(0, 5, (4,)) > 2`: a bool tensor (of a name: maybe a number)
    if isinstance(value, cst.BinaryOperation):  # `torch.randn(3) * 2`: a torch call on either side
        return any(isinstance(side, cst.Call) and _is_tensor_expr(project, knowledge, module, side, depth + 1)
                   for side in (value.left, value.right))
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
            and (project.qualify(value.func, module) is None or _method_of_global(module, value)):
        if value.func.attr.value in knowledge.non_tensor_methods:
            return False  # `torch.randn(2).size()`
        value = value.func.value  # `torch.randn(2).half()`, `labels = input_ids.clone()`
    if isinstance(value, cst.Name) and value.value in module.values and depth < 4:
        return _is_tensor_expr(project, knowledge, module, module.values[value.value], depth + 1)
    if isinstance(value, cst.Call):
        qual = project.qualify(value.func, module) or ""
        if qual in COPYING_FUNCTIONS and value.args and depth < 4:  # `copy.deepcopy(x_ref)`
            return _is_tensor_expr(project, knowledge, module, value.args[0].value, depth + 1)
        return qual.startswith("torch.") and not any(
            qual.rsplit(".", 1)[-1].startswith(p) for p in knowledge.non_tensor_prefixes)
    return isinstance(value, cst.Name) and literal(value) is None and value.value not in module.values


def _method_of_global(module, value: cst.Call) -> bool:
    """`name.method(...)` on a name bound at module level (`input_ids.clone()`)."""
    receiver = value.func.value  # type: ignore[attr-defined]
    return isinstance(receiver, cst.Name) and receiver.value in module.values


def _calls_named(project, knowledge, module, name: str, compiled: str | None = None) -> list[_Call]:
    """Calls of `name(...)`, each with whether it runs inside `with error_on_graph_break(True)`
    (the program makes every break of that compile an error), the plain `name = value`
    assignments of its function seen before it (what the arguments it passes were bound to),
    that function (where the names it passes are read) and the cache resets before it.
    `compiled`: the function compiled, to keep only the loop rows that compile it."""
    finder = _NamedCalls(project, knowledge, module, name, compiled)
    walk(module.parsed.module, finder)
    return finder.found


class _NamedCalls(cst.CSTVisitor):
    def __init__(self, project, knowledge, module, name: str, compiled: str | None = None):
        self.project, self.knowledge, self.module, self.name = project, knowledge, module, name
        self.compiled = compiled
        self.found: list[_Call] = []
        self.resets = 0
        self.strict: list[bool] = []
        self.stances: list[str] = ["default"]
        self.states: list[State] = [DEFAULT]
        self.state = StateReader(knowledge, project, module)
        self.scopes: list[dict] = [{}]
        self.loops: list[dict] = []  # the rows of each enclosing `for` over a display
        self.functions: list[FunctionInfo | None] = [None]
        self.by_node = module.by_tree_node(module.functions.values())

    def visit_With(self, node: cst.With) -> None:
        self.strict.append(any(self._strict_item(i) for i in node.items))
        self.stances.append(next((s for s in map(self._stance_set, (i.item for i in node.items)) if s),
                                 self.stances[-1]))
        self.states.append(self._entered(self.states[-1], [i.item for i in node.items], self.functions[-1]))

    def leave_With(self, node: cst.With) -> None:
        self.strict.pop()
        self.stances.pop()
        self.states.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scopes.append({})
        self.functions.append(self.by_node.get(node))
        decorated = [s for s in (self._stance_set(d.decorator) for d in node.decorators) if s]
        self.stances.append(decorated[0] if decorated else self.stances[-1])
        self.states.append(self._entered(self.states[-1], [d.decorator for d in node.decorators],
                                         self.functions[-2]))  # decorators are read outside the def

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scopes.pop()
        self.functions.pop()
        self.stances.pop()
        self.states.pop()

    def _entered(self, state: State, items: list, function: FunctionInfo | None) -> State:
        for item in items:
            state = self.state.entered(state, item, function)
        return state

    def visit_Expr(self, node: cst.Expr) -> None:
        stance = self._stance_set(node.value)  # `torch.compiler.set_stance("force_eager")` alone:
        if stance:  # in force from here on (a `with` or a decorator restores the one before)
            self.stances[-1] = stance
        self.states[-1] = self.state.set(self.states[-1], node.value, self.functions[-1])  # set_grad_enabled(False)

    def _stance_set(self, expr: cst.BaseExpression) -> str | None:
        """The stance `torch.compiler.set_stance("name")` (or `stance="name"`) sets."""
        if not isinstance(expr, cst.Call) or \
                self.project.qualify(expr.func, self.module) not in self.knowledge.stance_setters:
            return None
        given = [a.value for a in expr.args if a.keyword is None][:1] + \
            [a.value for a in expr.args if a.keyword is not None and a.keyword.value == "stance"]
        found = literal(given[0]) if given else None
        return found.value if found is not None and isinstance(found.value, str) else None

    def leave_Assign(self, node: cst.Assign) -> None:  # after the calls in its value
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                bound = target.target.value
                self.scopes[-1][bound] = _in_terms_of(node.value, bound, self.scopes[-1].get(bound))
            elif isinstance(target.target, (cst.Tuple, cst.List)) and isinstance(node.value, (cst.Tuple, cst.List)) \
                    and len(target.target.elements) == len(node.value.elements):
                for name, value in zip(target.target.elements, node.value.elements):  # `a, b = A(), B()`
                    if isinstance(name.value, cst.Name) and isinstance(value, cst.Element):
                        self.scopes[-1][name.value.value] = value.value

    def visit_For(self, node: cst.For) -> None:
        self.loops.append(loop_items(node, lambda name: self.scopes[-1].get(name) or self.module.values.get(name)))

    def leave_For(self, node: cst.For) -> None:
        self.loops.pop()

    def visit_Call(self, node: cst.Call) -> None:
        if self.project.qualify(node.func, self.module) in self.knowledge.cache_resets:
            self.resets += 1
        if self._calls(node.func):
            scope = dict(self.scopes[-1]) if len(self.scopes) > 1 else {}
            for row in self._rows_compiling(node.func, self._loop_rows()):
                self.found.append(_Call(node, any(self.strict), {**scope, **row},
                                        self.functions[-1], self.resets, self.stances[-1], self.states[-1]))

    def _rows_compiling(self, func: cst.BaseExpression, rows: list[dict]) -> list[dict]:
        """`for fn, args in cases: torch.compile(fn)(*args)`: the rows whose `fn` is the
        function compiled (each row's arguments go with its own function)."""
        if self.compiled is None or not isinstance(func, cst.Call) or not func.args:
            return rows
        compiled = func.args[0].value
        if not isinstance(compiled, cst.Name) or not all(compiled.value in row for row in rows):
            return rows
        mine = [row for row in rows
                if self.project.qualify(row[compiled.value], self.module, self.functions[-1]) == self.compiled]
        return mine or rows

    def _loop_rows(self) -> list[dict]:
        """The names the innermost `for` over a display binds, one dict per row (the first
        MAX_VARIANTS rows): `for flag, n in [(True, 2), (False, 3)]: opt(flag, ...)` calls the
        entry with each row's values."""
        table = next((t for t in reversed(self.loops) if t), None)
        if table is None:
            return [{}]
        count = min(len(values) for values in table.values())
        return [{name: values[i] for name, values in table.items()} for i in range(min(count, MAX_VARIANTS))]

    def _strict_item(self, item: cst.WithItem) -> bool:
        call = item.item
        return isinstance(call, cst.Call) and \
            self.project.qualify(call.func, self.module) in self.knowledge.error_on_graph_break \
            and not (call.args and isinstance(call.args[0].value, cst.Name) and call.args[0].value.value == "False")

    def _calls(self, func: cst.BaseExpression) -> bool:
        """`name(...)`, or `torch.compile(name, ...)(...)` called at once (`name`: the
        compile call's position, when what it compiles has no name: `torch.compile(Net())(x)`)."""
        name = self.name
        if name.startswith(CALLED_AT_ONCE):
            return isinstance(func, cst.Call) and called_at_once(self.module.parsed.span(func)) == name
        if isinstance(func, cst.Call) and func.args and \
                self.project.qualify(func.func, self.module) in self.knowledge.compile_functions:
            func = func.args[0].value
        return isinstance(func, cst.Name) and func.value == name
