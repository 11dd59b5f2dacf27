"""GBL102/GBL103 (unsafe): move the breaking statement out of its `try` / `with` block.

`with ctx(): a; BREAK; b`  ->  `with ctx(): a` / `BREAK` / `with ctx(): b`   (re-enters ctx)
`try: BREAK; b except E: h`  ->  `BREAK` / `try: b except E: h`  (BREAK no longer protected)
A break in the middle of a try is split into two trys sharing the handlers (no `finally`).
Unsafe: the context manager is exited and re-entered, the statement leaves the handlers' reach.
"""
from __future__ import annotations

import libcst as cst

from ..registry import REWRITES
from . import dry_run, enclosing, positions_around, replace_with_statements


@REWRITES.register("GBL102", "GBL103")
def rewrite(parsed, d):
    kind = cst.Try if d.code == "GBL102" else cst.With
    blocks = [b for b in enclosing(parsed, d.span.line, (cst.Try, cst.With)) if isinstance(b, kind)]
    if not blocks:
        return None
    block = blocks[-1]
    body = list(block.body.body) if isinstance(block.body, cst.IndentedBlock) else []
    index = _statement_index(positions_around(parsed, d.span.line), body, d.span.line)
    if index is None:
        return None
    split = _split_with(block, body, index) if kind is cst.With else _split_try(block, body, index)
    if not split or dry_run():  # whether it applies; building it needs the whole module's tree
        return split or None
    return replace_with_statements(parsed.module, block, split)


def _statement_index(positions, body, line: int) -> int | None:
    """The body statement holding `line`, when it is a simple statement (not a nested block)."""
    for i, stmt in enumerate(body):
        r = positions[stmt]
        if r.start.line <= line <= r.end.line:
            return i if isinstance(stmt, cst.SimpleStatementLine) else None
    return None


def _split_with(block: cst.With, body, index: int):
    if block.asynchronous is not None or any(item.asname is not None for item in block.items):
        return None  # re-entering would rebind the `as` target to a new object
    before, stmt, after = body[:index], body[index], body[index + 1:]
    out = []
    if before:
        out.append(block.with_changes(body=block.body.with_changes(body=before)))
    out.append(stmt)
    if after:
        out.append(block.with_changes(body=block.body.with_changes(body=after),
                                      leading_lines=[]))
    return out


def _split_try(block: cst.Try, body, index: int):
    if block.finalbody is not None:
        return None  # duplicating or reordering `finally` changes too much
    before, stmt, after = body[:index], body[index], body[index + 1:]
    if not before:
        rest = after or [cst.SimpleStatementLine([cst.Pass()])]
        return [stmt.with_changes(leading_lines=block.leading_lines),
                block.with_changes(body=block.body.with_changes(body=rest), leading_lines=[])]
    if not after and block.orelse is None:
        return [block.with_changes(body=block.body.with_changes(body=before)), stmt]
    if not after:
        return None
    first = block.with_changes(body=block.body.with_changes(body=before), orelse=None)
    second = block.with_changes(body=block.body.with_changes(body=after), leading_lines=[])
    return [first, stmt, second]
