"""What an instance's attributes are, from the call that built it.

Model code copies configuration into attributes in `__init__` (`self.output_attentions =
config.output_attentions`) and Dynamo specialises on them. Given the construction call
(`Attention(Config(output_attentions=False))`) the constructor's straight-line statements are
evaluated with the arguments bound (their defaults where not passed), following
`super().__init__(...)` into project base classes and building nested project instances
(`self.attn = Attention(config)`, a config object) the same way. What is assigned inside a
branch or loop, or from anything else, stays unknown.
"""
from __future__ import annotations

import re
from functools import cached_property

import libcst as cst

from ..index.names import decorator_callee, is_super
from ..index.project import ProjectIndex, only_return
from ..index.symbols import ClassInfo, FunctionInfo
from ..walk import find_all
from .frame_values import assigned_names, list_may_change
from .string_values import ListValue
from .global_values import global_value
from .class_body import SymbolicNames, class_body_values
from .values import Const, Keywords, Obj, ValueEvaluator, default_value, literal

MAX_DEPTH = 4
# torch.nn's lists of sub-modules (its API, not Dynamo's): what `nn.ModuleList([Block(cfg) for _ in
# range(n)])` holds is built like any attribute; every element, the same way, is its EACH attribute
MODULE_LISTS = frozenset({"torch.nn.ModuleList", "torch.nn.modules.container.ModuleList",
                          "torch.nn.Sequential", "torch.nn.modules.container.Sequential"})
EACH = "*"  # the attribute of a module list's value holding what every element is built with
# ... and, when the elements were built differently (`[Block(Cfg(False)), Block(Cfg(True))]`),
# the one holding each element's own object in order: Dynamo traces each with its own attributes
ITEMS = "*items"
LENGTH = "*len"  # how many elements a comprehension built (`[Block(cfg) for _ in range(n)]`), when known


class Constructor:
    def __init__(self, project: ProjectIndex, dtypes: SymbolicNames):
        self.project = project
        self.dtypes = dtypes

    def build(self, cls: ClassInfo, call: cst.Call | None, caller: "Scope | None", depth: int = 0,
              concrete: ClassInfo | None = None) -> Obj:
        """The instance `call` builds; `concrete`: the class actually instantiated when `cls` is
        a base whose `__init__` runs through `super().__init__()` (`self.__class__` is it)."""
        attrs: dict[str, Const | None] = {}
        if depth <= MAX_DEPTH:
            attrs.update(self._class_defaults(cls))
            init = self.project.method(cls, "__init__")
            if generated_init(self.project, cls):
                self._dataclass_init(cls, call, caller, attrs, depth)
            elif init is not None:
                self._run_init(init, cls, call, caller, attrs, depth, concrete or cls)
        return Obj(cls.qualname, tuple(sorted((k, v) for k, v in attrs.items() if v is not None)))

    def _class_defaults(self, cls: ClassInfo) -> dict[str, Const | None]:
        """`name = <literal>` / `name: T = <literal>` in the class bodies (bases first): what
        `instance.name` reads until something assigns it. A name any method assigns through
        `self` is not fixed by its default (the constructor's own assignments are run)."""
        out: dict[str, Const | None] = {}
        assigned = set()
        for c in reversed(self.project.mro(cls)):
            init = self.project.function(c.methods.get("__init__"))
            if init is not None and _calls_named(init.node, "setattr"):
                return {}  # a constructor setting attributes by name (`setattr(self, k, v)` over kwargs)
            assigned |= set(c.attributes)
            module = self.project.modules[c.module]
            for name, value in class_body_values(c.node):
                out[name] = literal(value) or self._symbol(value, module)
        return {k: (None if k in assigned else v) for k, v in out.items()}

    def _symbol(self, value: cst.BaseExpression, module) -> Const | None:
        """A default naming a dtype or an enum member (`mode: Mode = Mode.FAST`)."""
        qual = self.project.qualify(value, module) if isinstance(value, cst.Attribute) else None
        return self.dtypes.constant(qual)

    def _dataclass_init(self, cls: ClassInfo, call, caller, attrs: dict, depth: int) -> None:
        """Arguments set the fields they name, positional ones in field order (bases first);
        where that order is not plain (ClassVar, InitVar, KW_ONLY, `field(init=False)`) a
        positional argument leaves every field unknown. `__post_init__` runs after, as a
        constructor does."""
        ordered = [name for c in reversed(self.project.mro(cls)) for name in _annotated_fields(c.node)]
        plain = all(_plain_fields(c.node) for c in self.project.mro(cls))
        fields = set(ordered)
        for position, arg in enumerate(call.args if call is not None else ()):
            if arg.star or arg.keyword is None and (not plain or position >= len(ordered)):
                attrs.update(dict.fromkeys(fields))
                break
            name = ordered[position] if arg.keyword is None else arg.keyword.value
            if name in fields:
                attrs[name] = caller.value(arg.value) if caller else literal(arg.value)
        post = self.project.method(cls, "__post_init__")
        if post is not None:
            self._run_init(post, cls, None, caller, attrs, depth)

    def _run_init(self, init: FunctionInfo, cls: ClassInfo, call, caller, attrs: dict, depth: int,
                  concrete: ClassInfo | None = None) -> None:
        scope = Scope(self, init, depth, concrete=concrete)
        scope.bind(call, caller)
        scope.own = attrs  # `self.attention_type = self.config.attention_type`: what is set so far
        self._block(init.node.body, scope, cls, attrs, depth)

    def _block(self, block, scope: "Scope", cls: ClassInfo, attrs: dict, depth: int) -> None:
        for stmt in block.body if isinstance(block, cst.IndentedBlock) else ():
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    self._statement(small, scope, cls, attrs, depth)
                continue
            spread = _attributes_from_mapping(stmt, scope)
            if spread is not None:  # `for k, v in kwargs.items(): setattr(self, k, v)`
                attrs.update({name: spread.value_of(name) for name in spread.names})
                continue
            taken = _branch_taken(stmt, scope)
            if taken is not None:  # `if config.do_stable_layer_norm:` on a known value: one side runs
                self._block(taken, scope, cls, attrs, depth)
                continue
            # a loop, or a branch on what the arguments do not tell: what it assigns is not fixed
            for name in _self_attributes(stmt):
                attrs[name] = None
            for name in assigned_names(stmt):
                scope.locals[name] = None

    def _statement(self, small, scope: "Scope", cls: ClassInfo, attrs: dict, depth: int) -> None:
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            base = self._super_init(small.value, scope, cls)
            if base is not None:
                attrs.update(dict(self.build(base, small.value, scope, depth + 1, concrete=scope.concrete).attrs))
            return
        if not isinstance(small, (cst.Assign, cst.AnnAssign)) or small.value is None:
            return
        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
        value = scope.value(small.value)
        listed = value is not None and isinstance(value.value, ListValue)
        for target in targets:
            if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) \
                    and target.value.value == "self":
                attrs[target.attr.value] = None if listed else value  # (any method may change a list it holds)
            elif isinstance(target, cst.Name):
                held = value if scope.init is None or value is None or \
                    not list_may_change(scope.init.node, target.value, value.value) else None
                scope.locals[target.value] = held

    def _super_init(self, call: cst.Call, scope: "Scope", cls: ClassInfo) -> ClassInfo | None:
        """`super().__init__(...)`: the next project class in the MRO that defines __init__."""
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "__init__" and is_super(func.value)):
            return None
        for base in self.project.mro(cls)[1:]:
            if "__init__" in base.methods:
                return base
        return None


class Scope:
    """Parameters and locals of one constructor run."""

    def __init__(self, ctor: Constructor, init: FunctionInfo | None, depth: int, module=None,
                 concrete: ClassInfo | None = None):
        self.ctor = ctor
        self.init = init
        self.depth = depth
        self.concrete = concrete  # the class being instantiated (`self.__class__`)
        # TopScope passes its module; a constructor's scope has an __init__
        self.module = module if module is not None else ctor.project.modules[init.module]  # type: ignore[union-attr]
        self.locals: dict[str, Const | None] = {}
        self.own: dict[str, Const | None] | None = None  # a constructor's `self` attributes so far
        self.evaluator = ValueEvaluator(self.name_value, self.attribute_value, lambda e: False,
                                        self.qualify, lambda o, n: None, self.call_value, ctor.dtypes)

    def qualify(self, expr):
        return self.ctor.project.qualify(expr, self.module, self.init)

    def value(self, expr) -> Const | None:
        return self.evaluator.value(expr)

    def bind(self, call: cst.Call | None, caller: "Scope | None", receiver: bool = True) -> None:
        """The call's arguments as the parameters' values (`receiver`: the first is `self`)."""
        assert self.init is not None  # only a constructor's (or a factory's) scope binds call arguments
        params = [p for p in self.init.params][int(receiver):]
        positional = [p for p in params if p.kind == "positional"]
        passed: dict[str, Const | None] = {}
        if call is not None:
            given = [a for a in call.args if a.keyword is None]
            if any(a.star for a in call.args):
                return self._unknown(params)
            for param, arg in zip(positional, given):
                passed[param.name] = caller.value(arg.value) if caller else literal(arg.value)
            for arg in call.args:
                if arg.keyword is not None:
                    passed[arg.keyword.value] = caller.value(arg.value) if caller else literal(arg.value)
        for param in params:
            if param.kind == "double_star":  # the keywords no other parameter takes
                named = {p.name for p in params if p.kind in ("positional", "keyword_only")}
                extra = [k for k in passed if k not in named]
                known = tuple((k, v) for k in extra if (v := passed[k]) is not None)
                self.locals[param.name] = Const(Keywords(tuple(extra), (), known))
                continue
            if param.kind == "star":
                continue
            self.locals[param.name] = passed[param.name] if param.name in passed \
                else default_value(param.default, self.evaluator)

    def _unknown(self, params) -> None:
        for param in params:
            self.locals[param.name] = None

    def name_value(self, name: str) -> Const | None:
        if name in self.locals or self.init is None or name in self._own_names:
            return self.locals.get(name)
        return global_value(self.ctor.project, self.ctor.dtypes.dtypes, self.module, name)

    @cached_property
    def _own_names(self) -> frozenset[str]:
        """The constructor's own names (parameters, whatever it binds): never its module's globals."""
        assert self.init is not None
        return frozenset(p.name for p in self.init.params) | assigned_names(self.init.node.body)

    def attribute_value(self, expr: cst.Attribute) -> Const | None:
        if expr.attr.value == "__name__" and self.concrete is not None and _own_class(expr.value):
            return self._class_name(self.concrete)  # `self.__class__.__name__`, `type(self).__name__`
        if self.own is not None and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            return self.own.get(expr.attr.value)
        owner = self.value(expr.value)
        if owner is not None and isinstance(owner.value, Obj):
            return owner.value.get(expr.attr.value)
        return None

    def _class_name(self, cls: ClassInfo) -> Const | None:
        """The class's name, unless a line of its module renames it (`Cls.__name__ = ...`)."""
        renamed = re.search(rf"\b{re.escape(cls.name)}\.__(?:qual)?name__\s*=[^=]",
                            self.ctor.project.modules[cls.module].parsed.text)
        return None if renamed else Const(cls.name)

    def call_value(self, call: cst.Call) -> Const | None:
        """A project class built here: its instance, attributes evaluated in turn; a namespace
        (`types.SimpleNamespace(verbose=False)`): its keywords are its attributes."""
        qual = self.qualify(call.func)
        if qual in MODULE_LISTS:
            return self._module_list(qual, call)
        if qual in _NAMESPACE_MAKERS and all(a.keyword is not None for a in call.args):
            known = [(a.keyword.value, self.value(a.value)) for a in call.args if a.keyword is not None]
            return Const(Obj(qual, tuple(sorted((k, v) for k, v in known if v is not None))))
        cls = self.ctor.project.klass(qual)
        if cls is None:
            return self._factory_value(qual, call)
        return Const(self.ctor.build(cls, call, self, self.depth + 1))

    def _factory_value(self, qual: str | None, call: cst.Call) -> Const | None:
        """`make_head(dim)` of a function whose body only returns an expression (`return
        nn.Sequential(Block(cfg), ...)`): that expression, its parameters bound to the call's."""
        fn = self.ctor.project.function(qual) if qual else None
        returned = only_return(fn.node) if fn is not None and fn.class_qualname is None else None
        if returned is None or self.depth >= MAX_DEPTH:
            return None
        scope = Scope(self.ctor, fn, self.depth + 1)
        scope.bind(call, self, receiver=False)
        return scope.value(returned)


    def _module_list(self, qual: str, call: cst.Call) -> Const | None:
        """`nn.ModuleList([Block(cfg) for i in range(n)])` (or a display of such calls): one
        object standing for every element, with the attributes they all share (the loop's names
        unknown: `Block(cfg, layer_idx=i)` leaves what `layer_idx` sets unknown)."""
        items = _module_list_items(call)
        if items is None:
            return None
        calls, loop_names = items
        saved = {name: self.locals.get(name) for name in loop_names if name in self.locals}
        self.locals.update(dict.fromkeys(loop_names))  # (shadowing a global of the same name)
        try:
            built = [self.value(item) for item in calls]
        finally:
            for name in loop_names:
                self.locals.pop(name, None)
            self.locals.update(saved)
        objs = [b.value for b in built if b is not None and isinstance(b.value, Obj)]
        if not objs or len(objs) != len(calls) or len({o.cls for o in objs}) != 1:
            return None
        shared = [kv for kv in objs[0].attrs if all(o.get(kv[0]) == kv[1] for o in objs[1:])]
        each = (EACH, Const(Obj(objs[0].cls, tuple(shared))))
        if len(set(objs)) == 1:
            length = self._comprehension_length(call)
            return Const(Obj(qual, (each,) + (((LENGTH, length),) if length is not None else ())))
        return Const(Obj(qual, (each, (ITEMS, Const(tuple(objs))))))


    def _comprehension_length(self, call: cst.Call) -> Const | None:
        """The count of `[Block(cfg) for _ in range(n)]` when `n` is known here."""
        made = call.args[0].value
        if not isinstance(made, (cst.ListComp, cst.GeneratorExp)) or made.for_in.inner_for_in or made.for_in.ifs:
            return None
        it = made.for_in.iter
        if not isinstance(it, cst.Call) or self.qualify(it.func) != "builtins.range" or len(it.args) != 1:
            return None
        count = self.value(it.args[0].value)
        return count if count is not None and type(count.value) is int else None


def element_objects(container: Obj) -> tuple[Obj, ...]:
    """The objects a module list built element by element holds, in order (ITEMS); () when
    its elements were built alike."""
    items = container.get(ITEMS)
    held = items.value if items is not None and isinstance(items.value, tuple) else ()
    return tuple(o for o in held if isinstance(o, Obj))


def element_count(container: Obj) -> int | None:
    """How many elements a module list's comprehension built, when known (LENGTH)."""
    length = container.get(LENGTH)
    return length.value if length is not None and type(length.value) is int else None


def _module_list_items(call: cst.Call) -> tuple[list[cst.Call], set[str]] | None:
    """The calls making a module list's elements, and the comprehension names they may read:
    `ModuleList([...])`, `Sequential(A(), A())`, `Sequential(*[A() for _ in range(n)])`."""
    if any(a.keyword is not None for a in call.args) or not call.args:
        return None
    if len(call.args) > 1 or not call.args[0].star and isinstance(call.args[0].value, cst.Call):  # Sequential(A(), B())
        if any(a.star or not isinstance(a.value, cst.Call) for a in call.args):
            return None
        return [a.value for a in call.args], set()  # type: ignore[misc]
    made = call.args[0].value
    if isinstance(made, (cst.ListComp, cst.GeneratorExp)) and isinstance(made.elt, cst.Call):
        names: set[str] = set()
        level: cst.CompFor | None = made.for_in
        while level is not None:
            names.update(n.value for n in find_all(level.target, (cst.Name,)))
            level = level.inner_for_in
        return [made.elt], names
    if isinstance(made, (cst.List, cst.Tuple)) and made.elements \
            and all(isinstance(el, cst.Element) and isinstance(el.value, cst.Call) for el in made.elements):
        return [el.value for el in made.elements], set()  # type: ignore[misc]
    return None


def _own_class(expr: cst.BaseExpression) -> bool:
    """`self.__class__` or `type(self)`."""
    if isinstance(expr, cst.Attribute):
        return expr.attr.value == "__class__" and isinstance(expr.value, cst.Name) and expr.value.value == "self"
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "type" \
        and len(expr.args) == 1 and isinstance(expr.args[0].value, cst.Name) and expr.args[0].value.value == "self"


def _attributes_from_mapping(stmt: cst.CSTNode, scope: "Scope") -> Keywords | None:
    """The known dict `for k, v in d.items(): setattr(self, k, v)` copies into attributes (a
    configuration class taking `**kwargs`), or None for another statement."""
    if not (isinstance(stmt, cst.For) and isinstance(stmt.target, cst.Tuple) and len(stmt.target.elements) == 2
            and isinstance(stmt.iter, cst.Call) and isinstance(stmt.iter.func, cst.Attribute)
            and stmt.iter.func.attr.value == "items" and not stmt.iter.args and stmt.orelse is None
            and isinstance(stmt.body, cst.IndentedBlock) and len(stmt.body.body) == 1):
        return None
    key, value = (el.value for el in stmt.target.elements)
    line = stmt.body.body[0]
    call = line.body[0].value if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 \
        and isinstance(line.body[0], cst.Expr) else None
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == "setattr"
            and len(call.args) == 3 and not any(a.star or a.keyword for a in call.args)):
        return None
    owner, name, held = (a.value for a in call.args)
    if not (isinstance(owner, cst.Name) and owner.value == "self" and isinstance(key, cst.Name)
            and isinstance(value, cst.Name) and isinstance(name, cst.Name) and isinstance(held, cst.Name)
            and name.value == key.value and held.value == value.value):
        return None
    found = scope.value(stmt.iter.func.value)
    return found.value if found is not None and isinstance(found.value, Keywords) and found.value.exact() else None


# classes whose instances hold exactly the keywords they are built with, as attributes
_NAMESPACE_MAKERS = frozenset({"types.SimpleNamespace", "argparse.Namespace"})


def _branch_taken(stmt: cst.CSTNode, scope: "Scope") -> cst.BaseSuite | None:
    """The block an `if`/`elif`/`else` chain runs when every test it reaches is known; None
    when one is not (or `stmt` is not an `if`). A chain with no side taken runs an empty block."""
    node: cst.CSTNode | None = stmt
    while isinstance(node, cst.If):
        truth = scope.evaluator.truth(node.test)
        if truth is None:
            return None
        if truth:
            return node.body
        node = node.orelse
        if node is None:
            return cst.IndentedBlock(body=[])
    return node.body if isinstance(node, cst.Else) else None


def _annotated_fields(node: cst.ClassDef) -> list[str]:
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    return [small.target.value for stmt in body if isinstance(stmt, cst.SimpleStatementLine)
            for small in stmt.body if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name)]


def _plain_fields(node: cst.ClassDef) -> bool:
    """Every annotated name of the class body is an `__init__` parameter, in order."""
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    for stmt in body:
        for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
            if not isinstance(small, cst.AnnAssign):
                continue
            text = cst.Module([]).code_for_node(small.annotation.annotation)
            if any(word in text for word in ("ClassVar", "InitVar", "KW_ONLY")) or isinstance(small.value, cst.Call) \
                    and any(a.keyword is not None and a.keyword.value in ("init", "kw_only") for a in small.value.args):
                return False
    return True


def _calls_named(node: cst.CSTNode, name: str) -> bool:
    return any((isinstance(call.func, cst.Name) and call.func.value == name) or
               (isinstance(call.func, cst.Attribute) and call.func.attr.value == name)
               for call in find_all(node, (cst.Call,)))


def _self_attributes(stmt: cst.CSTNode) -> set[str]:
    return {node.attr.value for node in find_all(stmt, (cst.Attribute,))
            if isinstance(node.value, cst.Name) and node.value.value == "self"}


def built_at_top(project: ProjectIndex, dtype_names, cls: ClassInfo, call: cst.Call, module) -> Obj:
    """The instance `call` builds where a program builds its compiled code (module level or
    `main()`: literals and project instances in the arguments)."""
    ctor = Constructor(project, SymbolicNames(project, frozenset(dtype_names)))
    return ctor.build(cls, call, TopScope(ctor, module))


class TopScope(Scope):
    """Where a program builds its compiled module (`main()` or module level): literals and
    project instances in the arguments."""

    def __init__(self, ctor: Constructor, module):
        super().__init__(ctor, None, 0, module)
        self._evaluating: set[str] = set()

    def name_value(self, name: str) -> Const | None:
        """A module-level name bound once (`config = Config(...)` before `Net(config)`)."""
        found = self.locals.get(name)
        if found is not None or name in self._evaluating or name in self.module.reassigned:
            return found
        expr = self.module.values.get(name)
        if expr is None or isinstance(expr, cst.Dict):  # a table, or a name imported from elsewhere
            return global_value(self.ctor.project, self.ctor.dtypes.dtypes, self.module, name)
        self._evaluating.add(name)
        try:
            return self.value(expr)
        finally:
            self._evaluating.discard(name)


def is_optimizer_class(qual: str | None) -> bool:
    """`torch.optim.SGD` and the other optimizer classes of torch.optim."""
    parts = (qual or "").split(".")
    return len(parts) == 3 and parts[:2] == ["torch", "optim"] and parts[2][:1].isupper()


def optimizer_method_parts(func: cst.BaseExpression, knowledge
                           ) -> tuple[str | None, cst.BaseExpression | None, bool]:
    """(method, receiver, unwrapped) of `opt.step` / `opt.zero_grad` (knowledge:
    optimizer_methods), and of `opt.step.__wrapped__` for a method whose inner function still
    breaks (knowledge: optimizer_wrapped_methods)."""
    if isinstance(func, cst.Attribute) and func.attr.value == "__wrapped__" \
            and isinstance(func.value, cst.Attribute) and func.value.attr.value in knowledge.optimizer_wrapped_methods:
        return func.value.attr.value, func.value.value, True
    if isinstance(func, cst.Attribute) and func.attr.value in knowledge.optimizer_methods:
        return func.attr.value, func.value, False
    return None, None, False


def generated_init(project: ProjectIndex, cls: ClassInfo) -> bool:
    """A dataclass (`@dataclass`, or made one by a base's `__init_subclass__`, as
    transformers' configs are) without an `__init__` of its own: the generated one sets
    each field from the arguments."""
    if "__init__" in cls.methods:
        return False
    for c in project.mro(cls):
        module = project.modules[c.module]
        made = [decorator_callee(d) for d in c.decorators]
        if any((project.qualify(d, module) or "").split(".")[-1] == "dataclass" for d in made):  # also `@dataclass(...)`
            return True
        hook = project.function(c.methods.get("__init_subclass__"))
        if hook is not None and _calls_named(hook.node, "dataclass"):
            return True
    return False
