"""Code Dynamo runs without a call in the source: properties, `__getattr__`/`__setattr__`
overrides, and forward hooks on sub-modules.

- Reading `obj.name` where `name` is a property of a project class inlines its getter; a
  class defining `__getattr__` inlines it for names the class does not define. A break
  reached this way cannot be resumed (the frame compiles up to a checkpoint or is skipped).
- Assigning `self.name = v` on a project class defining `__setattr__` inlines it (resumable).
- `sub.register_forward_pre_hook(h)` / `register_forward_hook(h)` anywhere in the project:
  calling a module held under that name (`self.sub(x)`, `model(x)`) runs the hooks around
  its forward (pre-hooks before, hooks after), from a loop in torch's `Module._call_impl`;
  `register_full_backward_hook` / `register_full_backward_pre_hook` ones make that call break.
"""
from __future__ import annotations

import re

import libcst as cst

from ..index.project import ProjectIndex, enclosing_function, is_property
from ..index.skeleton import HOOK_MARKER
from ..index.symbols import ClassInfo, FunctionInfo, property_accessor
from ..parse import definitions_within
from ..walk import NESTED_SCOPES, find_all, walk
from .callables import Callables
from .frame_values import assigned_names
from .types import FnValue

HOOK_METHODS = {"register_forward_pre_hook": "pre", "register_forward_hook": "post",
                "register_full_backward_hook": "backward", "register_full_backward_pre_hook": "backward"}
# registry key prefixes (then the model's class) of hooks registered in a loop over a model's
# sub-modules: `modules()` reaches the model itself and its sub-modules, `children()` the
# sub-modules alone (both taken one level deep)
EVERY_MODULE, EVERY_CHILD = "*modules:", "*children:"
UNKNOWN_HOOK = FnValue("<a hook>")
SUBMODULE_LOOPS = {"modules": EVERY_MODULE, "named_modules": EVERY_MODULE,
                   "children": EVERY_CHILD, "named_children": EVERY_CHILD}


def property_getter(project: ProjectIndex, cls: ClassInfo, name: str) -> FunctionInfo | None:
    fn = project.method(cls, name)
    return fn if fn is not None and is_property(project, fn) else None


def property_setter(project: ProjectIndex, cls: ClassInfo, name: str) -> FunctionInfo | None:
    """The `@name.setter` of the property `name` of `cls` (the first class of its MRO that
    defines `name`): assigning the attribute runs it."""
    for holder in project.mro(cls):
        if name not in holder.methods:
            continue
        module = project.modules[holder.module]
        return next((fn for fn in module.functions.values() if fn.class_qualname == holder.qualname
                     and fn.name == name and property_accessor(fn.decorators) == name), None)
    return None


def getattr_override(project: ProjectIndex, cls: ClassInfo, name: str) -> FunctionInfo | None:
    """The project `__getattr__` Python calls for `name` (only when lookup fails; every object
    has its dunder attributes, `__class__` and `__dict__`)."""
    if name.startswith("__") and name.endswith("__"):
        return None
    if project.class_attribute(cls, name) is not None or project.method(cls, name) is not None:
        return None
    return project.method(cls, "__getattr__")


def setattr_override(project: ProjectIndex, cls: ClassInfo) -> FunctionInfo | None:
    return project.method(cls, "__setattr__")


class HookRegistry:
    """Forward hooks registered anywhere in the project, by the attribute name of the module
    they are registered on (`net.block.register_forward_hook(h)` -> "block")."""

    def __init__(self, project: ProjectIndex, callables: Callables):
        self.project = project
        # registry key -> (kind, hook, the instance a loop over a named model registered it on:
        # "" for any instance of the key's class, the module registering it)
        self.hooks: dict[str, list[tuple[str, FnValue, str, str]]] = {}
        for module in project.mentioning(HOOK_MARKER):
            self._collect(project, callables, module)

    def for_attribute(self, name: str, kind: str, caller: str, owner: str = "", instance: str = "",
                      global_key: str | None = None, model: str = "") -> list[FnValue]:
        """Hooks on the module held under `name`, and those a loop over the sub-modules of a
        model (`for m in model.modules():`) registered on it: a child when the call is
        `self.name(...)` in a method of the model's class `owner`, the model itself when
        `instance` (the class of a module called by name) is that class. A module-level
        instance called by its name (`global_key`, see global_hook_key) has only the hooks
        registered on that very global: scripts of one repository reuse names such as `model`.
        `model`: which instance the loop's hooks must have been registered on (FrameKey.instance
        of the model running `self.name(...)`, or the instance called by name); a loop over
        another instance of the same class does not hook this one. A hook found by the bare
        attribute name counts only where one program can run both the registration and the
        call (`caller`, the calling module): two scripts of a repository both naming a layer
        `lin` do not hook each other's."""
        keys = [global_key or name]
        if owner:
            keys += [EVERY_MODULE + owner, EVERY_CHILD + owner]
        if instance:
            keys.append(EVERY_MODULE + instance)
        return [fn for key in keys for k, fn, on, where in self.hooks.get(key, ())
                if k == kind and (not on or not model or model == "*" or on == model)
                and (key != name or same_program(self.project, where, caller))]

    def _collect(self, project, callables: Callables, module) -> None:
        """The module's hook registrations, reading only the top-level definitions whose lines
        mention a hook method (each parsed alone in a repository scan: the modules that
        register hooks are often large) unless one is at module level."""
        parsed = module.parsed
        tops = _top_definitions_holding(parsed.definition_spans(), _mention_lines(parsed.text))
        if tops is None:
            by_node = module.by_tree_node(module.functions.values())
            walk(parsed.module, _HookCalls(callables, module, self.hooks, by_node))
            return
        by_ordinal = {fn.ordinal: fn for fn in module.functions.values()}
        for ordinal, def_line in tops:
            top = parsed.definition(ordinal, def_line)
            nested = definitions_within(top)  # pre-order, as ordinals are numbered
            by_node = {node: by_ordinal.get(ordinal + k) for k, node in enumerate(nested)}
            walk(top, _HookCalls(callables, module, self.hooks, by_node))


HOOK_MENTION = re.compile("|".join(HOOK_METHODS))


def _mention_lines(text: str) -> list[int]:
    return [text.count("\n", 0, m.start()) + 1 for m in HOOK_MENTION.finditer(text)]


def _defined_name(module, fn: FunctionInfo) -> cst.Name | None:
    """The name node of `fn`'s `def` in `module`'s tree (None in another module)."""
    node = next(iter(module.by_tree_node([fn])), None) if module.name == fn.module else None
    return node.name if isinstance(node, cst.FunctionDef) else None


def _top_definitions_holding(spans: list, lines: list[int]) -> list[tuple[int, int]] | None:
    """(ordinal, line of `def`/`class`) of each outermost definition holding one of `lines`, in
    source order; None when one of them is at module level (or the spans are unknown)."""
    tops: dict[int, int] = {}
    for line in lines:
        holder = next((i for i, (*_, first, last) in enumerate(spans) if first <= line <= last), None)
        if holder is None:
            return None
        tops[holder] = spans[holder][3]
    return sorted(tops.items())


class _HookCalls(cst.CSTVisitor):
    """`<owner>.register_forward_hook(fn)` calls of one module, with the function each is in."""

    def __init__(self, callables: Callables, module, hooks: dict[str, list[tuple[str, FnValue, str, str]]],
                 by_node: dict[cst.CSTNode, FunctionInfo | None]):
        self.callables, self.module, self.hooks = callables, module, hooks
        self.by_node = by_node
        self.stack: list[FunctionInfo | None] = [None]
        # a loop variable over sub-modules -> its registry key, and the instance looped over
        self.loop_modules: dict[str, tuple[str, str]] = {}

    def visit_FunctionDef(self, node) -> None:
        self.stack.append(self.by_node.get(node))

    def leave_FunctionDef(self, node) -> None:
        self.stack.pop()

    def visit_For(self, node: cst.For) -> None:
        """`for m in model.modules():` / `for name, m in model.named_children():`."""
        call, target = node.iter, node.target  # type: cst.BaseExpression, cst.BaseExpression
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                and call.func.attr.value in SUBMODULE_LOOPS):
            return
        method = call.func.attr.value
        if method.startswith("named_") and isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2:
            target = target.elements[1].value
        cls = self._model_class(call.func.value)
        if isinstance(target, cst.Name) and cls is not None:
            looped = f"{self.module.name}:{call.func.value.value}"  # type: ignore[attr-defined]  # (a Name)
            self.loop_modules[target.value] = (SUBMODULE_LOOPS[method] + cls.qualname, looped)

    def _model_class(self, model: cst.BaseExpression) -> ClassInfo | None:
        """The project class of a model named at module level (`model = Net()`, perhaps
        compiled and bound to the same name later: `model = torch.compile(model)`), or bound in
        the function registering the hooks (a test's `main()` building its local model)."""
        if not isinstance(model, cst.Name):
            return None
        made = self.callables.project.classes_bound(self.module, model.value, self.stack[-1])
        return made[0] if len(made) == 1 else None

    def _never_called(self, fn: FunctionInfo | None) -> bool:
        """A module-level function whose name no code of the project reads (only its `def`
        names it; a docstring or comment does not count)."""
        if fn is None or fn.class_qualname is not None or fn.parent_function is not None:
            return False
        project = self.callables.project

        def read_in(module) -> bool:
            own = _defined_name(module, fn)
            return any(node.value == fn.name and node is not own for node in find_all(module.parsed.module, (cst.Name,)))
        return project.derived(f"never-called:{fn.qualname}", lambda: not any(map(read_in, project.mentioning(fn.name))))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in HOOK_METHODS and node.args):
            return
        owner = func.value  # `net.block` / `self.block`, or a module held by a name
        looped = self.loop_modules.get(owner.value) if isinstance(owner, cst.Name) else None
        name = owner.attr.value if isinstance(owner, cst.Attribute) else \
            looped[0] if looped is not None else owner.value if isinstance(owner, cst.Name) else None
        kind = HOOK_METHODS[func.attr.value]
        if self._never_called(self.stack[-1]):
            return  # `def add_probe(model): ...register_forward_hook(...)` nothing calls
        hook = self.callables.value(node.args[0].value, self.module, self.stack[-1], {}, {})
        if hook is None and kind == "backward":
            hook = UNKNOWN_HOOK  # that there is one is enough: the call breaks (a lambda, a bound method)
        if hook is None or name is None:
            return
        where = self.module.name
        self.hooks.setdefault(name, []).append((kind, hook, looped[1] if looped is not None else "", where))
        if looped is None:
            held = global_hook_key(self.callables.project, self.module, self.stack[-1], owner)
            if held is not None:  # a module-level instance: called by its name, only it has the hook
                self.hooks.setdefault(held, []).append((kind, hook, "", where))


def same_program(project: ProjectIndex, first: str, second: str) -> bool:
    """Can one program run code of both modules: one imports the other (directly or through
    others), or a third module imports both (a training script importing its model and a
    helper registering hooks on it)? Importers are looked for among the modules naming the
    first one's last component, so a repository scan reads only those."""
    if first == second:
        return True
    if _reaches(project, first, second) or _reaches(project, second, first):
        return True
    leaf = first.rpartition(".")[2]
    return any(_reaches(project, m.name, first) and _reaches(project, m.name, second)
               for m in project.mentioning(leaf) if m.name not in (first, second))


def _reaches(project: ProjectIndex, start: str, target: str) -> bool:
    """Does `start` import `target`, directly or through other modules? Also when an import
    names it only in part: `import tools.hooks` recorded as the package `tools`, or
    `from tools.hooks import attach` of a folder without `__init__.py` indexed as `hooks`."""
    def compute() -> bool:
        closure = project.import_closure(start)
        dotted = f".{target}."
        return target in closure or any(target.startswith(t + ".") or dotted in f".{t}."
                                        for name in closure for t in _import_targets(project, name))
    return project.derived(f"reaches:{start}:{target}", compute)


def _import_targets(project: ProjectIndex, name: str) -> tuple[str, ...]:
    module = project.modules.get(name)
    return (*module.imports.values(), *module.star_imports) if module is not None else ()


def global_hook_key(project: ProjectIndex, module, function: FunctionInfo | None,
                    expr: cst.BaseExpression) -> str | None:
    """The registry key of the module-level instance `expr` names in `function` of `module`:
    the global itself, the one it is imported from, or `other.lin` of a project module; None
    for a name a function binds."""
    if isinstance(expr, cst.Attribute):
        held = project.qualify(expr.value, module, function)
        other = project.modules.get(held) if held is not None else None
        return f"={held}.{expr.attr.value}" if other is not None and expr.attr.value in other.values else None
    if not isinstance(expr, cst.Name):
        return None
    name = expr.value
    scope = function
    while scope is not None:
        if name in {p.name for p in scope.params} or name in assigned_names(scope.node.body):
            return None
        scope = enclosing_function(scope, module)
    if name in module.imports:
        return "=" + module.imports[name]
    return f"={module.name}.{name}" if name in module.values else None


def disallowed_functions(project: ProjectIndex, knowledge) -> frozenset[str]:
    """`torch._dynamo.disallow_in_graph(torch.sub)` calls at module level or in a function:
    the qualified names of what they disallow. In each scope the first call naming a target
    decides: a program disallows before it compiles and allows again after, or allows, runs
    and disallows after."""
    found: set[str] = set()
    for module in project.mentioning("disallow_in_graph"):
        scopes = [module.parsed.module.body] + [fn.node.body.body for fn in module.functions.values()
                                                if "disallow_in_graph" in _text_of(fn)]
        for scope in scopes:
            first: dict[str, bool] = {}  # target -> disallowed by the first call naming it
            for statement in scope:
                for call in find_all(statement, (cst.Call,), skip=NESTED_SCOPES):
                    qual = project.qualify(call.func, module) if call.args else None
                    target = project.qualify(call.args[0].value, module) if qual else None
                    if target and qual in knowledge.disallow_functions:
                        first.setdefault(target, True)
                    elif target and qual in knowledge.registering_decorators:
                        first.setdefault(target, False)
            found |= {target for target, disallowed in first.items() if disallowed}
    return frozenset(found)


def _text_of(fn: FunctionInfo) -> str:
    """The source lines of a function (a cheap test before parsing it)."""
    spans = fn.parsed.definition_spans()
    return fn.parsed.text[spans[fn.ordinal][0]:spans[fn.ordinal][1]] if fn.ordinal < len(spans) else fn.parsed.text
