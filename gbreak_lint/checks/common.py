"""Helpers shared by checks: turning model facts into Diagnostic fields."""
from __future__ import annotations

from ..catalog import Rule
from ..diagnostics import Diagnostic, Fix, FrameRef, short_name as short
from ..model.predict import Site


def fix_of(rule: Rule) -> Fix | None:
    if rule.fix_safety in ("safe", "unsafe"):
        return Fix(rule.fix_safety, rule.fix_description or rule.suggestion or "")
    return None


def render(template: str, **fields: object) -> str:
    """A rule's message with the fields this finding knows (catalog.MESSAGE_FIELDS says what
    each means); a field it has no value for is left as written."""
    return template.format_map(_Known(fields))


class _Known(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def chain_text(site: Site) -> str:
    return " -> ".join(short(link.function) for link in site.chain)


def diagnostic(rule: Rule, site: Site, message: str, *, kind: str | None = None, span=None,
               path: str | None = None, function: str | None = None, frame: FrameRef | None = None,
               times: int | None = None, gb_code: str | None = None) -> Diagnostic:
    return Diagnostic(
        code=rule.code, name=rule.name, severity=rule.severity, kind=kind or rule.kind,
        path=path or site.path, span=span or site.span, message=message,
        function=function or site.function, gb_code=gb_code if gb_code is not None else rule.gb_code,
        times_traced=times, chain=site.chain, entry=site.entry, frame=frame,
        suggestion=rule.suggestion, fix=fix_of(rule), condition=site.condition,
    )
