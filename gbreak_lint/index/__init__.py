"""Index stage: symbols of every module, name resolution, compile entry points."""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from ..knowledge import Knowledge
from ..parse import ParsedModule
from .entries import ConfigSet, EntryPoint, find_entries
from .project import ProjectIndex
from .symbols import ModuleIndex, index_module


@dataclass(frozen=True)
class IndexResult:
    project: ProjectIndex
    entries: tuple[EntryPoint, ...]
    configs: tuple[ConfigSet, ...]


def build_index(parsed: list[ParsedModule], knowledge: Knowledge) -> IndexResult:
    modules: dict[str, ModuleIndex] = {}
    by_path: dict[str, str] = {}
    for p in parsed:
        mod = index_module(p)
        name = mod.name
        n = 2
        while name in modules:  # two files claim one import name: keep both, imports see the first
            name = f"{mod.name}#{n}"
            n += 1
        if name != mod.name:
            mod = _renamed(mod, name)
        modules[name] = mod
        by_path[mod.path] = name
    project = ProjectIndex(MappingProxyType(modules), MappingProxyType(by_path))
    entries: list[EntryPoint] = []
    configs: list[ConfigSet] = []
    for mod in modules.values():
        found, sets = find_entries(project, knowledge, mod)
        entries += found
        configs += sets
    return IndexResult(project, tuple(entries), tuple(configs))


def _renamed(mod: ModuleIndex, name: str) -> ModuleIndex:
    from dataclasses import replace

    old = mod.name

    def re(q: str) -> str:
        return name + q[len(old):] if q.startswith(old + ".") else q

    functions = {re(q): replace(f, qualname=re(f.qualname), module=name,
                                parent_function=re(f.parent_function) if f.parent_function else None,
                                class_qualname=re(f.class_qualname) if f.class_qualname else None,
                                local_functions=MappingProxyType({k: re(v) for k, v in f.local_functions.items()}))
                 for q, f in mod.functions.items()}
    classes = {re(q): replace(c, qualname=re(c.qualname), module=name,
                              methods=MappingProxyType({k: re(v) for k, v in c.methods.items()}))
               for q, c in mod.classes.items()}
    return replace(mod, name=name, functions=MappingProxyType(functions),
                   classes=MappingProxyType(classes),
                   top_level=MappingProxyType({k: re(v) for k, v in mod.top_level.items()}))
