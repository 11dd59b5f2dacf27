"""Report formatters: each turns a LintResult into text for one output format."""
from __future__ import annotations

import os
from pathlib import Path


def relpath(path: str) -> str:
    """Paths are reported relative to the current directory (absolute when on another drive)."""
    try:
        return Path(os.path.relpath(path)).as_posix()
    except ValueError:
        return Path(path).as_posix()
