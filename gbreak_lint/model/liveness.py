"""Which names are live after a point of a function: what a resume function Dynamo creates
there would receive (convert_frame.has_tensor_in_frame decides from them whether it is
compiled at all). Statement-level and conservative: a name counts as assigned only by the
function's own top-level statements."""
from __future__ import annotations

import libcst as cst

from ..walk import children
from .frame_values import assigned_names


def descendants(node: cst.CSTNode):
    for child in _own_children(node):
        yield child
        yield from descendants(child)


def _own_children(node: cst.CSTNode) -> list:
    """A node's children but nested blocks (a compound statement's body is statements of its own)."""
    return [c for c in children(node) if not isinstance(c, (cst.IndentedBlock, cst.SimpleStatementSuite))]


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


def pending_operands(statement, node) -> list[cst.BaseExpression]:
    """What a statement has evaluated and left on the stack when it reaches `node`: the left
    side of an operator (`x + h()`), a call's earlier arguments (`f(x, h())`; a method's
    receiver waits as a bound method, which is no tensor), earlier elements of a display. A
    resume function after a break at `node` receives them, whatever the rest of the function
    reads."""
    path = _path_to(statement, node) if statement is not None else None
    pending: list[cst.BaseExpression] = []
    for parent, child in zip(path or (), (path or ())[1:]):
        pending += _evaluated_before(parent, child)
    return pending


def _path_to(root: cst.CSTNode, target: cst.CSTNode) -> list[cst.CSTNode] | None:
    if root is target:
        return [root]
    for child in _own_children(root):
        found = _path_to(child, target)
        if found is not None:
            return [root, *found]
    return None


def _evaluated_before(parent: cst.CSTNode, child: cst.CSTNode) -> list[cst.BaseExpression]:
    if isinstance(parent, cst.BinaryOperation) and child is parent.right:
        return [parent.left]
    if isinstance(parent, cst.Comparison) and child is not parent.left:
        return [parent.left]
    if isinstance(parent, cst.Subscript) and child is not parent.value:
        return [parent.value]
    if isinstance(parent, cst.Call) and child is not parent.func:
        # not the receiver: `x.mul` waits as a bound method, no tensor to has_tensor_in_frame
        return [a.value for a in parent.args[:_index(parent.args, child)]]
    if isinstance(parent, (cst.List, cst.Tuple, cst.Set)):
        return [e.value for e in parent.elements[:_index(parent.elements, child)]]
    return []


def _index(items, child) -> int:
    return next((k for k, item in enumerate(items) if item is child), 0)
