"""One module's symbols: imports, functions (incl. methods and closures), classes, module values."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType
from typing import Mapping

import libcst as cst

from ..parse import ParsedModule, blocks_of as _blocks
from .names import RUNTIME_FALSE, attribute_name, dotted, module_name_for, resolve_relative, unpacked
from ..walk import walk


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # "positional" | "keyword_only" | "star" | "double_star"
    default: cst.BaseExpression | None
    annotation: str | None


@dataclass(frozen=True)
class FunctionInfo:
    qualname: str  # "module.Class.method" / "module.outer.inner"
    name: str
    module: str
    path: str
    ordinal: int  # position among the module's definitions (see `definition_nodes`)
    def_line: int
    parsed: ParsedModule
    class_qualname: str | None
    parent_function: str | None
    params: tuple[Param, ...]
    decorators: tuple[cst.Decorator, ...]
    is_async: bool
    local_functions: Mapping[str, str]  # nested def/class name -> qualname

    @property
    def node(self) -> cst.FunctionDef:
        """The def in the module's current tree, or parsed alone on demand in repository scans."""
        return self.parsed.definition(self.ordinal, self.def_line)

    @cached_property
    def is_generator(self) -> bool:
        """Found on demand: only functions the model reaches need it."""
        return has_yield(self.node.body)


MODULE_BODY = "<module>"  # the name a module's top-level code goes by as a host of lambdas


@dataclass(frozen=True)
class ModuleBody(FunctionInfo):
    """A module's top-level code seen as a function: what a lambda compiled at module level
    (`torch.compile(lambda x: m(x))`) is written in. Its names are the module's globals; its
    node is a def wrapping the module's own statements (the same nodes, so positions come from
    the module's tree)."""

    @property
    def node(self) -> cst.FunctionDef:
        return self._wrapper

    @cached_property
    def _wrapper(self) -> cst.FunctionDef:
        return cst.FunctionDef(cst.Name("module_body"), cst.Parameters(),
                               cst.IndentedBlock(self.parsed.module.body))


def module_body(parsed: ParsedModule, module: str) -> ModuleBody:
    return ModuleBody(qualname=f"{module}.{MODULE_BODY}", name=MODULE_BODY, module=module, path=str(parsed.path),
                      ordinal=-1, def_line=1, parsed=parsed, class_qualname=None, parent_function=None,
                      params=(), decorators=(), is_async=False, local_functions=MappingProxyType({}))


@dataclass(frozen=True)
class ClassInfo:
    qualname: str
    name: str
    module: str
    path: str
    ordinal: int
    def_line: int
    parsed: ParsedModule
    bases: tuple[cst.BaseExpression, ...]
    methods: Mapping[str, str]  # method name -> function qualname
    attributes: Mapping[str, cst.BaseExpression]  # self.<attr> = <value> in any method
    init_locals: Mapping[str, tuple[cst.BaseExpression, ...]]  # `name = <value>` in __init__
    reassigned: frozenset[str] = frozenset()  # attributes assigned more than once (value not fixed)
    # kept in the index: reading them off `node` would parse the whole class body again
    decorators: tuple[cst.Decorator, ...] = ()

    @property
    def node(self) -> cst.ClassDef:
        return self.parsed.definition(self.ordinal, self.def_line)


@dataclass(frozen=True)
class ModuleIndex:
    name: str
    path: str
    is_package: bool
    parsed: ParsedModule
    imports: Mapping[str, str]  # local name -> qualified name
    module_imports: frozenset[str]  # local names bound by `import x` / `import x.y as z` (modules)
    star_imports: tuple[str, ...]
    functions: Mapping[str, FunctionInfo]  # qualname -> info
    classes: Mapping[str, ClassInfo]
    top_level: Mapping[str, str]  # module-level def/class name -> qualname
    values: Mapping[str, cst.BaseExpression]  # module-level `name = <expr>` (last wins)
    reassigned: frozenset[str] = frozenset()  # module names bound more than once, or `global` somewhere

    def by_tree_node(self, infos) -> dict:
        """Each function or class info keyed by its node in the module's whole tree, the node a
        walk of `parsed.module` meets. Not by `info.node`: when the tree was not held (an index
        read from the store) that is the definition parsed alone, another object."""
        definitions = self.parsed.definitions()
        return {definitions[info.ordinal]: info for info in infos}


class _Collector:
    """Walks statements only (never expressions): cheap enough to index a whole repository."""

    def __init__(self, parsed: ParsedModule, module: str, is_package: bool):
        self.parsed = parsed
        definitions = parsed.definitions()
        self.ordinals = {id(node): i for i, node in enumerate(definitions)}
        self.def_lines = parsed.definition_lines()
        self.module = module
        self.is_package = is_package
        self.imports: dict[str, str] = {}
        self.module_imports: set[str] = set()
        self.star_imports: list[str] = []
        self.functions: dict[str, FunctionInfo] = {}
        self.classes: dict[str, dict] = {}
        self.top_level: dict[str, str] = {}
        self.values: dict[str, cst.BaseExpression] = {}
        self.bindings: dict[str, int] = {}  # module-level assignments per name

    # -- statements ------------------------------------------------------------------
    def body(self, statements, scope: tuple[str, str] | None, locals_: dict | None) -> None:
        for stmt in statements:
            self.statement(stmt, scope, locals_)

    def statement(self, stmt, scope, locals_) -> None:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self.small(small, scope)
        elif isinstance(stmt, cst.FunctionDef):
            self.function(stmt, scope, locals_)
        elif isinstance(stmt, cst.ClassDef):
            self.klass(stmt, scope, locals_)
        elif isinstance(stmt, cst.If) and _type_checking(stmt.test):
            # never run: only its imports count (annotations name the classes they bring)
            for line in stmt.body.body if isinstance(stmt.body, cst.IndentedBlock) else ():
                for small in line.body if isinstance(line, cst.SimpleStatementLine) else ():
                    if isinstance(small, (cst.Import, cst.ImportFrom)):
                        self.small(small, scope)
            if isinstance(stmt.orelse, cst.If):
                self.statement(stmt.orelse, scope, locals_)
            elif stmt.orelse is not None:
                self.block(stmt.orelse.body, scope, locals_)
        else:
            for block in _blocks(stmt):
                self.block(block, scope, locals_)

    def block(self, block, scope, locals_) -> None:
        if isinstance(block, cst.IndentedBlock):
            self.body(block.body, scope, locals_)
        elif isinstance(block, cst.SimpleStatementSuite):
            for small in block.body:
                self.small(small, scope)

    def small(self, node, scope) -> None:
        if isinstance(node, cst.Import):
            self.import_(node)
        elif isinstance(node, cst.ImportFrom):
            self.import_from(node)
        elif isinstance(node, cst.Assign):
            for target in node.targets:
                for name, value in unpacked(target.target, node.value):  # `a, b = A(), B()`
                    self.record_target(name, value, scope)
        elif isinstance(node, cst.AnnAssign) and node.value is not None:
            self.record_target(node.target, node.value, scope)
        elif isinstance(node, cst.AugAssign):  # `x += 1`: a second binding, the value is not fixed
            self.record_target(node.target, node.value, scope)
            self.record_target(node.target, node.value, scope)
        elif isinstance(node, cst.Expr) and isinstance(node.value, cst.Call):
            registered = _registered_attribute(node.value)
            if registered is not None:  # `self.add_module("inner", Leaf())` sets `self.inner`
                self.record_target(*registered, scope)

    # -- definitions -----------------------------------------------------------------
    def _qual(self, name: str, scope) -> str:
        return f"{scope[1] if scope else self.module}.{name}"

    def klass(self, node: cst.ClassDef, scope, locals_=None) -> None:
        qual = self._qual(node.name.value, scope)
        if scope is None:
            self.top_level[node.name.value] = qual
        elif locals_ is not None:  # a class defined inside a function (tests, scripts' main())
            locals_[node.name.value] = qual
        self.classes[qual] = {"node": node, "methods": {}, "attributes": {}, "init_locals": {}, "counts": {}}
        self.block(node.body, ("class", qual), None)

    def function(self, node: cst.FunctionDef, scope, locals_) -> None:
        qual = self._qual(node.name.value, scope)
        if qual in self.functions and not (scope and scope[0] == "class"):
            # a second `def f` in the same function or module body (tests redefine `fn` between
            # compile calls): a code object of its own, told apart by its def line; the name
            # refers to the last one, and `definition_at` finds the one a line sees
            qual = f"{qual}{REDEFINED}{self.def_lines[self.ordinals[id(node)]]}"
        accessor = scope is not None and scope[0] == "class" and node.name.value in self.classes[scope[1]]["methods"] \
            and property_accessor(node.decorators, ("setter", "deleter")) == node.name.value
        if accessor:
            # `@name.setter` / `@name.deleter` after the getter: assigning or deleting the
            # attribute runs it, reading it (and calling what it holds) runs the getter, which
            # keeps the name
            qual = f"{qual}{REDEFINED}{self.def_lines[self.ordinals[id(node)]]}"
        elif scope is None:
            self.top_level[node.name.value] = qual
        elif scope[0] == "class":
            self.classes[scope[1]]["methods"][node.name.value] = qual
        elif locals_ is not None:
            locals_[node.name.value] = qual
        inner: dict[str, str] = {}
        self.block(node.body, ("function", qual), inner)
        class_qual = scope[1] if scope and scope[0] == "class" else None
        self.functions[qual] = FunctionInfo(
            qualname=qual, name=node.name.value, module=self.module, path=str(self.parsed.path),
            ordinal=self.ordinals[id(node)], def_line=self.def_lines[self.ordinals[id(node)]],
            parsed=self.parsed, class_qualname=class_qual,
            parent_function=scope[1] if scope and scope[0] == "function" else None,
            params=_params(node.params), decorators=tuple(node.decorators),
            is_async=node.asynchronous is not None, local_functions=MappingProxyType(inner),
        )

    # -- imports ---------------------------------------------------------------------
    def import_(self, node: cst.Import) -> None:
        for alias in node.names:
            full = dotted(alias.name)
            if not full:
                continue
            if alias.asname is not None:
                local = cst.ensure_type(alias.asname.name, cst.Name).value  # `import a.b as c`: always a name
                self.imports[local] = full
                self.module_imports.add(local)
            else:
                head = full.split(".")[0]
                self.imports.setdefault(head, head)
                self.module_imports.add(head)

    def import_from(self, node: cst.ImportFrom) -> None:
        level = len(node.relative)
        target = dotted(node.module) if node.module is not None else None
        base = resolve_relative(self.module, self.is_package, level, target) if level else (target or "")
        if isinstance(node.names, cst.ImportStar):
            self.star_imports.append(base)
            return
        for alias in node.names:
            name = alias.name.value if isinstance(alias.name, cst.Name) else dotted(alias.name)
            local = cst.ensure_type(alias.asname.name, cst.Name).value if alias.asname is not None else name
            if name and local:
                self.imports[local] = f"{base}.{name}" if base else name

    # -- values ----------------------------------------------------------------------
    def record_target(self, target: cst.BaseExpression, value: cst.BaseExpression, scope) -> None:
        if scope is None and isinstance(target, cst.Name):
            self.bindings[target.value] = self.bindings.get(target.value, 0) + 1
            self.values[target.value] = value
            return
        if isinstance(target, cst.Name) and scope is not None and scope[1].endswith(".__init__"):
            cls = self._enclosing_class(scope[1])  # `cls = A if c else B` before `self.x = cls()`
            if cls is not None:
                self.classes[cls]["init_locals"].setdefault(target.value, []).append(value)
            return
        if (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                and target.value.value == "self" and scope is not None and scope[0] == "function"):
            cls = self._enclosing_class(scope[1])
            if cls is not None:
                self.classes[cls]["attributes"].setdefault(target.attr.value, value)
                counts = self.classes[cls]["counts"]
                counts[target.attr.value] = counts.get(target.attr.value, 0) + 1

    def _enclosing_class(self, function_qual: str) -> str | None:
        owner = function_qual.rsplit(".", 1)[0]
        return owner if owner in self.classes else None

    def build(self) -> ModuleIndex:
        self.body(self.parsed.module.body, None, None)
        classes = {}
        for qual, data in self.classes.items():
            node = data["node"]
            classes[qual] = ClassInfo(
                qualname=qual, name=node.name.value, module=self.module,
                path=str(self.parsed.path), ordinal=self.ordinals[id(node)],
                def_line=self.def_lines[self.ordinals[id(node)]], parsed=self.parsed,
                bases=tuple(arg.value for arg in node.bases if arg.keyword is None),
                methods=MappingProxyType(data["methods"]),
                attributes=MappingProxyType(data["attributes"]),
                init_locals=MappingProxyType({k: tuple(v) for k, v in data["init_locals"].items()}),
                reassigned=frozenset(a for a, n in data["counts"].items() if n > 1),
                decorators=tuple(node.decorators),
            )
        return ModuleIndex(
            name=self.module, path=str(self.parsed.path), is_package=self.is_package,
            parsed=self.parsed, imports=MappingProxyType(self.imports),
            module_imports=frozenset(self.module_imports), star_imports=tuple(self.star_imports),
            functions=MappingProxyType(self.functions),
            classes=MappingProxyType(classes), top_level=MappingProxyType(self.top_level),
            values=MappingProxyType(self.values),
            reassigned=frozenset(n for n, count in self.bindings.items() if count > 1)
            | _declared_global(self.parsed.text),
        )


def property_accessor(decorators, kinds: tuple[str, ...] = ("setter",)) -> str | None:
    """The property a def is an accessor of: `@loss_function.setter` -> "loss_function"
    (`kinds`: which accessors count)."""
    for d in decorators:
        dec = d.decorator
        if isinstance(dec, cst.Attribute) and dec.attr.value in kinds and isinstance(dec.value, cst.Name):
            return dec.value.value
    return None


# joins a redefined function's qualname and its def line ("mod.test.fn~12")
REDEFINED = "~"
GLOBAL_STATEMENT = re.compile(r"^[ \t]*global[ \t]+([\w \t,]+)", re.MULTILINE)


def _declared_global(text: str) -> frozenset[str]:
    """Names some function rebinds with `global` (their module-level value is not fixed)."""
    return frozenset(name.strip() for m in GLOBAL_STATEMENT.finditer(text)
                     for name in m.group(1).split(",") if name.strip())


def has_yield(node: cst.CSTNode) -> bool:
    """Does `node` yield, not counting the functions, classes and lambdas defined in it?"""
    finder = _YieldFinder()
    walk(node, finder)
    return finder.found


def _type_checking(test: cst.BaseExpression) -> bool:
    """`TYPE_CHECKING` (imported from typing) / `typing.TYPE_CHECKING`: true only to a type
    checker (the module's imports are not known yet here: the name is taken as written)."""
    name = dotted(test)
    return name == "TYPE_CHECKING" or name in RUNTIME_FALSE


class _YieldFinder(cst.CSTVisitor):
    def __init__(self):
        self.found = False

    def visit_Yield(self, node) -> bool:
        self.found = True
        return False

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_ClassDef(self, node) -> bool:
        return False

    def visit_Lambda(self, node) -> bool:
        return False


def _params(params: cst.Parameters) -> tuple[Param, ...]:
    out: list[Param] = []

    def add(p: cst.Param, kind: str) -> None:
        ann = cst.Module([]).code_for_node(p.annotation.annotation) if p.annotation else None
        out.append(Param(p.name.value, kind, p.default, ann))

    for p in (*params.posonly_params, *params.params):
        add(p, "positional")
    if isinstance(params.star_arg, cst.Param):
        add(params.star_arg, "star")
    for p in params.kwonly_params:
        add(p, "keyword_only")
    if params.star_kwarg is not None:
        add(params.star_kwarg, "double_star")
    return tuple(out)


def index_module(parsed: ParsedModule, name: str | None = None) -> ModuleIndex:
    """`name`: the import name when the path cannot tell it (an installed package found on a
    search path); by default it is found from the chain of `__init__.py` folders."""
    path = parsed.path
    return _Collector(parsed, name or module_name_for(path), path.stem == "__init__").build()


# calls on `self` that set a sub-module attribute by name: (method, position of the name)
_REGISTERING_METHODS = ("add_module", "register_module")


def _registered_attribute(call: cst.Call) -> tuple[cst.Attribute, cst.BaseExpression] | None:
    """(`self.<name>`, value) of `self.add_module(name, value)`, `self.register_module(name,
    value)` or `setattr(self, name, value)`, the name a literal or an f-string (see
    names.attribute_name); None for other calls."""
    args = [a.value for a in call.args if a.keyword is None and not a.star]
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in _REGISTERING_METHODS and len(args) == 2 == len(call.args):
        owner, name, value = func.value, args[0], args[1]
    elif isinstance(func, cst.Name) and func.value == "setattr" and len(args) == 3 == len(call.args):
        owner, name, value = args
    else:
        return None
    attr = attribute_name(name)
    if not (isinstance(owner, cst.Name) and owner.value == "self") or attr is None:
        return None
    return cst.Attribute(value=owner, attr=cst.Name(attr)), value
