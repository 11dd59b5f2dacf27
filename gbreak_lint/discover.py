"""Find the Python files to analyse: what the user named, and the whole project for the index."""
from __future__ import annotations

import fnmatch
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from .diagnostics import FileError

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


@dataclass(frozen=True)
class Discovered:
    """The files to analyse, and the ones passed over with the reason (reported, never fatal)."""

    files: tuple[Path, ...]
    skipped: tuple[FileError, ...] = ()


def iter_python_files(paths: list[Path], root: Path, exclude: tuple[str, ...]) -> list[Path]:
    return list(discover(paths, root, exclude).files)


def discover(paths: list[Path], root: Path, exclude: tuple[str, ...]) -> Discovered:
    """Absolute, de-duplicated, sorted .py files under `paths` (files are taken as given).

    The tree is untrusted: a symlink is followed only to a file inside the project root (its
    real path is what is analysed), and anything that is not a regular file (a FIFO would
    block the reader forever, a device could stream) is passed over with a notice."""
    found: set[Path] = set()
    skipped: dict[str, FileError] = {}
    root = root.resolve()
    for given in paths:
        walked = given.is_dir()
        candidates = _walk(given.resolve(), root, exclude) if walked else [given]
        for path in candidates:
            verdict = _admit(Path(path), root, walked)
            if isinstance(verdict, FileError):
                skipped.setdefault(verdict.path, verdict)
            elif not is_excluded(verdict, root, exclude):
                found.add(verdict)
    return Discovered(tuple(sorted(found)), tuple(sorted(skipped.values(), key=lambda e: e.path)))


def _inside(path: Path, root: Path) -> bool:
    try:
        return path.resolve().is_relative_to(root)
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop
        return False


def _admit(path: Path, root: Path, walked: bool = False) -> Path | FileError:
    """The real path of a file to analyse, or why it is passed over. A regular file found by
    walking a resolved folder without following links is its own real path (no resolve:
    resolving every file of a large tree cost most of a pre-commit run's discovery)."""
    if walked:
        try:
            if stat.S_ISREG(os.lstat(path).st_mode):
                return path
        except OSError:
            pass  # the slow path says why
    absolute = Path(os.path.abspath(path))
    if absolute.is_symlink() and not _inside(absolute, root):
        return FileError(str(absolute), "symlink to a location outside the project root; not followed")
    try:
        real = absolute.resolve(strict=True)
        mode = real.stat().st_mode
    except (OSError, RuntimeError) as err:
        return FileError(str(absolute), f"cannot read file: {getattr(err, 'strerror', None) or err}")
    if stat.S_ISDIR(mode):
        return FileError(str(absolute), "symlink to a directory; not followed")
    if not stat.S_ISREG(mode):
        return FileError(str(absolute), "not a regular file (FIFO, socket or device); not read")
    return real


def _walk(top: Path, root: Path, exclude: tuple[str, ...]):
    # followlinks=False: a symlink loop cannot make discovery run forever
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        here = Path(dirpath)
        dirnames[:] = sorted(
            d for d in dirnames
            if not is_skipped_dir(here / d) and not is_excluded(here / d, root, exclude)
        )
        for name in filenames:
            if name.endswith(".py") and not is_excluded(here / name, root, exclude):
                yield here / name
