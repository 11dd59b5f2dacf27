"""Result cache in <project root>/.gbreak_cache/: a re-run with nothing changed costs one read.

The key covers everything a result depends on: the content of every project file, the
configuration and selection, and the tool itself (its source, rules and knowledge files), so
any edit, upgrade or rule change invalidates it. A cache that cannot be read or written is
ignored: the scan simply runs.
"""
from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from functools import lru_cache
from pathlib import Path

from .catalog import builtin_rules_dir

CACHE_DIR = ".gbreak_cache"
KEEP = 4  # result files kept per project


def cache_key(files: list[Path], settings: str, extra_rules: Path | None) -> str | None:
    digest = hashlib.sha256()
    digest.update(_tool_fingerprint().encode())
    digest.update(settings.encode())
    if extra_rules is not None:
        for rule in sorted(extra_rules.glob("*.yaml")):
            digest.update(rule.read_bytes())
    for path in files:
        try:
            data = path.read_bytes()
        except OSError:
            return None
        digest.update(str(path).encode() + b"\0" + hashlib.sha1(data).digest())
    return digest.hexdigest()


@lru_cache(maxsize=1)
def _tool_fingerprint() -> str:
    """Hash of gbreak-lint's own code, rules and knowledge: a new build never reuses results."""
    digest = hashlib.sha256()
    package = Path(__file__).resolve().parent
    for path in sorted(package.rglob("*.py")) + sorted(package.rglob("*.yaml")) + \
            sorted(builtin_rules_dir().glob("*.yaml")):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def load(root: Path, key: str):
    path = root / CACHE_DIR / f"result-{key[:32]}.pickle"
    try:
        with open(path, "rb") as fh:
            return pickle.load(fh)
    except (OSError, pickle.PickleError, EOFError, AttributeError, ImportError, TypeError):
        return None


def store(root: Path, key: str, value) -> None:
    folder = root / CACHE_DIR
    try:
        folder.mkdir(exist_ok=True)
        (folder / ".gitignore").write_text("*\n")
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, folder / f"result-{key[:32]}.pickle")
        results = sorted(folder.glob("result-*.pickle"), key=lambda p: p.stat().st_mtime)
        for old in results[:-KEEP]:
            old.unlink(missing_ok=True)
    except OSError:
        return
