"""What a class body says by itself: the values its statements bind, the enum members it defines."""
from __future__ import annotations

import libcst as cst

from ..index.project import ProjectIndex
from .values import Const, literal


def class_body_values(node: cst.ClassDef) -> list[tuple[str, cst.BaseExpression]]:
    """(name, value) of the plain and annotated assignments in a class body, in order."""
    out = []
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    for stmt in body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.value is not None:
                out.append((small.target.value, small.value))
            elif isinstance(small, cst.Assign):
                out += [(t.target.value, small.value) for t in small.targets if isinstance(t.target, cst.Name)]
    return out


class SymbolicNames:
    """Qualified names that are values of their own, compared by identity: torch dtypes
    (`torch.float16`) and the members of a project `enum.Enum` (`Mode.FAST`). Dynamo folds
    `mode == Mode.SLOW` to a constant. A member of a str or int mixin enum equals its value,
    so it stands for that value (`Precision.HALF == "half"`)."""

    def __init__(self, project: ProjectIndex, dtypes: frozenset[str]):
        self.project, self.dtypes = project, dtypes

    def __contains__(self, qual: object) -> bool:
        if not isinstance(qual, str):
            return False
        if qual in self.dtypes:
            return True
        cls, member = self._enum_member(qual)
        return cls is not None and self.project.external_bases(cls) == PLAIN_ENUM_BASES

    def constant(self, qual: str | None) -> Const | None:
        """The value a qualified name stands for: itself (a dtype, a plain enum member) or the
        literal a mixin enum's member was given; None for other names."""
        if qual is None:
            return None
        if qual in self:
            return Const(qual)
        cls, member = self._enum_member(qual)
        if cls is None or not self.project.external_bases(cls) & MIXIN_ENUM_BASES:
            return None
        found = literal(dict(class_body_values(cls.node)).get(member))
        return found if found is not None and isinstance(found.value, (str, int)) else None

    def _enum_member(self, qual: str):
        owner, _, member = qual.rpartition(".")
        cls = self.project.klass(owner) if owner else None
        if cls is None or not self.project.external_bases(cls) & ENUM_BASES \
                or member not in dict(class_body_values(cls.node)):
            return None, member
        return cls, member


ENUM_BASES = {"enum.Enum", "enum.IntEnum", "enum.StrEnum"}
PLAIN_ENUM_BASES = {"enum.Enum"}
MIXIN_ENUM_BASES = {"builtins.str", "builtins.int", "enum.IntEnum", "enum.StrEnum"}
