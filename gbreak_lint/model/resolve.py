"""What a call in a frame calls: a project function, a sub-module's forward, or nothing we follow."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import libcst as cst

from ..walk import NESTED_SCOPES, find_all

from ..index.names import attribute_name, binding_counts
from ..index.project import ProjectIndex, class_scope, is_nn_module, only_return
from ..index.symbols import ClassInfo, FunctionInfo, ModuleIndex
from ..knowledge import Knowledge
from .attributes import property_getter
from .callables import PARTIAL, Callables
from .constructions import constructed_argument, constructions_of
from .class_body import class_body_values
from .instances import generated_init
from .sequentials import sequential_items, subclass_items
from .types import FnValue
from .values import Const, Obj, literal

# Wrappers a class body stores a function in (`act = staticmethod(gelu)`): calling the attribute calls it
STORED_FUNCTION_WRAPPERS = frozenset({"builtins.staticmethod"})


@dataclass(frozen=True)
class CallTarget:
    function: FunctionInfo
    skip_first_param: bool  # bound method: `self` is not among the call's arguments
    instance: str = ""  # the module instance called (see FrameKey.instance)
    self_class: str = ""  # the runtime class of `self` in the callee
    captured: tuple[tuple[str, FnValue], ...] = ()  # the callee closure's cells holding functions
    bound: int = 0  # leading positional parameters bound already (functools.partial)
    constants: tuple[tuple[str, object], ...] = ()  # the callee closure's cells holding constants
    disabled: str = ""  # a function value made by torch.compiler.disable (see FnValue.disabled)
    transformed: str = ""  # run by a torch.func transform (see FnValue.transformed)
    generated_init: bool = False  # `__post_init__`, called by a dataclass's generated `__init__`
    opaque: str = ""  # made by calling an opaque decorator (see FnValue.opaque)


class CallResolver:
    """Resolves call expressions inside one function, given what the frame knows."""

    def __init__(self, project: ProjectIndex, knowledge: Knowledge, module: ModuleIndex,
                 function: FunctionInfo | None, bindings: dict[str, FnValue], self_class: str = ""):
        self.project = project
        self.k = knowledge
        self.module = module
        self.function = function
        self.bindings = bindings  # parameter / free variable -> the function it holds
        self.callables = Callables(project, knowledge)
        self.local_functions: dict[str, FnValue] = {}  # locals bound to function values
        self.local_types: dict[str, str] = {}  # local name -> project class qualname
        self.local_library_types: dict[str, str] = {}  # local name -> library class it was made by
        self.local_layers: set[str] = set()  # locals bound to a torch module built here (`nn.Linear(...)`)
        self.many: set[str] = set()  # locals bound to each element of a module container
        self.element_of: dict[str, cst.BaseExpression] = {}  # ... of one class: the container
        # loop names over a container of several project classes (`[Attn(), MLP(), Attn()]`):
        # name -> the classes after the first, in order, each with whether it is held twice
        self.mixed: dict[str, tuple[tuple[str, bool], ...]] = {}
        # a lambda's frame: its parameters (other names are the function's it is written in)
        self.lambda_params: frozenset[str] | None = None
        self.arguments: dict[str, object] = {}  # what the call site passed: parameter -> values.Const
        # the class of the instance an attribute holds, from the values the frame was built
        # with (`self.encoder` of a module whose constructor took one side of an `if`)
        self.held_class: Callable[[cst.Attribute], str | None] = lambda expr: None
        # the Python value an expression has in the frame (`self.act_name` from the module's
        # construction), for keys of registries: `ACTIVATIONS[self.act_name](x)`
        self.value_of: Callable[[cst.BaseExpression], Const | None] = lambda expr: None
        # the class defining the function (for super()) and the class `self` really is
        self.defining = project.klass(function.class_qualname) if function and function.class_qualname else None
        runtime = project.klass(self_class) if self_class else None
        # (a decorator's wrapper defined outside any class gets the instance it was called on)
        self.cls = runtime if runtime is not None and (self.defining is None or self.defining in project.mro(runtime)) \
            else self.defining

    def qualify(self, expr: cst.BaseExpression) -> str | None:
        return self.project.qualify(expr, self.module, self.function)

    # -- classes of values -------------------------------------------------------------
    def class_of(self, expr: cst.BaseExpression) -> ClassInfo | None:
        """Project class of an instance expression: `self`, `self.block`, a local `m = Net()`."""
        if isinstance(expr, cst.Name):
            if expr.value == "self" and self.cls is not None:
                return self.cls
            if expr.value == "self" and not self._binds("self"):
                method = self._enclosing_method()
                if method is not None:
                    return method
            if expr.value in self.local_types:
                return self.project.klass(self.local_types[expr.value])
            passed = self.arguments.get(expr.value)
            if isinstance(passed, Const) and isinstance(passed.value, Obj):  # an instance passed in
                return self.project.klass(passed.value.cls)
            enclosing = self.enclosing_value(expr.value)
            if enclosing is not None:  # `m = Net()` in the test whose nested function calls `m(x)`
                scope, bound = enclosing
                return self.project.created_class(bound, self.module, scope)
            value = self.module.values.get(expr.value)
            return self.instantiated_class(value) if value is not None else None
        if isinstance(expr, cst.Subscript):  # self.layers[i], self.blocks["main"]
            registered = _registry_item(expr)
            if registered is not None:  # `self._modules["g"]` is the sub-module `self.g`
                return self.class_of(registered)
            return self._keyed_class(expr) or self.element_class(expr.value)
        if isinstance(expr, cst.Call):  # `Helper().run(x)`
            return self.instantiated_class(expr)
        if isinstance(expr, cst.Attribute):
            held = self.project.klass(self.held_class(expr))
            if held is not None:
                return held
            owner = self.class_of(expr.value)
            if owner is None:
                return None
            found = self.project.class_attribute(owner, expr.attr.value)
            if found is None:
                return None
            holder, value = found
            return self._instantiated_in(value, holder) or self._inferred(value, holder, expr.attr.value) \
                or self._constructed_class(holder, value)
        return None

    def _constructed_class(self, holder: ClassInfo, value: cst.BaseExpression) -> ClassInfo | None:
        """`self.model = model` of an `__init__` parameter: the project class the holder's
        single construction passes (`Trainer(Net())`, `net = Net(); Trainer(net)`)."""
        found = self._constructed(holder, value)
        return self.project.created_class(*found) if found is not None else None

    def library_class_of(self, expr: cst.BaseExpression) -> str | None:
        """The library class (qualified name) an instance was made by: a local, a name the
        enclosing function or the module binds once to `unittest.TestCase()`; None if unknown."""
        if not isinstance(expr, cst.Name):
            return None
        if expr.value in self.local_library_types:
            return self.local_library_types[expr.value]
        if self._binds(expr.value):
            return None  # a parameter, a loop variable, a local bound to something else: not the outer name
        enclosing = self.enclosing_value(expr.value)
        if enclosing is not None:
            return self._library_class_made(enclosing[1], self.module, enclosing[0])
        value = self.module.values.get(expr.value) if expr.value not in self.module.reassigned else None
        return self._library_class_made(value, self.module, None)

    def _enclosing_method(self) -> ClassInfo | None:
        """The class of the method a nested function is written in, whose `self` it reads
        (`def test_x(self): def fn(x): self.assertEqual(...)`)."""
        fn = self.function
        while fn is not None and fn.parent_function:
            fn = self.project.function(fn.parent_function)
            if fn is None or "self" not in self.callables.bound_in(fn):
                continue
            is_method = fn.class_qualname and fn.params and fn.params[0].name == "self"
            return self.project.klass(fn.class_qualname) if is_method else None
        return None

    def _binds(self, name: str) -> bool:
        """Is `name` this function's own (a parameter, or bound somewhere in its body)?"""
        if self.lambda_params is not None and name in self.lambda_params:
            return True
        fn = self.function
        return isinstance(fn, FunctionInfo) and (any(p.name == name for p in fn.params)
                                                 or name in binding_counts(fn.node.body))

    def _library_class_made(self, value: cst.BaseExpression | None, module, scope) -> str | None:
        """`unittest.TestCase()`: the called name, when it is a class outside the project (a
        capitalized last component, as classes are named)."""
        if not isinstance(value, cst.Call):
            return None
        qual = self.project.qualify(value.func, module, scope)
        return qual if qual is not None and self.project.is_library_class(qual) else None

    def enclosing_value(self, name: str, receiver: bool = False) -> tuple[FunctionInfo, cst.BaseExpression] | None:
        """What a free name of this code holds, assigned once by the function around it
        (`receiver`: see Callables.enclosing_value)."""
        if self.lambda_params is not None and name in self.lambda_params:
            return None
        return self.callables.enclosing_value(name, self.module, self.function,
                                              in_lambda=self.lambda_params is not None, receiver=receiver)

    def instantiated_class(self, value: cst.BaseExpression) -> ClassInfo | None:
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in self.bindings:
            return self.project.klass(self.bindings[value.func.value].qualname)  # `Ctx(False)`, Ctx a class passed in
        return self.project.created_class(value, self.module, self.function)

    def _inferred(self, value: cst.BaseExpression, holder: ClassInfo, attr: str) -> ClassInfo | None:
        """An instantiation the names do not resolve: `block(dim)` with `block=Block` a default
        argument of `__init__` (its default is the class), `A() if c else A()`, else astroid
        for a local alias (`cls = A if c else A; self.x = cls()`)."""
        if isinstance(value, cst.IfExp):
            either = [self._instantiated_in(v, holder) or self._inferred(v, holder, attr)
                      for v in (value.body, value.orelse)]
            return either[0] if either[0] is not None and either[0] is either[1] else None
        if not isinstance(value, cst.Call) or not isinstance(value.func, cst.Name) or self.qualify(value.func):
            return None  # not a call of a bare name, or one the names resolve (torch.nn.Linear, ...)
        init = self.project.function(holder.methods.get("__init__"))
        param = next((p for p in init.params if p.name == value.func.value), None) if init else None
        if param is not None:  # what a caller passes is unknown; the default is the best guess
            module = self.project.modules[holder.module]
            default = self.project.qualify(param.default, module) if param.default is not None else None
            return self.project.klass(default)
        if init is None:
            return None
        values = holder.init_locals.get(value.func.value, ())
        module = self.project.modules[init.module]
        direct = [self._class_named(v, module, init) for v in values]
        if direct and direct[0] is not None and all(c is direct[0] for c in direct):
            return direct[0]  # `cls = A if wide else A`, `cls = partial(A, k=1)`
        if not any(self._calls_local_helper(v, module, init) for v in values):
            return None  # astroid is slow: only asked what the names cannot answer (a helper's return)
        return self.project.inferred_attribute_class(holder, attr)

    def _calls_local_helper(self, expr, module, init) -> bool:
        """A call of a function defined in the same module (astroid infers within one module)."""
        for call in _call_nodes(expr):
            fn = self.project.function(self.project.qualify(call.func, module, init))
            if fn is not None and fn.module == module.name:
                return True
        return False

    def _class_named(self, expr, module, init) -> ClassInfo | None:
        """The project class an alias value names: `A`, `pkg.A`, `A if c else A`, `partial(A, ...)`."""
        if isinstance(expr, cst.IfExp):
            a, b = self._class_named(expr.body, module, init), self._class_named(expr.orelse, module, init)
            return a if a is b else None
        if isinstance(expr, cst.Call) and self.project.qualify(expr.func, module, init) == "functools.partial" \
                and expr.args:
            return self._class_named(expr.args[0].value, module, init)
        return self.project.klass(self.project.qualify(expr, module, init))

    def _instantiated_in(self, value: cst.BaseExpression, holder: ClassInfo) -> ClassInfo | None:
        """The class an attribute's value builds, named as the holder's methods see names (a
        class defined in a test function sees that function's other local classes)."""
        module = self.project.modules[holder.module]
        return self.project.created_class(value, module, class_scope(holder.qualname, module))

    def _keyed_class(self, expr: cst.Subscript) -> ClassInfo | None:
        """`self.blocks["main"]` on `nn.ModuleDict({"main": Sub()})` (or a dict literal)."""
        value, module = self._attribute_value(expr.value)
        if isinstance(value, cst.Call) and self.project.qualify(value.func, module) in self.k.module_dicts \
                and value.args:
            value = value.args[0].value
        if not isinstance(value, cst.Dict) or len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, cst.Index):
            return None
        key = literal(expr.slice[0].slice.value)
        for element in value.elements:
            if isinstance(element, cst.DictElement) and key is not None and literal(element.key) == key:
                return self.project.created_class(element.value, module)
        classes = {self.project.created_class(e.value, module) for e in value.elements
                   if isinstance(e, cst.DictElement)}
        return classes.pop() if len(classes) == 1 else None

    def element_class(self, container: cst.BaseExpression) -> ClassInfo | None:
        """The project class held by `nn.ModuleList([...])` / `nn.Sequential(...)` / a list,
        by the values of an `nn.ModuleDict` (`.values()`), or by every project sub-module an
        instance holds (`self.children()`)."""
        owner = _children_of(container)
        if owner is not None:
            return self._child_class(owner)
        if isinstance(container, cst.Call) and isinstance(container.func, cst.Attribute) \
                and container.func.attr.value == "values" and not container.args:
            return self._dict_value_class(container.func.value)
        value, module = self._attribute_value(container)
        if value is None:
            return None
        if isinstance(value, cst.Call) and value.args:
            qual = self.project.qualify(value.func, module)
            if qual in self.k.module_containers:
                elements = [a.value for a in value.args] if len(value.args) > 1 else [value.args[0].value]
                return self._same_class(elements, module)
        if isinstance(value, (cst.List, cst.ListComp, cst.Tuple)):
            return self._same_class([value], module)
        return None

    def _dict_value_class(self, container: cst.BaseExpression) -> ClassInfo | None:
        """The one project class an `nn.ModuleDict({...})` attribute holds as values."""
        value, module = self._attribute_value(container)
        if isinstance(value, cst.Call) and self.project.qualify(value.func, module) in self.k.module_dicts \
                and len(value.args) == 1:
            value = value.args[0].value
        if not isinstance(value, cst.Dict) or module is None:
            return None
        return self._same_class([e.value for e in value.elements if isinstance(e, cst.DictElement)], module)

    def _child_class(self, owner: cst.BaseExpression) -> ClassInfo | None:
        """The one project class among the sub-modules an instance's class sets (torch layers
        left out: a loop over `children()` reaches the project's code through those only)."""
        cls = self.class_of(owner)
        if cls is None:
            return None
        module = self.project.modules[cls.module]
        made = [self.project.created_class(v, module) for c in self.project.mro(cls) for v in c.attributes.values()
                if isinstance(v, cst.Call)]
        classes = {c.qualname for c in made if c is not None and self.is_nn_module(c)}
        return self.project.klass(classes.pop()) if len(classes) == 1 else None

    def sequential_elements(self, func: cst.BaseExpression) -> list[ClassInfo | None] | None:
        """Classes of an `nn.Sequential(A(), nn.ReLU(), B())` attribute's (or name's) items (None:
        not ours)."""
        value, module = self.held_value(func)
        if not isinstance(value, cst.Call) or module is None:
            return None
        factory = self.project.function(self.project.qualify(value.func, module))
        returned = only_return(factory.node) if factory is not None and factory.class_qualname is None else None
        if isinstance(returned, cst.Call):  # `self.head = make_head(dim)` returning `nn.Sequential(...)`
            value, module = returned, self.project.modules[factory.module]  # type: ignore[union-attr]
        if self.project.qualify(value.func, module) in self.k.sequential_containers:
            items = sequential_items(value)
        else:
            held = subclass_items(self.project, self.k.sequential_containers, value, module)
            if held is None:
                return None
            items, module = held
        return [self.project.klass(self.project.qualify(item.func, module)) if isinstance(item, cst.Call) else None
                for item in items]

    def held_value(self, expr: cst.BaseExpression):
        """(the expression, its module) a name or `obj.attr` was bound to: an attribute its
        class sets, a name the enclosing function or the module binds once; (None, None)."""
        if isinstance(expr, cst.Attribute):
            return self._attribute_value(expr)
        if not isinstance(expr, cst.Name) or expr.value in self.module.reassigned:
            return None, None
        enclosing = self.enclosing_value(expr.value)
        if enclosing is not None:
            return enclosing[1], self.module
        value = self.module.values.get(expr.value)
        return (value, self.module) if value is not None else (None, None)

    def _attribute_value(self, expr: cst.BaseExpression):
        if isinstance(expr, cst.Attribute):
            owner = self.class_of(expr.value)
            found = self.project.class_attribute(owner, expr.attr.value) if owner else None
            if found is not None:
                holder, value = found
                passed = self._passed_to_constructor(holder, value) or self._keyed_by_parameter(holder, value)
                return passed or (value, self.project.modules[holder.module])
            held = self.project.qualify(expr.value, self.module, self.function)
            other = self.project.modules.get(held) if held is not None else None
            if other is not None and expr.attr.value not in other.reassigned:  # `audited.lin`
                return other.values.get(expr.attr.value), other
        return None, None

    def _keyed_by_parameter(self, holder: ClassInfo, value: cst.BaseExpression):
        """`self.act = ACTIVATIONS[act]` of an `__init__` parameter: (the registry read with the
        key the class's single construction passes, or the parameter's default, its module)."""
        init = self.project.method(holder, "__init__")
        if not isinstance(value, cst.Subscript) or init is None or len(value.slice) != 1 \
                or not isinstance(value.slice[0].slice, cst.Index) or not isinstance(value.slice[0].slice.value, cst.Name):
            return None
        name = value.slice[0].slice.value.value
        param = next((p for p in init.params if p.name == name), None)
        if param is None:
            return None
        found = constructed_argument(self.project, self.callables, holder, name)
        if found is not None:
            known = literal(found[0])
        else:  # built once without it: the default
            single = len(constructions_of(self.project, holder)) == 1
            known = literal(param.default) if single and param.default is not None else None
        keyed = _with_key(value, known)
        return (keyed, self.project.modules[holder.module]) if keyed is not None else None

    def _passed_to_constructor(self, holder: ClassInfo, value: cst.BaseExpression):
        """`self.sub = sub` of an `__init__` parameter: (what the class's single construction
        passes, its module)."""
        found = self._constructed(holder, value)
        return (found[0], found[1]) if found is not None else None

    def _constructed(self, holder: ClassInfo, value: cst.BaseExpression):
        """(value, module, scope) the single construction of `holder` passes for the `__init__`
        parameter `value` names; None when `value` is not one or it is unknown."""
        init = self.project.method(holder, "__init__")
        if not isinstance(value, cst.Name) or init is None or all(p.name != value.value for p in init.params):
            return None
        return constructed_argument(self.project, self.callables, holder, value.value)

    def element_classes(self, container: cst.BaseExpression) -> list[str] | None:
        """The project module classes an `nn.ModuleList([A(), B(), A()])` attribute (or a list
        display) holds, one per element in order, when they are more than one class."""
        value, module = self._attribute_value(container)
        if isinstance(value, cst.Call) and len(value.args) == 1 \
                and self.project.qualify(value.func, module) in self.k.module_containers:
            value = value.args[0].value
        if not isinstance(value, (cst.List, cst.Tuple)) or module is None:
            return None
        classes = [self.project.klass(self.project.qualify(el.value.func, module))
                   if isinstance(el, cst.Element) and isinstance(el.value, cst.Call) else None for el in value.elements]
        if not classes or any(c is None or not self.is_nn_module(c) for c in classes):
            return None
        names = [c.qualname for c in classes]  # type: ignore[union-attr]
        return names if len(set(names)) > 1 else None

    def other_element_targets(self, func: cst.BaseExpression) -> list[CallTarget]:
        """`layer(x)` of a loop name over a container of several classes: the forwards of the
        classes after the first."""
        if not isinstance(func, cst.Name):
            return []
        found = []
        for qualname, many in self.mixed.get(func.value, ()):
            cls = self.project.klass(qualname)
            target = self._forward(cls, "*" if many else f"{self.instance_name(func)}:{qualname}") if cls else None
            found += [target] if target is not None else []
        return found

    def _same_class(self, exprs, module: ModuleIndex) -> ClassInfo | None:
        classes = set()
        for expr in exprs:
            while isinstance(expr, cst.Call) and len(expr.args) == 1 and \
                    self.project.qualify(expr.func, module) in ("builtins.list", "builtins.tuple"):
                expr = expr.args[0].value  # `nn.ModuleList(list([A()]))`
            if isinstance(expr, (cst.List, cst.Tuple)):
                items = [el.value for el in expr.elements]
            elif isinstance(expr, (cst.ListComp, cst.GeneratorExp)):  # `(A() for _ in range(n))`
                items = [expr.elt]
            else:
                items = [expr]
            for item in items:
                if not isinstance(item, cst.Call):
                    return None
                classes.add(self.project.qualify(item.func, module))
        if len(classes) != 1:
            return None
        return self.project.klass(classes.pop())

    def remember_iteration(self, target: cst.BaseExpression, iterable: cst.BaseExpression) -> None:
        """`for blk in self.blocks:` makes `blk` an instance of the container's element class;
        so do `for i, blk in enumerate(self.blocks)` and `for a, b in zip(self.xs, self.ys)`."""
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) \
                and isinstance(target, cst.Tuple) and iterable.args:
            items = [el.value for el in target.elements]
            sources = [a.value for a in iterable.args]
            if iterable.func.value == "enumerate" and len(items) == 2:
                self.remember_iteration(items[1], sources[0])
            elif iterable.func.value == "zip" and len(items) == len(sources):
                for item, source in zip(items, sources):
                    self.remember_iteration(item, source)
            return
        pairs = _named_items(iterable)
        if pairs is not None and isinstance(target, cst.Tuple) and len(target.elements) == 2:
            self.remember_iteration(target.elements[1].value, pairs)  # `for name, m in self.blocks.items()`
            return
        iterable = _container_iterated(iterable)
        if isinstance(target, cst.Name):
            self.local_layers.discard(target.value)
            function = self._element_function(iterable)
            if function is not None:  # `for fn in HANDLERS:` over a list of functions
                self.local_functions[target.value] = function
            else:
                self.local_functions.pop(target.value, None)
            cls = self.element_class(iterable)
            classes = self.element_classes(iterable) if cls is None else None
            self.mixed.pop(target.value, None)
            self.element_of.pop(target.value, None)
            if cls is not None:
                self.local_types[target.value] = cls.qualname
                self.many.add(target.value)
                self.element_of[target.value] = iterable
            elif classes:  # the first class is called first; the model calls the others after it
                self.local_types[target.value] = classes[0]
                (self.many.add if classes.count(classes[0]) > 1 else self.many.discard)(target.value)
                self.mixed[target.value] = tuple((c, classes.count(c) > 1) for c in dict.fromkeys(classes[1:])
                                                 if c != classes[0])
            else:
                self.local_types.pop(target.value, None)
                self.many.discard(target.value)

    def _element_function(self, iterable: cst.BaseExpression) -> FnValue | None:
        """The function a loop over a list/tuple of functions calls first (the model follows
        one element: the others are usually variants of the same kind)."""
        container, module = iterable, self.module
        if isinstance(iterable, cst.Name) and iterable.value not in self.module.reassigned:
            container = self.module.values.get(iterable.value, iterable)
        elif isinstance(iterable, cst.Attribute):  # `self.callbacks = [log_stats]` set by the class
            container, module = self._attribute_value(iterable)
        if not isinstance(container, (cst.List, cst.Tuple)) or not container.elements:
            return None
        if module is not self.module:  # a display written in the class's module, read at its level
            return self.callables.value(container.elements[0].value, module, None, {}, {})
        return self.function_value(container.elements[0].value)

    def torch_layer(self, expr: cst.BaseExpression) -> bool:
        """A torch module instance: `self.lin` assigned `nn.Linear(...)`, or a module-level
        `LIN = nn.Linear(...)`, a local `m = nn.Linear(...)` (calling it is a traced torch op;
        deep-copying it is not)."""
        if isinstance(expr, cst.Name) and expr.value in self.local_layers:
            return True
        if isinstance(expr, cst.Name) and expr.value != "self" and expr.value not in self.local_types \
                and expr.value not in self.module.reassigned \
                and not (self.function is not None and any(p.name == expr.value for p in self.function.params)):
            enclosing = self.enclosing_value(expr.value)  # `m = nn.Linear(...)` in the test around
            value = enclosing[1] if enclosing is not None else self.module.values.get(expr.value)
            return isinstance(value, cst.Call) and self._torch_module_call(value, self.module)
        if not isinstance(expr, cst.Attribute):
            return False
        value, module = self._attribute_value(expr)
        return isinstance(value, cst.Call) and self._torch_module_call(value, module)

    def _torch_module_call(self, value: cst.Call, module) -> bool:
        qual = self.project.qualify(value.func, module)
        return qual is not None and any(qual.startswith(p + ".") for p in self.k.torch_module_prefixes)

    def is_nn_module(self, cls: ClassInfo) -> bool:
        return is_nn_module(self.project, self.k, cls)

    def is_module_instance(self, expr: cst.BaseExpression) -> bool:
        """An nn.Module instance: of a project module class, or a torch layer."""
        cls = self.class_of(expr)
        return (cls is not None and self.is_nn_module(cls)) or self.torch_layer(expr)

    def function_value(self, expr: cst.BaseExpression) -> FnValue | None:
        return self.callables.value(self._known_key(expr), self.module, self.function, self.bindings,
                                    self.local_functions)

    def _known_key(self, expr: cst.BaseExpression) -> cst.BaseExpression:
        """`REGISTRY[key]` with the key's value known in the frame: that value written in."""
        if not isinstance(expr, cst.Subscript) or len(expr.slice) != 1 \
                or not isinstance(expr.slice[0].slice, cst.Index) or literal(expr.slice[0].slice.value) is not None:
            return expr
        return _with_key(expr, self.value_of(expr.slice[0].slice.value)) or expr

    def remember(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)) \
                and len(target.elements) == len(value.elements) \
                and not any(isinstance(el, (cst.StarredElement,)) for el in (*target.elements, *value.elements)):
            for name, item in zip(target.elements, value.elements):  # `a, b = Box(x), Box(y)`
                self.remember(name.value, item.value)
            return
        if isinstance(target, cst.Name):
            found = self.function_value(value)
            if found is not None:
                self.local_functions[target.value] = found
            else:
                self.local_functions.pop(target.value, None)
            self.many.discard(target.value)
            self.element_of.pop(target.value, None)
            self.arguments.pop(target.value, None)
            cls = self.instantiated_class(value)
            if cls is not None:
                self.local_types[target.value] = cls.qualname
            else:
                self.local_types.pop(target.value, None)
            library = self._library_class_made(value, self.module, self.function)
            if library is not None:
                self.local_library_types[target.value] = library
            else:
                self.local_library_types.pop(target.value, None)
            is_layer = isinstance(value, cst.Call) and self._torch_module_call(value, self.module)
            (self.local_layers.add if is_layer else self.local_layers.discard)(target.value)

    # -- calls -------------------------------------------------------------------------
    def resolve(self, func: cst.BaseExpression) -> CallTarget | None:
        if isinstance(func, cst.Name) and func.value in self.bindings:
            return self._target(self.bindings[func.value])
        if isinstance(func, cst.Call):
            found = self._method_through_call(func)
            if found is not None:
                return found
        if isinstance(func, cst.Attribute):
            found = self._resolve_attribute(func)
            if found is not None:
                return found
        instance = self.class_of(func)
        if instance is not None:  # calling a module instance: its forward
            return self._forward(instance, self.instance_name(func))
        value = self.function_value(func) or self._held_function(func)
        if value is not None:  # a function, a closure, a wrapper, Class.method(obj, ...)
            return self._target(value)
        return self._constructor(func)

    def _method_through_call(self, call: cst.Call) -> CallTarget | None:
        """A method named through a builtin: `getattr(obj, "name")(x)` calls `obj.name(x)`;
        `functools.partial(self.helper, 2)(x)` calls the bound method with its next
        parameters bound."""
        qual = self.qualify(call.func)
        if any(a.star for a in call.args):
            return None
        given = [a.value for a in call.args if a.keyword is None]
        if qual == "builtins.getattr" and len(call.args) == 2 and len(given) == 2:
            name = attribute_name(given[1])  # (`getattr(self, f"layer{i}")`: the family set so)
            if name is not None:
                return self.resolve(cst.Attribute(value=given[0], attr=cst.Name(name)))
        if isinstance(call.func, cst.Attribute) and qual is None:  # `self.make_step()(x)`: what the method returns
            method = self._resolve_attribute(call.func)
            if method is not None:
                made = FnValue(method.function.qualname, method.captured, method.bound + method.skip_first_param)
                positional = [self.function_value(v) for v in given]
                returned = self.callables.apply(made, positional)
                return self._target(returned) if returned is not None else None
        if qual == PARTIAL and given and isinstance(given[0], cst.Attribute):
            method = self._resolve_attribute(given[0])
            if method is not None and method.skip_first_param:
                return replace(method, bound=method.bound + len(given) - 1)
        return None

    def _held_function(self, func: cst.BaseExpression) -> FnValue | None:
        """`self.fn(x)` with `self.fn = helper` / `= MyFn.apply` set by the class: the function
        the attribute holds (read in the module that assigns it)."""
        held, module = self._attribute_value(func)
        if held is None:
            held, module = self._class_body_value(func)
        if isinstance(held, cst.Call) and len(held.args) == 1 and not held.args[0].star \
                and self.project.qualify(held.func, module) in STORED_FUNCTION_WRAPPERS:
            held = held.args[0].value  # `act = staticmethod(gelu)` in the class body
            return self.callables.value(held, module, None, {}, {})
        if held is None or not isinstance(held, (cst.Name, cst.Attribute, cst.Subscript, cst.Call)):
            return None  # (a call: `functools.partial(scale, k=2)`, a factory's closure)
        return self.callables.value(held, module, None, {}, {})

    def _target(self, value: FnValue) -> CallTarget | None:
        cls = self.project.klass(value.qualname)
        if cls is not None:  # a class held by a name: calling it runs its constructor
            return self._init_target(cls)
        fn = self.project.function(value.qualname)
        return CallTarget(fn, False, self_class=self._closure_self_class(fn), captured=value.captured,
                          bound=value.skip, constants=value.constants, disabled=value.disabled,
                          transformed=value.transformed, opaque=value.opaque) if fn else None

    def _closure_self_class(self, fn: FunctionInfo) -> str:
        """A function this method defines reads the method's `self`: the instance's runtime
        class, not the class the method is written in (`Child` overriding `Base.hook`, which
        `Base.forward`'s closure calls)."""
        if self.cls is None or self.function is None or not isinstance(self.function, FunctionInfo):
            return ""
        inner: FunctionInfo | None = fn
        while inner is not None and inner.qualname != self.function.qualname:
            if "self" in self.callables.bound_in(inner):
                return ""  # its own `self` (`def outer(self): ...` inside forward)
            inner = self.project.function(inner.parent_function) if inner.parent_function else None
        return self.cls.qualname if inner is not None else ""

    def _constructor(self, func: cst.BaseExpression) -> CallTarget | None:
        """`Stats(x)` in compiled code: Dynamo inlines a user class's `__init__`, a module's
        too (`BigBirdSelfAttention(config)` built in forward: the layers it creates make
        parameters, GBL335, and `super().__init__()` breaks where the constructor is compiled
        on its own, GBL336)."""
        cls = self.project.klass(self.qualify(func)) or self._classmethod_class(func)
        return self._init_target(cls) if cls is not None else None

    def _classmethod_class(self, func: cst.BaseExpression) -> ClassInfo | None:
        """`cls(...)` in a classmethod: the class it was called on (or its defining class)."""
        fn = self.function
        if not isinstance(func, cst.Name) or fn is None or self.cls is None or not fn.params \
                or fn.params[0].name != func.value:
            return None
        module = self.project.modules[fn.module]
        is_classmethod = any(self.project.qualify(d.decorator, module) == "builtins.classmethod" for d in fn.decorators)
        return self.cls if is_classmethod else None

    def _init_target(self, cls: ClassInfo) -> CallTarget | None:
        """What calling the class runs in its place: `__init__`, or a project `__new__` that
        makes something else (Python then skips `__init__`) or is the only one defined."""
        init = self.project.method(cls, "__init__")
        if init is None and generated_init(self.project, cls):
            post_init = self.project.method(cls, "__post_init__")  # the generated __init__ calls it last
            return CallTarget(post_init, True, self_class=cls.qualname, generated_init=True) if post_init else None
        new = self.project.method(cls, "__new__")
        if new is not None and (init is None or not _new_returns_instance(new)):
            return CallTarget(new, True, self_class=cls.qualname)
        return CallTarget(init, True, self_class=cls.qualname) if init else None

    def _class_body_value(self, expr: cst.BaseExpression):
        """(value, module) of `obj.attr` set in the body of the object's class or a base."""
        if not isinstance(expr, cst.Attribute):
            return None, None
        owner = self.class_of(expr.value)
        for holder in self.project.mro(owner) if owner is not None else ():
            found = dict(class_body_values(holder.node)).get(expr.attr.value)
            if found is not None:
                return found, self.project.modules[holder.module]
        return None, None

    def _class_of_instance(self, expr: cst.BaseExpression) -> ClassInfo | None:
        """The class `type(obj)` / `obj.__class__` names, for a project instance."""
        if isinstance(expr, cst.Call) and self.qualify(expr.func) == "builtins.type" and len(expr.args) == 1:
            return self.class_of(expr.args[0].value)
        if isinstance(expr, cst.Attribute) and expr.attr.value == "__class__":
            return self.class_of(expr.value)
        return None

    def _resolve_attribute(self, func: cst.Attribute) -> CallTarget | None:
        name = func.attr.value
        value = func.value
        if (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)
                and value.func.value == "super" and self.cls is not None and self.defining is not None):
            fn = self.project.method(self.cls, name, after=self.defining.qualname)
            if fn is None and name == "__call__" and self.is_nn_module(self.cls):
                return self._forward(self.cls, "", own_call=False)  # torch's Module.__call__ runs forward
            holder = self.project.klass(fn.class_qualname) if fn is not None else None
            wrapped = self._replaced_target(holder, name, self.cls.qualname) if holder is not None else None
            return wrapped or (CallTarget(fn, True, self_class=self.cls.qualname) if fn else None)
        runtime = self._class_of_instance(value)
        if runtime is not None:  # `type(self).shift(x)`, `self.__class__.shift(x)`: read off the class
            fn = self.project.method(runtime, name)
            return self._target(self.callables.decorated(fn)) if fn is not None else None
        owner = self.class_of(value)
        if owner is not None and name == "apply":  # `MyFn().apply(x)` on an autograd.Function
            applied = self.callables.autograd_apply(owner)
            forward = self.project.function(applied.qualname) if applied is not None else None
            if forward is not None:  # the instance stands where forward's `ctx` is bound
                return CallTarget(forward, True, self_class=owner.qualname)
        if owner is not None:
            fn = self.project.method(owner, name)
            if fn is not None and property_getter(self.project, owner, name) is fn:
                return None  # `self.loss_function(...)`: the getter runs bare, its result is called
            if fn is not None:
                return self._replaced_target(owner, name) or self._method_target(fn, "", owner.qualname)
            sub = self.class_of(func)
            if sub is not None:
                return self._forward(sub, self.instance_name(func))
            alias = self._method_alias(owner, name)
            return self._resolve_attribute(func.with_changes(attr=cst.Name(alias))) if alias else None
        return None

    def _method_alias(self, owner: ClassInfo, name: str) -> str | None:
        """`self.step = self._step_impl` set by the class: the method the attribute holds."""
        found = self.project.class_attribute(owner, name)
        value = found[1] if found is not None else None
        if isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name) and value.value.value == "self" \
                and value.attr.value != name and self.project.method(owner, value.attr.value) is not None:
            return value.attr.value
        return None

    def _forward(self, cls: ClassInfo, instance: str, own_call: bool = True) -> CallTarget | None:
        """What calling an instance runs: a module's `forward` (its own `__call__` first, when
        the class overrides it: Dynamo inlines that), other objects' `__call__`."""
        overridden = own_call and self.project.method(cls, "__call__") is not None
        method = "forward" if self.is_nn_module(cls) and not overridden else "__call__"
        replaced = self._replaced_target(cls, method, instance=instance)
        if replaced is not None:  # a class decorator or a base's hook put its own function there
            return replaced
        fn = self.project.method(cls, method)
        return self._method_target(fn, instance, cls.qualname) if fn else None

    def _replaced_target(self, cls: ClassInfo, method: str, self_class: str = "",
                         instance: str = "") -> CallTarget | None:
        """A method called on an instance (or through super()) when the class holds a function
        put in its place as classes were made (a base's `__init_subclass__`, a class decorator)."""
        replaced = self.callables.replaced_in_class(cls, method)
        wrapper = self.project.function(replaced.qualname) if replaced is not None else None
        if wrapper is None or replaced is None:
            return None
        return CallTarget(wrapper, True, instance, self_class or cls.qualname, replaced.captured)

    def _method_target(self, fn: FunctionInfo, instance: str, self_class: str) -> CallTarget:
        """A method called on an instance: its decorators' wrapper when the source tells it
        (`@capture_outputs def forward(self, ...)`: Dynamo inlines the wrapper, a frame of the
        chain that calls the method with the same `self`)."""
        found = method_wrapper(self.project, self.callables, fn)
        if found is None:  # a staticmethod's call passes no instance: its first argument is its first parameter
            return CallTarget(fn, not _is_staticmethod(fn), instance, self_class)
        wrapper, wrapped = found
        return CallTarget(wrapper, True, instance, self_class, wrapped.captured, wrapped.skip, wrapped.constants)

    def instance_name(self, expr: cst.BaseExpression) -> str:
        """A name for the module instance an expression denotes; "*" for container elements."""
        if isinstance(expr, cst.Subscript) or (isinstance(expr, cst.Name) and expr.value in self.many):
            return "*"
        owner = self.cls.qualname if self.cls else self.module.name
        text = cst.Module([]).code_for_node(expr)
        return f"{owner}:{text}"


# Questions about a class, not about a call site: no function's scope is needed to answer them.
def method_wrapper(project: ProjectIndex, callables: Callables,
                   fn: FunctionInfo) -> tuple[FunctionInfo, FnValue] | None:
    """The function a method's decorators put in its place, when the source tells it and it
    takes `self` first (`@capture_outputs def forward(self, ...)` -> `wrapper(self, *args,
    **kwargs)`, or `wrapper(*args, **kwargs)`), with the closure the decorators built; None
    for an undecorated method."""
    found = decorators_wrapper(project, callables, fn)
    if found is None or not found[0].params or found[0].params[0].kind not in ("positional", "star"):
        return None  # (`wrapper(*args, **kwargs)`: the instance is its `args[0]`)
    return found


def decorators_wrapper(project: ProjectIndex, callables: Callables,
                       fn: FunctionInfo) -> tuple[FunctionInfo, FnValue] | None:
    """The project function a function's decorators put in its place (`@checked def step(x)`
    -> `checked.wrapper`), with the closure they built; None when they put none there."""
    if not fn.decorators:
        return None
    wrapped = project.derived(f"decorated:{fn.qualname}", lambda: callables.decorated(fn))
    wrapper = project.function(wrapped.qualname) if wrapped.qualname != fn.qualname else None
    return (wrapper, wrapped) if wrapper is not None else None


def holds_parameters(project: ProjectIndex, knowledge: Knowledge, cls: ClassInfo) -> bool:
    """Does an instance own parameters (a torch layer, nn.Parameter, or such a sub-module)?"""
    for holder in project.mro(cls):
        module = project.modules[holder.module]
        for value in holder.attributes.values():
            if not isinstance(value, cst.Call):
                continue
            qual = project.qualify(value.func, module) or ""
            if any(qual.startswith(p + ".") for p in knowledge.torch_module_prefixes):
                return True
            sub = project.klass(qual)
            if sub is not None and sub is not cls and is_nn_module(project, knowledge, sub):
                return True
    return False


def _call_nodes(expr: cst.CSTNode) -> list:
    return find_all(expr, (cst.Call,))


def _children_of(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """`obj` of `obj.children()` (nn.Module's loop over its direct sub-modules)."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and not expr.args \
            and expr.func.attr.value == "children":
        return expr.func.value
    return None


def _named_items(iterable: cst.BaseExpression) -> cst.BaseExpression | None:
    """What the second item of each pair stands for: `self.blocks.items()` -> the dict's values
    (`self.blocks.values()`), `self.named_children()` -> `self.children()`."""
    if not (isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) and not iterable.args):
        return None
    method = iterable.func.attr.value
    if method == "items":
        return iterable.with_changes(func=iterable.func.with_changes(attr=cst.Name("values")))
    if method == "named_children":
        return iterable.with_changes(func=iterable.func.with_changes(attr=cst.Name("children")))
    return None


def _registry_item(expr: cst.Subscript) -> cst.Attribute | None:
    """`self._modules["g"]` -> `self.g` (a literal key naming a sub-module)."""
    holder = expr.value
    if not (isinstance(holder, cst.Attribute) and holder.attr.value == "_modules") or len(expr.slice) != 1 \
            or not isinstance(expr.slice[0].slice, cst.Index):
        return None
    key = literal(expr.slice[0].slice.value)
    if key is None or not isinstance(key.value, str) or not key.value.isidentifier():
        return None
    return cst.Attribute(value=holder.value, attr=cst.Name(key.value))


def _container_iterated(iterable: cst.BaseExpression) -> cst.BaseExpression:
    """The container whose elements `for x in ...` steps through: `self.layers[:n]`,
    `reversed(self.layers)` and `list(self.layers)` hold the elements of `self.layers`."""
    while True:
        if isinstance(iterable, cst.Subscript) and all(isinstance(e.slice, cst.Slice) for e in iterable.slice):
            iterable = iterable.value
        elif isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and len(iterable.args) == 1 \
                and iterable.func.value in ("reversed", "list", "tuple") and not iterable.args[0].star:
            iterable = iterable.args[0].value
        else:
            return iterable


def _with_key(subscript: cst.Subscript, known: Const | None) -> cst.Subscript | None:
    """`REGISTRY[key]` with a known str or int key written in as a literal."""
    value = known.value if known is not None else None
    if isinstance(value, str):
        written: cst.BaseExpression = cst.SimpleString(repr(value))
    elif isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        written = cst.Integer(str(value))
    else:
        return None
    return subscript.with_changes(slice=[subscript.slice[0].with_changes(slice=cst.Index(written))])


def _new_returns_instance(new: FunctionInfo) -> bool:
    """Does `__new__` hand back an instance of the class (`super().__new__(cls)`, `object.__new__(cls)`,
    a name bound to one), after which Python calls `__init__`?"""
    for ret in find_all(new.node.body, (cst.Return,), skip=NESTED_SCOPES):
        value = ret.value
        if isinstance(value, cst.Name):
            return True  # `obj = super().__new__(cls); ...; return obj`
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "__new__":
            return True
    return False


def _is_staticmethod(fn: FunctionInfo) -> bool:
    return any(isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod" for d in fn.decorators)
