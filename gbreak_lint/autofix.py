"""Apply the rewrites rules declare (`fix: {rewrite: ...}`), re-analysing until the code converges.

It sits above api.py (it re-runs the whole analysis after each rewrite), so fix/ itself never
imports the pipeline.

One fix per file per round: every rewrite sees positions of the code it edits. Edits live in
an overlay until the end, so `--diff` and `--fix` walk the same path; files are written
atomically (temp file + rename), keeping their encoding and newline style (libcst round-trips
both). A rewrite whose result does not parse is dropped and reported.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path

from .api import Selection, analyse
from .catalog import Catalog
from .config import Config
from .diagnostics import Diagnostic, FileError
from .files import atomic_write
from .parse import parse_source
from .report import relpath
from .fix import try_rewrite

MAX_ROUNDS = 25


@dataclass
class FixReport:
    original: dict[str, bytes] = field(default_factory=dict)
    current: dict[str, bytes] = field(default_factory=dict)
    applied: list[tuple[str, str]] = field(default_factory=list)  # (path, rule code)
    errors: list[FileError] = field(default_factory=list)

    def changed(self) -> list[str]:
        return sorted(p for p, data in self.current.items() if data != self.original[p])

    def diff(self) -> str:
        out: list[str] = []
        for path in self.changed():
            old = _text(self.original[path]).splitlines(keepends=True)
            new = _text(self.current[path]).splitlines(keepends=True)
            name = relpath(path)
            out += difflib.unified_diff(old, new, fromfile=f"a/{name}", tofile=f"b/{name}")
        return "".join(out)


def fix_paths(paths: list[Path], config: Config, selection: Selection, unsafe: bool) -> FixReport:
    report = FixReport()
    failed: set[tuple[str, str, int]] = set()
    for _ in range(MAX_ROUNDS):
        analysis = analyse(paths, config, selection, overlay=report.current)
        candidates = [d for d in analysis.result.diagnostics if _wanted(d, analysis.catalog, unsafe)
                      and (d.path, d.code, d.span.line) not in failed]
        progress = False
        for path in sorted({d.path for d in candidates}):
            for d in (d for d in candidates if d.path == path):
                if _apply(d, analysis.catalog, report):
                    progress = True
                    break  # positions changed: re-analyse before the next fix in this file
                failed.add((d.path, d.code, d.span.line))
        if not progress:
            break
    return report


def _wanted(d: Diagnostic, catalog: Catalog, unsafe: bool) -> bool:
    rule = catalog.get(d.code)
    if d.fix is None or rule is None or not rule.fix_rewrite:
        return False
    return d.fix.safety == "safe" or unsafe


def _apply(d: Diagnostic, catalog: Catalog, report: FixReport) -> bool:
    path = d.path
    if path not in report.current:
        data = Path(path).read_bytes()
        report.original[path] = report.current[path] = data
    parsed = parse_source(Path(path), report.current[path]).parsed
    rule = catalog.get(d.code)
    if parsed is None or rule is None or not rule.fix_rewrite:
        return False
    new_module = try_rewrite(parsed, d, rule.fix_rewrite)
    if new_module is None:
        return False
    new = new_module.bytes
    if parse_source(Path(path), new).parsed is None:  # never keep code that does not parse
        report.errors.append(FileError(path, f"{d.code} rewrite produced invalid code; not applied"))
        return False
    report.current[path] = new
    report.applied.append((path, d.code))
    return True


def write_changes(report: FixReport) -> None:
    for path in report.changed():
        atomic_write(Path(path), report.current[path])


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")
