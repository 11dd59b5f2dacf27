"""Compile entry points (every form users write) and the Dynamo config flags a module sets."""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Callable, TypeGuard

import libcst as cst

from .module_mode import Switches, instance_training, mode_switches
from ..diagnostics import Span
from ..knowledge import Knowledge
from ..vocab import ASSUMED_ENTRY, NAMED_ENTRY
from .compiled_autograd import CONFIG_FLAG as COMPILED_AUTOGRAD_FLAG, HOW as COMPILED_AUTOGRAD, compiled_autograd_entries
from .names import FULLGRAPH_KEYWORDS, binding_counts, dotted, is_super, keyword_true, string_key, unpacked
from .project import SAME_INSTANCE_METHODS, ProjectIndex, is_nn_module, is_property
from .symbols import MODULE_BODY, ClassInfo, FunctionInfo, ModuleIndex, module_body
from ..walk import NESTED_SCOPES, find_all, walk

MODULE_COMPILE_METHOD = "compile"  # nn.Module.compile()
EXPORT_HOW = "torch._dynamo.export"  # an entry's `how` when torch._dynamo.export compiles it
REORDERABLE = "reorderable:"  # config flag prefix: a logging function Dynamo may reorder
REORDERABLE_CONFIG = "reorderable_logging_functions"
MAX_FLAG_HOPS = 3  # callers passing a fullgraph parameter on to the next, followed


@dataclass(frozen=True)
class EntryPoint:
    function: str  # qualname of the compiled function (a module's forward for modules)
    path: str  # where the compile happens
    line: int
    fullgraph: bool
    how: str  # "decorator" | "torch.compile(fn)" | "torch.compile(module)" | "module.compile()" | ...
    span: Span | None = None  # the compile call / decorator
    assigned_to: str | None = None  # `model = torch.compile(model)`: the name rebound
    self_class: str | None = None  # compiling a module instance: its class (forward may be inherited)
    called_as: str | None = None  # the name the program calls the compiled code by
    construction: cst.Call | None = None  # `Net(cfg)`: how the compiled module instance was built
    instance_name: str | None = None  # `torch.compile(model)`: the compiled module instance's name
    # `torch.compile(lambda x: m(x))`: the function the lambda is written in and where the
    # lambda starts (line, column); `function` then names the lambda (see `lambda_entry_name`)
    lambda_host: str | None = None
    lambda_at: tuple[int, int] | None = None
    dynamic: bool = False  # `torch.compile(..., dynamic=True)`: sizes and ints traced as symbols
    isolated: bool = False  # `torch.compile(..., isolate_recompiles=True)`: a code cache of its own
    training: bool | None = None  # the compiled module instance's mode, when the program tells it
    call_lines: tuple[int, ...] = ()  # where the module calls it by `called_as` (empty: not known)
    # `torch._dynamo.optimize(..., error_on_graph_break=True)`: every break is an error, as in a
    # call under `error_on_graph_break(True)` (fullgraph's captures are not turned on)
    error_on_graph_break: bool = False
    # the lines of module-level code that run the compile site (itself, when it is there; the
    # calls of the top-level function it is in): a module-level config setting after all of
    # them does not hold for it. Empty: not known (every setting holds)
    run_lines: tuple[int, ...] = ()


@dataclass(frozen=True)
class CompiledParameter:
    """`def run(fn, x): torch.compile(fn)(x)`: a helper compiling a function it is given."""

    function: FunctionInfo  # the helper
    param: str  # its parameter holding what it compiles
    node: cst.Call  # the compile call
    fullgraph: bool
    how: str
    flag: str | None = None  # its parameter holding fullgraph (`fullgraph=strict`): each call's own


@dataclass(frozen=True)
class WrappedCompile:
    """torch.compile applied to a DDP/FSDP wrapper instead of the module inside it."""

    path: str
    span: Span
    wrapper: str

@dataclass(frozen=True)
class ConfigSet:
    flag: str
    value: bool
    path: str
    line: int
    # lines of `path` the setting holds in (a `with config.patch(...)` block, a function a patch
    # decorates); None: from here on, for the whole program
    scope: tuple[int, int] | None = None
    top_level: bool = False  # a statement of the module's own code (not in a function): ordered


class _EntryFinder(cst.CSTVisitor):
    def __init__(self, project: ProjectIndex, knowledge: Knowledge, module: ModuleIndex):
        self.project = project
        self.k = knowledge
        self.module = module
        self.by_node = module.by_tree_node(module.functions.values())
        self.class_by_node = module.by_tree_node(module.classes.values())
        self.stack: list[FunctionInfo | None] = []  # None: a def the symbol table left out
        self.class_stack: list[ClassInfo | None] = []
        self.local_types: list[dict[str, str]] = [{}]
        self.local_values: list[dict[str, cst.BaseExpression]] = [{}]
        self.entries: list[EntryPoint] = []
        self.run_by: dict[tuple[str, int], str | None] = {}  # (function, line) -> the top-level function running it
        self.configs: list[ConfigSet] = []
        self.wrapped: list[WrappedCompile] = []
        self.assigned: dict[int, str] = {}  # id(compile call) -> name it is assigned to
        self.finally_depth = 0  # `finally:` blocks the visitor is in
        self.called_at_once: set[int] = set()  # id(call) of calls called where they are made: `f(a)(x)`
        # `torch.compile(fn)` of a parameter `fn` of the function around it
        self.compiled_parameters: list[CompiledParameter] = []
        self.named_calls: list[tuple[cst.Call, FunctionInfo | None]] = []  # `name(...)` and where
        # `self.check(f, x)` in a method, written as `check(self, f, x)` (arguments at the
        # positions of the method's parameters), the method's name, and where
        self.method_calls: list[tuple[cst.Call, FunctionInfo, str]] = []
        self.super_calls: list[tuple[cst.Call, FunctionInfo, str]] = []  # `super().m(...)`, as `m(self, ...)`
        self.written_as: dict[int, cst.Call] = {}  # id(such a call) -> the call in the tree
        self.loop_items: dict[str, tuple[cst.BaseExpression, ...]] = {}  # `for m in [A(), B()]:` -> items
        self.loop_nodes: dict[str, cst.For] = {}  # loop name -> its loop
        self.branching_loops: set[str] = set()  # loop names whose body has an `if`, `continue` or `break`
        self.call_loop_items: dict[int, dict[str, tuple[cst.BaseExpression, ...]]] = {}  # id(call) -> at the call
        self.call_locals: dict[int, dict[str, cst.Call]] = {}  # id(call) -> locals it passes bound to a call
        self.patch_scopes: dict[int, tuple[int, int]] = {}  # id(decorator / with item call) -> lines it covers
        self._switches: Switches | None = None

    # -- helpers ---------------------------------------------------------------------
    @property
    def mode_switches(self) -> Switches:
        """Every `.eval()` / `.train(...)` of the module, found once (only modules compiling a
        module instance ask)."""
        if self._switches is None:
            self._switches = mode_switches(self.module.parsed.module)
        return self._switches

    @property
    def function(self) -> FunctionInfo | None:
        return self.stack[-1] if self.stack else None

    def qualify(self, expr) -> str | None:
        return self.project.qualify(expr, self.module, self.function)

    def line(self, node) -> int:
        return self.module.parsed.line(node)

    def add(self, fn: FunctionInfo | None, node, fullgraph: bool, how: str,
            cls: ClassInfo | None = None, instance=None) -> None:
        if fn is not None:
            # the top-level function the compile site is in (None: module level), for run_lines
            self.run_by[(fn.qualname, self.line(node))] = self.stack[0].name if self.stack and self.stack[0] else None
            assigned = self.assigned.get(id(node))
            called_as = assigned or (fn.name if how.endswith("decorator") else None) or \
                (called_at_once(self.module.parsed.span(node)) if id(node) in self.called_at_once else None) or \
                (instance.value if isinstance(instance, cst.Name) else None)
            self.entries.append(EntryPoint(fn.qualname, self.module.path, self.line(node), fullgraph, how,
                                           self.module.parsed.span(node), assigned,
                                           cls.qualname if cls is not None else None, called_as,
                                           self.construction(instance),
                                           dotted(instance) if instance is not None else None,
                                           dynamic=_dynamic(node), isolated=_compiler_keyword(node, "isolate_recompiles"),
                                           error_on_graph_break=_compiler_keyword(node, ERROR_ON_GRAPH_BREAK),
                                           training=instance_training(self.mode_switches, instance,
                                                                      self.value_of) if cls else None))

    def construction(self, instance) -> cst.Call | None:
        """The call that built a module instance: `Net(cfg)` itself, or what a name holds."""
        while isinstance(instance, cst.Call) and isinstance(instance.func, cst.Attribute) \
                and instance.func.attr.value in SAME_INSTANCE_METHODS:
            instance = instance.func.value  # `Net(cfg).eval()`
        if isinstance(instance, cst.Name):
            value = self.value_of(instance.value)
            return self.construction(value) if isinstance(value, cst.Call) else None
        if not isinstance(instance, cst.Call):
            return None
        # `cfg = Config(...); Net(cfg)`: arguments named by a local are given their value here,
        # where the scope still tells it
        args = [a.with_changes(value=self.value_of(a.value.value)) if isinstance(a.value, cst.Name)
                and self.value_of(a.value.value) is not None else a for a in instance.args]
        return instance.with_changes(args=args)

    def fullgraph(self, call: cst.Call) -> bool:
        """`fullgraph=True`, or a name holding True: a local or global bound to it, or a
        parameter of an enclosing function whose default is True (a test parametrised on it)."""
        held = next((a.value for a in call.args if a.keyword is not None and a.keyword.value in FULLGRAPH_KEYWORDS),
                    None)
        if not isinstance(held, cst.Name) or held.value in ("True", "False"):
            return keyword_true(call, FULLGRAPH_KEYWORDS)
        bound = self.value_of(held.value)
        if bound is None:
            defaults = [p.default for fn in reversed(self.stack) if fn is not None
                        for p in fn.params if p.name == held.value]
            bound = defaults[0] if defaults else None
        return isinstance(bound, cst.Name) and bound.value == "True"

    def fullgraph_settings(self, call: cst.Call, compiled: cst.Call) -> tuple[bool, ...]:
        """The fullgraph settings a compile call runs with: one, or each one a loop gives the
        name it passes (`for fullgraph in (True, False): torch.compile(fn, fullgraph=fullgraph)`
        compiles the function once per row, when the loop calls what it compiles; kept after
        the loop, only the last row's is called). `compiled`: the call making the compiled
        function (`call` itself, or `torch.compile(**kw)(f)` around it)."""
        held = next((a.value for a in call.args if a.keyword is not None and a.keyword.value in FULLGRAPH_KEYWORDS),
                    None)
        loop_name = held.value if isinstance(held, cst.Name) else ""
        rows = self.loop_items.get(loop_name)
        names = [r.value for r in rows or () if isinstance(r, cst.Name)]
        if not rows or len(names) != len(rows) or not set(names) <= {"True", "False"} \
                or loop_name in self.branching_loops:  # (`if fullgraph: continue` skips some rows)
            passed = self._passed_flags(loop_name) if rows is None else None
            return passed or (self.fullgraph(call),)
        if not self._called_in_loop(compiled, self.loop_nodes[loop_name]):
            return (names[-1] == "True",)
        # in the loop's order: a cache entry a plain compile leaves serves a fullgraph one after it
        return tuple(dict.fromkeys(name == "True" for name in names))

    def call_lines(self, name: str) -> tuple[int, ...]:
        """Lines of the module's calls `name(...)`, and of the calls of a function making one
        (`def run(): f(x)` called as `run()` inside a `with config.patch(...)`); a compiled
        object called where it is made (`torch.compile(g)(x)`) is called on its own line."""
        if name.startswith(CALLED_AT_ONCE):
            return (int(name[len(CALLED_AT_ONCE):].split(":", 1)[0]),)
        def calls(of: str):
            return [(call, fn) for call, fn in self.named_calls if isinstance(call.func, cst.Name) and call.func.value == of]
        direct = calls(name)
        callers = {fn.name for _, fn in direct if fn is not None and fn.name != name}
        return tuple(sorted({self.line(call) for call, _ in direct + [c for n in callers for c in calls(n)]}))

    def run_lines(self, entry: EntryPoint) -> tuple[int, ...]:
        """EntryPoint.run_lines: the module-level lines that run the compile site."""
        run_by = self.run_by.get((entry.function, entry.line))
        if run_by is None:
            return tuple(sorted({entry.line, *entry.call_lines}))
        return tuple(sorted({self.line(call) for call, caller in self.named_calls if caller is None
                             and isinstance(call.func, cst.Name) and call.func.value == run_by}))

    def _passed_flags(self, name: str) -> tuple[bool, ...] | None:
        """The True/False values the calls of the enclosing function pass for its parameter
        `name`, in call order (`def check(fullgraph): ...` run as
        `for fullgraph in (True, False): check(fullgraph)`, a test parametrised by hand): each
        call compiles anew. A value not written down counts as the parameter's default (False
        without one); None when no call tells anything."""
        values = self._flags_passed_to(self.function, name, 0) if self.function is not None else None
        return tuple(dict.fromkeys(values)) if values else None

    def _flags_passed_to(self, fn: FunctionInfo, name: str, depth: int) -> list[bool] | None:
        """The flags `fn`'s calls pass for its parameter `name`, calls looked for where its name
        is bound (the body of the function defining it, else the module); a caller passing its
        own parameter on (`def check_print(fullgraph): run(fn, fullgraph)`) passes what its own
        calls give it."""
        param = next((p for p in fn.params if p.name == name), None)
        if param is None or fn.class_qualname is not None or param.kind not in ("positional", "keyword_only") \
                or depth > MAX_FLAG_HOPS:
            return None
        position = fn.params.index(param) if param.kind == "positional" else None
        values: list[bool] = []
        unknown = False
        for module, loops, call, caller in self._calls_of(fn):
            if caller is not None and not self.project.may_run(module, caller.name.value):
                continue  # a call in a function nothing calls (`def strict_suite(): check(True)`)
            arg = call_argument(call, name, position)
            rows = _loop_rows(loops, arg) or ()
            forwarded = self._forwarded_flags(module, caller, arg, depth) if not rows else None
            if forwarded is not None:
                values += forwarded
                continue
            written = rows or ((arg,) if arg is not None else (param.default,) if param.default is not None else ())
            known = [v.value == "True" for v in written if isinstance(v, cst.Name) and v.value in ("True", "False")]
            unknown |= not written or len(known) != len(written)
            values += known
        return values + [False] * unknown if values else None

    def _calls_of(self, fn: FunctionInfo) -> list[tuple[ModuleIndex, tuple, cst.Call, cst.FunctionDef | None]]:
        """Calls of `fn` where its name is bound: the body of the function defining it, else its
        module and the modules importing it by name (`from testing import check`)."""
        parent = self.project.function(fn.parent_function) if fn.parent_function else None
        home = self.project.modules.get(fn.module, self.module)
        if parent is not None:
            return [(home, *found) for found in _calls_by_name(parent.node, fn.name)]
        calls = [(home, *found) for found in _calls_by_name(home.parsed.module, fn.name)]
        for other in self.project.mentioning(fn.name):
            local = next((n for n, q in other.imports.items() if q == fn.qualname), None) if other is not home else None
            calls += [(other, *found) for found in _calls_by_name(other.parsed.module, local)] if local else []
        return calls

    def _forwarded_flags(self, module: ModuleIndex, caller: cst.FunctionDef | None, arg, depth: int) -> list[bool] | None:
        """What the calling function's own calls pass, when the argument is its parameter."""
        info = _caller_taking(module, caller, arg)
        return self._flags_passed_to(info, arg.value, depth + 1) if info is not None else None

    def _called_in_loop(self, compiled: cst.Call, loop: cst.For) -> bool:
        """Is the compiled function called in the loop that makes it: at once, or by the name it
        is assigned to?"""
        if id(compiled) in self.called_at_once:
            return True
        name = self.assigned.get(id(compiled))
        return name is not None and any(isinstance(c.func, cst.Name) and c.func.value == name
                                        for c in find_all(loop.body, (cst.Call,), skip=NESTED_SCOPES))

    def value_of(self, name: str) -> cst.BaseExpression | None:
        for scope in reversed(self.local_values):
            if name in scope:
                return scope[name]
        if self._shadowing_parameter(name):
            return None  # a parameter (`def fit(model)`), not the module's `model = Net()`
        return self.module.values.get(name)

    def is_compile(self, qual: str | None) -> bool:
        return qual in self.k.compile_functions

    def is_optimize(self, qual: str | None) -> bool:
        return qual in self.k.legacy_optimize or qual in self.k.strict_optimize

    def optimize_fullgraph(self, qual: str | None, call: cst.Call) -> bool:
        return qual in self.k.strict_optimize or self.fullgraph(call)

    def instance_class(self, expr) -> ClassInfo | None:
        if isinstance(expr, cst.Call):
            return self.project.created_class(expr, self.module, self.function)
        if isinstance(expr, cst.Name):
            if expr.value == "self" and self.class_stack and self.class_stack[-1] is not None:
                return self.class_stack[-1]
            for scope in reversed(self.local_types):
                if expr.value in scope:
                    return self.project.klass(scope[expr.value])
            if self._shadowing_parameter(expr.value):
                return None  # `def fit(model)`: not the module's `model = Net()`
            value = self.module.values.get(expr.value)
            if isinstance(value, cst.Call):
                return self.project.created_class(value, self.module)
        return None

    def _shadowing_parameter(self, name: str) -> bool:
        """A parameter of the function being visited (or one around it) named `name`."""
        return any(fn is not None and any(p.name == name for p in fn.params) for fn in self.stack)

    def forward_of(self, cls: ClassInfo | None) -> FunctionInfo | None:
        return self.project.method(cls, "forward") if cls is not None else None

    # -- scopes ----------------------------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        # a class redefined under the same name (if/else, try/except) keeps only one ClassInfo
        cls = self.class_by_node.get(node)
        self.class_stack.append(cls)
        for dec in node.decorators:
            self._class_decorator(cls, dec.decorator)

    def _class_decorator(self, cls: ClassInfo | None, expr) -> None:
        """`@torch.compile` on a class: Dynamo wraps the class's `__call__` (an nn.Module's
        `_call_impl`), so every instance's forward is compiled when called."""
        expr = self._named_compiler(expr)
        call = expr if isinstance(expr, cst.Call) else None
        if cls is None or not self.is_compile(self.qualify(call.func if call is not None else expr)) \
                or (call is not None and call.args and call.args[0].keyword is None):
            return
        fn = self.forward_of(cls) or self.project.method(cls, "__call__")
        self.add(fn, expr, self.fullgraph(call) if call is not None else False, "torch.compile on the class", cls=cls)

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self.class_stack.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        fn = self.by_node.get(node)
        span = self.module.parsed.span(node)
        first = min([span.line] + [self.line(dec) for dec in node.decorators])
        for dec in node.decorators:  # a patch decorating the compiled function itself holds too
            self.patch_scopes[id(dec.decorator)] = (first, span.end_line)
            self._decorator(fn, dec.decorator)
        self.stack.append(fn)
        self.local_types.append({})
        self.local_values.append({})

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.stack.pop()
        self.local_types.pop()
        self.local_values.pop()

    def _named_compiler(self, expr):
        """`deco` of `deco = torch.compile(backend=...)`: the call it names; of
        `deco = functools.partial(torch.compile, backend=...)`, that call spelled out; of
        `deco = torch.compile`, torch.compile (else `expr`)."""
        bound = self.value_of(expr.value) if isinstance(expr, cst.Name) else None
        if isinstance(bound, cst.Call) and self.qualify(bound.func) == "functools.partial" and bound.args \
                and self.qualify(bound.args[0].value) in self.k.compile_functions:
            return bound.with_changes(func=bound.args[0].value, args=bound.args[1:])
        if isinstance(bound, (cst.Name, cst.Attribute)) and self.is_compile(self.qualify(bound)):
            return bound
        return bound if isinstance(bound, cst.Call) else expr

    def _decorator(self, fn: FunctionInfo | None, expr) -> None:
        expr = self._named_compiler(expr)  # `@deco`
        if self.is_compile(self.qualify(expr)):
            self.add(fn, expr, False, "decorator")
        elif isinstance(expr, cst.Call):
            qual = self.qualify(expr.func)
            if self.is_compile(qual) and (not expr.args or expr.args[0].keyword is not None):
                for fullgraph in self.fullgraph_settings(expr, expr):
                    self.add(fn, expr, fullgraph, "decorator")
            elif self.is_optimize(qual):
                self.add(fn, expr, self.optimize_fullgraph(qual, expr), "torch._dynamo.optimize decorator")

    # -- statements ------------------------------------------------------------------
    def visit_With(self, node: cst.With) -> None:
        span = self.module.parsed.span(node)
        for item in node.items:
            self.patch_scopes[id(item.item)] = (span.line, span.end_line)

    def visit_For(self, node: cst.For) -> None:
        items = loop_items(node, lambda name: self.local_values[-1].get(name) or self.module.values.get(name))
        self.loop_items.update(items)
        self.loop_nodes.update(dict.fromkeys(items, node))
        if find_all(node.body, (cst.If, cst.Continue, cst.Break), skip=NESTED_SCOPES):
            self.branching_loops.update(items)

    def leave_For(self, node: cst.For) -> None:
        for name in [node.target.value] if isinstance(node.target, cst.Name) else _loop_names(node.target):
            if name is not None:
                self.loop_items.pop(name, None)
                self.branching_loops.discard(name)

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) \
                and isinstance(node.value, cst.Call):
            self.assigned[id(node.value)] = node.targets[0].target.value

    def leave_Assign(self, node: cst.Assign) -> None:
        # (bound once the value is evaluated: `fn = torch.compile(fn)` compiles the old `fn`)
        for target in node.targets:
            for t, value in unpacked(target.target, node.value):
                if isinstance(t, cst.Name):
                    self.local_values[-1][t.value] = value
                if isinstance(t, cst.Name) and isinstance(value, cst.Call):
                    cls = self.project.created_class(value, self.module, self.function)
                    if cls is not None:
                        self.local_types[-1][t.value] = cls.qualname
                self._config_assign(t, value, node)

    def _config_assign(self, target, value, node) -> None:
        if not isinstance(target, cst.Attribute):
            return
        qual = self.qualify(target.value)
        if qual in self.k.config_prefixes and target.attr.value == REORDERABLE_CONFIG:
            self._reorderable_set(value, node)  # `config.reorderable_logging_functions = {print}`
            return
        if not isinstance(value, cst.Name) or self._restoring():
            return
        if qual in self.k.config_prefixes and target.attr.value in self.k.config_flags \
                and value.value in ("True", "False"):
            self.configs.append(ConfigSet(target.attr.value, value.value == "True",
                                          self.module.path, self.line(node), top_level=not self.stack))

    def visit_Finally(self, node: cst.Finally) -> None:
        self.finally_depth += 1

    def leave_Finally(self, node: cst.Finally) -> None:
        self.finally_depth -= 1

    def _restoring(self) -> bool:
        """A setting in a function's `finally:` block or a test's `tearDown` puts back what the
        program changed for the code that ran before it (`config.flag = True; try: run()
        finally: config.flag = False`): it is not the setting that code ran under. (At module
        level the settings are ordered against the code they run before: ConfigSet.top_level.)"""
        fn = self.function
        return fn is not None and (self.finally_depth > 0 or fn.name in TEARDOWN_METHODS)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Call):  # `torch.compile(Net(), ...)(x)`: the call site of an entry
            self.called_at_once.add(id(func))
        if isinstance(func, cst.Name):
            self.named_calls.append((node, self.function))
            self._note_call_site(node)
        elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                and func.value.value in ("self", "cls") and self.function is not None:
            as_function = self._with_receiver(node, func.value)
            self.method_calls.append((as_function, self.function, func.attr.value))
            self._note_call_site(as_function)
        elif isinstance(func, cst.Attribute) and is_super(func.value) and self.function is not None:
            as_function = self._with_receiver(node, cst.Name("self"))  # `super().__init__(fn)`
            self.super_calls.append((as_function, self.function, func.attr.value))
            self._note_call_site(as_function)
        self._reorderable(node)
        self._config_patch(node)
        qual = self.qualify(func)
        # `ctx = torch._dynamo.optimize("eager"); opt = ctx(f)`: the compiler a name holds
        if isinstance(func, cst.Name) and qual is None:
            func = self._named_compiler(func)
            qual = qual if isinstance(func, cst.Call) else self.qualify(func)  # `make = torch.compile`
        if self.is_compile(qual) and node.args and node.args[0].keyword is None:
            self._wrapped(node.args[0].value, node)
            self._compiled_with_settings(node.args[0].value, node, node)
        elif isinstance(func, cst.Call) and self.is_optimize(self.qualify(func.func)) and node.args:
            self._optimized(node.args[0].value, func, node)
        elif qual in self.k.explain_functions and node.args and node.args[0].keyword is None:
            self._compiled_value(node.args[0].value, node, False, "torch._dynamo.explain")
        elif qual in self.k.strict_export and node.args and node.args[0].keyword is None:
            self._compiled_value(node.args[0].value, node, True, EXPORT_HOW)
        elif isinstance(func, cst.Call) and self.is_compile(self.qualify(func.func)) and node.args \
                and all(a.keyword is not None for a in func.args):  # torch.compile(backend=...)(f)
            self._compiled_with_settings(node.args[0].value, func, node)
        elif isinstance(func, cst.Attribute) and func.attr.value == MODULE_COMPILE_METHOD:
            cls = self.instance_class(func.value)
            if cls is not None:
                self.add(self.forward_of(cls), node, self.fullgraph(node), "module.compile()", cls, func.value)

    def _note_call_site(self, call: cst.Call) -> None:
        self._note_passed_locals(call)
        if self.loop_items:  # `for fn in (f, g): run(fn, x)`: the values the loop passes
            self.call_loop_items[id(call)] = dict(self.loop_items)

    def _wrapped(self, value, node: cst.Call) -> None:
        if isinstance(value, cst.Name):
            for scope in reversed(self.local_values):
                if value.value in scope:
                    value = scope[value.value]
                    break
            else:
                value = self.module.values.get(value.value, value)
        if isinstance(value, cst.Call):
            qual = self.qualify(value.func)
            if qual is not None and qual in self.k.distributed_wrappers:
                self.wrapped.append(WrappedCompile(self.module.path, self.module.parsed.span(node), qual))

    def _config_patch(self, node: cst.Call) -> None:
        """`@torch._dynamo.config.patch(capture_scalar_outputs=True)` / `with ...patch(...)`,
        and unittest's `patch.object(torch._dynamo.config, "capture_scalar_outputs", True)`:
        the flag is on while Dynamo traces what runs under it."""
        qual = self.qualify(node.func)
        if qual in self.k.mock_patch_object:
            settings = self._mock_patched(node)
        elif qual in self.k.config_patch:
            settings = _patched_settings(node)
        else:
            return
        for name, value in settings:
            if name == REORDERABLE_CONFIG:
                self._reorderable_set(value, node)  # `patch(reorderable_logging_functions={print})`
            if name in self.k.config_flags and isinstance(value, cst.Name) and value.value in ("True", "False"):
                self.configs.append(ConfigSet(name, value.value == "True", self.module.path, self.line(node),
                                              self.patch_scopes.get(id(node))))

    def _mock_patched(self, node: cst.Call) -> list[tuple[str, cst.BaseExpression]]:
        """(flag, value) of `patch.object(<a Dynamo config module>, "flag", value)`."""
        positional = [a.value for a in node.args if a.keyword is None]
        if len(positional) != 3 or self.qualify(positional[0]) not in self.k.config_prefixes \
                or not isinstance(positional[1], cst.SimpleString):
            return []
        name = positional[1].evaluated_value
        return [(name, positional[2])] if isinstance(name, str) else []

    def _reorderable_set(self, value: cst.BaseExpression, node: cst.CSTNode) -> None:
        """The functions a set (or list, tuple) display names become reorderable."""
        if not isinstance(value, (cst.Set, cst.List, cst.Tuple)):
            return
        for element in value.elements:
            target = self.qualify(element.value)
            if target:
                self.configs.append(ConfigSet(f"{REORDERABLE}{target}", True, self.module.path, self.line(node)))

    def _reorderable(self, node: cst.Call) -> None:
        """`torch._dynamo.config.reorderable_logging_functions.add(print)`: print stops breaking."""
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "add" and node.args
                and isinstance(func.value, cst.Attribute)
                and func.value.attr.value == REORDERABLE_CONFIG
                and self.qualify(func.value.value) in self.k.config_prefixes):
            return
        target = self.qualify(node.args[0].value)
        if target:
            self.configs.append(ConfigSet(f"{REORDERABLE}{target}", True, self.module.path, self.line(node)))

    def _compiled_with_settings(self, value, call: cst.Call, node: cst.Call) -> None:
        """torch.compile(value) with the keywords of `call`: a parameter compiled with a
        parameter as its fullgraph (`def run(fn, strict): torch.compile(fn, fullgraph=strict)`)
        is compiled with what each call of the helper passes for both."""
        flag = self._flag_parameter(call)
        if flag is not None and self._parameter(value) and self.function is not None:
            self.compiled_parameters.append(CompiledParameter(self.function, value.value, node, False, "torch.compile",
                                                              flag))
            return
        for fullgraph in self.fullgraph_settings(call, node):
            self._compiled_value(value, node, fullgraph, "torch.compile")

    def _optimized(self, value, optimize: cst.Call, node: cst.Call) -> None:
        """`torch._dynamo.optimize(...)(value)`, its `nopython=` possibly a parameter of the
        helper, as a torch.compile's `fullgraph=`."""
        flag = self._flag_parameter(optimize)
        if flag is not None and self._parameter(value) and self.function is not None:
            self.compiled_parameters.append(CompiledParameter(self.function, value.value, node, False,
                                                              "torch._dynamo.optimize", flag))
            return
        self._compiled_value(value, node, self.optimize_fullgraph(self.qualify(optimize.func), optimize),
                             "torch._dynamo.optimize")

    def _flag_parameter(self, call: cst.Call) -> str | None:
        held = next((a.value for a in call.args if a.keyword is not None and a.keyword.value in FULLGRAPH_KEYWORDS),
                    None)
        if not isinstance(held, cst.Name) or held.value in self.loop_items or self.value_of(held.value) is not None:
            return None
        return held.value if self._parameter(held) else None

    def _compiled_value(self, value, node, fullgraph: bool, how: str) -> None:
        if isinstance(value, cst.Name) and value.value in self.loop_items:
            for item in self.loop_items[value.value]:  # `for model in [A(), B()]: torch.compile(model)`
                self._compiled_value(item, node, fullgraph, how)
            return
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in self.loop_items:
            for item in self.loop_items[value.func.value]:  # `for cls in (A, B): torch.compile(cls())`
                self._compiled_value(value.with_changes(func=item), node, fullgraph, how)
            return
        if isinstance(value, cst.Lambda):
            self._compiled_lambda(value, node, fullgraph, how)
            return
        bound, host = self._bound_lambda(value)
        if bound is not None:  # `lam = lambda x: ...` then `torch.compile(lam)`
            self._compiled_lambda(bound, node, fullgraph, how, host)
            return
        sequential = self._sequential_of_ours(value)
        if sequential is not None:
            self._compiled_sequential(sequential, node, fullgraph, how)
            return
        cls = self.instance_class(value)
        if cls is not None:
            self.add(self.forward_of(cls), node, fullgraph, f"{how}(module)", cls, value)
            return
        if self._parameter(value) and self.function is not None:
            self.compiled_parameters.append(CompiledParameter(self.function, value.value, node, fullgraph, how))
            return
        outer = self._enclosing_parameter(value)
        if outer is not None:  # `def make_test(fn): def test(self): torch.compile(fn)(x)`
            self.compiled_parameters.append(CompiledParameter(outer, value.value, node, fullgraph, how))
            return
        target = self.project.lookup(self.qualify(value)) or self._made_by_factory(value)
        if isinstance(target, FunctionInfo):
            self.add(self._definition_seen(target, node, self.function), node, fullgraph, f"{how}(fn)")
        elif isinstance(target, ClassInfo):  # torch.compile(SomeModule) compiles the class call
            self.add(self.forward_of(target), node, fullgraph, f"{how}(module)", target)
        elif isinstance(value, cst.Attribute):  # `torch.compile(m.forward)`, `torch.compile(n.method)`
            cls = self.instance_class(value.value)
            name = value.attr.value
            method = self.project.method(cls, name) if cls is not None else None
            if method is not None and not is_property(self.project, method):  # (compiling a getter compiles what it returns)
                self.add(method, node, fullgraph, f"{how}(forward)" if name == "forward" else f"{how}(method)",
                         cls, value.value)  # (the instance: its attributes are the method's `self`)

    def _definition_seen(self, fn: FunctionInfo, node, scope: FunctionInfo | None) -> FunctionInfo:
        """A name `def`ined twice in the body `node` is in: the definition its line sees."""
        if fn.class_qualname is not None or fn.parent_function != (scope.qualname if scope else None):
            return fn
        return self.project.definition_at(fn, self.line(node))

    def _made_by_factory(self, value) -> FunctionInfo | None:
        """`torch.compile(make_step())`, or `fn = make_step()` then `torch.compile(fn)`: the
        closure the factory returns."""
        if isinstance(value, cst.Name):
            value = self.value_of(value.value)
        return self.project.created_function(value, self.module, self.function) if value is not None else None

    def _enclosing_parameter(self, value) -> FunctionInfo | None:
        """The enclosing function whose parameter a free name of this function is."""
        fn = self.function
        if not isinstance(value, cst.Name) or fn is None:
            return None
        while fn is not None:
            if any(p.name == value.value for p in fn.params):
                return fn if fn is not self.function and any(
                    p.name == value.value and p.kind in ("positional", "keyword_only") for p in fn.params) else None
            if value.value in binding_counts(fn.node.body) or value.value in fn.local_functions:
                return None
            fn = self.project.function(fn.parent_function) if fn.parent_function else None
        return None

    def _parameter(self, value) -> TypeGuard[cst.Name]:
        fn = self.function
        return isinstance(value, cst.Name) and fn is not None and any(
            p.name == value.value and p.kind in ("positional", "keyword_only") for p in fn.params)

    def add_passed_functions(self) -> None:
        """`def run(fn, x): torch.compile(fn)(x)` called as `run(f1, x)`, `run(local, x)`,
        `run(Model(), x)`, or in `for fn in (f1, f2): run(fn, x)`: each function (or module's
        forward) the module passes for the parameter is compiled (a test's helper)."""
        for compiled in self.compiled_parameters:
            self._passed_in_module(compiled)

    def _passed_in_module(self, compiled: CompiledParameter, depth: int = 0) -> None:
        """What this module's calls of the helper pass for its parameter (a method's callers
        include a subclass's `super().__init__(fn)`), and what other modules pass."""
        if depth > MAX_FLAG_HOPS:
            return
        fn, param = compiled.function, compiled.param
        names = [p.name for p in fn.params if p.kind == "positional"]
        calls = self._calls_in_module(fn)
        for call, caller in calls:
            arg = call_argument(call, param, names.index(param) if param in names else None)
            settings, forwarded = self._settings_at(compiled, call, caller, 0, self.module)
            if arg is None:  # left at its default (`run(x)` of `def run(x, fn=chatty)`)
                self._default_compiled(compiled, settings)
                continue
            if caller is not None and isinstance(arg, cst.Name) \
                    and arg.value not in self.call_loop_items.get(id(call), {}) \
                    and arg.value in {p.name for p in caller.params}:  # `def check(fn): run(fn, x)`: its callers'
                self._passed_on(compiled, caller, arg.value, settings, forwarded, depth=depth + 1)
                continue
            for value, row_settings in self._rows_with_settings(compiled, call, arg, settings):
                for fullgraph in row_settings:
                    self._passed_value(value, call, caller, compiled.node, fullgraph, compiled.how)
        if not calls:  # a test method unittest runs: its defaults
            self._default_compiled(compiled, None)
        self._passed_from_importers(compiled)

    def _calls_in_module(self, fn: FunctionInfo) -> list[tuple[cst.Call, FunctionInfo | None]]:
        """The module's calls of `fn`: by its name, or, a method, through `self` in its class
        or a subclass (`self.check(f, x)`: a test helper compiling what it is given)."""
        calls = [(call, caller) for call, caller in self.named_calls
                 if self.project.qualify(call.func, self.module, caller) == fn.qualname]
        if fn.class_qualname is not None:
            calls += [(call, caller) for call, caller, name in self.method_calls
                      if name == fn.name and self._in_class_of(caller, fn.class_qualname)]
            calls += [(call, caller) for call, caller, name in self.super_calls  # a subclass's `super().m(...)`
                      if name == fn.name and caller.class_qualname != fn.class_qualname
                      and self._in_class_of(caller, fn.class_qualname)]
        if fn.name == "__init__":
            calls += self._constructions_of(fn)
        return calls

    def _constructions_of(self, init: FunctionInfo) -> list[tuple[cst.Call, FunctionInfo | None]]:
        """`Runner(f)` of `class Runner: def __init__(self, fn): self.c = torch.compile(fn)`
        (or of a subclass that inherits that `__init__`): a call of `__init__` whose first
        argument is the instance made."""
        calls = []
        for call, caller in self.named_calls:
            cls = self.project.lookup(self.project.qualify(call.func, self.module, caller))
            if not isinstance(cls, ClassInfo) or self.project.method(cls, "__init__") is not init:
                continue
            as_init = self._with_receiver(call, cst.Name("self"))
            self.call_locals[id(as_init)] = self.call_locals.get(id(call), {})
            self.call_loop_items[id(as_init)] = self.call_loop_items.get(id(call), {})
            calls.append((as_init, caller))
        return calls

    def _with_receiver(self, call: cst.Call, receiver: cst.BaseExpression) -> cst.Call:
        """The call as a call of the method's function: `self.m(a)` / `super().m(a)` /
        `Cls(a)` (of `__init__`) as `m(self, a)`, remembered as written."""
        as_function = call.with_changes(args=(cst.Arg(receiver), *call.args))
        self.written_as[id(as_function)] = call
        return as_function

    def _in_class_of(self, caller: FunctionInfo, class_qualname: str) -> bool:
        cls = self.project.klass(caller.class_qualname)
        return cls is not None and any(c.qualname == class_qualname for c in self.project.mro(cls))

    def _default_compiled(self, compiled: CompiledParameter, settings: tuple[bool, ...] | None) -> None:
        """`def test_x(self, fn=f_info): torch.compile(fn)` called without `fn`, or never
        called in the module (a test method unittest runs): the default is what is compiled,
        with the call's fullgraph settings (`settings`; None: the flag parameter's default)."""
        fn = compiled.function
        param = next((p for p in fn.params if p.name == compiled.param), None)
        if param is None or param.default is None:
            return
        if settings is None:
            flag = next((p for p in fn.params if p.name == compiled.flag), None)
            settings = (compiled.fullgraph if flag is None else
                        isinstance(flag.default, cst.Name) and flag.default.value == "True",)
        scope = self.project.function(fn.parent_function) if fn.parent_function else None
        for fullgraph in settings:
            self._passed_value(param.default, compiled.node, scope, compiled.node, fullgraph, compiled.how)

    def _rows_with_settings(self, compiled: CompiledParameter, call: cst.Call, arg,
                            settings: tuple[bool, ...]) -> list[tuple[cst.BaseExpression, tuple[bool, ...]]]:
        """The values the call passes for the function, each with its fullgraph settings: a
        loop's rows pair them (`for fn, strict in ((a, True), (b, False)): run(fn, x, strict)`)."""
        values = self._loop_values(call, arg)
        flag = self._flag_argument(compiled, call)
        rows = self._loop_values(call, flag) if flag is not None else None
        if rows is None or rows == (flag,) or len(rows) != len(values):
            return [(value, settings) for value in values]
        return [(value, (self._true_flag(row),)) for value, row in zip(values, rows)]

    def _true_flag(self, row: cst.BaseExpression) -> bool:
        """`True`, or a module constant bound to it once (`STRICT = True`)."""
        if isinstance(row, cst.Name) and row.value not in ("True", "False"):
            row = self._constant_named(row.value, self.module) or row
        return isinstance(row, cst.Name) and row.value == "True"

    def _flag_argument(self, compiled: CompiledParameter, call: cst.Call) -> cst.BaseExpression | None:
        """What a call of the helper passes for its fullgraph parameter (else the default)."""
        param = next((p for p in compiled.function.params if p.name == compiled.flag), None)
        if param is None:
            return None
        position = compiled.function.params.index(param) if param.kind == "positional" else None
        arg = call_argument(call, param.name, position)
        return arg if arg is not None else param.default

    def _passed_from_importers(self, compiled: CompiledParameter, depth: int = 0) -> None:
        """The helper called from other modules (`from testing import check; check(step, x)`):
        the module-level functions and classes they pass for the parameter, or what their own
        callers pass, when they pass on a parameter of theirs (`def check(fn): run(fn, x)`)."""
        fn, param = compiled.function, compiled.param
        if fn.parent_function is not None or fn.class_qualname is not None or depth > MAX_FLAG_HOPS:
            return
        names = [p.name for p in fn.params if p.kind == "positional"]
        for other, loops, call, caller in self._calls_of(fn):
            if other is self.module and not depth:
                continue  # (the module's own calls: add_passed_functions)
            if caller is not None and not self.project.may_run(other, caller.name.value):
                continue  # a call in a function nothing calls
            arg = call_argument(call, param, names.index(param) if param in names else None)
            settings, forwarded = self._settings_at(compiled, call, _caller_info(other, caller), depth, other)
            passing = _caller_taking(other, caller, arg) if not loops else None
            if passing is not None:
                self._passed_on(compiled, passing, arg.value, settings, forwarded, depth + 1)  # type: ignore[union-attr]
                continue
            for value in _loop_rows(loops, arg) or ((arg,) if arg is not None else ()):
                made = isinstance(value, cst.Call)
                named = value.func if isinstance(value, cst.Call) else value
                target = self.project.lookup(self.project.qualify(named, other))
                for fullgraph in settings:
                    if isinstance(target, FunctionInfo) and not made:
                        self.add(target, compiled.node, fullgraph, f"{compiled.how}(fn)")
                    elif isinstance(target, ClassInfo):
                        self.add(self.forward_of(target), compiled.node, fullgraph, f"{compiled.how}(module)", target)

    def _passed_on(self, compiled: CompiledParameter, caller: FunctionInfo, param: str,
                   settings: tuple[bool, ...], forwarded: str | None, depth: int) -> None:
        """A helper passing on its own parameter `param`: what its callers pass for it, with the
        fullgraph setting this call gives (or the caller's parameter it passes on for it). A
        method's callers are in its module (`Scaled(f)` of a subclass passing `fn` on through
        `super().__init__(fn)`); a function's may be anywhere."""
        follow = self._passed_in_module if caller.class_qualname is not None else self._passed_from_importers
        if forwarded is not None:
            follow(replace(compiled, function=caller, param=param, flag=forwarded), depth)
            return
        for fullgraph in settings:
            follow(replace(compiled, function=caller, param=param, fullgraph=fullgraph, flag=None), depth)

    def _constant_named(self, name: str, module: ModuleIndex) -> cst.BaseExpression | None:
        value = module.values.get(name) if name not in module.reassigned else None
        return value if isinstance(value, cst.Name) and value.value in ("True", "False") else None

    def _settings_at(self, compiled: CompiledParameter, call: cst.Call, caller: FunctionInfo | None,
                     depth: int, module: ModuleIndex) -> tuple[tuple[bool, ...], str | None]:
        """The fullgraph settings a call of the helper compiles with: its own, when not given by
        a parameter; else what the call passes for that parameter (True/False written, else
        its default), and the calling function's parameter it passes on, if it does."""
        if compiled.flag is None:
            return (compiled.fullgraph,), None
        arg = self._flag_argument(compiled, call)
        taken = {p.name for p in caller.params} if caller is not None else set()  # what it may pass on
        if isinstance(arg, cst.Name) and arg.value not in taken:
            arg = self._constant_named(arg.value, module) or arg  # `STRICT = True` at module level
        if isinstance(arg, cst.Name) and arg.value in ("True", "False"):
            return (arg.value == "True",), None
        if caller is None or not isinstance(arg, cst.Name) or arg.value not in taken:
            return (False,), None
        passed = self._flags_passed_to(caller, arg.value, depth + 1)
        return tuple(dict.fromkeys(passed)) if passed else (False,), arg.value

    def _loop_values(self, call: cst.Call, arg) -> tuple:
        """The values an argument stands for: a loop name's items, or their items by a
        constant key (`for case in CASES: run(case["fn"])` over dict displays), else the
        argument itself."""
        items = self.call_loop_items.get(id(call), {})
        if isinstance(arg, cst.Name) and arg.value in items:
            return items[arg.value]
        key = string_key(arg) if isinstance(arg, cst.Subscript) else None
        if key is not None and isinstance(arg.value, cst.Name) and arg.value.value in items:
            found = [_keyed(row, key) for row in items[arg.value.value]]
            if all(v is not None for v in found):
                return tuple(found)
        return (arg,)

    def _note_passed_locals(self, call: cst.Call) -> None:
        """`net = Net(); train(net)` in a function: what the locals a call passes hold there."""
        if self.function is None:
            return
        held = {a.value.value: self.value_of(a.value.value) for a in call.args if isinstance(a.value, cst.Name)}
        bound = {name: value for name, value in held.items() if isinstance(value, cst.Call)}
        if bound:
            self.call_locals[id(call)] = bound

    def _passed_value(self, arg, call: cst.Call, caller, node, fullgraph: bool, how: str) -> None:
        if isinstance(arg, cst.Name) and arg.value in self.call_locals.get(id(call), {}):
            arg = self.call_locals[id(call)][arg.value]  # `net = Net(); train(net)`: the instance made there
        made = isinstance(arg, cst.Call)  # `run(Model(), x)`: an instance made for the call
        if isinstance(arg, cst.Call):
            arg = arg.func
        target = self.project.lookup(self.project.qualify(arg, self.module, caller)) if arg is not None else None
        if isinstance(target, FunctionInfo) and not made:
            self.add(self._definition_seen(target, self.written_as.get(id(call), call), caller), node, fullgraph,
                     f"{how}(fn)")
        elif isinstance(target, ClassInfo):
            self.add(self.forward_of(target), node, fullgraph, f"{how}(module)", target)

    def _bound_lambda(self, value) -> tuple[cst.Lambda | None, FunctionInfo | None]:
        """The lambda a name is bound to, and the function it is written in (the module's body
        for a global)."""
        if not isinstance(value, cst.Name):
            return None, None
        hosts = [module_body(self.module.parsed, self.module.name), *self.stack]
        for scope, host in zip(reversed(self.local_values), reversed(hosts)):
            if value.value in scope:
                bound = scope[value.value]
                return (bound, host) if isinstance(bound, cst.Lambda) and host is not None else (None, None)
        return None, None

    def _compiled_lambda(self, lam: cst.Lambda, node, fullgraph: bool, how: str,
                         host: FunctionInfo | None = None) -> None:
        """`torch.compile(lambda x: m(x))` in a function: the lambda's code is the compiled
        frame (Dynamo names it `<lambda>`), its free names those of the function around it
        (`host`, where a lambda bound to a name is written; by default where it is compiled)."""
        self._expression_entry(lam, node, fullgraph, f"{how}(lambda)", lambda_entry_name, host)

    def _sequential_of_ours(self, value) -> cst.Call | None:
        """`nn.Sequential(Block(), Block())` (or a name bound to it) holding a project module:
        torch's `Sequential.forward` is the compiled frame, calling each in turn."""
        made = self.value_of(value.value) if isinstance(value, cst.Name) else value
        if not isinstance(made, cst.Call) or self.qualify(made.func) not in self.k.sequential_containers:
            return None
        items = [n for a in made.args for n in find_all(a.value, (cst.Call, cst.Name))]
        made_items = [self.value_of(n.value) if isinstance(n, cst.Name) else n for n in items]
        return made if any(isinstance(n, cst.Call) and self.project.created_class(n, self.module, self.function)
                           for n in made_items) else None

    def _compiled_sequential(self, made: cst.Call, node, fullgraph: bool, how: str) -> None:
        self._expression_entry(made, node, fullgraph, f"{how}({SEQUENTIAL})", sequential_entry_name, construction=made)

    def _expression_entry(self, expr: cst.CSTNode, node, fullgraph: bool, how: str, named: Callable,
                          host: FunctionInfo | None = None, construction: cst.Call | None = None) -> None:
        """An entry compiling an expression (a lambda, a Sequential), known by where it is."""
        host = host or self.function or module_body(self.module.parsed, self.module.name)
        span = self.module.parsed.span(expr)
        assigned = self.assigned.get(id(node))
        called_as = assigned or (called_at_once(self.module.parsed.span(node)) if id(node) in self.called_at_once
                                 else None)
        self.entries.append(EntryPoint(named(host.qualname, span.line, span.column), self.module.path,
                                       self.line(node), fullgraph, how, self.module.parsed.span(node),
                                       assigned, called_as=called_as, construction=construction,
                                       lambda_host=host.qualname, lambda_at=(span.line, span.column)))


SEQUENTIAL = "Sequential"  # an entry's `how` ends with "(Sequential)": torch.compile(nn.Sequential(...))


def sequential_entry_name(host: str, line: int, column: int) -> str:
    """The qualname a compiled nn.Sequential is known by: where it is built."""
    return f"{host}.<Sequential@{line}:{column}>"


def lambda_entry_name(host: str, line: int, column: int) -> str:
    """The qualname a compiled lambda is known by: where it is, inside the function holding it."""
    return f"{host}.<lambda>@{line}:{column}"


def entry_function(project: ProjectIndex, entry: EntryPoint) -> FunctionInfo | None:
    """The project function an entry's code lives in: the compiled function itself, or the
    function a compiled lambda is written in."""
    if entry.lambda_host is not None and entry.lambda_host.endswith("." + MODULE_BODY):
        module = project.modules.get(entry.lambda_host[:-len(MODULE_BODY) - 1])
        return module_body(module.parsed, module.name) if module is not None else None
    return project.function(entry.lambda_host or entry.function)


CALLED_AT_ONCE = "@"  # `called_as` of a compiled object called where it is made (no name)


def called_at_once(span: Span) -> str:
    """The `called_as` of a compile call called at once: where it is, start and end (a name
    never has '@'; `torch.compile(backend=b)` and `torch.compile(backend=b)(f)` start together)."""
    return f"{CALLED_AT_ONCE}{span.line}:{span.column}-{span.end_line}:{span.end_column}"


def _calls_by_name(root: cst.CSTNode, name: str) -> list[tuple[tuple[cst.For, ...], cst.Call, cst.FunctionDef | None]]:
    """Calls `name(...)` under `root`, each with the `for` loops around it (outermost first)
    and the innermost function definition holding it (None: at the top of `root`)."""
    found: list[tuple[tuple[cst.For, ...], cst.Call, cst.FunctionDef | None]] = []

    class Calls(cst.CSTVisitor):
        def __init__(self):
            self.loops: list[cst.For] = []
            self.defs: list[cst.FunctionDef] = []

        def visit_For(self, node: cst.For) -> None:
            self.loops.append(node)

        def leave_For(self, node: cst.For) -> None:
            self.loops.pop()

        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            self.defs.append(node)

        def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
            self.defs.pop()

        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, cst.Name) and node.func.value == name:
                found.append((tuple(self.loops), node, self.defs[-1] if self.defs and self.defs[-1] is not root else None))

    root.visit(Calls())
    return found


def _caller_taking(module: ModuleIndex, caller: cst.FunctionDef | None, arg) -> FunctionInfo | None:
    """The calling function, when the argument it passes is a parameter of its own."""
    info = _caller_info(module, caller) if isinstance(arg, cst.Name) else None
    return info if info is not None and arg.value in {p.name for p in info.params} else None


def _caller_info(module: ModuleIndex, caller: cst.FunctionDef | None) -> FunctionInfo | None:
    """The function a call is written in, by its definition."""
    if caller is None:
        return None
    # (by name, then by shape: the tree walked may be a definition parsed on its own)
    named = [f for f in module.functions.values() if f.name == caller.name.value]
    return named[0] if len(named) == 1 else next((f for f in named if f.node.deep_equals(caller)), None)


def _loop_rows(loops: tuple[cst.For, ...], arg) -> tuple | None:
    """The items a name passed as `arg` takes in the innermost enclosing `for` over a display
    that binds it (`for flag in (True, False): check(flag)`); None when none does."""
    if not isinstance(arg, cst.Name):
        return None
    return next((items[arg.value] for items in map(loop_items, reversed(loops)) if arg.value in items), None)


def call_argument(call: cst.Call, name: str, position: int | None) -> cst.BaseExpression | None:
    """The argument a call passes for a parameter (by keyword, or at its position)."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    positional = [a for a in call.args if a.keyword is None]
    if position is None or any(a.star for a in positional[:position + 1]) or position >= len(positional):
        return None
    return positional[position].value


def loop_items(node: cst.For, value_of=None) -> dict[str, tuple[cst.BaseExpression, ...]]:
    """The values each loop name takes, row by row: `for m in [A(), B()]:`, and
    `for fn, args in ((f, (x,)), (g, (y,))):` (each name takes its position in every row), and
    over a dict display's `.items()` / `.keys()` / `.values()` or its keys; empty unless the
    loop runs over such a display, written there or bound to the name it iterates
    (`value_of(name)`: the display a plain name was bound to, if known)."""
    rows = _display_rows(node.iter, value_of or (lambda name: None))
    if not rows:
        return {}
    bound = [b for b in (_row_bindings(node.target, row) for row in rows) if b is not None]
    if len(bound) != len(rows):
        return {}
    return {name: tuple(b[name] for b in bound) for name in bound[0]}


def _keyed(row: cst.BaseExpression, key) -> cst.BaseExpression | None:
    """The value a dict display holds under a constant string key."""
    if not isinstance(row, cst.Dict):
        return None
    return next((el.value for el in row.elements if isinstance(el, cst.DictElement)
                 and isinstance(el.key, cst.SimpleString) and el.key.evaluated_value == key), None)


def _row_bindings(target: cst.BaseExpression, row: cst.BaseExpression) -> dict | None:
    """What each name of a loop target takes from one row (`for name, (fn, strict) in ...`
    unpacks nested tuples); None when the row's shape does not fit the target."""
    if isinstance(target, cst.Name):
        return {target.value: row}
    if not isinstance(target, (cst.Tuple, cst.List)):
        return {}  # `for self.x in ...`: binds no name
    if not isinstance(row, (cst.Tuple, cst.List)) or len(row.elements) != len(target.elements) \
            or any(isinstance(el, cst.StarredElement) for el in (*row.elements, *target.elements)):
        return None
    found: dict = {}
    for part, item in zip(target.elements, row.elements):
        inner = _row_bindings(part.value, item.value)
        if inner is None:
            return None
        found.update(inner)
    return found


def _display_rows(iterated: cst.BaseExpression, value_of) -> list | None:
    """The rows a `for` over a display meets (a dict's items as (key, value) tuples; `zip`
    of displays as tuples of their items, `enumerate` as (index, item))."""
    paired = _paired_rows(iterated, value_of)
    if paired is not None:
        return paired
    method = None
    if isinstance(iterated, cst.Call) and isinstance(iterated.func, cst.Attribute) and not iterated.args:
        method, iterated = iterated.func.attr.value, iterated.func.value
    if isinstance(iterated, cst.Name):
        iterated = value_of(iterated.value) or iterated
    if isinstance(iterated, cst.Dict) and method in (None, "keys", "values", "items"):
        pairs = [el for el in iterated.elements if isinstance(el, cst.DictElement)]
        if len(pairs) != len(iterated.elements):
            return None  # `**other` in the display
        if method == "items":
            return [cst.Tuple([cst.Element(p.key), cst.Element(p.value)]) for p in pairs]
        return [p.value if method == "values" else p.key for p in pairs]
    if method is None and isinstance(iterated, cst.ListComp) and iterated.for_in.inner_for_in is None \
            and not iterated.for_in.ifs:
        return [iterated.elt]  # `[(torch.tensor(v), 0, n) for v in range(n)]`: one row stands for all
    if method is not None or not isinstance(iterated, (cst.List, cst.Tuple)) \
            or any(isinstance(el, cst.StarredElement) for el in iterated.elements):
        return None
    return [el.value for el in iterated.elements]


def _paired_rows(iterated: cst.BaseExpression, value_of) -> list | None:
    """`zip(fns, flags)` / `enumerate(fns)` over displays (each row a tuple display)."""
    if not isinstance(iterated, cst.Call) or not isinstance(iterated.func, cst.Name) \
            or iterated.func.value not in ("zip", "enumerate") or not iterated.args \
            or any(a.star or a.keyword is not None or isinstance(a.value, cst.ListComp) for a in iterated.args):
        return None
    columns = [_display_rows(a.value, value_of) for a in iterated.args]
    if any(c is None for c in columns):
        return None
    if iterated.func.value == "enumerate":
        if len(columns) != 1:
            return None
        columns = [[cst.Integer(str(i)) for i in range(len(columns[0]))], columns[0]]  # type: ignore[arg-type]
    return [cst.Tuple([cst.Element(item) for item in row]) for row in zip(*columns)]


def _loop_names(target) -> list[str | None]:
    """`for fn, args in ...`: the plain name at each position of a tuple target (None where
    the target is not a name); empty for any other target."""
    if not isinstance(target, (cst.Tuple, cst.List)):
        return []
    return [el.value.value if isinstance(el, cst.Element) and isinstance(el.value, cst.Name) else None
            for el in target.elements]


def _dynamic(node) -> bool:
    """`dynamic=True` on the compile call (`torch.compile(fn, dynamic=True)`), or on the
    compiler a call applies (`torch.compile(dynamic=True)(fn)`, a decorator)."""
    return _compiler_keyword(node, "dynamic")


ERROR_ON_GRAPH_BREAK = "error_on_graph_break"  # torch._dynamo.optimize's keyword
TEARDOWN_METHODS = frozenset({"tearDown", "tearDownClass", "doCleanups"})  # unittest's


def _compiler_keyword(node, name: str) -> bool:
    """`name=True` on the compile call or on the compiler a call applies."""
    while isinstance(node, cst.Call):
        if keyword_true(node, (name,)):
            return True
        node = node.func
    return False


@dataclass(frozen=True)
class EntryFacts:
    entries: tuple[EntryPoint, ...] = ()
    configs: tuple[ConfigSet, ...] = ()
    wrapped: tuple[WrappedCompile, ...] = ()


# `x.compile(` / `@torch.compile` / `optimize(`: the text of every compile entry point.
COMPILE_SYNTAX = re.compile(r"(?P<at>@\s*)?(?<![\w.])(?P<chain>(?:[A-Za-z_]\w*\s*\.\s*)*)"
                            r"(?P<name>compile|optimize|optimize_assert|explain|export)\b(?P<call>\s*\()?")


COMPILE_WORD = re.compile(r"(?:compile|optimize|optimize_assert|explain|export)\b")
SPACES = re.compile(r"\s*")


# torch's compiler held as a value, to be called under another name
COMPILER_VALUE = re.compile(r"(?:=\s*|partial\(\s*)torch\.(?:_dynamo\.)?(?:compile|optimize)\b(?!\s*\()")


def _compile_mentions(text: str) -> list[re.Match]:
    """COMPILE_SYNTAX's matches, found from the words `compile`/`optimize`/`explain`: scanning the whole
    text with COMPILE_SYNTAX tries a dotted chain at every identifier (seconds on a library)."""
    found: dict[int, re.Match] = {}
    for word in COMPILE_WORD.finditer(text):
        end = SPACES.match(text, word.end()).end() + 1  # type: ignore[union-attr]  # \s* always matches
        back = 256
        while True:
            start = max(0, word.start() - back)
            match = next((m for m in COMPILE_SYNTAX.finditer(text, start, end)
                          if m.end("name") == word.end()), None)
            if match is None or match.start() > start or start == 0:
                break
            back *= 4  # the chain may begin before the window: look further back
        if match is not None:
            found.setdefault(match.start(), match)
    return [found[k] for k in sorted(found)]


def might_hold_entries(project: ProjectIndex, knowledge: Knowledge, module: ModuleIndex) -> bool:
    """A cheap text test before walking a module for entry points and config switches: a
    `compile`/`optimize` call or decorator not on a non-torch import (`re.compile(...)`), a
    Dynamo config flag assignment, or `reorderable_logging_functions`. Walking is the costly
    part of a library scan; most modules mention `compile` only through `re`."""
    text = module.parsed.text
    if "reorderable_logging_functions" in text or ".patch(" in text or "patch.object(" in text:
        return True
    compilers = knowledge.compilers | knowledge.explain_functions | knowledge.strict_export
    if any(target in compilers for target in module.imports.values()):
        return True  # `from torch import compile as tc`: the calls need not say "compile"
    if any(re.search(rf"\b{flag}\s*=(?!=)", text) for flag in knowledge.config_flags if flag in text):
        return True
    if COMPILER_VALUE.search(text):
        return True  # `make = torch.compile`, `partial(torch.compile, ...)`: called by another name
    for m in _compile_mentions(text):
        if not (m.group("at") or m.group("call")):
            continue
        head = m.group("chain").split(".")[0].strip()
        if not head:  # a bare `compile(...)`: the builtin unless imported
            if m.group("name") in module.imports or m.group("name") in module.top_level:
                return True
            continue
        target = module.imports.get(head)
        if target is None or target.split(".")[0] == "torch" or project.lookup(target) is not None \
                or target in project.modules:
            return True
    return False


def find_entries(project: ProjectIndex, knowledge: Knowledge, module: ModuleIndex):
    if not might_hold_entries(project, knowledge, module):
        return EntryFacts()
    return walk_entries(project, knowledge, module)


def walk_entries(project: ProjectIndex, knowledge: Knowledge, module: ModuleIndex) -> EntryFacts:
    """The full (costly) search for entry points, without the text pre-filter."""
    finder = _EntryFinder(project, knowledge, module)
    walk(module.parsed.module, finder)
    finder.add_passed_functions()
    finder.entries = [replace(e, call_lines=finder.call_lines(e.called_as)) if e.called_as else e
                      for e in finder.entries]
    finder.entries = [replace(e, run_lines=finder.run_lines(e)) for e in finder.entries]
    compiled = [fn for fn in map(project.function, (e.function for e in finder.entries)) if fn is not None]
    flag_set = any(c.flag == COMPILED_AUTOGRAD_FLAG and c.value for c in finder.configs)
    finder.entries += compiled_autograd_entries(
        project, knowledge, module, compiled, flag_set, lambda fn, node, fullgraph: EntryPoint(
            fn.qualname, module.path, module.parsed.line(node), fullgraph, COMPILED_AUTOGRAD,
            module.parsed.span(node)))
    return EntryFacts(tuple(finder.entries), tuple(finder.configs), tuple(finder.wrapped))


class EntrySpecError(ValueError):
    pass


def named_entries(project: ProjectIndex, specs: tuple[str, ...]) -> tuple[EntryPoint, ...]:
    """`pkg.module:Class.forward` / `pkg.module:function` (config `entry-points`, `--entry`)."""
    out = []
    for spec in specs:
        module, sep, path = spec.partition(":")
        if not sep or not module or not path:
            raise EntrySpecError(f"entry point '{spec}' must look like 'pkg.module:Class.method'")
        fn = project.function(f"{module}.{path}")
        if fn is None:
            raise EntrySpecError(f"entry point '{spec}' does not name a function of the project")
        out.append(EntryPoint(fn.qualname, fn.path, fn.def_line, False, NAMED_ENTRY))
    return tuple(out)


def module_forward_entries(project: ProjectIndex, knowledge: Knowledge, paths: set[str]) -> tuple[EntryPoint, ...]:
    """`--assume-compiled modules`: the forward of every nn.Module subclass defined in `paths`."""
    out = []
    for module in list(project.modules.values()):
        if module.path in paths:
            out += [entry for cls in module.classes.values() if (entry := _assumed_forward(project, knowledge, cls))]
    return tuple(out)


def inherited_forward_entries(project: ProjectIndex, knowledge: Knowledge, paths: set[str],
                              importers: Callable[[set[str]], list[str]]) -> tuple[EntryPoint, ...]:
    """`--assume-compiled modules` on a few files: the forward of the nn.Module subclasses
    defined elsewhere that keep a forward defined in `paths` (a whole-tree scan compiles each,
    and what breaks lies in these files). `importers(words)`: the modules whose imports name
    one of `words` (class names, module names); subclasses of subclasses are followed."""
    own = [m for m in list(project.modules.values()) if m.path in paths]
    # the classes that give a subclass a forward defined here (a base class of every model
    # that has none, such as `PreTrainedModel`, would make this a scan of the whole tree)
    giving = {cls.name for m in own for cls in m.classes.values()
              if (entry := _assumed_forward(project, knowledge, cls)) is not None and entry.path in paths}
    words = (giving | {m.name.rsplit(".", 1)[-1] for m in own}) if giving else set()
    seen = {m.name for m in own}
    out: list[EntryPoint] = []
    while words:
        found: set[str] = set()
        for name in importers(words):
            module = project.modules.get(name) if name not in seen else None
            seen.add(name)
            for cls in module.classes.values() if module is not None else ():
                entry = _assumed_forward(project, knowledge, cls)
                if entry is not None and entry.path in paths:
                    out.append(entry)
                    found.add(cls.name)  # its own subclasses keep the same forward
        words = found
    return tuple(out)


def _assumed_forward(project: ProjectIndex, knowledge: Knowledge, cls) -> EntryPoint | None:
    if not is_nn_module(project, knowledge, cls):
        return None
    fn = project.method(cls, "forward")
    if fn is None:
        return None
    return EntryPoint(fn.qualname, fn.path, fn.def_line, False, ASSUMED_ENTRY, self_class=cls.qualname)


def _patched_settings(node: cst.Call) -> list[tuple[str, cst.BaseExpression]]:
    """(flag, value expression) pairs a config patch sets, in any of its forms:
    `patch(flag=True)`, `patch("flag", True)`, `patch({"flag": True})`."""
    positional = [a.value for a in node.args if a.keyword is None]
    found: list[tuple[object, cst.BaseExpression]] = [(a.keyword.value, a.value) for a in node.args
                                                      if a.keyword is not None]
    if len(positional) == 2 and isinstance(positional[0], cst.SimpleString):
        found.append((positional[0].evaluated_value, positional[1]))
    elif len(positional) == 1 and isinstance(positional[0], cst.Dict):
        found += [(el.key.evaluated_value, el.value) for el in positional[0].elements
                  if isinstance(el, cst.DictElement) and isinstance(el.key, cst.SimpleString)]
    return [(name, value) for name, value in found if isinstance(name, str)]
