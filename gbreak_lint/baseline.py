"""Baselines: record today's findings, then report only new ones (keyed by fingerprint)."""
from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

from . import __version__
from .diagnostics import LintResult
from .files import atomic_write
from .report import relpath

FORMAT_VERSION = 1


class BaselineError(ValueError):
    pass


@dataclass(frozen=True)
class BaselineOutcome:
    result: LintResult  # findings not in the baseline
    suppressed: int  # findings the baseline accepted
    removable: tuple[dict, ...]  # baseline entries that no longer occur


def write_baseline(result: LintResult, path: Path) -> int:
    entries = [{"fingerprint": d.fingerprint, "code": d.code, "path": relpath(d.path),
                "line": d.span.line, "message": d.message} for d in result.diagnostics]
    doc = {"version": FORMAT_VERSION, "tool": {"name": "gbreak-lint", "version": __version__},
           "findings": entries}
    atomic_write(path, (json.dumps(doc, indent=1) + "\n").encode("utf-8"))
    return len(entries)


def apply_baseline(result: LintResult, path: Path) -> BaselineOutcome:
    known = load_baseline(path)
    kept = tuple(d for d in result.diagnostics if d.fingerprint not in known)
    present = {d.fingerprint for d in result.diagnostics}
    removable = tuple(entry for fp, entry in known.items() if fp not in present)
    return BaselineOutcome(replace(result, diagnostics=kept), len(result.diagnostics) - len(kept), removable)


def load_baseline(path: Path) -> dict[str, dict]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise BaselineError(f"cannot read baseline {path}: {err}") from err
    if not isinstance(doc, dict) or doc.get("version") != FORMAT_VERSION:
        raise BaselineError(f"{path}: not a gbreak-lint baseline (version {FORMAT_VERSION})")
    return {e["fingerprint"]: e for e in doc.get("findings", []) if e.get("fingerprint")}
