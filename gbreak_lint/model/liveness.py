"""Which names are live after a point of a function: what a resume function Dynamo creates
there would receive (convert_frame.has_tensor_in_frame decides from them whether it is
compiled at all). Statement-level and conservative: a name counts as assigned only by the
function's own top-level statements."""
from __future__ import annotations

import libcst as cst

from ..walk import children
from .frame_values import assigned_names


def descendants(node: cst.CSTNode):
    for child in children(node):
        if not isinstance(child, (cst.IndentedBlock, cst.SimpleStatementSuite)):  # not nested blocks
            yield child
            yield from descendants(child)


def live_after(statements, line: int) -> set[str]:
    """Names read after `line` before a statement of the function's own body assigns them."""
    live: set[str] = set()
    assigned: set[str] = set()
    for at, _stmt, reads, writes in statements:
        if at > line:
            live |= reads - assigned
            assigned |= writes
    return live


def statement_reads(body, names_read, top: bool = True):
    """(statement, names it reads, names it surely assigns) for every statement under `body` in
    source order; a compound statement reads its header (its blocks are statements of their
    own). Only the function's own top-level statements count as assigning (a branch may not)."""
    smalls = body.body if isinstance(body, (cst.IndentedBlock, cst.SimpleStatementSuite)) else ()
    for stmt in smalls:
        if isinstance(stmt, (cst.SimpleStatementLine, cst.BaseSmallStatement)):
            yield stmt, _reads(stmt, names_read), _assigned(stmt) if top else frozenset()
            continue
        header = [getattr(stmt, field) for field in ("test", "iter") if hasattr(stmt, field)]
        header += [item.item for item in getattr(stmt, "items", ())]
        yield stmt, frozenset().union(*(names_read(h) for h in header)), frozenset()
        for part in (getattr(stmt, "body", None), getattr(stmt, "orelse", None), getattr(stmt, "finalbody", None)):
            if isinstance(part, cst.If):
                yield from statement_reads(cst.IndentedBlock([part]), names_read, False)
            elif part is not None and hasattr(part, "body"):
                yield from statement_reads(part.body if not isinstance(part, cst.BaseSuite) else part,
                                            names_read, False)
        for handler in getattr(stmt, "handlers", ()):
            yield from statement_reads(handler.body, names_read, False)


def _reads(stmt, names_read) -> frozenset[str]:
    """The names a simple statement reads (a plain name it assigns to is not read)."""
    out: set[str] = set()
    for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else [stmt]:
        if isinstance(small, (cst.Assign, cst.AnnAssign)) and small.value is not None:
            targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
            out |= names_read(small.value)
            out.update(n for t in targets if not isinstance(t, cst.Name) for n in names_read(t))
        else:
            out |= names_read(small)
    return frozenset(out)


def _assigned(stmt) -> frozenset[str]:
    return frozenset(assigned_names(stmt))
