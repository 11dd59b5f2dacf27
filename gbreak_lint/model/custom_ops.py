"""Custom operators the project defines with `torch.library.custom_op`.

Dynamo does not trace a custom op's Python body: it puts the op in the graph and runs the op's
*fake* implementation on fake tensors to learn its output. Measured on 2.13: a print in the
body is no break, and an op with no fake registered anywhere fails the compile with GB4315
("There was no fake impl registered"), with or without fullgraph. A fake is registered with
`@op.register_fake`, `op.register_fake(fn)`, or `torch.library.register_fake("ns::name")`
(knowledge: `custom_op_decorators`, `fake_registrars`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import libcst as cst

from ..index.project import ProjectIndex
from ..walk import find_all
from .values import literal


@dataclass(frozen=True)
class CustomOps:
    ops: Mapping[str, str]  # function qualname -> operator name ("mylib::foo")
    faked: frozenset[str]  # operator names with a fake implementation registered

    def op_of_function(self, qualname: str) -> str | None:
        return self.ops.get(qualname)

    @staticmethod
    def op_of_namespace_call(qualified: str | None) -> str | None:
        """`torch.ops.mylib.foo` or `torch.ops.mylib.foo.default` -> "mylib::foo"."""
        parts = qualified.split(".") if qualified and qualified.startswith("torch.ops.") else []
        return f"{parts[2]}::{parts[3]}" if len(parts) in (4, 5) else None


def custom_ops(project: ProjectIndex, knowledge) -> CustomOps:
    ops: dict[str, str] = {}
    for module in project.mentioning("custom_op"):
        for fn in module.functions.values():
            for dec in fn.decorators:
                call = dec.decorator
                if isinstance(call, cst.Call) and project.qualify(call.func, module) in knowledge.custom_op_decorators:
                    name = _string_argument(call)
                    if name is not None:
                        ops[fn.qualname] = name
    by_name = {qualname.rsplit(".", 1)[-1]: op for qualname, op in ops.items()}
    return CustomOps(ops, frozenset(_faked(project, knowledge, by_name) if ops else ()))


def _faked(project: ProjectIndex, knowledge, by_name: Mapping[str, str]) -> set[str]:
    """Operators given a fake: `<op>.register_fake` (as a decorator or a call; the op named as
    the function it decorates), or a registrar called with the operator's name."""
    found: set[str] = set()
    modules = {m.name: m for m in project.mentioning("register_fake") + project.mentioning("impl_abstract")}
    for module in modules.values():
        for node in find_all(module.parsed.module, (cst.Attribute, cst.Call)):
            if isinstance(node, cst.Attribute):
                if node.attr.value == "register_fake" and isinstance(node.value, cst.Name) \
                        and node.value.value in by_name:
                    found.add(by_name[node.value.value])
            elif project.qualify(node.func, module) in knowledge.fake_registrars:
                name = _string_argument(node)
                if name is not None:
                    found.add(name)
    return found


def _string_argument(call: cst.Call) -> str | None:
    found = literal(call.args[0].value) if call.args else None
    return found.value if found is not None and isinstance(found.value, str) else None
