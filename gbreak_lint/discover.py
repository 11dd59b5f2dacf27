"""Find the Python files to analyse: what the user named, and the whole project for the index."""
from __future__ import annotations

import fnmatch
import os
from pathlib import Path

SKIP_DIRS = frozenset({
    ".git", ".hg", ".svn", "__pycache__", "site-packages", "dist-packages", "node_modules",
    "build", "dist", ".venv", "venv", ".tox", ".nox", ".eggs", ".mypy_cache",
    ".pytest_cache", ".ruff_cache", ".gbreak_cache", ".ipynb_checkpoints",
})


def is_skipped_dir(path: Path) -> bool:
    name = path.name
    if name in SKIP_DIRS or name.endswith(".egg-info"):
        return True
    return (path / "pyvenv.cfg").exists()  # any virtualenv, whatever its name


def is_excluded(path: Path, root: Path, patterns: tuple[str, ...]) -> bool:
    if not patterns:
        return False
    try:
        rel = path.resolve().relative_to(root).as_posix()
    except ValueError:
        rel = path.as_posix()
    parts = rel.split("/")
    candidates = {rel, path.name} | {"/".join(parts[:i]) for i in range(1, len(parts))}
    for pattern in patterns:
        pat = pattern.rstrip("/")
        for cand in candidates:
            if fnmatch.fnmatchcase(cand, pat) or fnmatch.fnmatchcase(cand, pat + "/**"):
                return True
    return False


def iter_python_files(paths: list[Path], root: Path, exclude: tuple[str, ...]) -> list[Path]:
    """Absolute, de-duplicated, sorted .py files under `paths` (files are taken as given)."""
    found: set[Path] = set()
    for given in paths:
        p = given.resolve()
        if p.is_file():
            if not is_excluded(p, root, exclude):
                found.add(p)
        elif p.is_dir():
            found.update(_walk(p, root, exclude))
    return sorted(found)


def _walk(top: Path, root: Path, exclude: tuple[str, ...]):
    # followlinks=False: a symlink loop cannot make discovery run forever
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        here = Path(dirpath)
        dirnames[:] = sorted(
            d for d in dirnames
            if not is_skipped_dir(here / d) and not is_excluded(here / d, root, exclude)
        )
        for name in filenames:
            if name.endswith(".py"):
                f = here / name
                if f.is_file() and not is_excluded(f, root, exclude):
                    yield f
