"""One module's symbols: imports, functions (incl. methods and closures), classes, module values."""
from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

import libcst as cst

from ..parse import ParsedModule
from .names import dotted, module_name_for, resolve_relative


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
    node: cst.FunctionDef
    def_line: int
    class_qualname: str | None
    parent_function: str | None
    params: tuple[Param, ...]
    decorators: tuple[cst.Decorator, ...]
    is_generator: bool
    is_async: bool
    local_functions: Mapping[str, str]  # nested def name -> qualname


@dataclass(frozen=True)
class ClassInfo:
    qualname: str
    name: str
    module: str
    path: str
    node: cst.ClassDef
    def_line: int
    bases: tuple[cst.BaseExpression, ...]
    methods: Mapping[str, str]  # method name -> function qualname
    attributes: Mapping[str, cst.BaseExpression]  # self.<attr> = <value> in any method


@dataclass(frozen=True)
class ModuleIndex:
    name: str
    path: str
    is_package: bool
    parsed: ParsedModule
    imports: Mapping[str, str]  # local name -> qualified name
    star_imports: tuple[str, ...]
    functions: Mapping[str, FunctionInfo]  # qualname -> info
    classes: Mapping[str, ClassInfo]
    top_level: Mapping[str, str]  # module-level def/class name -> qualname
    values: Mapping[str, cst.BaseExpression]  # module-level `name = <expr>` (last wins)


class _Collector(cst.CSTVisitor):
    def __init__(self, parsed: ParsedModule, module: str, is_package: bool):
        self.parsed = parsed
        self.module = module
        self.is_package = is_package
        self.imports: dict[str, str] = {}
        self.star_imports: list[str] = []
        self.functions: dict[str, FunctionInfo] = {}
        self.classes: dict[str, dict] = {}
        self.top_level: dict[str, str] = {}
        self.values: dict[str, cst.BaseExpression] = {}
        self.scopes: list[tuple[str, str]] = []  # (kind, qualname)
        self.locals_stack: list[dict[str, str]] = []
        self.yields: list[bool] = []

    # -- scopes ----------------------------------------------------------------------
    def _qual(self, name: str) -> str:
        prefix = self.scopes[-1][1] if self.scopes else self.module
        return f"{prefix}.{name}"

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        qual = self._qual(node.name.value)
        if not self.scopes:
            self.top_level[node.name.value] = qual
        self.classes[qual] = {"node": node, "methods": {}, "attributes": {}}
        self.scopes.append(("class", qual))
        return True

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self.scopes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        qual = self._qual(node.name.value)
        if not self.scopes:
            self.top_level[node.name.value] = qual
        elif self.scopes[-1][0] == "class":
            self.classes[self.scopes[-1][1]]["methods"][node.name.value] = qual
        elif self.locals_stack:
            self.locals_stack[-1][node.name.value] = qual
        self.scopes.append(("function", qual))
        self.locals_stack.append({})
        self.yields.append(False)
        return True

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        _, qual = self.scopes.pop()
        local_functions = self.locals_stack.pop()
        is_generator = self.yields.pop()
        class_qual = next((q for k, q in reversed(self.scopes) if k == "class"), None)
        if self.scopes and self.scopes[-1][0] != "class":
            class_qual = None  # a closure inside a method is not itself a method
        parent = next((q for k, q in reversed(self.scopes) if k == "function"), None)
        self.functions[qual] = FunctionInfo(
            qualname=qual, name=node.name.value, module=self.module, path=str(self.parsed.path),
            node=node, def_line=self.parsed.positions[node.name].start.line,
            class_qualname=class_qual, parent_function=parent, params=_params(node.params),
            decorators=tuple(node.decorators), is_generator=is_generator,
            is_async=node.asynchronous is not None,
            local_functions=MappingProxyType(local_functions),
        )

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False  # a yield in a lambda is not ours; lambdas are opaque

    def visit_Yield(self, node: cst.Yield) -> bool:
        if self.yields:
            self.yields[-1] = True
        return True

    # generator expressions / comprehensions contain no yields of the enclosing function
    # -- imports ---------------------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> bool:
        for alias in node.names:
            full = dotted(alias.name)
            if not full:
                continue
            if alias.asname is not None:
                self.imports[alias.asname.name.value] = full
            else:
                head = full.split(".")[0]
                self.imports.setdefault(head, head)
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        level = len(node.relative)
        target = dotted(node.module) if node.module is not None else None
        base = resolve_relative(self.module, self.is_package, level, target) if level else (target or "")
        if isinstance(node.names, cst.ImportStar):
            self.star_imports.append(base)
            return False
        for alias in node.names:
            name = alias.name.value if isinstance(alias.name, cst.Name) else dotted(alias.name)
            local = alias.asname.name.value if alias.asname is not None else name
            if name and local:
                self.imports[local] = f"{base}.{name}" if base else name
        return False

    # -- values ----------------------------------------------------------------------
    def visit_Assign(self, node: cst.Assign) -> bool:
        for target in node.targets:
            self._record_target(target.target, node.value)
        return True

    def visit_AnnAssign(self, node: cst.AnnAssign) -> bool:
        if node.value is not None:
            self._record_target(node.target, node.value)
        return True

    def _record_target(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if not self.scopes and isinstance(target, cst.Name):
            self.values[target.value] = value
            return
        if (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                and target.value.value == "self"):
            cls = next((q for k, q in reversed(self.scopes) if k == "class"), None)
            if cls is not None:
                self.classes[cls]["attributes"].setdefault(target.attr.value, value)

    def build(self) -> ModuleIndex:
        classes = {}
        for qual, data in self.classes.items():
            node = data["node"]
            classes[qual] = ClassInfo(
                qualname=qual, name=node.name.value, module=self.module,
                path=str(self.parsed.path), node=node,
                def_line=self.parsed.positions[node.name].start.line,
                bases=tuple(arg.value for arg in node.bases if arg.keyword is None),
                methods=MappingProxyType(data["methods"]),
                attributes=MappingProxyType(data["attributes"]),
            )
        return ModuleIndex(
            name=self.module, path=str(self.parsed.path), is_package=self.is_package,
            parsed=self.parsed, imports=MappingProxyType(self.imports),
            star_imports=tuple(self.star_imports), functions=MappingProxyType(self.functions),
            classes=MappingProxyType(classes), top_level=MappingProxyType(self.top_level),
            values=MappingProxyType(self.values),
        )


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


def index_module(parsed: ParsedModule) -> ModuleIndex:
    path = parsed.path
    collector = _Collector(parsed, module_name_for(path), path.stem == "__init__")
    parsed.module.visit(collector)
    return collector.build()
