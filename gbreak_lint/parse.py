"""Path -> parsed module (libcst).  Bad input becomes a diagnostic or a FileError, never a crash."""
from __future__ import annotations

import ast
import re
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

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

    __slots__ = ("path", "text", "encoding", "_own", "_cpython", "__weakref__")

    def __init__(self, path: Path, module: cst.Module | None, text: str, encoding: str = "utf-8"):
        self.path = path
        self.text = text  # the decoded source, for cheap text pre-filters
        self.encoding = module.encoding if module is not None else encoding  # of the file's bytes
        self._own = _Tree(module, len(text), self) if module is not None else None
        self._cpython: _CPythonFacts | None = None

    def __getstate__(self):  # crossing to another process: the text, never the tree
        return (self.path, self.text, self.encoding)

    def __setstate__(self, state) -> None:
        self.path, self.text, self.encoding = state
        self._own = None
        self._cpython = None

    def definition(self, ordinal: int, def_line: int):
        """The `ordinal`-th def/class node (see `definitions()`). From the module's tree when
        it is held; otherwise only the definition's own lines are parsed: a trace reads a few
        functions of each large module it passes through, and parsing whole modules again was
        most of its time. Node identity holds within a `TREES.scope()` as for whole trees."""
        if self._own is not None:
            return self.definitions()[ordinal]
        node = TREES.definition(self, ordinal, def_line)
        return node if node is not None else self.definitions()[ordinal]

    def definition_spans(self) -> list:
        """(start offset, end offset, name, line of `def`/`class`, first line with decorators, last
        line) of every definition, in the order of `definitions()`, from CPython's parser (cheap);
        [] when it cannot say."""
        return self._cpython_facts().spans

    def torch_alias(self) -> str | None:
        """The name `torch` is imported under at module level (`import torch [as t]`)."""
        return self._cpython_facts().torch_alias

    def _cpython_facts(self) -> "_CPythonFacts":
        if self._cpython is None:
            self._cpython = _cpython_facts(self.text)
        return self._cpython

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

    def innermost_definition(self, line: int, alone: bool = False) -> tuple[cst.CSTNode, Positions] | None:
        """The innermost def/class whose lines hold `line`, with its positions (computed for it
        alone), or None at module level. `alone`: in a lazy module, from a tree of that
        definition's lines only when it can be (its nodes are then not the module tree's)."""
        if alone and self._own is None:
            found = self._innermost_alone(line)
            if found is not None:
                return found
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

    def _innermost_alone(self, line: int) -> tuple[cst.CSTNode, Positions] | None:
        spans = self.definition_spans()
        for i in range(len(spans) - 1, -1, -1):  # pre-order: the innermost holder comes last
            *_, def_line, first, last = spans[i]
            if first <= line <= last:
                node = self.definition(i, def_line)
                tree = TREES.holding(node)
                local = tree.definition_positions(self.path, (node, def_line)) if tree is not None else None
                return (node, local) if local is not None else None
        return None

    def drop_tree(self) -> "ParsedModule":
        """The same file, its tree from now on made on demand by `TREES`."""
        return ParsedModule(self.path, None, self.text, self.encoding)

    def span(self, node: cst.CSTNode, within: "Anchor | None" = None) -> Span:
        """Where `node` is. `within`: the definition holding it, whose positions are then
        computed alone (a fraction of the module's)."""
        line, column, end_line, end_column = self._positions_for(node, within).raw(node)
        return Span(line, column + 1, end_line, end_column + 1)

    def line(self, node: cst.CSTNode, within: "Anchor | None" = None) -> int:
        return self._positions_for(node, within).start_line(node)

    def _positions_for(self, node: cst.CSTNode, within: "Anchor | None") -> Positions:
        if within is not None:
            tree = TREES.holding(within[0]) or self._tree()
            local = tree.definition_positions(self.path, within)
            if local is not None and node in local:
                return local
        return self._tree().all_positions(self.path)


Anchor = tuple  # (def/class node, line of its name): where a definition's positions are anchored


def _positions_of(path: Path, compute, *args) -> Positions:
    try:
        return compute(*args)
    except RecursionError:
        raise SourceTooDeep(f"{path}: too deeply nested to analyse") from None


class _Tree:
    """A module's tree and what was computed from it (dropped together)."""

    __slots__ = ("module", "positions", "definitions", "def_lines", "size", "owner", "local", "lines", "node")

    def __init__(self, module: cst.Module, size: int, owner: ParsedModule, node: cst.CSTNode | None = None):
        self.module, self.size, self.owner = module, size, owner
        self.node = node  # a tree of one definition's lines: that def/class
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
        self._recent: OrderedDict[object, _Tree] = OrderedDict()
        self._held = 0
        self._scopes: list[dict[object, _Tree]] = []
        self._by_definition: dict[int, _Tree] = {}  # id(def node) -> its one-definition tree

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
            tree = self._keep(parsed, _Tree(parse_module(parsed.text), len(parsed.text), parsed))
        if self._scopes:
            self._scopes[-1].setdefault(id(parsed), tree)
        return tree

    def definition(self, parsed: ParsedModule, ordinal: int, def_line: int) -> cst.CSTNode | None:
        """A def/class node from the module's tree if held, else from a parse of its lines
        alone; None when those lines cannot stand alone (the caller parses the module)."""
        key = (id(parsed), ordinal)
        # a definition this task already holds alone stays the one it gets, even after the
        # whole module was parsed meanwhile: nodes found in it must keep their positions
        tree = self._in_scope(key, parsed)
        if tree is None and self._find(id(parsed), parsed) is not None:
            return parsed.definitions()[ordinal]
        tree = tree or self._find(key, parsed)
        if tree is None:
            tree = _parse_definition(parsed, ordinal, def_line)
            if tree is None:
                return None
            self._keep(parsed, tree, key)
            self._by_definition[id(tree.node)] = tree
        if self._scopes:
            self._scopes[-1].setdefault(key, tree)
            self._scopes[-1].setdefault(("definition", id(tree.node)), tree)
        return tree.node

    def holding(self, definition: cst.CSTNode) -> _Tree | None:
        """The one-definition tree `definition` belongs to, if it came from one."""
        tree = self._by_definition.get(id(definition))
        if tree is not None and tree.node is definition:
            return tree
        for held in reversed(self._scopes):  # evicted from the budget, still held by a task
            tree = held.get(("definition", id(definition)))
            if tree is not None and tree.node is definition:
                return tree
        return None

    def _keep(self, parsed: ParsedModule, tree: _Tree, key: object = None) -> _Tree:
        key = id(parsed) if key is None else key
        old = self._recent.pop(key, None)
        if old is not None:
            self._drop(old)
        self._recent[key] = tree
        self._held += tree.size
        while self._held > self.budget and len(self._recent) > 1:
            _, old = self._recent.popitem(last=False)
            self._drop(old)
        return tree

    def _drop(self, tree: _Tree) -> None:
        self._held -= tree.size
        if tree.node is not None and self._by_definition.get(id(tree.node)) is tree:
            del self._by_definition[id(tree.node)]

    def _in_scope(self, key: object, parsed: ParsedModule) -> _Tree | None:
        for held in reversed(self._scopes):
            tree = held.get(key)
            if tree is not None and tree.owner is parsed:
                return tree
        return None

    def _find(self, key: object, parsed: ParsedModule) -> _Tree | None:
        tree = self._in_scope(key, parsed)
        if tree is not None:
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


def definitions_within(definition: cst.CSTNode) -> list:
    """A def or class and every def and class inside it, in source order (pre-order, as the
    module's definitions are numbered)."""
    out: list = []
    _collect_definitions([definition], out)
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


def parse_module(source: str | bytes) -> cst.Module:
    """`libcst.parse_module` without validating each node it makes (`CSTNode.__post_init__`):
    the grammar has just guaranteed what validation checks, and it cost a tenth of every
    parse (libcst's own PERF note there says as much). Nodes our code builds are still checked."""
    saved = cst.CSTNode.__post_init__
    cst.CSTNode.__post_init__ = _unchecked  # type: ignore[method-assign, assignment]
    try:
        return cst.parse_module(source)
    finally:
        cst.CSTNode.__post_init__ = saved  # type: ignore[method-assign]


def _unchecked(node: cst.CSTNode) -> None:
    pass


@dataclass(frozen=True)
class ParseOutcome:
    parsed: ParsedModule | None = None
    diagnostic: Diagnostic | None = None
    error: FileError | None = None


def parse_file(path: Path) -> ParseOutcome:
    data = read_source(path)
    return parse_source(path, data) if isinstance(data, bytes) else data


def read_source(path: Path) -> bytes | ParseOutcome:
    """The file's bytes, or why they are not Python source we can read."""
    try:
        data = read_regular(path, MAX_FILE_BYTES)
    except NotReadable as err:
        return ParseOutcome(error=FileError(str(path), str(err)))
    except OSError as err:
        return ParseOutcome(error=FileError(str(path), f"cannot read file: {err.strerror or err}"))
    if b"\x00" in data:
        return ParseOutcome(error=FileError(str(path), "binary file (contains NUL bytes), not Python source"))
    return data


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
        module = parse_module(data)
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


class _CPythonFacts(NamedTuple):
    spans: list  # see ParsedModule.definition_spans
    torch_alias: str | None


def _cpython_facts(text: str) -> _CPythonFacts:
    """What CPython's tree of the module tells cheaply (one parse, a fraction of libcst's)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _CPythonFacts([], None)
    return _CPythonFacts(_definition_spans(tree, text), _torch_alias(tree))


def _definition_spans(tree: ast.Module, text: str) -> list:
    """CPython's tree walked like `_collect_definitions`."""
    if "\r" in text:  # CPython counts a lone \r as a line end; offsets below count \n only
        return []
    out: list = []
    _visit_definitions(tree.body, [0] + _line_starts(text), len(text), out)
    return out


def _visit_definitions(statements, starts: list[int], size: int, out: list) -> None:
    for stmt in statements:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = min([d.lineno for d in stmt.decorator_list] + [stmt.lineno])
            last = stmt.end_lineno or stmt.lineno
            end = starts[last] - 1 if last < len(starts) else size
            out.append((starts[first - 1], end, stmt.name, stmt.lineno, first, last))
        for field in ("body", "handlers", "cases", "orelse", "finalbody"):
            for item in getattr(stmt, field, None) or ():
                if isinstance(item, (ast.ExceptHandler, ast.match_case)):
                    _visit_definitions(item.body, starts, size, out)
                elif isinstance(item, ast.stmt):
                    _visit_definitions((item,), starts, size, out)


def _torch_alias(tree: ast.Module) -> str | None:
    for stmt in tree.body:
        if not isinstance(stmt, ast.Import):
            continue
        for alias in stmt.names:
            if alias.name == "torch":
                return alias.asname or "torch"
            if alias.name.startswith("torch.") and alias.asname is None:
                return "torch"  # `import torch._dynamo` binds `torch` too
    return None


def _line_starts(text: str) -> list[int]:
    out, at = [], text.find("\n")
    while at != -1:
        out.append(at + 1)
        at = text.find("\n", at + 1)
    return out


def _parse_definition(parsed: ParsedModule, ordinal: int, def_line: int) -> "_Tree | None":
    """A tree of one definition's lines (an indented one inside `if 1:`), or None."""
    spans = parsed.definition_spans()
    if ordinal >= len(spans):
        return None
    start, end, name, line, first, _ = spans[ordinal]
    if line != def_line:  # the two parsers disagree about which definition this is
        return None
    source = parsed.text[start:end]
    indented = source[:1] in (" ", "\t")
    try:
        module = parse_module("if 1:\n" + source if indented else source)
    except Exception:  # noqa: BLE001 - any parser complaint: parse the whole module instead
        return None
    node: cst.CSTNode | None = module.body[0] if module.body else None
    if indented:
        node = node.body.body[0] if isinstance(node, cst.If) and isinstance(node.body, cst.IndentedBlock) else None
    if not isinstance(node, (cst.FunctionDef, cst.ClassDef)) or node.name.value != name:
        return None
    tree = _Tree(module, len(source), parsed, node)
    # its positions check the header against the file's lines: these, at their own line numbers
    # (splitting the whole module's text again for each definition was measurable)
    tree.lines = [""] * (first - 1) + source.split("\n")
    return tree
