"""What a class body says by itself: the values its statements bind, the enum members it defines."""
from __future__ import annotations

import libcst as cst

from ..index.project import ProjectIndex
from ..walk import NESTED_SCOPES, all_params, find_all, own_names
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


_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


def class_body_names(node: cst.ClassDef, annotations: bool) -> set[str]:
    """The names a class body's own code holds: its statements', and of the definitions in it
    what the body evaluates (decorators, defaults, a nested class's bases, a comprehension's
    first iterable; annotations unless `from __future__ import annotations` made them strings)."""
    names: set[str] = set()
    for found in find_all(node.body, (cst.Name, cst.FunctionDef, cst.ClassDef, cst.Annotation) + _COMPREHENSIONS,
                          skip=NESTED_SCOPES + (cst.Annotation,) + _COMPREHENSIONS):
        if isinstance(found, cst.Name):
            names.add(found.value)
        elif isinstance(found, _COMPREHENSIONS):  # its own code; the body evaluates its first iterable
            names |= own_names(found.for_in.iter)
        elif isinstance(found, cst.Annotation):
            names |= own_names(found) if annotations else set()
        elif isinstance(found, cst.FunctionDef):
            names |= _evaluated_at_definition(found, annotations)
        else:
            names |= {n for part in [*found.decorators, *found.bases, *found.keywords] for n in own_names(part)}
    return names


def _evaluated_at_definition(fn: cst.FunctionDef, annotations: bool) -> set[str]:
    """Names a `def` evaluates where it stands: decorators, defaults, and annotations if evaluated."""
    params = all_params(fn.params)
    parts: list[cst.CSTNode] = [*fn.decorators, *(p.default for p in params if p.default is not None)]
    if annotations:
        parts += [p.annotation for p in params if p.annotation is not None]
        parts += [fn.returns] if fn.returns is not None else []
    return {n for part in parts for n in own_names(part)}


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
