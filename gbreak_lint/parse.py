"""Path -> parsed module (libcst).  Bad input becomes a diagnostic or a FileError, never a crash."""
from __future__ import annotations

import ast
import re
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import libcst as cst

from .diagnostics import Diagnostic, FileError, Span
from .files import NotReadable, read_regular
from .positions import Positions, compute_definition_positions, compute_positions

SYNTAX_ERROR_CODE = "GBL001"
MAX_FILE_BYTES = 20 * 1024 * 1024  # larger files are reported, not parsed


class SourceTooDeep(RecursionError):
    """Nesting beyond what the analysis (or libcst) can walk; the file is reported, not analysed."""


class ParsedModule:
    """A parsed file: its path, decoded text and libcst tree.

    Made with `lazy=True` (whole-repository scans) the tree is not kept: it comes from the
    process's `TREES` store, which re-parses the text on demand and keeps a bounded number of
    trees, so memory does not grow with the repository. Node identity holds within a
    `TREES.scope()` (a tree used in the scope is kept until it closes).
    """

    __slots__ = ("path", "text", "_own", "__weakref__")

    def __init__(self, path: Path, module: cst.Module | None, text: str):
        self.path = path
        self.text = text  # the decoded source, for cheap text pre-filters
        self._own = _Tree(module, len(text), self) if module is not None else None

    def __getstate__(self):  # crossing to another process: the text, never the tree
        return (self.path, self.text)

    def __setstate__(self, state) -> None:
        self.path, self.text = state
        self._own = None

    def _tree(self) -> "_Tree":
        return self._own if self._own is not None else TREES.entry(self)

    @property
    def module(self) -> cst.Module:
        return self._tree().module

    @property
    def positions(self) -> Positions:
        """Computed on first use: most modules of a project never need a position."""
        return self._tree().all_positions(self.path)

    def definitions(self) -> list:
        """Every def and class node of the tree, in source order (how the index finds its nodes)."""
        tree = self._tree()
        if tree.definitions is None:
            tree.definitions = definition_nodes(tree.module)
        return tree.definitions

    def definition_lines(self) -> list[int]:
        """The line of each definition's name (same order as `definitions()`)."""
        tree = self._tree()
        if tree.def_lines is None:
            tree.def_lines = definition_lines(self, self.definitions())
        return tree.def_lines

    def innermost_definition(self, line: int) -> tuple[cst.CSTNode, Positions] | None:
        """The innermost def/class whose lines hold `line`, with its positions (computed for it
        alone), or None at module level."""
        tree, definitions, names = self._tree(), self.definitions(), self.definition_lines()
        for i in range(len(definitions) - 1, -1, -1):
            if names[i] > line:
                continue
            local = tree.definition_positions(self.path, (definitions[i], names[i]))
            if local is None:
                return None  # the text disagrees with the tree: let the caller use the module's
            start, _, end, _ = local.raw(definitions[i])
            if start <= line <= end:
                return definitions[i], local
        return None

    def drop_tree(self) -> "ParsedModule":
        """The same file, its tree from now on made on demand by `TREES`."""
        return ParsedModule(self.path, None, self.text)

    def span(self, node: cst.CSTNode, within: "Anchor | None" = None) -> Span:
        """Where `node` is. `within`: the definition holding it, whose positions are then
        computed alone (a fraction of the module's)."""
        line, column, end_line, end_column = self._positions_for(node, within).raw(node)
        return Span(line, column + 1, end_line, end_column + 1)

    def line(self, node: cst.CSTNode, within: "Anchor | None" = None) -> int:
        return self._positions_for(node, within).start_line(node)

    def _positions_for(self, node: cst.CSTNode, within: "Anchor | None") -> Positions:
        tree = self._tree()
        if within is not None:
            local = tree.definition_positions(self.path, within)
            if local is not None and node in local:
                return local
        return tree.all_positions(self.path)


Anchor = tuple  # (def/class node, line of its name): where a definition's positions are anchored


def _positions_of(path: Path, compute, *args) -> Positions:
    try:
        return compute(*args)
    except RecursionError:
        raise SourceTooDeep(f"{path}: too deeply nested to analyse") from None


class _Tree:
    """A module's tree and what was computed from it (dropped together)."""

    __slots__ = ("module", "positions", "definitions", "def_lines", "size", "owner", "local", "lines")

    def __init__(self, module: cst.Module, size: int, owner: ParsedModule):
        self.module, self.size, self.owner = module, size, owner
        self.positions: Positions | None = None
        self.definitions: list | None = None
        self.def_lines: list[int] | None = None
        self.local: dict[int, Positions | None] = {}  # id(definition) -> its positions alone
        self.lines: list[str] | None = None

    def all_positions(self, path: Path) -> Positions:
        if self.positions is None:
            self.positions = _positions_of(path, compute_positions, self.module)
        return self.positions

    def definition_positions(self, path: Path, anchor: Anchor) -> Positions | None:
        definition, name_line = anchor
        key = id(definition)
        if key not in self.local:
            if self.lines is None:
                self.lines = self.owner.text.split("\n")
            self.local[key] = _positions_of(path, compute_definition_positions, self.module, definition,
                                            name_line, self.lines)
        return self.local[key]


class TreeStore:
    """Trees of lazily parsed modules: the most recently used ones up to a source-size budget,
    plus every tree used inside the innermost open `scope()` (so a node looked up twice in one
    task is the same object, and its positions are found)."""

    def __init__(self, budget_chars: int = 6_000_000):
        self.budget = budget_chars
        self._recent: OrderedDict[int, _Tree] = OrderedDict()
        self._held = 0
        self._scopes: list[dict[int, _Tree]] = []

    def adopt(self, parsed: ParsedModule) -> ParsedModule:
        """A lazy handle for an eagerly parsed module, its tree kept while the budget allows."""
        handle = parsed.drop_tree()
        tree = parsed._tree()
        tree.owner = handle
        self._keep(handle, tree)
        return handle

    def entry(self, parsed: ParsedModule) -> _Tree:
        tree = self._find(id(parsed), parsed)
        if tree is None:
            tree = self._keep(parsed, _Tree(cst.parse_module(parsed.text), len(parsed.text), parsed))
        if self._scopes:
            self._scopes[-1].setdefault(id(parsed), tree)
        return tree

    def _keep(self, parsed: ParsedModule, tree: _Tree) -> _Tree:
        old = self._recent.pop(id(parsed), None)
        if old is not None:
            self._held -= old.size
        self._recent[id(parsed)] = tree
        self._held += tree.size
        while self._held > self.budget and len(self._recent) > 1:
            _, old = self._recent.popitem(last=False)
            self._held -= old.size
        return tree

    def _find(self, key: int, parsed: ParsedModule) -> _Tree | None:
        for held in reversed(self._scopes):
            tree = held.get(key)
            if tree is not None and tree.owner is parsed:
                return tree
        tree = self._recent.get(key)
        if tree is not None and tree.owner is parsed:
            self._recent.move_to_end(key)
            return tree
        return None

    @contextmanager
    def scope(self):
        self._scopes.append({})
        try:
            yield
        finally:
            self._scopes.pop()


TREES = TreeStore()


def blocks_of(stmt) -> list:
    """The nested statement blocks of a compound statement (if/for/while/try/with/match), in
    source order."""
    blocks: list = []
    for attr in ("body", "handlers", "cases", "orelse", "finalbody"):
        part = getattr(stmt, attr, None)
        if isinstance(part, (cst.IndentedBlock, cst.SimpleStatementSuite)):
            blocks.append(part)
        elif isinstance(part, (cst.Else, cst.Finally)):
            blocks.append(part.body)
        elif isinstance(part, cst.If):  # elif chain
            blocks += [part.body] + blocks_of(part)[1:]
        elif isinstance(part, (tuple, list)):  # except handlers, match cases
            blocks += [item.body for item in part]
    return blocks


def definition_nodes(module: cst.Module) -> list:
    """Every def and class of a module, in source order (statements only, never expressions)."""
    out: list = []
    _collect_definitions(module.body, out)
    return out


def _collect_definitions(statements, out: list) -> None:
    # A module-level function, not a recursive closure: a closure that calls itself is a
    # reference cycle, and with the collector paused during a scan it kept every tree alive.
    for stmt in statements:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            out.append(stmt)
        if isinstance(stmt, cst.SimpleStatementLine):
            continue
        for block in blocks_of(stmt):
            if isinstance(block, cst.IndentedBlock):
                _collect_definitions(block.body, out)


# A def/class header at the start of a line. Text, not a parse: docstrings can hold such lines,
# so the result is only used when it names exactly the tree's definitions, in order.
DEFINITION_HEADER = re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)", re.MULTILINE)


def definition_lines(parsed: ParsedModule, definitions: list) -> list[int]:
    """The line of each definition's name, without computing the module's positions (which
    cost more than a parse): from the text's def/class headers when they name exactly the
    tree's definitions in order, else from CPython's parser, else from libcst's positions."""
    names = [d.name.value for d in definitions]
    text = parsed.text
    if "\r" not in text:  # `^` only knows \n; other newlines go the slower ways
        lines, line, last = [], 1, 0
        found = []
        for m in DEFINITION_HEADER.finditer(text):
            line += text.count("\n", last, m.start())
            last = m.start()
            found.append(m.group(1))
            lines.append(line)
        if found == names:
            return lines
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        tree = None
    if tree is not None:
        found_ast = sorted((n.lineno, n.col_offset, n.name) for n in ast.walk(tree)
                           if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))
        if [name for _, _, name in found_ast] == names:
            return [line for line, _, _ in found_ast]
    return [parsed.line(d.name) for d in definitions]


@dataclass(frozen=True)
class ParseOutcome:
    parsed: ParsedModule | None = None
    diagnostic: Diagnostic | None = None
    error: FileError | None = None


def parse_file(path: Path) -> ParseOutcome:
    try:
        data = read_regular(path, MAX_FILE_BYTES)
    except NotReadable as err:
        return ParseOutcome(error=FileError(str(path), str(err)))
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
