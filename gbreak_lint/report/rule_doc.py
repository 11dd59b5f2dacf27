"""`gbreak-lint rule CODE`: one rule's docs in the What / Why / Example / Use instead form."""
from __future__ import annotations

from ..catalog import Rule


def render(rule: Rule) -> str:
    parts = [
        f"{rule.code} {rule.name} ({rule.severity}, {rule.kind})",
        "",
        "## What it does", rule.summary, "",
        "## Why is this bad", rule.why, "",
        "## Example", _code(rule.example),
        "## Use instead", _code(rule.use_instead),
    ]
    if rule.suggestion:
        parts += ["## How to fix", rule.suggestion, ""]
    parts += ["## Fix safety", rule.fix_safety + (f": {rule.fix_description}" if rule.fix_description else ""), ""]
    if rule.gb_codes:
        parts += ["## Dynamo", ", ".join(rule.gb_codes) + f" (torch {rule.torch})", *rule.docs_urls, ""]
    if rule.unless_config:
        parts += [f"Not reported when `torch._dynamo.config.{rule.unless_config} = True`.", ""]
    return "\n".join(parts) + "\n"


def _code(text: str) -> str:
    return "```python\n" + text.rstrip() + "\n```\n"
