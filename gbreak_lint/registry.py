"""Engine objects that serve rules: structural checks (checks/) and rewrites (fix/).

A rule's data lives in its YAML file; the Python that serves it registers itself under the
rule codes it serves (like pylint's `msgs` + `register()`, or a Fixit rule class):

    @CHECKS.register("GBL101")          # in gbreak_lint/checks/loop.py
    def run(rule, prediction): ...

The YAML names the module (`check: loop`, `fix: {rewrite: unroll_loop}`) and the module names
its codes; `bind` cross-checks both directions, so a typo on either side fails when the
catalog is loaded, not when a finding first needs the object. Modules are found by listing
their package (every module of checks/ and fix/ is imported once), never by importing a name
read from a rule file.
"""
from __future__ import annotations

import pkgutil
from dataclasses import dataclass
from importlib import import_module
from types import MappingProxyType
from typing import Callable, Mapping

from .catalog import Catalog, CatalogError, Rule


@dataclass(frozen=True)
class Registered:
    name: str  # the module's name: what a rule's YAML refers to
    codes: tuple[str, ...]  # the rules it serves
    fn: Callable
    uses_thresholds: bool = False  # checks only: takes the configured Thresholds as well


class Registry:
    """One kind of engine object, registered by the modules of one package."""

    def __init__(self, package: str, yaml_key: str, declared: Callable[[Rule], str | None]):
        self.package = package
        self.yaml_key = yaml_key  # how a rule file names the module, for error messages
        self.declared = declared  # the module name a rule declares, if any
        self._by_name: dict[str, Registered] = {}
        self._discovered = False

    def register(self, *codes: str, uses_thresholds: bool = False) -> Callable[[Callable], Callable]:
        def decorate(fn: Callable) -> Callable:
            name = fn.__module__.rsplit(".", 1)[-1]
            if name in self._by_name:
                raise CatalogError(f"{fn.__module__}: registers a second {self.yaml_key} object")
            self._by_name[name] = Registered(name, tuple(codes), fn, uses_thresholds)
            return fn
        return decorate

    def all(self) -> Mapping[str, Registered]:
        if not self._discovered:
            self._discovered = True  # set first: a module importing its package must not recurse
            package = import_module(self.package)
            for info in pkgutil.iter_modules(package.__path__):
                import_module(f"{self.package}.{info.name}")
        return MappingProxyType(self._by_name)

    def get(self, name: str) -> Registered:
        return self.all()[name]

    def bind(self, catalog: Catalog) -> None:
        """Every rule naming a module finds it registered for its code, and every code a
        module registers is a rule naming that module."""
        found = self.all()
        for rule in catalog.rules:
            name = self.declared(rule)
            if name is None:
                continue
            entry = found.get(name)
            if entry is None:
                raise CatalogError(f"{rule.source}: unknown {self.yaml_key} '{name}' (known: {', '.join(sorted(found))})")
            if rule.code not in entry.codes:
                raise CatalogError(f"{rule.source}: {self.yaml_key} '{name}' serves {', '.join(entry.codes)}, "
                                   f"not {rule.code}")
        for entry in found.values():
            for code in entry.codes:
                served = catalog.get(code)
                if served is None or self.declared(served) != entry.name:
                    raise CatalogError(f"{self.package}.{entry.name}: registered for {code}, "
                                       f"which is not a rule with {self.yaml_key}: {entry.name}")


CHECKS = Registry("gbreak_lint.checks", "check", lambda rule: rule.check)
REWRITES = Registry("gbreak_lint.fix", "fix.rewrite", lambda rule: rule.fix_rewrite)


def bind_catalog(catalog: Catalog) -> Catalog:
    """The catalog, once its checks and rewrites are known to match it (CatalogError if not)."""
    CHECKS.bind(catalog)
    REWRITES.bind(catalog)
    return catalog
