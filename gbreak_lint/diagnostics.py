"""Plain frozen result types shared by every stage (no behaviour beyond ordering)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

KINDS = ("graph-break", "frame-skipped", "frame-partial", "compile-error", "advice", "syntax-error")
SEVERITIES = ("info", "warning", "error")


@dataclass(frozen=True, order=True)
class Span:
    """1-based lines, 1-based columns (as printed by the text report)."""

    line: int
    column: int
    end_line: int
    end_column: int


# a second `def f` in one body is indexed as `f~LINE` (index.symbols.REDEFINED): shown as `f`
_REDEFINITION_LINE = re.compile(r"~\d+$")


def short_name(qualname: str) -> str:
    """`pkg.mod.Class.method` -> `Class.method`, `pkg.mod.func` -> `func` (the path names the
    module); a lambda's `<lambda>@15:30` -> `<lambda>` (the chain tells where)."""
    if ".<lambda>@" in qualname:
        return "<lambda>"
    parts = [_REDEFINITION_LINE.sub("", part) for part in qualname.split(".")]
    for i, part in enumerate(parts[:-1]):
        if part[:1].isupper():
            return ".".join(parts[i:])
    return parts[-1]


@dataclass(frozen=True)
class ChainLink:
    path: str
    line: int
    function: str
    condition: str = ""  # the unknown `if` conditions this line lies behind in its function


@dataclass(frozen=True)
class FrameRef:
    path: str
    function: str
    line: int


@dataclass(frozen=True)
class Fix:
    safety: str  # "safe" | "unsafe"
    description: str


@dataclass(frozen=True)
class Diagnostic:
    code: str
    name: str
    severity: str
    kind: str
    path: str  # absolute path of the file
    span: Span
    message: str
    function: str | None = None
    gb_code: str | None = None
    times_traced: int | None = None
    chain: tuple[ChainLink, ...] = ()
    entry: str | None = None
    frame: FrameRef | None = None
    suggestion: str | None = None
    fix: Fix | None = None
    fingerprint: str | None = None  # stable across unrelated edits (SARIF, baselines)
    via: ChainLink | None = None  # a finding inside an installed package: the user's line reaching it
    # the Python values it depends on that the source does not tell (`labels is not None`):
    # each unknown `if` on the way, in call order; "" when every trace reaches it
    condition: str = ""

    def sort_key(self) -> tuple:
        """Position first; the rest (chain, entry) only orders findings that share a place, so
        that the output never depends on the order of a set."""
        return (self.path, self.span.line, self.span.column, self.code, self.message, repr(self))


@dataclass(frozen=True)
class FileError:
    """A file that could not be read or analysed; the scan goes on."""

    path: str
    message: str


@dataclass(frozen=True)
class LintResult:
    files_scanned: int
    diagnostics: tuple[Diagnostic, ...]
    errors: tuple[FileError, ...] = field(default=())
    hidden_library_conditional: int = 0  # findings left out by `show_library_conditions = false`
