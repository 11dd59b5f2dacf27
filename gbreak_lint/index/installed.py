"""Installed packages a program imports, read as source (never imported): script mode.

`train.py` builds a transformers model and compiles a step that calls it; the breaks are in the
library. Imports the project does not define are looked up on the search path of a Python
environment (the interpreter gbreak-lint runs in, or `--python PATH` / `python = "..."`: its
`sys.path`, asked from that interpreter, which runs no project code). A module is parsed only
when a lookup reaches it, so a 20-line script costs the modules its calls reach, not the
whole library. torch itself and the standard library are not followed: their breaks are the
causes in the catalog.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

NEVER_FOLLOWED = frozenset({"torch", "torchvision", "torchaudio", "functorch", "triton", "numpy",
                            "typing_extensions", "_pytest", "pytest"})
SEARCH_PATH_TIMEOUT = 30  # seconds for the interpreter to print its sys.path


class InterpreterError(Exception):
    """The interpreter named by --python / `python = ...` cannot be asked for its search path."""


def search_path(python: str) -> tuple[str, ...]:
    """The interpreter's `sys.path` (site-packages and friends), without the current folder.
    Asked once per interpreter and environment (PYTHONPATH changes the answer)."""
    return _search_path(python, os.environ.get("PYTHONPATH", ""))


@lru_cache(maxsize=8)
def _search_path(python: str, pythonpath: str) -> tuple[str, ...]:
    code = "import json, sys; print(json.dumps(sys.path))"
    try:
        out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True,
                             timeout=SEARCH_PATH_TIMEOUT, cwd="/" if os.name != "nt" else None)
        paths = json.loads(out.stdout)
    except (OSError, subprocess.SubprocessError, ValueError) as err:
        raise InterpreterError(f"cannot ask {python} for its search path: {err}") from err
    return tuple(p for p in paths if p and Path(p).is_dir())


def stdlib_names() -> frozenset[str]:
    return frozenset(getattr(sys, "stdlib_module_names", ())) | frozenset(sys.builtin_module_names)


@dataclass
class InstalledPackages:
    """Finds the source file of an importable module on a search path."""

    paths: tuple[str, ...]
    excluded: frozenset[str] = field(default_factory=frozenset)  # top-level names never followed
    only: frozenset[str] = field(default_factory=frozenset)  # when given, the only ones followed
    _found: dict[str, Path | None] = field(default_factory=dict)
    _finders: list[str] | None = None

    def follows(self, name: str) -> bool:
        top = name.split(".")[0]
        if not top or top in self.excluded or top in NEVER_FOLLOWED or top in stdlib_names():
            return False
        return not self.only or top in self.only

    def find(self, name: str) -> Path | None:
        """`pkg.sub.mod` -> `.../pkg/sub/mod.py` or `.../pkg/sub/mod/__init__.py`."""
        if name in self._found:
            return self._found[name]
        found = None
        if self.follows(name):
            parts = name.split(".")
            for root in self.paths:
                base = Path(root, *parts)
                for candidate in (base.with_suffix(".py"), base / "__init__.py"):
                    if candidate.is_file():
                        found = candidate
                        break
                if found is not None:
                    break
        self._found[name] = found
        return found

    def holds_top_level(self, top: str) -> bool:
        """Can `import top` find something on the search path: a module, a package (a
        namespace one too), a compiled extension, or a name never followed (torch, the
        standard library)? Asked only of names no project module defines."""
        if top == "torch" or top in stdlib_names():
            return True  # (torch's own helpers, triton or numpy, are looked up like any package)
        for root in self.paths:
            base = Path(root, top)
            if base.with_suffix(".py").is_file() or base.is_dir() or any(
                    Path(root, top + suffix).is_file() for suffix in EXTENSION_SUFFIXES):
                return True
        return any(f"'{top}'" in text or f'"{top}"' in text for text in self._editable_finders())

    def _editable_finders(self) -> list[str]:
        """The text of the import hooks editable installs put on the search path
        (`__editable___<pkg>_finder.py`, PEP 660): they map top-level names to folders
        elsewhere, found by a finder on sys.meta_path rather than by a path entry."""
        if self._finders is None:
            self._finders = []
            for root in self.paths:
                for finder in sorted(Path(root).glob("__editable__*finder.py")):
                    try:
                        self._finders.append(finder.read_text("utf-8", "replace"))
                    except OSError:
                        continue
        return self._finders

    def signature(self, name: str) -> str | None:
        """What a result that read module `name` depends on: its file's size and times (an
        editable install edited in place changes no search-path folder's time). None: no
        installed file (torch, the standard library, a name that is not there)."""
        path = self.find(name)
        if path is None:
            return None
        try:
            info = os.stat(path)
        except OSError:
            return None
        return f"{path}:{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}"

    def fingerprint(self) -> str:
        """What a cached result read from these packages depends on: the search path and when
        each of its folders last changed (installing or upgrading a package changes it); the
        files it read are checked one by one (`signature`)."""
        parts = []
        for root in self.paths:
            try:
                parts.append(f"{root}:{os.stat(root).st_mtime_ns}")
            except OSError:
                parts.append(root)
        return "|".join(parts) + "|" + ",".join(sorted(self.excluded)) + "|" + ",".join(sorted(self.only))


def for_config(python: str | None, only: tuple[str, ...], project_root: Path | None = None) -> InstalledPackages:
    """The packages of `python` (default: the interpreter running gbreak-lint). Search-path
    folders inside the project (an editable install of it, `PYTHONPATH=.`) are left out: their
    modules are the project's own files, and their folders' times, which every new or renamed
    file changes, would make every cached result look stale."""
    paths = search_path(python) if python else tuple(p for p in sys.path if p and Path(p).is_dir()
                                                     and Path(p).resolve() != Path.cwd().resolve())
    if project_root is not None:
        root = project_root.resolve()
        paths = tuple(p for p in paths if not _inside(Path(p).resolve(), root))
    return InstalledPackages(paths, only=frozenset(only))


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
