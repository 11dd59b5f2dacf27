"""The project index: every module of the project and name resolution across them."""
from __future__ import annotations

import builtins
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Mapping

import libcst as cst

from ..knowledge import Knowledge
from ..walk import NESTED_SCOPES, find_all
from .names import binding_counts, decorator_callee, dotted, unpacked
from .symbols import REDEFINED, ClassInfo, FunctionInfo, ModuleIndex

# a module running these calls every test method its test classes define
TEST_RUNNERS = ("unittest.main(", "run_tests(", "pytest.main(")
# the constant start of a name an f-string builds (`f"test_{i}"`)
FORMATTED_NAME_PREFIX = re.compile(r"""\bf["']([A-Za-z_]\w*)\{""")

BUILTIN_NAMES = frozenset(dir(builtins))
# names under `torch` that are modules (for `from torch import nn`); functions are not
TORCH_SUBMODULES = frozenset({
    "nn", "functional", "optim", "distributed", "utils", "fft", "linalg", "special", "autograd",
    "cuda", "jit", "_dynamo", "compiler", "amp", "backends", "sparse", "distributions", "testing",
    "onnx", "profiler", "ao", "export", "fx", "library", "hub", "random", "overrides", "nested",
    "masked", "func", "mps", "xpu", "cpu", "init", "modules", "parameter", "checkpoint", "data",
})
# nn.Module methods that return the module itself: `Net().eval()` is still a Net
SAME_INSTANCE_METHODS = frozenset({"eval", "train", "to", "cuda", "cpu", "float", "half", "double",
                                   "bfloat16", "requires_grad_", "share_memory", "to_empty"})


class _LookupMemo:
    """Answers of the pure lookups over one (immutable) project index, each with the modules
    it read (a later question answered from the memo has read them too)."""

    def __init__(self):
        self.lookup: dict[str, FunctionInfo | ClassInfo | None] = {}
        self.mro: dict[str, tuple] = {}
        self.bases: dict[str, tuple[str, ...]] = {}
        self.active: set[str] = set()  # lookups under way (cycle detection)
        self.cut = False  # whether a cycle was cut below the current lookup
        self.derived: dict[str, object] = {}  # project-wide facts later stages compute once
        self.aliases: dict[str, Mapping[str, str]] = {}  # function -> its local `Name = dotted.name` aliases
        self.reads: dict[tuple[str, str], frozenset[str]] = {}  # (memo, key) -> modules read


class ReadLog:
    """Which modules a computation asked for (by import name, found or not): what its result
    depends on. The incremental analysis keeps a task's result as long as none of those
    modules changed. Recordings nest: a module asked for is noted in every open one."""

    def __init__(self):
        self._open: list[set[str]] = []

    def note(self, name: str) -> None:
        for reads in self._open:
            reads.add(name)

    def note_all(self, names) -> None:
        for reads in self._open:
            reads.update(names)

    @contextmanager
    def recording(self):
        reads: set[str] = set()
        self._open.append(reads)
        try:
            yield reads
        finally:
            self._open.pop()


TEXT_READ = "\0text:"  # a read of "which modules hold this text", among the module names read

_NO_LOG = ReadLog()  # a plain mapping of modules records nothing

MAX_LOOKUP_CHAIN = 48  # re-exports followed in one lookup; real libraries need a handful


# Python's copy functions: a copy is an instance of the original's class
COPYING_FUNCTIONS = frozenset({"copy.deepcopy", "copy.copy"})


@dataclass(frozen=True)
class ProjectIndex:
    modules: Mapping[str, ModuleIndex]  # module name -> index
    by_path: Mapping[str, str]  # file path -> module name
    _memo: _LookupMemo = field(default_factory=_LookupMemo, compare=False, repr=False)

    @property
    def reads(self) -> ReadLog:
        return getattr(self.modules, "reads", _NO_LOG)

    def may_define(self, module: str, name: str) -> bool:
        """Can `from module import *` bring `name`? (False only when the text says it cannot:
        a star import chain over a large package is then not parsed module by module.)"""
        check = getattr(self.modules, "may_define", None)
        return check(module, name) if check is not None else True

    def importable(self, name: str) -> bool | None:
        """Can the program import module `name`? None: not known (installed packages are
        not looked up)."""
        check = getattr(self.modules, "importable", None)
        return check(name) if check is not None else None

    def mentioning(self, text: str) -> list[ModuleIndex]:
        """The loaded modules whose source contains `text` (a pre-filter for project-wide
        facts); only those count as read."""
        with_text = getattr(self.modules, "with_text", None)
        found = with_text(text) if with_text else [m for m in list(self.modules.values()) if text in m.parsed.text]
        self.reads.note_all(m.name for m in found)
        self.reads.note(TEXT_READ + text)  # and that no other module holds it (a caller added later)
        return found

    def may_run(self, module: ModuleIndex, name: str) -> bool:
        """Can a module-level function or a method named `name` in `module` ever be called: its
        name appears again in its module (a call, a string handed to getattr or a test
        runner) or in another module, or the module runs its tests (`unittest.main()`)."""
        text = module.parsed.text
        if len(re.findall(rf"\b{re.escape(name)}\b", text)) > 1 or any(r in text for r in TEST_RUNNERS):
            return True
        if any(name.startswith(prefix) for prefix in FORMATTED_NAME_PREFIX.findall(text)):
            return True  # `getattr(case, f"test_{i}")()`
        return any(m is not module for m in self.mentioning(name))

    def derived(self, key: str, compute):
        """`compute()` once per project index: facts found by walking every module (hooks,
        disallowed functions) that every Dynamo task of the run asks for."""
        return self._memoised("derived", self._memo.derived, key, compute)

    def _memoised(self, kind: str, memo: dict, key: str, compute):
        """`memo[key]`, computed once; the modules the computation read are noted again on
        every later use (so a task reusing another task's answer depends on them too)."""
        if key in memo:
            self.reads.note_all(self._memo.reads.get((kind, key), ()))
            return memo[key]
        with self.reads.recording() as reads:
            value = compute()
        memo[key] = value
        self._memo.reads[(kind, key)] = frozenset(reads)
        return value

    # -- lookups ---------------------------------------------------------------------
    def function(self, qualname: str | None) -> FunctionInfo | None:
        target = self.lookup(qualname)
        return target if isinstance(target, FunctionInfo) else None

    def definition_at(self, fn: FunctionInfo, line: int) -> FunctionInfo:
        """The definition of `fn`'s name a statement at `line` of the same body sees: with `def f`
        twice in one body, the one defined last before that line (the name is bound to the
        last one everywhere else)."""
        base = fn.qualname.split(REDEFINED)[0]
        module = self.modules.get(fn.module)
        if module is None:
            return fn
        defs = [f for q, f in module.functions.items() if q == base or q.startswith(base + REDEFINED)
                and "." not in q[len(base):]]
        seen = [f for f in defs if f.def_line <= line]
        return max(seen, key=lambda f: f.def_line) if seen else fn

    def klass(self, qualname: str | None) -> ClassInfo | None:
        target = self.lookup(qualname)
        return target if isinstance(target, ClassInfo) else None

    def is_library_class(self, qualname: str) -> bool:
        """A name outside the project that looks like a class (a capitalized last component, as
        classes are named): `unittest.TestCase`."""
        return qualname.rpartition(".")[2][:1].isupper() and self.lookup(qualname) is None

    def lookup(self, qualname: str | None) -> FunctionInfo | ClassInfo | None:
        """Find a project function or class by qualified name, following re-exports,
        star imports and inheritance. Memoised, and safe on import cycles: re-exports and star
        imports chain across modules, and without a memo a tree of them is explored again for
        every path that reaches it (exponential on large libraries)."""
        if not qualname:
            return None
        memo = self._memo.lookup
        if qualname in memo:
            self.reads.note_all(self._memo.reads.get(("lookup", qualname), ()))
            return memo[qualname]
        if qualname in self._memo.active or len(self._memo.active) >= MAX_LOOKUP_CHAIN:
            # a cycle (this path adds nothing), or a chain of re-exports that keeps growing
            # the name (a package re-exporting a submodule missing from the tree)
            self._memo.cut = True
            return None
        self._memo.active.add(qualname)
        outer_cut, self._memo.cut = self._memo.cut, False
        try:
            with self.reads.recording() as reads:
                found = self._lookup(qualname)
        finally:
            self._memo.active.discard(qualname)
        if not self._memo.cut or found is not None:  # an answer cut short by a cycle is not final
            memo[qualname] = found
            self._memo.reads[("lookup", qualname)] = frozenset(reads)
        self._memo.cut = self._memo.cut or outer_cut
        return found

    def _lookup(self, qualname: str) -> FunctionInfo | ClassInfo | None:
        module, rest = self._split_module(qualname)
        if module is None or not rest:
            return None
        if qualname in module.functions:
            return module.functions[qualname]
        if qualname in module.classes:
            return module.classes[qualname]
        head, _, tail = rest.partition(".")
        if head in module.imports:  # re-exported name (e.g. through __init__.py)
            return self.lookup(module.imports[head] + (f".{tail}" if tail else ""))
        for star in module.star_imports:
            if not self.may_define(star, head) or star not in self.modules:
                continue  # a module missing from the tree, or whose text never names `head`
            found = self.lookup(f"{star}.{rest}")
            if found is not None:
                return found
        return self._inherited_member(module, head, tail)

    def _inherited_member(self, module: ModuleIndex, head: str, tail: str):
        """`pkg.mod.Class.method` where the method is defined on a base class."""
        cls = module.classes.get(f"{module.name}.{head}")
        if cls is None or not tail or "." in tail:
            return None
        for base in self.mro(cls)[1:]:
            if tail in base.methods:
                return self.lookup(base.methods[tail])
        return None

    def _split_module(self, qualname: str) -> tuple[ModuleIndex | None, str]:
        parts = qualname.split(".")
        for i in range(len(parts), 0, -1):
            name = ".".join(parts[:i])
            if name in self.modules:
                return self.modules[name], ".".join(parts[i:])
        return None, ""

    def module_of_prefix(self, qualname: str, load: bool = True) -> str | None:
        """The longest prefix of a dotted name that is a project module (`load=False`: among
        the modules indexed already, without reading installed packages)."""
        parts = qualname.split(".")
        for i in range(len(parts), 0, -1):
            name = ".".join(parts[:i])
            if name in self.modules if load else self.is_loaded(name):
                return name
        return None

    def is_loaded(self, name: str) -> bool:
        loaded = getattr(self.modules, "loaded", None)
        return loaded(name) if loaded is not None else name in self.modules

    def import_closure(self, start: str) -> frozenset[str]:
        """The project modules `start` imports, directly or through others (itself included):
        the code a program that runs `start` can reach."""
        seen = {start}
        todo = [start]
        while todo:
            module = self.modules[todo.pop()]
            for target in (*module.imports.values(), *module.star_imports):
                other = self.module_of_prefix(target)
                if other is not None and other not in seen:
                    seen.add(other)
                    todo.append(other)
        return frozenset(seen)

    # -- name resolution ---------------------------------------------------------------
    def qualify(self, expr: cst.BaseExpression, module: ModuleIndex,
                function: FunctionInfo | None = None) -> str | None:
        """Qualified name of a plain name/attribute chain as seen from `function` in `module`."""
        text = dotted(expr)
        if text is None:
            return None
        return self.qualify_text(text, module, function)

    def decorated_with(self, decorators, module_name: str, names: frozenset[str]) -> bool:
        """Is one of the decorators (`@name` or `@name(...)`) one of `names`?"""
        module = self.modules[module_name]
        return any(self.qualify(decorator_callee(d), module) in names for d in decorators)

    def qualify_text(self, text: str, module: ModuleIndex,
                     function: FunctionInfo | None = None, depth: int = 0) -> str | None:
        head, _, tail = text.partition(".")
        base = self._qualify_head(head, module, function, depth)
        if base is None:
            return None
        return f"{base}.{tail}" if tail else base

    def _qualify_head(self, head: str, module: ModuleIndex, function: FunctionInfo | None, depth: int = 0):
        scope = function
        while scope is not None:  # closures: the nearest enclosing def wins
            if head in scope.local_functions:
                return scope.local_functions[head]
            if head in {p.name for p in scope.params}:
                return None  # a parameter shadows globals; unknown value
            held = self._local_aliases(scope).get(head)
            if held is not None:  # `Ctx = CustomCtx` in a test's main(), read by a closure
                return self.qualify_text(held, module, scope, depth + 1) if depth < 4 else None
            scope = enclosing_function(scope, module)
        if head in module.top_level:
            return module.top_level[head]
        if head in module.imports:
            return module.imports[head]
        for star in module.star_imports:
            if self.may_define(star, head) and star in self.modules and self.lookup(f"{star}.{head}") is not None:
                return f"{star}.{head}"
        alias = module.values.get(head)
        if alias is not None and head not in module.reassigned and depth < 4:
            # `Ctx = CustomCtx`, `LayerNorm = nn.LayerNorm`: a module-level alias bound once
            target = dotted(alias)
            return self.qualify_text(target, module, None, depth + 1) if target is not None else None
        if head in BUILTIN_NAMES and head not in module.values:
            return f"builtins.{head}"
        return None

    def _local_aliases(self, fn: FunctionInfo) -> Mapping[str, str]:
        found = self._memo.aliases.get(fn.qualname)
        if found is None:
            found = self._memo.aliases[fn.qualname] = local_aliases(fn.node.body)
        return found

    def is_torch_module_import(self, module: ModuleIndex, name: str) -> bool:
        """`import torch`, `import torch.nn as nn`, `from torch import nn`: a torch module global."""
        target = module.imports.get(name)
        if target is None or not (target == "torch" or target.startswith("torch.")):
            return False
        if name in module.module_imports:
            return True
        return target.rsplit(".", 1)[-1] in TORCH_SUBMODULES

    def is_frame_trigger_global(self, module: ModuleIndex, name: str) -> bool:
        """A global that makes Dynamo compile the code naming it (convert_frame.has_tensor_in_frame):
        a torch module, or the numpy module itself (trace_numpy is on by default)."""
        return self.is_torch_module_import(module, name) \
            or name in module.module_imports and module.imports.get(name) == "numpy"

    # -- instances -------------------------------------------------------------------
    def classes_bound(self, module: ModuleIndex, name: str, function: FunctionInfo | None = None) -> list[ClassInfo]:
        """The project classes a name of the module is built from: its one module-level value,
        else every `name = Cls(...)` in the module, in any function (a test's `main()`) or
        rebound later (`model = torch.compile(model)`). One per class. `function`: where the
        name is read; a local it binds is built there (its local classes are seen)."""
        local = [a.value for a in find_all(function.node.body, (cst.Assign,), skip=NESTED_SCOPES)
                 if any(isinstance(t.target, cst.Name) and t.target.value == name for t in a.targets)] \
            if function is not None else []
        if local:
            classes = {c.qualname: c for c in (self.created_class(v, module, function) for v in local) if c is not None}
            return list(classes.values())
        if name in module.values and name not in module.reassigned:
            made = [module.values[name]]
        else:
            made = [a.value for a in find_all(module.parsed.module, (cst.Assign,))
                    if any(isinstance(t.target, cst.Name) and t.target.value == name for t in a.targets)]
        classes = {cls.qualname: cls for cls in (self.created_class(v, module) for v in made) if cls is not None}
        return list(classes.values())

    def created_class(self, value: cst.BaseExpression, module: ModuleIndex,
                      function: FunctionInfo | None = None, depth: int = 0) -> ClassInfo | None:
        """The project class a call creates: `Net()`, `Net().eval()`, `build_model()`."""
        if not isinstance(value, cst.Call) or depth > 4:
            return None
        func = value.func
        if isinstance(func, cst.Attribute) and func.attr.value in SAME_INSTANCE_METHODS:
            return self.created_class(func.value, module, function, depth + 1)
        qual = self.qualify(func, module, function)
        if qual in COPYING_FUNCTIONS and value.args:  # `copy.deepcopy(net)`: an instance of net's class
            copied = value.args[0].value
            if isinstance(copied, cst.Name) and copied.value not in module.reassigned:
                copied = module.values.get(copied.value, copied)
            return self.created_class(copied, module, function, depth + 1)
        target = self.lookup(qual)
        if isinstance(target, ClassInfo):
            return target
        if isinstance(target, FunctionInfo):  # a factory: what does it return?
            factory_module = self.modules[target.module]
            for returned in returned_values(target.node):
                cls = self.created_class(returned, factory_module, target, depth + 1)
                if cls is not None:
                    return cls
        return None

    def created_function(self, value: cst.BaseExpression, module: ModuleIndex,
                         function: FunctionInfo | None = None, depth: int = 0) -> FunctionInfo | None:
        """The project function a factory call returns: `make_step()` whose body defines
        `def step(x): ...` and returns `step` (a closure compiled later)."""
        if not isinstance(value, cst.Call) or depth > 4:
            return None
        factory = self.lookup(self.qualify(value.func, module, function))
        if not isinstance(factory, FunctionInfo):
            return None
        home = self.modules[factory.module]
        for returned in returned_values(factory.node):
            found = self.lookup(self.qualify(returned, home, factory)) if not isinstance(returned, cst.Call) \
                else self.created_function(returned, home, factory, depth + 1)
            if isinstance(found, FunctionInfo) and found is not factory:
                return found
        return None

    def makes(self, value: cst.BaseExpression, module: ModuleIndex, function: FunctionInfo | None,
              factories: tuple[str, ...], depth: int = 0) -> bool:
        """Is `value` a call of one of `factories`, or of a project function whose return
        makes one (`logging.get_logger(__name__)` -> `logging.getLogger(name)`)?"""
        if not isinstance(value, cst.Call) or depth > 3:
            return False
        qual = self.qualify(value.func, module, function)
        if qual in factories:
            return True
        target = self.lookup(qual)
        if not isinstance(target, FunctionInfo):
            return False
        home = self.modules[target.module]
        return any(self.makes(r, home, target, factories, depth + 1) for r in returned_values(target.node))

    # -- classes -----------------------------------------------------------------------
    def base_names(self, cls: ClassInfo) -> list[str]:
        def compute() -> tuple[str, ...]:
            module = self.modules[cls.module]
            scope = class_scope(cls.qualname, module)  # a local class's bases may be local too
            return tuple(q for q in (self.qualify(b, module, scope) for b in cls.bases) if q)

        return list(self._memoised("bases", self._memo.bases, cls.qualname, compute))

    def mro(self, cls: ClassInfo) -> list[ClassInfo]:
        """Project classes in (depth-first, left-to-right) resolution order; cycles cut.
        Memoised per class (every method lookup asks for it)."""
        return list(self._memoised("mro", self._memo.mro, cls.qualname,
                                   lambda: tuple(self._mro(cls, frozenset()))))

    def _mro(self, cls: ClassInfo, seen: frozenset) -> list[ClassInfo]:
        if cls.qualname in seen:
            return []
        out = [cls]
        for name in self.base_names(cls):
            base = self.klass(name)
            if base is not None:
                for c in self._mro(base, seen | {cls.qualname}):
                    if c not in out:
                        out.append(c)
        return out

    def external_bases(self, cls: ClassInfo) -> set[str]:
        names: set[str] = set()
        for c in self.mro(cls):
            names.update(n for n in self.base_names(c) if self.klass(n) is None)
        return names

    def method(self, cls: ClassInfo, name: str, after: str | None = None) -> FunctionInfo | None:
        chain = self.mro(cls)
        if after is not None:
            idx = next((i for i, c in enumerate(chain) if c.qualname == after), -1)
            chain = chain[idx + 1:]
        for c in chain:
            if name in c.methods:
                return self.function(c.methods[name])
        return None

    def inferred_attribute_class(self, cls: ClassInfo, attr: str) -> ClassInfo | None:
        """The project class of `self.<attr>` when the names alone cannot tell (astroid's
        inference); only when every value it infers is that one class."""
        from .inference import ProjectInference  # imports astroid: not on every CLI start-up

        inference = self.derived("inference", lambda: ProjectInference(self))
        return self.klass(inference.attribute_class(cls, attr))

    def class_attribute(self, cls: ClassInfo, attr: str) -> tuple[ClassInfo, cst.BaseExpression] | None:
        for c in self.mro(cls):
            if attr in c.attributes:
                return c, c.attributes[attr]
        return None


def only_return(fn: cst.FunctionDef) -> cst.BaseExpression | None:
    """The expression a function's body only returns (after its docstring), else None."""
    body = list(fn.body.body) if isinstance(fn.body, cst.IndentedBlock) else []
    if body and isinstance(body[0], cst.SimpleStatementLine) and isinstance(body[0].body[0], cst.Expr) \
            and isinstance(body[0].body[0].value, (cst.SimpleString, cst.ConcatenatedString)):
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine) or len(body[0].body) != 1:
        return None
    small = body[0].body[0]
    return small.value if isinstance(small, cst.Return) and not fn.asynchronous else None


def returned_values(node: cst.FunctionDef) -> list[cst.BaseExpression]:
    """Values of the `return` statements at the top level of a function body (cheap, no visit)."""
    out = []
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    for stmt in body:
        if isinstance(stmt, cst.SimpleStatementLine):
            out += [s.value for s in stmt.body if isinstance(s, cst.Return) and s.value is not None]
    return out


def enclosing_function(fn: FunctionInfo, module: ModuleIndex) -> FunctionInfo | None:
    """The function whose names `fn` sees next: its parent def, or for a method of a class
    defined inside a function (a test's local module), that function (the class body's own
    names are not visible from its methods)."""
    if fn.parent_function:
        return module.functions.get(fn.parent_function)
    return class_scope(fn.class_qualname, module) if fn.class_qualname else None


def class_scope(class_qualname: str, module: ModuleIndex) -> FunctionInfo | None:
    """The function a class is defined in (a test's local module class), or None."""
    if class_qualname.count(".") <= module.name.count(".") + 1:
        return None  # a module-level class
    return module.functions.get(class_qualname.rsplit(".", 1)[0])


PROPERTY_DECORATORS = frozenset({"builtins.property", "functools.cached_property"})


def is_property(project: ProjectIndex, fn: FunctionInfo) -> bool:
    """A getter (`@property`, `@functools.cached_property`): reading the attribute runs it."""
    module = project.modules[fn.module]
    return any(project.qualify(dec.decorator, module) in PROPERTY_DECORATORS for dec in fn.decorators)


def is_nn_module(project: ProjectIndex, knowledge: Knowledge, cls: ClassInfo) -> bool:
    """A class deriving from torch's nn.Module, directly or through a torch layer (`nn.Sequential`)."""
    return any(knowledge.is_module_class(base) for base in project.external_bases(cls))


def local_aliases(body: cst.CSTNode) -> Mapping[str, str]:
    """The names a function body binds exactly once, by `name = dotted.name` (a class or
    function given another name; `fn, args = f, (x,)` too), each with the dotted name it holds."""
    counts = binding_counts(body)
    out = {}
    for node in find_all(body, (cst.Assign,), skip=NESTED_SCOPES):
        pairs = unpacked(node.targets[0].target, node.value) if len(node.targets) == 1 else []
        for target, value in pairs:
            held = dotted(value)
            if isinstance(target, cst.Name) and held is not None and counts.get(target.value) == 1 \
                    and held.partition(".")[0] != target.value:
                out[target.value] = held
    return out
