"""Modules whose constructor never runs `nn.Module.__init__` (GBL608).

A subclass of nn.Module whose `__init__` does nothing (no `super().__init__()`, no attribute
stored) leaves its instance's `__dict__` empty. Dynamo wraps a value passed to the compiled
function lazily, at its first real use (a call, an attribute, `isinstance`, `is None`, passing
it to a function; storing it in another name or a list does not count), and refuses a module
with an empty `__dict__` there ("Uninitialized nn.Module", GB0119, measured 2.13), at an
instruction it cannot resume after. Only a body that certainly does nothing is judged.
"""
from __future__ import annotations

import libcst as cst

from ..index.project import ProjectIndex, is_nn_module
from ..index.symbols import ClassInfo
from ..knowledge import Knowledge
from .values import Obj


def empty_module(project: ProjectIndex, knowledge: Knowledge, instance: Obj) -> bool:
    """An instance of an nn.Module class whose constructor leaves its `__dict__` empty."""
    cls = project.klass(instance.cls)
    return cls is not None and is_nn_module(project, knowledge, cls) and leaves_dict_empty(project, cls)


def leaves_dict_empty(project: ProjectIndex, cls: ClassInfo) -> bool:
    """The `__init__` `cls` runs is a project one whose body does nothing."""
    init = project.method(cls, "__init__")
    if init is None or not isinstance(init.node.body, cst.IndentedBlock):
        return False
    return all(_does_nothing(stmt) for stmt in init.node.body.body)


def _does_nothing(stmt: cst.BaseStatement) -> bool:
    """`pass`, a docstring or `...` on a line of its own."""
    if not isinstance(stmt, cst.SimpleStatementLine):
        return False
    return all(isinstance(small, cst.Pass) or isinstance(small, cst.Expr) and isinstance(
        small.value, (cst.SimpleString, cst.ConcatenatedString, cst.Ellipsis)) for small in stmt.body)
