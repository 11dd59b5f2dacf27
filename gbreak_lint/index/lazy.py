"""The project's modules plus the installed ones its imports reach, indexed when first asked.

`ProjectIndex.modules` is this mapping: looking a name up (`name in modules`,
`modules.get(name)`) finds a project module, or parses and indexes the installed module of that
name on the search path (script mode). A demand-driven run (`--entry`) also leaves the project's
own files unparsed until a lookup names them (`project_files`). Iterating sees only what has
been loaded, so stages that walk "every module" (entry points) walk what the run loaded up
front (the modules that may hold Dynamo settings) and what it reached; project-wide facts found
by text (forward hooks, disallow_in_graph) load the modules the skeleton marked as holding it.
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from ..diagnostics import Diagnostic, FileError
from ..files import read_regular
from ..parse import MAX_FILE_BYTES, TREES, ParseOutcome, parse_source, read_source
from .names import resolve_relative
from .installed import InstalledPackages
from .project import ReadLog
from .symbols import ModuleIndex, index_module


STAR_IMPORT = re.compile(r"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+\*", re.M)


class IndexStore(Protocol):
    """Module indexes kept between runs by file content (implemented by the speed layer)."""

    def load(self, name: str, path: Path, data: bytes) -> ModuleIndex | None: ...

    def keep(self, name: str, digest: str, module: ModuleIndex, if_absent: bool = False) -> None: ...


class LazyModules(Mapping):
    def __init__(self, project: dict[str, ModuleIndex], by_path: dict[str, str],
                 installed: InstalledPackages | None, project_files: Mapping[str, Path] | None = None,
                 overlay: Mapping[str, bytes] | None = None,
                 marked: Mapping[str, tuple[str, ...]] | None = None, stored: IndexStore | None = None):
        self._modules = project
        self._stored = stored  # indexes of unchanged files from earlier runs
        self._marked = marked or {}  # text -> the project modules whose source holds it (not parsed yet)
        self._by_path = by_path
        self._installed = installed
        self._project_files = project_files or {}  # import name -> file, not parsed yet
        self._overlay = overlay or {}
        self._missing: set[str] = set()
        self._folders: list[Path] | None = None  # the folders holding the project's files
        self.library_paths: set[str] = set()  # files loaded from installed packages
        self.failures: list[tuple[str, Diagnostic | None, FileError | None]] = []  # project files that did not parse
        self.reads = ReadLog()
        self._may_define: dict[tuple[str, str], bool] = {}  # the names asked for, found or not (what a result depends on)

    def _load(self, name: str) -> ModuleIndex | None:
        if name in self._missing:
            return None
        module = self._load_project(name) if name in self._project_files else self._load_installed(name)
        if module is None:
            self._missing.add(name)
            return None
        self._modules[name] = module
        self._by_path[module.path] = name
        return module

    def _load_project(self, name: str) -> ModuleIndex | None:
        path = self._project_files[name]
        module, outcome = self._indexed(name, path, self._overlay.get(str(path)))
        if module is None:
            self.failures.append((str(path), outcome.diagnostic if outcome else None, outcome.error if outcome else None))
        return module

    def _load_installed(self, name: str) -> ModuleIndex | None:
        if self._installed is None:
            return None
        path = self._installed.find(name)
        module = self._indexed(name, path)[0] if path is not None else None
        if module is None or str(path) in self._by_path:
            return None
        self.library_paths.add(module.path)
        return module

    def _indexed(self, name: str, path: Path, data: bytes | None = None) -> tuple[ModuleIndex | None, ParseOutcome | None]:
        """The file's index (from the store when its content is unchanged), with the parse
        outcome when it was parsed or could not be read."""
        found = stored_index(self._stored, name, path, data)
        if not isinstance(found, bytes):
            return (found, None) if isinstance(found, ModuleIndex) else (None, found)
        outcome = parse_source(path, found)
        module = _index(outcome, name)
        keep_index(self._stored, name, found, module)
        return module, outcome

    def __getitem__(self, name: str) -> ModuleIndex:
        self.reads.note(name)
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
        self.reads.note(name)
        return name in self._modules or self._load(name) is not None

    def importable(self, name: str) -> bool | None:
        """Can the program import `name` (dotted; its top-level package decides): the
        project defines it, or the search path holds it. None when installed packages are
        not looked up (nothing tells a missing module from one installed elsewhere)."""
        if self._installed is None:
            return None
        top = name.split(".")[0]
        self.reads.note(top)  # a project module of that name added later changes the answer
        if top in self._modules or top in self._project_files or any(
                n.startswith(top + ".") for n in (*self._modules, *self._project_files)):
            return True
        return self._installed.holds_top_level(top) or self._in_project_folders(top)

    def _in_project_folders(self, top: str) -> bool:
        """A folder or file of that name beside the project's files (a namespace package
        without `__init__.py`, a data folder the script's directory puts on sys.path)."""
        if self._folders is None:
            files = [Path(p) for p in self._by_path if p not in self.library_paths]
            files += [Path(p) for p in self._project_files.values()]
            self._folders = sorted({f.parent for f in files})
        return any((folder / top).is_dir() or (folder / f"{top}.py").is_file() for folder in self._folders)

    def may_define(self, module: str, name: str, seen: frozenset[str] = frozenset()) -> bool:
        """Whether a star import of `module` can bring `name`, from the text of modules not yet
        parsed: the name must appear as a word in it or in a module it star-imports in turn.
        (Large packages re-export every submodule with `import *`; without this a lookup
        parsed them one by one until the name turned up.)"""
        self.reads.note(module)
        if module in self._modules or module in seen:
            return True
        key = (module, name)
        if key not in self._may_define:
            self._may_define[key] = self._text_may_define(module, name, seen | {module})
        return self._may_define[key]

    def _text_may_define(self, module: str, name: str, seen: frozenset[str]) -> bool:
        found = self._source_of(module)
        if found is None:
            return True  # unreadable here: let the lookup decide (it will find nothing)
        path, text = found
        if re.search(rf"\b{re.escape(name)}\b", text):
            return True
        is_package = path.stem == "__init__"
        for dots, target in STAR_IMPORT.findall(text):
            base = resolve_relative(module, is_package, len(dots), target or None) if dots else target
            if base and self.may_define(base, name, seen):
                return True
        return False

    def _source_of(self, module: str) -> tuple[Path, str] | None:
        path = self._project_files.get(module)
        if path is None and self._installed is not None:
            path = self._installed.find(module)
        if path is None:
            return None
        data = self._overlay.get(str(path))
        try:
            data = data if data is not None else read_regular(path, MAX_FILE_BYTES)
        except OSError:
            return None
        return path, data.decode("utf-8", "replace")

    def with_text(self, text: str) -> list[ModuleIndex]:
        """The modules whose source holds `text`: those the run was told hold it (loaded now,
        when a task first asks: a run whose tasks all come from the cache never parses them),
        and any other loaded one that does."""
        for name in self._marked.get(text, ()):
            self.get(name)
        return [m for m in self._modules.values() if text in m.parsed.text]

    def loaded_values(self) -> list[ModuleIndex]:
        """The modules indexed so far, without noting them as read."""
        return list(self._modules.values())

    def __iter__(self):
        return iter(list(self._modules))

    def __len__(self) -> int:
        return len(self._modules)


def stored_index(stored: IndexStore | None, name: str, path: Path,
                 data: bytes | None) -> ModuleIndex | bytes | ParseOutcome:
    """The index `stored` keeps for this content of the file; else its bytes, to parse (`data`
    if given, else read), or why it cannot be read."""
    if data is None:
        read = read_source(path)
        if isinstance(read, ParseOutcome):
            return read
        data = read
    module = stored.load(name, path, data) if stored is not None else None
    return module if module is not None else data


def keep_index(stored: IndexStore | None, name: str, data: bytes, module: ModuleIndex | None) -> None:
    if stored is not None and module is not None:
        stored.keep(name, hashlib.sha1(data).hexdigest(), module)


def _index(outcome: ParseOutcome, name: str) -> ModuleIndex | None:
    if outcome.parsed is None:
        return None  # a file we cannot read is simply not followed
    try:
        return index_module(TREES.adopt(outcome.parsed), name)  # its tree kept while the budget allows
    except (RecursionError, ValueError):
        return None
