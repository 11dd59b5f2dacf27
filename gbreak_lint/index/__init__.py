"""Index stage: symbols of every module, name resolution, compile entry points."""
from __future__ import annotations

import os
from dataclasses import dataclass
from types import MappingProxyType

from ..diagnostics import FileError
from ..knowledge import Knowledge
from ..parse import ParsedModule
from .entries import ConfigSet, EntryPoint, WrappedCompile, find_entries
from .project import ProjectIndex
from .symbols import ModuleIndex, index_module


@dataclass(frozen=True)
class IndexResult:
    project: ProjectIndex
    entries: tuple[EntryPoint, ...]
    configs: tuple[ConfigSet, ...]
    errors: tuple[FileError, ...] = ()
    wrapped: tuple[WrappedCompile, ...] = ()


def internal_error(path: str, stage: str, err: Exception) -> FileError:
    """A bug of ours on one file is reported against that file; the scan goes on."""
    try:
        text = str(err)[:300]
    except Exception:  # noqa: BLE001 - some errors cannot even be printed (deep reprs)
        text = ""
    return FileError(path, f"internal error while {stage}: {type(err).__name__}: {text} "
                           "(please report it; set GBREAK_LINT_DEBUG=1 for the traceback)")


def build_index(parsed: list[ParsedModule], knowledge: Knowledge) -> IndexResult:
    modules: dict[str, ModuleIndex] = {}
    by_path: dict[str, str] = {}
    errors: list[FileError] = []
    for p in parsed:
        try:
            mod = index_module(p)
        except RecursionError as err:
            errors.append(FileError(str(p.path), f"file too deeply nested to index ({err})"))
            continue
        except Exception as err:  # noqa: BLE001
            if os.environ.get("GBREAK_LINT_DEBUG"):
                raise
            errors.append(internal_error(str(p.path), "indexing", err))
            continue
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
    wrapped: list[WrappedCompile] = []
    for mod in modules.values():
        try:
            facts = find_entries(project, knowledge, mod)
        except RecursionError:
            errors.append(FileError(mod.path, "file too deeply nested to analyse"))
            continue
        except Exception as err:  # noqa: BLE001
            if os.environ.get("GBREAK_LINT_DEBUG"):
                raise
            errors.append(internal_error(mod.path, "finding compile entry points", err))
            continue
        entries += facts.entries
        configs += facts.configs
        wrapped += facts.wrapped
    return IndexResult(project, tuple(entries), tuple(configs), tuple(errors), tuple(wrapped))


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
