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
from .constructions import constructions_of
from .types import FrameKey

# read off every instance alike: the mode a whole model is put in
SHARED_ATTRIBUTES = frozenset({"training"})
MAX_DEPTH = 3  # methods and sub-modules followed from a segment

# The constructor parameters of one class (by qualname) that can differ between its instances;
# None: any of them can (the layer itself, made by a caller we do not follow).
Varying = tuple[str, frozenset[str]] | None


def reads_instance_values_between(project: ProjectIndex, key: FrameKey, after: int, until: int | None) -> bool:
    """Does the frame read, on lines after `after` up to `until` (None: the end), a Python value
    its instance holds (`self.sliding`), itself or in a method or sub-module it calls there
    (`self._mask(x)`, `self.attn(h)` whose forward reads its own)?"""
    fn = project.function(key.qualname)
    owner = key.self_class or (fn.class_qualname if fn is not None else None)
    cls = project.klass(owner) if owner else None
    if fn is None or cls is None:
        return False
    reads = project.derived(f"instance-value-reads:{key.qualname}:{owner}", lambda: _value_reads(project, fn, cls, 0, None))
    return any(at > after and (until is None or at <= until) for at in reads)


def _value_reads(project: ProjectIndex, fn, cls: ClassInfo, depth: int, varying: Varying) -> tuple[int, ...]:
    """Lines of `fn` reading an instance value, directly or through what it calls on `self`."""
    anchor = (fn.node, fn.def_line)
    lines = []
    for node in find_all(fn.node.body, (cst.Attribute,), skip=NESTED_SCOPES):
        if not (isinstance(node.value, cst.Name) and node.value.value == "self") or node.attr.value in SHARED_ATTRIBUTES:
            continue
        if _reads_value(project, cls, node.attr.value, depth, varying):
            lines.append(fn.parsed.line(node, anchor))
    return tuple(lines)


def _reads_value(project: ProjectIndex, cls: ClassInfo, name: str, depth: int, varying: Varying) -> bool:
    """`self.<name>`: a Python value the instance holds (a call made it too: `bool(idx % 2)`,
    `getattr(config, ...)`), or a method or sub-module reading one."""
    method = project.method(cls, name)
    if method is not None:
        return depth < MAX_DEPTH and bool(_value_reads(project, method, cls, depth + 1, varying))
    found = project.class_attribute(cls, name)
    if found is None:
        return False
    holder, value = found
    if not isinstance(value, cst.Call):
        return _varies(project, holder, value, depth, varying)
    home = project.modules[holder.module]
    made = project.created_class(value, home)
    if made is not None:  # a sub-module of the project: what its forward reads of its own
        forward = project.method(made, "forward")
        if forward is None or depth >= MAX_DEPTH:
            return False
        passed = _varying_arguments(project, made, value, holder, depth, varying)
        return bool(_value_reads(project, forward, made, depth + 1, passed))
    if (project.qualify(value.func, home) or "").startswith("torch."):
        return False  # torch makes layers, parameters, buffers and tensors
    return _varies(project, holder, value, depth, varying)


def _varying_arguments(project: ProjectIndex, made: ClassInfo, call: cst.Call, holder: ClassInfo,
                       depth: int, varying: Varying) -> Varying:
    """The constructor parameters of a sub-module that can differ between the holder's
    instances: those the holder passes a varying value (`Attention(config, layer_idx)` passes
    `layer_idx`; `RMSNorm(config.hidden_size, eps=config.rms_norm_eps)` passes nothing that
    differs, so every layer's norm reads the same `eps`). A keyword the signature does not name
    goes to its `**kwargs`, extra positions to its `*args`."""
    init = project.method(made, "__init__")
    if init is None or init.class_qualname is None:
        return None
    params = init.params[1:]
    if any(arg.star for arg in call.args):  # `Block(*args)`: which parameter gets what is not written down
        differs = any(_varies(project, holder, arg.value, depth + 1, varying) for arg in call.args)
        return None if differs else (init.class_qualname, frozenset())
    positional = [p.name for p in params if p.kind == "positional"]
    rest = next((p.name for p in params if p.kind == "star"), None)
    extra = next((p.name for p in params if p.kind == "double_star"), None)
    named = {p.name for p in params if p.kind in ("positional", "keyword_only")}
    passed: list[tuple[str | None, cst.BaseExpression]] = []
    for i, arg in enumerate(a for a in call.args if a.keyword is None):
        passed.append((positional[i] if i < len(positional) else rest, arg.value))
    for arg in call.args:
        if arg.keyword is not None:
            passed.append((arg.keyword.value if arg.keyword.value in named else extra, arg.value))
    return init.class_qualname, frozenset(
        name for name, expr in passed if name is not None and _varies(project, holder, expr, depth + 1, varying))


def _varies(project: ProjectIndex, holder: ClassInfo, value: cst.BaseExpression, depth: int, varying: Varying) -> bool:
    """Can the value differ between instances? Only through a constructor argument read as a
    value (`layer_idx % 2`, `config.layer_types[layer_idx]`, a local `__init__` computed from
    one) that the instance's maker passes differently (`varying`): a literal, or what is read
    off a shared config (`config.hidden_size`), is the same on every layer; one read off a
    config of the layer's own (`[Stage(cfg) for cfg in configs]`) is not."""
    init = project.method(holder, "__init__")
    params = {p.name for p in init.params[1:]} if init is not None else set()
    if varying is not None and init is not None and varying[0] == init.class_qualname:
        params &= varying[1]
    own = element_parameters(project, holder) if varying is None else frozenset()
    # `kwargs.get("eps")`: read off `**kwargs` / `*args`, a value passed in, not a shared config
    own |= {p.name for p in init.params if p.kind in ("star", "double_star")} if init is not None else set()
    bases = {id(node.value) for node in find_all(value, (cst.Attribute,))}
    for node in find_all(value, (cst.Name, cst.Attribute)):
        if isinstance(node, cst.Name) and node.value in params and (id(node) not in bases or node.value in own):
            return True
        if isinstance(node, cst.Name) and node.value not in params and depth < MAX_DEPTH \
                and any(_varies(project, holder, v, depth + 1, varying) for v in holder.init_locals.get(node.value, ())):
            return True  # `dilation = 2 ** layer_idx`, then `Conv(ch, dilation)`
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self" \
                and depth < MAX_DEPTH and node.attr.value not in SHARED_ATTRIBUTES:
            found = project.class_attribute(holder, node.attr.value)  # `self.sliding = self.layer_idx % 2`
            if found is not None and not isinstance(found[1], cst.Call) and _varies(project, found[0], found[1], depth + 1, varying):
                return True
    return False


def element_parameters(project: ProjectIndex, cls: ClassInfo) -> frozenset[str]:
    """Constructor parameters given, where the class's module builds it, the element of a loop
    over a collection (`[Stage(cfg) for cfg in configs]`), not an index (`range`): each
    instance holds an object of its own."""
    def compute() -> frozenset[str]:
        init = project.method(cls, "__init__")
        if init is None:
            return frozenset()
        positional = [p.name for p in init.params[1:] if p.kind == "positional"]
        found: set[str] = set()
        for call, module, _scope in constructions_of(project, cls):
            loops = [n for n in find_all(module.parsed.module, LOOPS) if _holds(n, call)]
            targets = {t.value for loop in loops for target, iterated in _loop_clauses(loop)
                       if not _over_range(iterated) for t in find_all(target, (cst.Name,))}
            for i, arg in enumerate(a for a in call.args if a.keyword is None and not a.star):
                if isinstance(arg.value, cst.Name) and arg.value.value in targets and i < len(positional):
                    found.add(positional[i])
            found.update(a.keyword.value for a in call.args
                         if a.keyword is not None and isinstance(a.value, cst.Name) and a.value.value in targets)
        return frozenset(found)
    return project.derived(f"element-parameters:{cls.qualname}", compute)


LOOPS = (cst.For, cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp)


def _holds(loop: cst.CSTNode, call: cst.Call) -> bool:
    return any(node is call for node in find_all(loop, (cst.Call,)))


def _loop_clauses(loop) -> list[tuple[cst.BaseExpression, cst.BaseExpression]]:
    """(target, iterated) of a `for` statement, or of each `for` clause of a comprehension."""
    if isinstance(loop, cst.For):
        return [(loop.target, loop.iter)]
    clauses, clause = [], loop.for_in
    while clause is not None:
        clauses.append((clause.target, clause.iter))
        clause = clause.inner_for_in
    return clauses


def _over_range(iterated: cst.BaseExpression) -> bool:
    return isinstance(iterated, cst.Call) and isinstance(iterated.func, cst.Name) and iterated.func.value == "range"


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
        for node in find_all(fn.node.body, (cst.Attribute,), skip=(cst.ClassDef,))) or _passes_self(fn.node))


REPORTING_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "log"})


def is_reporting_call(call: cst.Call) -> bool:
    """`print(...)`, `logger.info(...)`, `warnings.warn(...)`."""
    func = call.func
    if isinstance(func, cst.Name):
        return func.value == "print"
    return isinstance(func, cst.Attribute) and func.attr.value in REPORTING_METHODS


def reported_only_attributes(project: ProjectIndex, cls: ClassInfo) -> frozenset[str]:
    """The attributes of `self` the class's methods (outside `__init__`) read only as the
    arguments of a print or a log call (`print(self.tag)`). Dynamo reads attributes lazily and
    passes these to the eager call as they are, with no guard (measured 2.13: layers differing
    only in such a name reuse one compilation)."""
    def find() -> frozenset[str]:
        reported: set[str] = set()
        other: set[str] = set()
        for holder in project.mro(cls):
            for name, qualname in holder.methods.items():
                if name != "__init__":
                    reads = _self_reads(project, qualname)
                    reported |= reads[0]
                    other |= reads[1]
        return frozenset(reported - other)
    return project.derived(f"reported-only-attributes:{cls.qualname}", find)


def _self_reads(project: ProjectIndex, qualname: str) -> tuple[frozenset[str], frozenset[str]]:
    """(the `self` attributes a method reads as a print or log argument, those it reads
    otherwise), once per method: the bases' methods are shared by every subclass."""
    def find() -> tuple[frozenset[str], frozenset[str]]:
        method = project.function(qualname)
        if method is None:
            return frozenset(), frozenset()
        body = method.node.body
        in_reports = {id(arg.value) for call in find_all(body, (cst.Call,)) if is_reporting_call(call) for arg in call.args}
        reads = [node for node in find_all(body, (cst.Attribute,))
                 if isinstance(node.value, cst.Name) and node.value.value == "self"]
        return (frozenset(n.attr.value for n in reads if id(n) in in_reports),
                frozenset(n.attr.value for n in reads if id(n) not in in_reports))
    return project.derived(f"self-reads:{qualname}", find)


def _passes_self(fn: cst.FunctionDef) -> bool:
    """A wrapper handing `self` to the function it holds (`forward(self, *args)`): the method
    it inlines reads `self`, which the wrapper's trace then depends on too."""
    return any(call.args and call.args[0].keyword is None and isinstance(call.args[0].value, cst.Name)
               and call.args[0].value.value == "self" and isinstance(call.func, cst.Name)
               for call in find_all(fn.body, (cst.Call,), skip=(cst.ClassDef,)))
