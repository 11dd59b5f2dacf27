"""`--format github`: workflow commands GitHub Actions turns into annotations."""
from __future__ import annotations

from ..diagnostics import LintResult
from . import relpath

COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render(result: LintResult) -> str:
    lines = []
    for d in result.diagnostics:
        s = d.span
        props = (f"file={_escape_property(relpath(d.path))},line={s.line},col={s.column},"
                 f"endLine={s.end_line},endColumn={s.end_column},title={_escape_property(d.code)}")
        message = d.message + (f" (if {d.condition})" if d.condition else "")
        lines.append(f"::{COMMAND[d.severity]} {props}::{_escape_data(message)}")
    for e in result.errors:
        lines.append(f"::error file={_escape_property(relpath(e.path))},title=gbreak-lint::{_escape_data(e.message)}")
    return "\n".join(lines) + ("\n" if lines else "")
