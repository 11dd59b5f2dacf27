"""Index stage: symbols of every module, name resolution, compile entry points."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping
from types import MappingProxyType

from ..diagnostics import FileError
from ..knowledge import Knowledge
from ..parse import ParsedModule
from .entries import ConfigSet, EntryFacts, EntryPoint, WrappedCompile, find_entries
from .installed import InstalledPackages
from .lazy import IndexStore, LazyModules
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
    """All index stages in this process (the pipeline runs the same steps in workers)."""
    modules: list = []
    errors: list = []
    for p in parsed:
        mod, error = index_file(p)
        modules.append(mod) if mod is not None else errors.append(error)
    project = assemble_project(modules)
    facts = [entry_facts(project, knowledge, mod) for mod in project.modules.values()]
    return collect_entry_facts(project, facts, errors)


def index_file(parsed: ParsedModule) -> tuple[ModuleIndex | None, FileError | None]:
    try:
        return index_module(parsed), None
    except RecursionError as err:
        return None, FileError(str(parsed.path), f"file too deeply nested to index ({err})")
    except Exception as err:  # noqa: BLE001
        if os.environ.get("GBREAK_LINT_DEBUG"):
            raise
        return None, internal_error(str(parsed.path), "indexing", err)


def assemble_project(indexed: list[ModuleIndex], installed: InstalledPackages | None = None,
                     project_files: Mapping[str, Path] | None = None,
                     overlay: Mapping[str, bytes] | None = None,
                     marked: Mapping[str, tuple[str, ...]] | None = None,
                     stored: IndexStore | None = None) -> ProjectIndex:
    """The project's modules by import name; with `installed`, imports the project does not
    define are looked up among installed packages when first asked (script mode); with
    `project_files` (import name -> file), the project's files not in `indexed` are parsed
    when first asked (a demand-driven run); `marked` (text -> module names) tells which of
    those hold the texts project-wide facts look for (forward hooks, disallow_in_graph); `stored`
    gives back the indexes of files unchanged since an earlier run instead of parsing them."""
    modules: dict[str, ModuleIndex] = {}
    by_path: dict[str, str] = {}
    named = {str(path): name for name, path in (project_files or {}).items()}  # the run's own names
    for mod in indexed:
        name = named.get(mod.path, mod.name)
        n = 2
        while name in modules:  # two files claim one import name: keep both, imports see the first
            name = f"{mod.name}#{n}"
            n += 1
        if name != mod.name:
            mod = _renamed(mod, name)
        modules[name] = mod
        by_path[mod.path] = name
    for name, path in (project_files or {}).items():  # files not parsed yet are the project's too
        by_path.setdefault(str(path), name)
    if installed is not None:
        own = frozenset(name.split(".")[0] for name in (*modules, *(project_files or ())))  # the project's packages
        installed = InstalledPackages(installed.paths, installed.excluded | own, installed.only)
    return ProjectIndex(LazyModules(modules, by_path, installed, project_files, overlay, marked, stored), by_path)


def entry_facts(project: ProjectIndex, knowledge: Knowledge, mod: ModuleIndex) -> EntryFacts | FileError:
    try:
        return find_entries(project, knowledge, mod)
    except RecursionError:
        return FileError(mod.path, "file too deeply nested to analyse")
    except Exception as err:  # noqa: BLE001
        if os.environ.get("GBREAK_LINT_DEBUG"):
            raise
        return internal_error(mod.path, "finding compile entry points", err)


def collect_entry_facts(project: ProjectIndex, facts: list, errors: list[FileError]) -> IndexResult:
    entries: list[EntryPoint] = []
    configs: list[ConfigSet] = []
    wrapped: list[WrappedCompile] = []
    errors = list(errors)
    for fact in facts:
        if isinstance(fact, FileError):
            errors.append(fact)
            continue
        entries += fact.entries
        configs += fact.configs
        wrapped += fact.wrapped
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
