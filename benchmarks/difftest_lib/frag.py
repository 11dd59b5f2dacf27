"""The unit every grammar piece works on: top-level definitions plus a body of statements.

A body is a list of lines at indent 0 that read and rebind the tensor `x` (never `return`),
so any construct can wrap any other: wrapping turns the inner body into a callable or a
block and returns the statements that invoke it.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Frag:
    defs: list[str] = field(default_factory=list)  # top-level blocks, emitted in order
    body: list[str] = field(default_factory=list)  # statements on `x`, indent 0
    needs: set[str] = field(default_factory=set)  # prelude keys (imports, logger)
    tags: list[str] = field(default_factory=list)  # construct[variant] names, inner first


def ind(lines: list[str], n: int = 1) -> list[str]:
    """Indent by n levels; blank lines stay blank so the text has no trailing spaces."""
    pad = "    " * n
    return [pad + ln if ln else ln for ln in lines]


def block(head: str, lines: list[str]) -> list[str]:
    """`head:` followed by the indented lines (or `pass` when there are none)."""
    return [head] + ind(lines or ["pass"])


def fn_def(name: str, params: str, body: list[str], deco: tuple[str, ...] = ()) -> list[str]:
    """A function whose body is `body` followed by `return x`."""
    return [*deco, f"def {name}({params}):"] + ind(body + ["return x"])


class Names:
    """Unique identifiers per program: a program never reuses a name for two things."""

    def __init__(self):
        self.count = 0

    def __call__(self, stem: str) -> str:
        self.count += 1
        return f"{stem}{self.count}"
