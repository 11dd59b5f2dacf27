"""The project index: every module of the project and name resolution across them."""
from __future__ import annotations

import builtins
from dataclasses import dataclass
from typing import Mapping

import libcst as cst

from .names import dotted
from .symbols import ClassInfo, FunctionInfo, ModuleIndex

BUILTIN_NAMES = frozenset(dir(builtins))
MAX_REEXPORT_HOPS = 8


@dataclass(frozen=True)
class ProjectIndex:
    modules: Mapping[str, ModuleIndex]  # module name -> index
    by_path: Mapping[str, str]  # file path -> module name

    # -- lookups ---------------------------------------------------------------------
    def function(self, qualname: str | None) -> FunctionInfo | None:
        target = self.lookup(qualname)
        return target if isinstance(target, FunctionInfo) else None

    def klass(self, qualname: str | None) -> ClassInfo | None:
        target = self.lookup(qualname)
        return target if isinstance(target, ClassInfo) else None

    def lookup(self, qualname: str | None, hops: int = 0) -> FunctionInfo | ClassInfo | None:
        """Find a project function or class by qualified name, following re-exports."""
        if not qualname or hops > MAX_REEXPORT_HOPS:
            return None
        module, rest = self._split_module(qualname)
        if module is None:
            return None
        if not rest:
            return None
        if qualname in module.functions:
            return module.functions[qualname]
        if qualname in module.classes:
            return module.classes[qualname]
        head, _, tail = rest.partition(".")
        if head in module.imports:  # re-exported name (e.g. through __init__.py)
            again = module.imports[head] + (f".{tail}" if tail else "")
            return self.lookup(again, hops + 1)
        for star in module.star_imports:
            found = self.lookup(f"{star}.{rest}", hops + 1)
            if found is not None:
                return found
        return self._inherited_member(module, head, tail, hops)

    def _inherited_member(self, module: ModuleIndex, head: str, tail: str, hops: int):
        """`pkg.mod.Class.method` where the method is defined on a base class."""
        cls = module.classes.get(f"{module.name}.{head}")
        if cls is None or not tail or "." in tail:
            return None
        for base in self.mro(cls)[1:]:
            if tail in base.methods:
                return self.lookup(base.methods[tail], hops + 1)
        return None

    def _split_module(self, qualname: str) -> tuple[ModuleIndex | None, str]:
        parts = qualname.split(".")
        for i in range(len(parts), 0, -1):
            name = ".".join(parts[:i])
            if name in self.modules:
                return self.modules[name], ".".join(parts[i:])
        return None, ""

    def is_project_module(self, name: str) -> bool:
        return name in self.modules

    # -- name resolution ---------------------------------------------------------------
    def qualify(self, expr: cst.BaseExpression, module: ModuleIndex,
                function: FunctionInfo | None = None) -> str | None:
        """Qualified name of a plain name/attribute chain as seen from `function` in `module`."""
        text = dotted(expr)
        if text is None:
            return None
        return self.qualify_text(text, module, function)

    def qualify_text(self, text: str, module: ModuleIndex,
                     function: FunctionInfo | None = None) -> str | None:
        head, _, tail = text.partition(".")
        base = self._qualify_head(head, module, function)
        if base is None:
            return None
        return f"{base}.{tail}" if tail else base

    def _qualify_head(self, head: str, module: ModuleIndex, function: FunctionInfo | None):
        scope = function
        while scope is not None:  # closures: the nearest enclosing def wins
            if head in scope.local_functions:
                return scope.local_functions[head]
            if head in {p.name for p in scope.params}:
                return None  # a parameter shadows globals; unknown value
            scope = module.functions.get(scope.parent_function) if scope.parent_function else None
        if head in module.top_level:
            return module.top_level[head]
        if head in module.imports:
            return module.imports[head]
        for star in module.star_imports:
            if self.lookup(f"{star}.{head}") is not None:
                return f"{star}.{head}"
        if head in BUILTIN_NAMES and head not in module.values:
            return f"builtins.{head}"
        return None

    # -- classes -----------------------------------------------------------------------
    def base_names(self, cls: ClassInfo) -> list[str]:
        module = self.modules[cls.module]
        names = []
        for base in cls.bases:
            q = self.qualify(base, module)
            if q:
                names.append(q)
        return names

    def mro(self, cls: ClassInfo, seen: frozenset = frozenset()) -> list[ClassInfo]:
        """Project classes in (depth-first, left-to-right) resolution order; cycles cut."""
        if cls.qualname in seen:
            return []
        out = [cls]
        for name in self.base_names(cls):
            base = self.klass(name)
            if base is not None:
                for c in self.mro(base, seen | {cls.qualname}):
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

    def class_attribute(self, cls: ClassInfo, attr: str) -> tuple[ClassInfo, cst.BaseExpression] | None:
        for c in self.mro(cls):
            if attr in c.attributes:
                return c, c.attributes[attr]
        return None

    def module_of(self, info: FunctionInfo | ClassInfo) -> ModuleIndex:
        return self.modules[info.module]
