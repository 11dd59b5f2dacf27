"""The project's modules plus the installed ones its imports reach, indexed when first asked.

`ProjectIndex.modules` is this mapping: looking a name up (`name in modules`,
`modules.get(name)`) finds a project module, or parses and indexes the installed module of that
name on the search path (script mode). Iterating sees only what has been loaded, so stages that
walk "every module" (entry points, hooks) still walk the project and what it reached.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..parse import parse_file
from .installed import InstalledPackages
from .symbols import ModuleIndex, index_module


class LazyModules(Mapping):
    def __init__(self, project: dict[str, ModuleIndex], by_path: dict[str, str],
                 installed: InstalledPackages | None):
        self._modules = project
        self._by_path = by_path
        self._installed = installed
        self._missing: set[str] = set()
        self.library_paths: set[str] = set()  # files loaded from installed packages

    def _load(self, name: str) -> ModuleIndex | None:
        if self._installed is None or name in self._missing:
            return None
        path = self._installed.find(name)
        module = _index(path, name) if path is not None else None
        if module is None or str(path) in self._by_path:
            self._missing.add(name)
            return None
        self._modules[name] = module
        self._by_path[module.path] = name
        self.library_paths.add(module.path)
        return module

    def __getitem__(self, name: str) -> ModuleIndex:
        found = self._modules.get(name)
        if found is None:
            found = self._load(name)
        if found is None:
            raise KeyError(name)
        return found

    def loaded(self, name: str) -> bool:
        """Whether the module is indexed already (asking loads nothing)."""
        return name in self._modules

    def __contains__(self, name) -> bool:
        return name in self._modules or self._load(name) is not None

    def __iter__(self):
        return iter(list(self._modules))

    def __len__(self) -> int:
        return len(self._modules)


def _index(path: Path, name: str) -> ModuleIndex | None:
    parsed = parse_file(path).parsed
    if parsed is None:
        return None  # an installed file we cannot read is simply not followed
    try:
        return index_module(parsed, name)
    except (RecursionError, ValueError):
        return None
