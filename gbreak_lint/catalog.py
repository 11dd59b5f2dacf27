"""The rule catalog: one YAML file per rule in rules/ (shipped in the wheel) plus user folders."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

import yaml

from .diagnostics import KINDS, SEVERITIES

CODE_RE = re.compile(r"^GBL\d{3}$")
NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
REQUIRED = ("code", "name", "kind", "severity", "summary", "message", "why", "example", "use_instead")
TRIGGER_KEYS = frozenset({
    "call", "call_with_tensor_arg", "call_with_tensor_or_module_arg", "tensor_method",
    "logger_method", "tensor_attribute_assign", "check",
})
BREAK_KINDS = ("resumable", "skip_frame", "unresumable", "none")
DOCS_URL = "https://meta-pytorch.github.io/compile-graph-break-site/gb/{}.html"


class CatalogError(ValueError):
    pass


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    kind: str
    severity: str
    summary: str
    message: str
    why: str
    example: str
    use_instead: str
    gb_codes: tuple[str, ...] = ()
    torch: str = ">=2.13"
    fix_safety: str = "none"
    fix_description: str | None = None
    fix_rewrite: str | None = None  # module in gbreak_lint/fix/ that performs the rewrite
    suggestion: str | None = None
    trigger: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))
    break_kind: str = "none"
    unless_config: str | None = None
    gb_code_when: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    check: str | None = None  # structural rules: module in gbreak_lint/checks/
    evidence: str = "torch"  # "torch": examples are checked under real Dynamo; "docs": advice
    source: str = ""

    @property
    def gb_code(self) -> str | None:
        return self.gb_codes[0] if self.gb_codes else None

    @property
    def docs_url(self) -> str | None:
        return DOCS_URL.format(self.gb_code.lower()) if self.gb_code else None

    @property
    def docs_urls(self) -> list[str]:
        return [DOCS_URL.format(code.lower()) for code in self.gb_codes]

    @property
    def is_cause(self) -> bool:
        return self.kind == "graph-break" and bool(self.trigger)


@dataclass(frozen=True)
class Catalog:
    rules: tuple[Rule, ...]

    def by_code(self, code: str) -> Rule:
        for rule in self.rules:
            if rule.code == code:
                return rule
        raise KeyError(code)

    def get(self, code: str) -> Rule | None:
        return next((r for r in self.rules if r.code == code), None)

    def causes(self) -> tuple[Rule, ...]:
        return tuple(r for r in self.rules if r.is_cause)


def builtin_rules_dir() -> Path:
    """The rules/ folder: installed as the data package gbreak_lint.rules_data, or in a checkout."""
    from importlib.util import find_spec

    try:
        spec = find_spec("gbreak_lint.rules_data")
    except (ImportError, ValueError):
        spec = None
    for location in (spec.submodule_search_locations or []) if spec else []:
        if (Path(location) / "GBL101.yaml").is_file():
            return Path(location)
    checkout = Path(__file__).resolve().parent.parent / "rules"
    if (checkout / "GBL101.yaml").is_file():
        return checkout
    raise CatalogError("the built-in rule catalog (rules/*.yaml) is missing from this installation")


def load_catalog(extra: Path | None = None) -> Catalog:
    rules = [_load_rule(p) for p in sorted(builtin_rules_dir().glob("*.yaml"))]
    if extra is not None:
        if not extra.is_dir():
            raise CatalogError(f"extra rules folder not found: {extra}")
        rules += [_load_rule(p) for p in sorted(extra.glob("*.yaml"))]
    _check_unique(rules)
    return Catalog(tuple(sorted(rules, key=lambda r: r.code)))


def _check_unique(rules: list[Rule]) -> None:
    for attr in ("code", "name"):
        seen: dict[str, str] = {}
        for rule in rules:
            value = getattr(rule, attr)
            if value in seen:
                raise CatalogError(f"two rules share the {attr} '{value}': {seen[value]} and {rule.source}")
            seen[value] = rule.source


def _load_rule(path: Path) -> Rule:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        raise CatalogError(f"{path}: cannot load rule: {err}") from err
    if not isinstance(data, dict):
        raise CatalogError(f"{path}: a rule file must hold a mapping")
    missing = [k for k in REQUIRED if not data.get(k)]
    if missing:
        raise CatalogError(f"{path}: missing {', '.join(missing)}")
    _validate(path, data)
    fix = data.get("fix") or {}
    return Rule(
        code=data["code"], name=data["name"], kind=data["kind"], severity=data["severity"],
        summary=str(data["summary"]).strip(), message=str(data["message"]).strip(),
        why=str(data["why"]).strip(), example=str(data["example"]),
        use_instead=str(data["use_instead"]), gb_codes=tuple(data.get("gb_codes") or ()),
        torch=str(data.get("torch", ">=2.13")), fix_safety=fix.get("safety", "none"),
        fix_description=fix.get("description"), fix_rewrite=fix.get("rewrite"),
        suggestion=data.get("suggestion"),
        trigger=MappingProxyType(dict(data.get("trigger") or {})),
        break_kind=data.get("break", "none"), unless_config=data.get("unless_config"),
        gb_code_when=MappingProxyType(dict(data.get("gb_code_when") or {})),
        check=data.get("check"), evidence=data.get("evidence", "torch"), source=str(path),
    )


def _validate(path: Path, data: dict) -> None:
    if not CODE_RE.match(str(data["code"])):
        raise CatalogError(f"{path}: code must look like GBL123")
    if not NAME_RE.match(str(data["name"])):
        raise CatalogError(f"{path}: name must be kebab-case")
    if data["kind"] not in KINDS:
        raise CatalogError(f"{path}: kind must be one of {', '.join(KINDS)}")
    if data["severity"] not in SEVERITIES:
        raise CatalogError(f"{path}: severity must be one of {', '.join(SEVERITIES)}")
    if data.get("break", "none") not in BREAK_KINDS:
        raise CatalogError(f"{path}: break must be one of {', '.join(BREAK_KINDS)}")
    if data.get("evidence", "torch") not in ("torch", "docs"):
        raise CatalogError(f"{path}: evidence must be torch or docs")
    when = data.get("gb_code_when") or {}
    if set(when) - {"integer_receiver", "numpy_argument"} or \
            any(code not in (data.get("gb_codes") or ()) for code in when.values()):
        raise CatalogError(f"{path}: gb_code_when takes integer_receiver / numpy_argument -> one of gb_codes")
    expected_docs = [DOCS_URL.format(str(c).lower()) for c in data.get("gb_codes") or ()]
    if data.get("docs", expected_docs) != expected_docs:
        raise CatalogError(f"{path}: docs must link the pages of gb_codes: {expected_docs}")
    if not data.get("trigger") and not data.get("check"):
        raise CatalogError(f"{path}: a rule needs a trigger (break cause) or a check (structural)")
    unknown = set(data.get("trigger") or {}) - TRIGGER_KEYS
    if unknown:
        raise CatalogError(f"{path}: unknown trigger {', '.join(sorted(unknown))}")
