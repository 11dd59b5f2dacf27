"""`--format json`: the stable schema other tools and our benchmarks read (version 1)."""
from __future__ import annotations

import json

from .. import __version__
from ..diagnostics import Diagnostic, LintResult
from . import relpath


def diagnostic_dict(d: Diagnostic) -> dict:
    return {
        "code": d.code, "name": d.name, "severity": d.severity, "kind": d.kind,
        "path": relpath(d.path), "line": d.span.line, "column": d.span.column,
        "end_line": d.span.end_line, "end_column": d.span.end_column,
        "function": d.function, "message": d.message, "gb_code": d.gb_code,
        "times_traced": d.times_traced,
        "chain": [{"path": relpath(c.path), "line": c.line, "function": c.function} for c in d.chain],
        "entry": d.entry,
        "frame": ({"path": relpath(d.frame.path), "function": d.frame.function, "line": d.frame.line}
                  if d.frame else None),
        "suggestion": d.suggestion,
        "fix": {"safety": d.fix.safety, "description": d.fix.description} if d.fix else None,
        "via": ({"path": relpath(d.via.path), "line": d.via.line, "function": d.via.function}
                if d.via else None),
        "condition": d.condition or None,
    }


def render(result: LintResult, torch_profile: str) -> str:
    doc = {
        "version": 1,
        "tool": {"name": "gbreak-lint", "version": __version__},
        "torch_profile": torch_profile,
        "files_scanned": result.files_scanned,
        "diagnostics": [diagnostic_dict(d) for d in result.diagnostics],
        "errors": [{"path": relpath(e.path), "message": e.message} for e in result.errors],
    }
    return json.dumps(doc, indent=2) + "\n"
