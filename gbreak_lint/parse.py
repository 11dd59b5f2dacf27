"""Path -> parsed module (libcst).  Bad input becomes a diagnostic or a FileError, never a crash."""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from .diagnostics import Diagnostic, FileError, Span

SYNTAX_ERROR_CODE = "GBL001"
MAX_FILE_BYTES = 20 * 1024 * 1024  # larger files are reported, not parsed


class SourceTooDeep(RecursionError):
    """Nesting beyond what the analysis (or libcst) can walk; the file is reported, not analysed."""


@dataclass(frozen=True)
class ParsedModule:
    path: Path
    module: cst.Module
    text: str  # the decoded source, for cheap text pre-filters

    @cached_property
    def positions(self) -> Mapping[cst.CSTNode, CodeRange]:
        """Computed on first use: most modules of a project never need a position."""
        try:
            return MappingProxyType(dict(MetadataWrapper(self.module, unsafe_skip_copy=True)
                                         .resolve(PositionProvider)))
        except (RecursionError, KeyError):  # libcst turns deep recursion into a KeyError
            raise SourceTooDeep(f"{self.path}: too deeply nested to analyse") from None

    def span(self, node: cst.CSTNode) -> Span:
        r = self.positions[node]
        return Span(r.start.line, r.start.column + 1, r.end.line, r.end.column + 1)

    def line(self, node: cst.CSTNode) -> int:
        return self.positions[node].start.line


@dataclass(frozen=True)
class ParseOutcome:
    parsed: ParsedModule | None = None
    diagnostic: Diagnostic | None = None
    error: FileError | None = None


def parse_file(path: Path) -> ParseOutcome:
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            return ParseOutcome(error=FileError(str(path), f"file too large to analyse ({size} bytes)"))
        data = path.read_bytes()
    except OSError as err:
        return ParseOutcome(error=FileError(str(path), f"cannot read file: {err.strerror or err}"))
    if b"\x00" in data:
        return ParseOutcome(error=FileError(str(path), "binary file (contains NUL bytes), not Python source"))
    return parse_source(path, data)


# libcst's native parser overflows its stack on pathological nesting (thousands of parentheses
# or operands) and takes the process down. Text that looks like that is first given to
# CPython's own parser, which refuses it cleanly (as Python itself would).
SUSPICIOUS = re.compile(rb"(?:[\(\[\{]\s*){48}|[^\n]{4000}")


def parse_source(path: Path, data: bytes) -> ParseOutcome:
    if SUSPICIOUS.search(data):
        refused = _cpython_refuses(path, data)
        if refused is not None:
            return refused
    try:
        module = cst.parse_module(data)
    except cst.ParserSyntaxError as err:
        return ParseOutcome(diagnostic=_syntax_diagnostic(path, err))
    except (UnicodeDecodeError, LookupError) as err:
        return ParseOutcome(error=FileError(str(path), f"cannot decode file: {err}"))
    except RecursionError:
        return ParseOutcome(error=FileError(str(path), "file too deeply nested to analyse"))
    except Exception as err:  # libcst's native parser raises a few odd types on garbage
        return ParseOutcome(error=FileError(str(path), f"cannot parse file: {type(err).__name__}: {err}"))
    text = data.decode(module.encoding, errors="replace")
    return ParseOutcome(parsed=ParsedModule(path, module, text))


def _cpython_refuses(path: Path, data: bytes) -> ParseOutcome | None:
    try:
        ast.parse(data, filename=str(path))
    except SyntaxError as err:
        line = max(1, err.lineno or 1)
        column = max(1, err.offset or 1)
        return ParseOutcome(diagnostic=Diagnostic(
            code=SYNTAX_ERROR_CODE, name="syntax-error", severity="error", kind="syntax-error",
            path=str(path), span=Span(line, column, line, column),
            message=f"SyntaxError: {err.msg} (file not analysed)"))
    except (RecursionError, MemoryError):
        return ParseOutcome(error=FileError(str(path), "file too deeply nested to analyse"))
    except ValueError as err:  # e.g. source code string cannot contain null bytes
        return ParseOutcome(error=FileError(str(path), f"cannot parse file: {err}"))
    return None


def _syntax_diagnostic(path: Path, err: cst.ParserSyntaxError) -> Diagnostic:
    line = max(1, err.raw_line)
    column = max(1, err.raw_column + 1)
    message = str(err.message).strip().splitlines()[0] if str(err.message).strip() else "invalid syntax"
    return Diagnostic(
        code=SYNTAX_ERROR_CODE, name="syntax-error", severity="error", kind="syntax-error",
        path=str(path), span=Span(line, column, line, column),
        message=f"SyntaxError: {message} (file not analysed)",
    )
