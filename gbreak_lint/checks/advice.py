"""Building a diagnostic that is not tied to a break site (placement and config advice)."""
from __future__ import annotations

from ..diagnostics import Diagnostic, Span
from .common import fix_of


def advice(rule, path: str, span: Span, message: str, *, function: str | None = None,
           entry: str | None = None) -> Diagnostic:
    return Diagnostic(code=rule.code, name=rule.name, severity=rule.severity, kind=rule.kind,
                      path=path, span=span, message=message, function=function,
                      gb_code=rule.gb_code, entry=entry, suggestion=rule.suggestion, fix=fix_of(rule))


def line_span(line: int) -> Span:
    return Span(line, 1, line, 1)
