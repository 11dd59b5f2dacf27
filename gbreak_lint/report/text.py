"""Human output: `path:line:col: CODE message`, the call chain, and a summary."""
from __future__ import annotations

from collections import Counter

from ..diagnostics import LintResult, short_name
from . import relpath


def render(result: LintResult, show_chain: bool = True) -> str:
    lines = []
    for d in result.diagnostics:
        via = f"via {relpath(d.via.path)}:{d.via.line}: " if d.via else ""
        lines.append(f"{via}{relpath(d.path)}:{d.span.line}:{d.span.column}: {d.code} {d.message}"
                     + (f" [{d.gb_code}]" if d.gb_code else "") + (f" (if {d.condition})" if d.condition else ""))
        if show_chain and len(d.chain) > 1:
            lines.append("    call chain: " + " -> ".join(
                f"{short_name(c.function)} ({relpath(c.path)}:{c.line})" for c in d.chain))
        if d.suggestion:
            lines.append(f"    help: {d.suggestion}")
    for e in result.errors:
        lines.append(f"{relpath(e.path)}: error: {e.message}")
    lines.append(_summary(result))
    return "\n".join(lines) + "\n"


def _summary(result: LintResult) -> str:
    n = len(result.diagnostics)
    files = result.files_scanned
    if not n and not result.errors:
        return f"All checks passed: {files} file{'s' * (files != 1)} scanned, no graph breaks predicted." + _hidden(result)
    if not n:
        bad = len(result.errors)
        return (f"No graph breaks predicted in {files} file{'s' * (files != 1)} scanned; "
                f"{bad} file{'s' * (bad != 1)} could not be analysed.")
    by_severity = Counter(d.severity for d in result.diagnostics)
    parts = [f"{by_severity[s]} {s}{'s' * (by_severity[s] != 1)}" for s in ("error", "warning", "info") if by_severity[s]]
    text = f"Found {n} finding{'s' * (n != 1)} ({', '.join(parts) or 'none'}) in {files} file{'s' * (files != 1)}"
    if result.errors:
        text += f"; {len(result.errors)} file{'s' * (len(result.errors) != 1)} could not be analysed"
    return text + "." + _hidden(result)


def _hidden(result: LintResult) -> str:
    n = result.hidden_library_conditional
    return (f" {n} more through installed packages, behind conditions the source does not decide "
            f"(--show-library-conditions)." if n else "")
