"""The rule catalog: one YAML file per rule in rules/ (shipped in the wheel) plus user folders."""
from __future__ import annotations

import re
import string
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

import yaml

from .diagnostics import KINDS, SEVERITIES
from .vocab import BreakKind, CauseCheck
from .yaml_loader import SAFE_LOADER

CODE_RE = re.compile(r"^GBL\d{3}$")
NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
REQUIRED = ("code", "name", "kind", "severity", "summary", "message", "why", "example", "use_instead")
TRIGGER_KEYS = frozenset({
    "call", "call_with_tensor_arg", "call_with_tensor_or_module_arg", "tensor_method",
    "input_tensor_method", "logger_method", "tensor_attribute_assign", "check",
})
# Break causes the model finds by analysis rather than by a name table (`trigger: {check: ...}`).
CAUSE_CHECKS = frozenset(c.value for c in CauseCheck)
TOP_KEYS = frozenset(REQUIRED) | {"gb_codes", "docs", "torch", "suggestion", "fix", "break", "trigger",
                                  "unless_config", "gb_code_when", "check", "evidence", "torch_shows"}
FIX_KEYS = frozenset({"safety", "description", "rewrite"})
FIX_SAFETIES = ("none", "safe", "unsafe")
GB_CODE_RE = re.compile(r"^GB\d{4}$")
# operand facts a rule's Dynamo code may depend on (model/causes.py, model/trace.py read them)
GB_CODE_WHEN = ("integer_receiver", "numpy_argument", "numpy_receiver", "closes_over", "partial", "strict",
                "partial_rebuild", "tensor_operand", "skipped_method",
                "mutation", "aliasing", "out_tuple", "throw", "explicit_base", "comparison",
                "isinstance")
DOTTED_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
IDENTIFIER_RE = re.compile(r"^[a-z_][a-z0-9_]*$")
PACKAGE = Path(__file__).resolve().parent
BREAK_KINDS = tuple(k.value for k in BreakKind)
# What shows a rule's example does what it says: a torch run, PyTorch's docs (advice), or
# Python's own parser (syntax errors).
EVIDENCE = ("torch", "docs", "python")
# With evidence: torch, what a torch run of the example shows (tests/test_real_torch.py): a
# break with one of gb_codes (the default), a frame of that skip category (not a resume
# function's, or any), an unresumable break (frame skipped or compiled partially), a break
# site traced more than once, a compile error, or no break at all.
TORCH_SHOWS_RE = re.compile(r"^(gb_code|unresumable|retraced|hard_error|no_break|(skipped|skipped_or_resume):[a-z_]+)$")
DOCS_URL = "https://meta-pytorch.github.io/compile-graph-break-site/gb/{}.html"


# The fields a rule's `message` may use (str.format syntax), each with one meaning. A check
# fills those it knows; the catalog rejects any other name, so a typo fails at load time.
MESSAGE_FIELDS = {
    "function": "the function the finding is about: the frame skipped or compiled partially, the entry point",
    "callee": "the function or method a break site calls (`print`, `warning`), or the generator a frame consumes",
    "outcome": "what Dynamo does to the frame (skips it, compiles it up to a checkpoint)",
    "label": "the context manager of a `with` block",
    "times": "how many times a break site is traced",
    "chain": "the call chain from the entry point to the break site",
    "frames": "how many frames the call chain has",
    "breaks": "how many breaks a function has",
    "ops": "how many tensor ops a function has",
    "region": "the strict region a break is in (fullgraph=True, error_on_graph_break(True), ...)",
    "name": "the variable a compiled module is assigned to",
    "wrapper": "the distributed wrapper class (DistributedDataParallel, ...)",
    "what": "what a compiled function does that should stay outside it (a training loop, file I/O)",
    "message": "the parser's own message (syntax errors)",
}


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
    fix_rewrite: str | None = None  # module in gbreak_lint/fix/ registered for this code
    suggestion: str | None = None
    trigger: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))
    break_kind: BreakKind = BreakKind.NONE
    unless_config: str | None = None
    gb_code_when: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    check: str | None = None  # structural rules: module in gbreak_lint/checks/ registered for this code
    evidence: str = "torch"  # see EVIDENCE
    torch_shows: str = "gb_code"  # see TORCH_SHOWS_RE
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
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=SAFE_LOADER)
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
        break_kind=BreakKind(data.get("break", "none")), unless_config=data.get("unless_config"),
        gb_code_when=MappingProxyType(dict(data.get("gb_code_when") or {})),
        check=data.get("check"), evidence=data.get("evidence", "torch"),
        torch_shows=data.get("torch_shows", "gb_code"), source=str(path),
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
    if data.get("evidence", "torch") not in EVIDENCE:
        raise CatalogError(f"{path}: evidence must be one of {', '.join(EVIDENCE)}")
    if not TORCH_SHOWS_RE.match(str(data.get("torch_shows", "gb_code"))):
        raise CatalogError(f"{path}: torch_shows must match {TORCH_SHOWS_RE.pattern}")
    when = data.get("gb_code_when") or {}
    if set(when) - set(GB_CODE_WHEN) or any(code not in (data.get("gb_codes") or ()) for code in when.values()):
        raise CatalogError(f"{path}: gb_code_when takes {' / '.join(GB_CODE_WHEN)} -> one of gb_codes")
    expected_docs = [DOCS_URL.format(str(c).lower()) for c in data.get("gb_codes") or ()]
    if data.get("docs", expected_docs) != expected_docs:
        raise CatalogError(f"{path}: docs must link the pages of gb_codes: {expected_docs}")
    if not data.get("trigger") and not data.get("check") and data["kind"] != "syntax-error":
        raise CatalogError(f"{path}: a rule needs a trigger (break cause) or a check (structural)")
    _validate_keys(path, data)
    _validate_message(path, str(data["message"]))
    _validate_trigger(path, data.get("trigger"))
    _validate_fix(path, data.get("fix"))
    if data.get("check") is not None:
        _engine_module(path, "check", data["check"], "checks")


def _validate_keys(path: Path, data: dict) -> None:
    unknown = sorted(set(data) - TOP_KEYS)
    if unknown:
        raise CatalogError(f"{path}: unknown key '{unknown[0]}' (known: {', '.join(sorted(TOP_KEYS))})")
    codes = data.get("gb_codes") or []
    if not isinstance(codes, list) or not all(GB_CODE_RE.match(str(c)) for c in codes):
        raise CatalogError(f"{path}: gb_codes must be a list of Dynamo codes like GB0059")
    for key in ("unless_config", "suggestion", "torch"):
        if data.get(key) is not None and not isinstance(data[key], str):
            raise CatalogError(f"{path}: '{key}' must be a string")
    if data.get("unless_config") is not None and not IDENTIFIER_RE.match(data["unless_config"]):
        raise CatalogError(f"{path}: unless_config must name a torch._dynamo.config flag")


def _validate_message(path: Path, message: str) -> None:
    try:
        fields = {name for _, name, _, _ in string.Formatter().parse(message) if name is not None}
    except ValueError as err:
        raise CatalogError(f"{path}: message: {err} (a literal brace is written {{{{ or }}}})") from err
    unknown = sorted(fields - set(MESSAGE_FIELDS))
    if unknown:
        raise CatalogError(f"{path}: message field '{{{unknown[0]}}}' is unknown (known: {', '.join(MESSAGE_FIELDS)})")


def _validate_trigger(path: Path, trigger) -> None:
    if trigger is None:
        return
    if not isinstance(trigger, dict):
        raise CatalogError(f"{path}: trigger must be a mapping")
    for key, value in trigger.items():
        if key not in TRIGGER_KEYS:
            raise CatalogError(f"{path}: unknown trigger '{key}' (known: {', '.join(sorted(TRIGGER_KEYS))})")
        if key == "check":
            if value not in CAUSE_CHECKS:
                raise CatalogError(f"{path}: unknown trigger check '{value}' "
                                   f"(known: {', '.join(sorted(CAUSE_CHECKS))})")
        elif not isinstance(value, list) or not value or \
                not all(isinstance(v, str) and DOTTED_RE.match(v) for v in value):
            raise CatalogError(f"{path}: trigger '{key}' must be a list of (dotted) names")


def _validate_fix(path: Path, fix) -> None:
    if fix is None:
        return
    if not isinstance(fix, dict):
        raise CatalogError(f"{path}: fix must be a mapping")
    unknown = sorted(set(fix) - FIX_KEYS)
    if unknown:
        raise CatalogError(f"{path}: unknown key 'fix.{unknown[0]}' (known: {', '.join(sorted(FIX_KEYS))})")
    if fix.get("safety", "none") not in FIX_SAFETIES:
        raise CatalogError(f"{path}: fix.safety must be one of {', '.join(FIX_SAFETIES)}")
    if fix.get("rewrite") is not None:
        _engine_module(path, "fix.rewrite", fix["rewrite"], "fix")


def _engine_module(path: Path, key: str, name, package: str) -> None:
    """A `check:` or `fix.rewrite:` must name a module the engine ships; registry.bind_catalog
    then checks that module registered itself for this rule's code."""
    if not isinstance(name, str) or not IDENTIFIER_RE.match(name) or \
            not (PACKAGE / package / f"{name}.py").is_file():
        known = sorted(p.stem for p in (PACKAGE / package).glob("*.py") if not p.stem.startswith("_"))
        raise CatalogError(f"{path}: unknown {key} '{name}' (known: {', '.join(known)})")
