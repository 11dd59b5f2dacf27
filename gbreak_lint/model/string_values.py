"""Strings computed from constants, as Dynamo computes them while tracing.

Library code derives the values it branches on from names: transformers picks a model's loss
by matching its class name against the loss table (`re.findall(f"({'|'.join(LOSS_MAPPING)})",
self.__class__.__name__)`), and warns through a logger (a graph break) when nothing matches.
Dynamo runs these on constants and traces the side they select, so the model evaluates them
too: f-strings, the pure `str` methods and `re.findall`.

Nothing here runs the scanned code: the operations are Python's own on constant strings, with
bounds on sizes, and a regular expression is matched only when it is a literal or one
alternation of literals (see safe_pattern): its time is then bounded by the pattern's and the
subject's lengths whatever the source wrote (no catastrophic backtracking, no deep nesting).
"""
from __future__ import annotations

import re

import libcst as cst

MAX_TEXT = 4096  # longest string operated on (and produced)

# `str` methods without side effects whose results are constants, and what they may take
_STR_METHODS = frozenset({
    "join", "startswith", "endswith", "lower", "upper", "strip", "lstrip", "rstrip", "replace",
    "split", "rsplit", "removeprefix", "removesuffix", "isdigit", "isalpha", "isalnum",
    "islower", "isupper", "isidentifier", "title", "capitalize", "casefold",
})
_REGEX_FUNCTIONS = frozenset({"re.findall"})

# one alternative of a literal alternation: plain characters and escaped punctuation
_LITERAL = re.compile(r"(?:[^\\.^$*+?{}\[\]()|]|\\[^\w\s])*")


class ListValue(tuple):
    """A list whose items are known (what `str.split` and `re.findall` return), held as a
    tuple so the evaluator's tuple operations (len, items, truth) apply."""


def string_method(receiver: object, method: str, args: list[object]) -> object | None:
    """`receiver.method(*args)` for a constant string receiver and constant arguments, or None
    when not computed (another method, an argument of another kind, too long a string)."""
    if not isinstance(receiver, str) or method not in _STR_METHODS or len(receiver) > MAX_TEXT:
        return None
    if method == "join":
        items = _joined_items(args)
        return None if items is None else _bounded(receiver.join(items))
    if not all(isinstance(a, (str, int)) and not isinstance(a, bool) for a in args) \
            or any(isinstance(a, str) and len(a) > MAX_TEXT for a in args):
        return None
    try:
        found = getattr(receiver, method)(*args)
    except (TypeError, ValueError):  # Python raises there too: not a value to fold
        return None
    return ListValue(found) if isinstance(found, list) else _bounded(found)


def _joined_items(args: list[object]) -> tuple[str, ...] | None:
    """The strings `sep.join(x)` joins: a known tuple or list of strings (the caller passes a
    dict whose keys are all known as its keys: iterating a dict yields them, in order)."""
    if len(args) != 1 or not isinstance(args[0], tuple) or not all(isinstance(s, str) for s in args[0]):
        return None
    return args[0]


def is_string_method(name: str) -> bool:
    return name in _STR_METHODS


def is_regex_function(qualified: str | None) -> bool:
    return qualified in _REGEX_FUNCTIONS


def regex_call(qualified: str | None, args: list[object]) -> object | None:
    """`re.findall(pattern, text)` on constant strings, when the pattern cannot backtrack."""
    if qualified not in _REGEX_FUNCTIONS or len(args) != 2:
        return None
    pattern, text = args
    if not isinstance(pattern, str) or not isinstance(text, str) or not safe_pattern(pattern) \
            or len(text) > MAX_TEXT:
        return None
    try:
        return ListValue(re.findall(pattern, text))
    except re.error:
        return None


def safe_pattern(pattern: str) -> bool:
    """A literal, or one alternation of literals, optionally in one group: `(ForCausalLM|ForMaskedLM)`.
    Matching it takes time bounded by the text's length times the pattern's, whatever the
    source wrote (a sequence of alternations can backtrack exponentially: `(a|a)(a|a)...c`)."""
    if len(pattern) > MAX_TEXT:
        return False
    body = pattern
    for opener in ("(?:", "("):
        if body.startswith(opener) and body.endswith(")") and not body.endswith("\\)"):
            body = body[len(opener):-1]
            break
    return all(_LITERAL.fullmatch(part) for part in body.split("|"))


def formatted(node: cst.FormattedString, value_of) -> str | None:
    """An f-string whose every part is known: its text (no format spec, no escapes)."""
    if node.prefix.lower() != "f":
        return None
    out = []
    for part in node.parts:
        if isinstance(part, cst.FormattedStringText):
            if "\\" in part.value:
                return None
            out.append(part.value.replace("{{", "{").replace("}}", "}"))
            continue
        if not isinstance(part, cst.FormattedStringExpression) or part.format_spec is not None \
                or part.equal is not None:
            return None
        found = value_of(part.expression)
        if found is None or not isinstance(found.value, (str, int, float, bool, type(None))):
            return None
        shown = {"r": repr, "a": ascii}.get(part.conversion or "", str)
        out.append(shown(found.value))
    text = "".join(out)
    return text if len(text) <= MAX_TEXT else None


def _bounded(found: object) -> object | None:
    return None if isinstance(found, str) and len(found) > MAX_TEXT else found
