"""Source positions of libcst nodes, computed the way libcst's PositionProvider does, ~5× faster.

libcst's provider regenerates the module's code and records a `CodeRange` per node; most of its
time goes to a regular expression per token, two dataclass objects per node and a generator-based
context manager per syntactic node. This does the same walk (the nodes' own `_codegen`, so the
positions are libcst's by construction) with plain tuples, and builds a `CodeRange` only for the
few nodes a diagnostic asks about. Positions are the largest cost of a scan after parsing.
"""
from __future__ import annotations

from typing import Iterator, Literal, Mapping

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.metadata import CodeRange

Range = tuple[int, int, int, int]  # start line, start column, end line, end column (as libcst)

# Whitespace and punctuation: ~65% of a tree's nodes, never a finding's location. Their
# positions are not kept (memory: a worker keeps positions for every tree it holds).
TRIVIA = frozenset({
    cst.SimpleWhitespace, cst.ParenthesizedWhitespace, cst.Newline, cst.TrailingWhitespace,
    cst.EmptyLine, cst.Comment, cst.Comma, cst.Dot, cst.Colon, cst.Semicolon, cst.AssignEqual,
    cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket,
    cst.LeftCurlyBrace, cst.RightCurlyBrace,
})


class _SyntacticPosition:
    """`with state.record_syntactic_position(node, ...)`: the node's range without the
    whitespace it owns; a plain class because a @contextmanager generator costs ~3× more."""

    __slots__ = ("state", "node", "start_node", "end_node", "start")

    def __init__(self, state: "_PositionState", node, start_node, end_node):
        self.state, self.node, self.start_node, self.end_node = state, node, start_node, end_node

    def __enter__(self) -> None:
        self.start = (self.state.line, self.state.column)

    def __exit__(self, *exc) -> Literal[False]:
        state = self.state
        start = state.range_of(self.start_node)[:2] if self.start_node is not None else self.start
        end = state.range_of(self.end_node)[2:] if self.end_node is not None else (state.line, state.column)
        (state.trivia if type(self.node) in TRIVIA else state.computed)[self.node] = start + end
        return False


class _PositionState(CodegenState):
    """Counts lines and columns instead of collecting the generated code."""

    def __init__(self, module: cst.Module):
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.line, self.column = 1, 0
        self.stack: list[tuple[int, int]] = []
        self.computed: dict[cst.CSTNode, Range] = {}
        self.trivia: dict[cst.CSTNode, Range] = {}  # only while computing (a parent may end at a `)`)

    def range_of(self, node: cst.CSTNode) -> Range:
        found = self.computed.get(node)
        return found if found is not None else self.trivia[node]

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.add_token(token)

    def add_token(self, value: str) -> None:
        if not self.tokens:
            self.tokens.append(value)  # Module._codegen_impl asks whether anything was written
        if "\n" in value or "\r" in value:
            value = value.replace("\r\n", "\n").replace("\r", "\n")
            self.line += value.count("\n")
            self.column = len(value) - value.rfind("\n") - 1
        else:
            self.column += len(value)

    def pop_trailing_newline(self) -> None:
        pass  # the position was already counted, as in libcst's provider

    def before_codegen(self, node: cst.CSTNode) -> None:
        self.stack.append((self.line, self.column))

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self.stack.pop()
        table = self.trivia if type(node) in TRIVIA else self.computed
        if node not in table:  # a syntactic position recorded inside wins
            table[node] = (*start, self.line, self.column)

    def record_syntactic_position(  # type: ignore[override]  # a cheaper context manager, same protocol
            self, node, *, start_node=None, end_node=None) -> _SyntacticPosition:
        return _SyntacticPosition(self, node, start_node, end_node)


class Positions(Mapping):
    """node -> libcst `CodeRange`, built on access (not for whitespace/punctuation nodes).
    `line_offset` shifts every line: a definition's positions are computed on their own,
    from line 1, and moved to where the definition is."""

    def __init__(self, raw: dict[cst.CSTNode, Range], line_offset: int = 0):
        self._raw = raw
        self._offset = line_offset

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        sl, sc, el, ec = self.raw(node)
        return CodeRange((sl, sc), (el, ec))

    def start_line(self, node: cst.CSTNode) -> int:
        return self._raw[node][0] + self._offset

    def raw_or_none(self, node: cst.CSTNode) -> Range | None:
        found = self._raw.get(node)
        return None if found is None else (found[0] + self._offset, found[1], found[2] + self._offset, found[3])

    def raw(self, node: cst.CSTNode) -> Range:
        found = self.raw_or_none(node)
        if found is None:
            raise KeyError(node)
        return found

    def __iter__(self) -> Iterator[cst.CSTNode]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)


def compute_positions(module: cst.Module) -> Positions:
    state = _PositionState(module)
    module._codegen(state)
    return Positions(state.computed)


def compute_definition_positions(module: cst.Module, definition, name_line: int, lines: list[str]) -> Positions | None:
    """Positions inside one def/class statement, without generating the rest of the module (a
    scan asks for positions in the functions Dynamo traces, a small part of most modules).

    The statement's code is generated alone, from line 1 and with the indentation of its header
    line, then shifted so that its name lands on `name_line` (known from the text). None when the
    text does not show the name where the result puts it: the caller then computes the module's.
    """
    if not 0 < name_line <= len(lines):
        return None
    header = lines[name_line - 1]
    indent = header[:len(header) - len(header.lstrip(" \t\f"))]
    state = _PositionState(module)
    state.indent_tokens = [indent] if indent else []
    definition._codegen(state)
    line, column, _, end_column = state.computed[definition.name]
    if header[column:end_column] != definition.name.value:
        return None
    return Positions(state.computed, name_line - line)
