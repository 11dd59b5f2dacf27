"""Where torch.compile is applied: facts for the placement advice (compile the step, not the loop)."""
from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ..diagnostics import Span
from ..index.project import ProjectIndex
from ..index.symbols import FunctionInfo
from ..walk import find_all, walk

TRAINING_CALLS = frozenset({"backward", "step", "zero_grad"})
LOADER_CLASSES = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
FILE_IO_CALLS = frozenset({"builtins.open", "io.open", "torch.save", "torch.load"})


@dataclass(frozen=True)
class PlacementIssue:
    entry: str
    path: str
    span: Span
    what: str  # "training-loop" | "data-loading" | "file-io"
    detail: str


def placement_issues(project: ProjectIndex, fn: FunctionInfo) -> list[PlacementIssue]:
    """Loops that step an optimizer or iterate a data loader, and file I/O, in a compiled function."""
    finder = _PlacementFinder(project, fn)
    walk(fn.node, finder)
    return finder.issues


class _PlacementFinder(cst.CSTVisitor):
    def __init__(self, project: ProjectIndex, fn: FunctionInfo):
        self.project, self.fn, self.module = project, fn, project.modules[fn.module]
        self.issues: list[PlacementIssue] = []

    def qualify(self, expr) -> str | None:
        return self.project.qualify(expr, self.module, self.fn)

    def add(self, node, what: str, detail: str) -> None:
        fn = self.fn
        self.issues.append(PlacementIssue(fn.qualname, fn.path, fn.parsed.span(node, (fn.node, fn.def_line)),
                                          what, detail))

    def visit_FunctionDef(self, node) -> bool:
        return node is self.fn.node

    def visit_For(self, node: cst.For) -> None:
        if _iterates_loader(node.iter, self.qualify):
            self.add(node, "data-loading", cst.Module([]).code_for_node(node.iter))
        else:
            self._loop(node)

    def visit_While(self, node: cst.While) -> None:
        self._loop(node)

    def _loop(self, node) -> None:
        called = _attribute_calls(node.body)
        if called & TRAINING_CALLS:
            self.add(node, "training-loop", ", ".join(sorted(called & TRAINING_CALLS)))

    def visit_Call(self, node: cst.Call) -> None:
        called = self.qualify(node.func)
        if called is not None and called in FILE_IO_CALLS:
            self.add(node, "file-io", called)


def _iterates_loader(expr, qualify) -> bool:
    if isinstance(expr, cst.Call):
        if qualify(expr.func) in LOADER_CLASSES:
            return True
        if isinstance(expr.func, cst.Name) and expr.func.value in ("enumerate", "iter") and expr.args:
            return _iterates_loader(expr.args[0].value, qualify)
    name = expr.value if isinstance(expr, cst.Name) else (
        expr.attr.value if isinstance(expr, cst.Attribute) else "")
    return name.lower().endswith(("loader", "dataloader"))


def _attribute_calls(body) -> set[str]:
    return {node.func.attr.value for node in find_all(body, (cst.Call,)) if isinstance(node.func, cst.Attribute)}
