"""flake8 plugin (codes GBL...): the same engine, imported only when flake8 runs a check.

flake8 calls the plugin once per file; the project is analysed once per process and root
(calls across modules need the whole project), then each file gets its own findings.
"""
from __future__ import annotations

from pathlib import Path

from . import __version__

_ANALYSES: dict = {}  # project root -> {file path: [diagnostics]}


class Plugin:
    name = "gbreak-lint"
    version = __version__

    def __init__(self, tree, filename: str):
        self.filename = filename

    def run(self):
        if self.filename in ("stdin", "-", None):
            return
        path = Path(self.filename).resolve()
        for d in _diagnostics_for(path):
            yield d.span.line, d.span.column - 1, f"{d.code} {d.message}", type(self)


def _diagnostics_for(path: Path) -> list:
    from .api import lint_paths
    from .config import load_config

    config = load_config(path)
    by_file = _ANALYSES.get(config.root)
    if by_file is None:
        result = lint_paths([config.root], config)
        by_file = {}
        for d in result.diagnostics:
            by_file.setdefault(d.path, []).append(d)
        _ANALYSES[config.root] = by_file
    return by_file.get(str(path), [])
