"""`--format sarif`: SARIF 2.1.0 for GitHub code scanning and other viewers."""
from __future__ import annotations

import json
from pathlib import Path

from .. import __version__
from ..catalog import Catalog, Rule
from ..diagnostics import Diagnostic, LintResult
from . import relpath

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def render(result: LintResult, catalog: Catalog) -> str:
    rules = list(catalog.rules)
    index = {rule.code: i for i, rule in enumerate(rules)}
    doc = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "gbreak-lint", "version": __version__,
                "rules": [_rule(r) for r in rules],
            }},
            "originalUriBaseIds": {"SRCROOT": {"uri": Path.cwd().resolve().as_uri() + "/"}},
            "results": [_result(d, index) for d in result.diagnostics if d.code in index],
            "invocations": [{
                "executionSuccessful": True,
                "toolExecutionNotifications": [
                    {"level": "error", "message": {"text": e.message},
                     "locations": [_location(e.path)]} for e in result.errors],
            }],
        }],
    }
    return json.dumps(doc, indent=2) + "\n"


def _rule(rule: Rule) -> dict:
    markdown = (f"**{rule.summary}**\n\n{rule.why}\n\n**Example**\n```python\n{rule.example.rstrip()}\n```\n\n"
                f"**Use instead**\n```python\n{rule.use_instead.rstrip()}\n```\n")
    entry = {
        "id": rule.code, "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.why},
        "help": {"text": f"{rule.why}\n{rule.suggestion or ''}".strip(), "markdown": markdown},
        "defaultConfiguration": {"level": LEVEL[rule.severity]},
        "properties": {"kind": rule.kind, "gb_codes": list(rule.gb_codes), "torch": rule.torch,
                       "tags": ["torch.compile", rule.kind]},
    }
    if rule.docs_url:  # Dynamo's own page for the graph-break code
        entry["helpUri"] = rule.docs_url
    return entry


def _location(path: str, region: dict | None = None) -> dict:
    loc = {"physicalLocation": {"artifactLocation": {"uri": relpath(path), "uriBaseId": "SRCROOT"}}}
    if region:
        loc["physicalLocation"]["region"] = region
    return loc


def _result(d: Diagnostic, index: dict) -> dict:
    span = d.span
    location = _location(d.path, {"startLine": span.line, "startColumn": span.column,
                                   "endLine": span.end_line, "endColumn": span.end_column})
    if d.function:
        location["logicalLocations"] = [{"fullyQualifiedName": d.function, "kind": "function"}]
    result = {
        "ruleId": d.code, "ruleIndex": index[d.code], "level": LEVEL[d.severity],
        "message": {"text": d.message + (f" (if {d.condition})" if d.condition else "")
                    + (f" Help: {d.suggestion}" if d.suggestion else "")},
        "locations": [location],
        "partialFingerprints": {"gbreakLint/v1": d.fingerprint or ""},
        "properties": {"kind": d.kind, "gb_code": d.gb_code, "times_traced": d.times_traced,
                       "entry": d.entry, "condition": d.condition or None},
    }
    if len(d.chain) > 1:
        result["relatedLocations"] = [
            {"id": i, "message": {"text": f"{'compiled entry' if i == 0 else 'calls'} {link.function}"},
             **_location(link.path, {"startLine": link.line})}
            for i, link in enumerate(d.chain)]
    return result
