"""Custom operators the project defines with `torch.library.custom_op` (or declares with the
low-level `torch.library.Library` API).

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
from .frame_values import single_store
from .values import literal


@dataclass(frozen=True)
class CustomOps:
    ops: Mapping[str, str]  # function qualname -> operator name ("mylib::foo")
    faked: frozenset[str]  # operator names with a fake implementation registered
    # ... whose fake only raises NotImplementedError (measured 2.13: GB0087 at the call, resumed)
    unfakeable: frozenset[str] = frozenset()
    # operators declared with torch.library.Library / torch.library.define that have no
    # kernel Dynamo can run on fake tensors (measured 2.13: GB0090 at the call, resumed)
    kernel_only: frozenset[str] = frozenset()
    library_ops: frozenset[str] = frozenset()  # every operator the low-level API declares

    def declared(self, op: str | None) -> bool:
        return op is not None and (op in self.ops.values() or op in self.library_ops)

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
                    name = _string_argument(call, _enclosing(project, module, fn), module)
                    if name is not None:
                        ops[fn.qualname] = name
    declared, runnable = _library_ops(project, knowledge)
    by_name = {qualname.rsplit(".", 1)[-1]: op for qualname, op in ops.items()}
    fakes = _fakes(project, knowledge, by_name) if ops or declared else {}
    unfakeable = {op for op, bodies in fakes.items() if bodies and all(_raises_not_implemented(b) for b in bodies)}
    return CustomOps(ops, frozenset(fakes), frozenset(unfakeable),
                     kernel_only=frozenset(declared - runnable - set(fakes)), library_ops=frozenset(declared))


def _library_ops(project: ProjectIndex, knowledge) -> tuple[set[str], set[str]]:
    """(operators declared with the low-level API, those given a kernel fake tensors can run).
    `lib = torch.library.Library("ns", ...)` then `lib.define("foo(Tensor x) -> Tensor")` and
    `lib.impl("foo", fn, "Meta")`, or `torch.library.define("ns::foo", ...)` and
    `@torch.library.impl("ns::foo", "meta")`."""
    declared: set[str] = set()
    runnable: set[str] = set()
    unnamed = False  # a kernel or fake registered under a name the source does not spell
    for module in project.mentioning("library"):
        qualify = lambda expr, module=module: project.qualify(expr, module)  # noqa: E731
        namespaces = _library_namespaces(module, qualify, knowledge)
        for call in find_all(module.parsed.module, (cst.Call,)):
            func, qual = call.func, qualify(call.func)
            if qual in knowledge.library_definers:
                op = _string_argument(call, module.parsed.module, module)
                declared.update([_op_name(op)] if op and "::" in op else [])
            elif qual in knowledge.library_implementers or qual in knowledge.fake_registrars:
                op = _string_argument(call, module.parsed.module, module)
                unnamed |= op is None
                if op and "::" in op and (qual in knowledge.fake_registrars or _fake_capable(call, 1, knowledge)):
                    runnable.add(_op_name(op))
            elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                    and func.value.value in namespaces:
                name = _string_argument(call, module.parsed.module, module)
                method = func.attr.value
                unnamed |= name is None and method != "define"
                if not name:
                    continue
                op = f"{namespaces[func.value.value]}::{_op_name(name)}"
                if method == "define":
                    declared.add(op)
                elif method in knowledge.library_fake_methods or method == "impl" and _fake_capable(call, 2, knowledge):
                    runnable.add(op)
    return declared, declared if unnamed else runnable


def _fake_capable(call: cst.Call, position: int, knowledge) -> bool:
    """Does an `impl` call register a kernel fake tensors can run: its dispatch key (or one
    of a list of device types) at `position`; none given is CompositeImplicitAutograd."""
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    given = positional[position] if len(positional) > position else next(
        (a.value for a in call.args if a.keyword is not None
         and a.keyword.value in ("dispatch_key", "types", "device_types")), None)
    if given is None:
        return True
    items = [el.value for el in given.elements] if isinstance(given, (cst.List, cst.Tuple)) else [given]
    keys = [found.value for found in map(literal, items) if found is not None]
    return len(keys) != len(items) or any(key in knowledge.fake_capable_dispatch_keys for key in keys)


def _library_namespaces(module, qualify, knowledge) -> dict[str, str]:
    """Names bound to `torch.library.Library("ns", kind)` in the module -> the namespace."""
    found = {}
    for assign in find_all(module.parsed.module, (cst.Assign,)):
        value = assign.value
        if isinstance(value, cst.Call) and qualify(value.func) in knowledge.library_classes:
            ns = _string_argument(value, module.parsed.module, module)
            for target in assign.targets:
                if ns and isinstance(target.target, cst.Name):
                    found[target.target.value] = ns
    return found


def _op_name(schema_or_name: str) -> str:
    """"foo(Tensor x) -> Tensor", "foo.out(...)", "ns::foo" -> the operator ("foo", "ns::foo")."""
    return schema_or_name.split("(", 1)[0].split(".", 1)[0].strip()


def _fakes(project: ProjectIndex, knowledge, by_name: Mapping[str, str]) -> dict[str, list]:
    """Operators given a fake, with the fake functions' definitions where the source names them:
    `<op>.register_fake` (as a decorator or a call; the op named as the function it decorates),
    or a registrar called with the operator's name."""
    found: dict[str, list] = {}
    modules = {m.name: m for m in project.mentioning("register_fake") + project.mentioning("impl_abstract")}
    for module in modules.values():
        defs = {fn.name: fn.node for fn in module.functions.values()}
        for fn in module.functions.values():  # `@foo.register_fake` / `@register_fake("ns::foo")` on a def
            for dec in fn.decorators:
                op = _registered_op(dec.decorator, by_name)
                if op is None and isinstance(dec.decorator, cst.Call) \
                        and project.qualify(dec.decorator.func, module) in knowledge.fake_registrars:
                    op = _string_argument(dec.decorator)
                if op is not None:
                    found.setdefault(op, []).append(fn.node)
        for node in find_all(module.parsed.module, (cst.Call,)):
            op, position = _registered_op(node.func, by_name), 0  # `foo.register_fake(foo_fake)`
            if op is None and project.qualify(node.func, module) in knowledge.fake_registrars:
                op, position = _string_argument(node), 1  # `register_fake("ns::foo", foo_fake)`
            if op is None:
                continue
            found.setdefault(op, [])
            given = node.args[position].value if len(node.args) > position else None
            if isinstance(given, cst.Name) and given.value in defs:
                found[op].append(defs[given.value])
    return found


def _registered_op(expr: cst.BaseExpression, by_name: Mapping[str, str]) -> str | None:
    """The operator of `<op>.register_fake` (the op named as the function it decorates)."""
    if isinstance(expr, cst.Attribute) and expr.attr.value == "register_fake" and isinstance(expr.value, cst.Name):
        return by_name.get(expr.value.value)
    return None


def _raises_not_implemented(fake: cst.FunctionDef) -> bool:
    """A fake whose body is a bare `raise NotImplementedError(...)` (after a docstring)."""
    body = [s for s in fake.body.body if not _is_docstring(s)] if isinstance(fake.body, cst.IndentedBlock) else []
    if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine) or len(body[0].body) != 1:
        return False
    raised = body[0].body[0]
    exc = raised.exc if isinstance(raised, cst.Raise) else None
    if isinstance(exc, cst.Call):
        exc = exc.func
    return isinstance(exc, cst.Name) and exc.value == "NotImplementedError"


def _is_docstring(stmt: cst.CSTNode) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 \
        and isinstance(stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, cst.SimpleString)


def _string_argument(call: cst.Call, scope: cst.CSTNode | None = None, module=None) -> str | None:
    """The operator name a call is given: a string literal, or a name `scope` (the function
    around the definition, else the module) binds to one once (`op_name = "ns::op"`)."""
    given = call.args[0].value if call.args else None
    if isinstance(given, cst.Name) and scope is not None:
        name = given.value
        given = single_store(scope, name)
        if given is None and module is not None:  # a module-level constant
            given = single_store(module.parsed.module, name)
    found = literal(given) if given is not None else None
    return found.value if found is not None and isinstance(found.value, str) else None


def _enclosing(project: ProjectIndex, module, fn) -> cst.CSTNode:
    parent = project.function(fn.parent_function) if fn.parent_function else None
    return parent.node if parent is not None else module.parsed.module
