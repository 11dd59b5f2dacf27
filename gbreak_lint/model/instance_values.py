"""Which of a module's Python values a compilation after a break reads.

A resume function is a code object of its own whose guards do not pin the module instance: the
next layer of a ModuleList reuses it unless the code up to its next break specialised on a Python
value the layers may hold differently (`self.sliding = layer_idx % 2 == 0`). Measured 2.13:
identical layers trace a break after the first one once; layers reading such a value before it,
once per value.
"""
from __future__ import annotations

import libcst as cst

from ..index.project import ProjectIndex
from ..index.symbols import ClassInfo
from ..walk import NESTED_SCOPES, find_all
from .types import FrameKey

# read off every instance alike: the mode a whole model is put in
SHARED_ATTRIBUTES = frozenset({"training"})
MAX_DEPTH = 3  # methods and sub-modules followed from a segment


def reads_instance_values_between(project: ProjectIndex, key: FrameKey, after: int, until: int | None) -> bool:
    """Does the frame read, on lines after `after` up to `until` (None: the end), a Python value
    its instance holds (`self.sliding`), itself or in a method or sub-module it calls there
    (`self._mask(x)`, `self.attn(h)` whose forward reads its own)?"""
    fn = project.function(key.qualname)
    owner = key.self_class or (fn.class_qualname if fn is not None else None)
    cls = project.klass(owner) if owner else None
    if fn is None or cls is None:
        return False
    reads = project.derived(f"instance-value-reads:{key.qualname}:{owner}", lambda: _value_reads(project, fn, cls, 0))
    return any(at > after and (until is None or at <= until) for at in reads)


def _value_reads(project: ProjectIndex, fn, cls: ClassInfo, depth: int) -> tuple[int, ...]:
    """Lines of `fn` reading an instance value, directly or through what it calls on `self`."""
    anchor = (fn.node, fn.def_line)
    lines = []
    for node in find_all(fn.node.body, (cst.Attribute,), skip=NESTED_SCOPES):
        if not (isinstance(node.value, cst.Name) and node.value.value == "self") or node.attr.value in SHARED_ATTRIBUTES:
            continue
        if _reads_value(project, cls, node.attr.value, depth):
            lines.append(fn.parsed.line(node, anchor))
    return tuple(lines)


def _reads_value(project: ProjectIndex, cls: ClassInfo, name: str, depth: int) -> bool:
    """`self.<name>`: a Python value the instance holds (a call made it too: `bool(idx % 2)`,
    `getattr(config, ...)`), or a method or sub-module reading one."""
    method = project.method(cls, name)
    if method is not None:
        return depth < MAX_DEPTH and bool(_value_reads(project, method, cls, depth + 1))
    found = project.class_attribute(cls, name)
    if found is None:
        return False
    holder, value = found
    home = project.modules[holder.module]
    made = project.created_class(value, home) if isinstance(value, cst.Call) else None
    if made is not None:  # a sub-module of the project: what its forward reads of its own
        forward = project.method(made, "forward")
        return forward is not None and depth < MAX_DEPTH and bool(_value_reads(project, forward, made, depth + 1))
    if isinstance(value, cst.Call) and (project.qualify(value.func, home) or "").startswith("torch."):
        return False  # torch makes layers, parameters, buffers and tensors
    return _varies(project, holder, value, depth)


def _varies(project: ProjectIndex, holder: ClassInfo, value: cst.BaseExpression, depth: int) -> bool:
    """Can the value differ between instances? Only through a constructor argument read as a
    value (`layer_idx % 2`, `config.layer_types[layer_idx]`): a literal, or what is read off a
    shared config (`config.hidden_size`), is the same on every layer."""
    init = project.method(holder, "__init__")
    params = {p.name for p in init.params[1:]} if init is not None else set()
    bases = {id(node.value) for node in find_all(value, (cst.Attribute,))}
    for node in find_all(value, (cst.Name, cst.Attribute)):
        if isinstance(node, cst.Name) and node.value in params and id(node) not in bases:
            return True
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self" \
                and depth < MAX_DEPTH and node.attr.value not in SHARED_ATTRIBUTES:
            found = project.class_attribute(holder, node.attr.value)  # `self.sliding = self.layer_idx % 2`
            if found is not None and not isinstance(found[1], cst.Call) and _varies(project, found[0], found[1], depth + 1):
                return True
    return False


def reads_self_attributes(project: ProjectIndex, qualname: str) -> bool:
    """Does a function (or a closure in it) read an attribute of `self` (a method looked up, a
    value)? Only then does its trace depend on `self`'s type, which Dynamo guards (measured
    2.13: a base's method compiled for one subclass instance is not compiled again for another
    when it reads nothing off `self`; one calling `self.hook(...)` is)."""
    fn = project.function(qualname)
    if fn is None:
        return False
    return project.derived(f"reads-self-attributes:{qualname}", lambda: any(  # its closures' reads too
        isinstance(node.value, cst.Name) and node.value.value == "self"
        for node in find_all(fn.node.body, (cst.Attribute,), skip=(cst.ClassDef,))))
