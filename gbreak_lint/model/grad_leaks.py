"""`requires_grad_()` on an intermediate tensor that the frame returns (GBL610).

Dynamo traces `y.requires_grad_()` on a tensor the graph computed (it has no source) as a graph
op. When the graph is compiled it checks the outputs: one computed from such a tensor that
requires grad would lose that effect in AOTAutograd, so Dynamo restarts the analysis and breaks
the graph at the `requires_grad_()` call instead (measured 2.13: GB8985, resumed after it). A
returned `y.grad`, `y.detach()` or a size read from it needs no grad and is fine; so is what
is computed under `no_grad`. The break is only known at the `return`, so the tracker keeps the
first such call pending until a returned value turns out to come from it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import libcst as cst

from ..walk import NESTED_SCOPES, children, find_all

# reading these off a tensor gives a value that does not require grad
NO_GRAD_ATTRIBUTES = frozenset({"grad", "data", "shape", "dtype", "device", "requires_grad", "is_leaf", "grad_fn",
                                "ndim", "layout"})
NO_GRAD_METHODS = frozenset({"detach", "item", "tolist", "size", "dim", "numel", "stride", "data_ptr",
                             "element_size", "storage_offset", "is_contiguous"})
# builtins whose result is a Python value, never a tensor needing grad
NO_GRAD_BUILTINS = frozenset({"len", "isinstance", "type", "id", "bool", "int", "float", "str", "repr", "hash"})


@dataclass(frozen=True)
class PendingBreak:
    """Where the first `requires_grad_()` on an intermediate was met: the event index and the
    state the break event is made with if a returned value turns out to need it."""
    index: int
    node: cst.Call
    ctx: tuple
    tensor_reads: int


class GradLeaks:
    def __init__(self, grad_inputs: frozenset[str] = frozenset(), plain_inputs: frozenset[str] = frozenset(),
                 is_local: Callable[[str], bool] = lambda name: True,
                 calls_module: Callable[[str], bool] = lambda name: False) -> None:
        self.pending: PendingBreak | None = None
        self.tainted: set[str] = set()  # locals holding the tensor or one computed from it
        self.containers: set[str] = set()  # local lists / dicts holding such a tensor
        self.marked_calls: set[int] = set()  # ids of the `requires_grad_()` calls met
        # locals known to need grad already (requires_grad_() changes nothing there): inputs
        # the call site made so, and what the frame computes from them or from `self` (a
        # module's parameters) without detaching
        self.needing: set[str] = set(grad_inputs)
        # locals known NOT to need grad: inputs made without it (`torch.randn(4)` handed in),
        # what is computed only from them, from globals (`torch.ones(3)`) or with grad off. What
        # is neither known to need grad nor known not to (a value of unknown origin) is neither.
        self.plain: set[str] = set(plain_inputs)
        self.is_local = is_local
        self.calls_module = calls_module  # a global name holding a module instance (its output needs grad)

    def is_plain(self, expr: cst.BaseExpression) -> bool:
        """Computed only from locals known not to need grad and from globals (never `self`),
        calling no module instance held by a global (`pre(x)`, `model.emb(ids)`); or detached."""
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "detach":
            return True
        return all(n in self.plain or not self.is_local(n) for n in _names(expr)) \
            and not any(self.calls_module(n) for n in _called_roots(expr))

    def needs_grad(self, expr: cst.BaseExpression) -> bool:
        """Computed from a tensor known to need grad, or from `self` (a module's parameters and
        sub-modules), other than through `.detach()`."""
        return any(n in self.needing or n == "self" for n in _names(expr))

    def marked(self, call: cst.Call, receiver: cst.BaseExpression, pending: PendingBreak) -> None:
        if self.pending is None:
            self.pending = pending
        self.marked_calls.add(id(call))
        if isinstance(receiver, cst.Name):
            self.tainted.add(receiver.value)

    def assigned(self, names: list[str], value: cst.BaseExpression | None, grad_on: bool) -> None:
        """`z = y * 3` carries the mark; rebinding a name to anything else drops it."""
        carries = value is not None and grad_on and (id(value) in self.marked_calls or self.mentions(value))
        needing = value is not None and grad_on and self.needs_grad(value)
        plain = value is not None and (not grad_on or self.is_plain(value))
        for name in names:
            (self.tainted.add if carries else self.tainted.discard)(name)
            (self.needing.add if needing else self.needing.discard)(name)
            (self.plain.add if plain else self.plain.discard)(name)
            self.containers.discard(name)

    def stored(self, container: str, items: list[cst.BaseExpression]) -> None:
        """`acc.append(z)`: a local container holding a value that carries the mark holds it:
        returned itself, or an item read out of it (`acc[0]`), it needs the grad; its truth,
        length or identity does not."""
        if any(self.mentions(item) for item in items):
            self.containers.add(container)
        if any(self.needs_grad(item) for item in items):  # `torch.cat(acc)` needs grad too
            self.needing.add(container)
        if not all(self.is_plain(item) for item in items):
            self.plain.discard(container)

    def cleared(self, container: str) -> None:
        self.containers.discard(container)

    def returned(self, value: cst.BaseExpression) -> PendingBreak | None:
        """The pending break, once a returned value needs grad from a marked tensor."""
        items = [el.value for el in value.elements] if isinstance(value, (cst.Tuple, cst.List)) else [value]
        held = any(isinstance(item, cst.Name) and item.value in self.containers for item in items)
        if self.pending is None or not (held or self.mentions(value)):
            return None
        found, self.pending = self.pending, None
        return found

    def mentions(self, expr: cst.CSTNode) -> bool:
        if isinstance(expr, cst.Name):
            return expr.value in self.tainted
        if isinstance(expr, (cst.Lambda, cst.FunctionDef, cst.ClassDef)):
            return False
        if isinstance(expr, cst.Attribute) and expr.attr.value in NO_GRAD_ATTRIBUTES:
            return False
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
                and expr.func.attr.value in NO_GRAD_METHODS:
            return False
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value in NO_GRAD_BUILTINS:
            return False
        if isinstance(expr, cst.Attribute):
            return self.mentions(expr.value)  # `y.T`, `y.mT`: views that need grad
        if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Name) and expr.value.value in self.containers:
            return True  # `acc[0]`: an item a marked container holds
        if isinstance(expr, cst.Call) and any(isinstance(a.value, cst.Name) and a.value.value in self.containers
                                              for a in expr.args):
            return True  # `torch.stack(acc)`: computed from what it holds
        return any(self.mentions(child) for child in children(expr))


def _names(expr: cst.CSTNode) -> list[str]:
    """The names an expression reads (not attribute names; `self` and the roots of chains),
    outside `.detach()` (what it returns needs no grad)."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "detach":
        return []
    if isinstance(expr, cst.Name):
        return [expr.value]
    if isinstance(expr, cst.Attribute):
        return _names(expr.value)
    if isinstance(expr, (cst.Lambda, cst.FunctionDef, cst.ClassDef)):
        return []
    return [n for child in children(expr) for n in _names(child)]


def made_with_grad(project, knowledge, module, value, local_values: dict, caller) -> bool:
    """A tensor argument known to need grad: made with `requires_grad=True`, an nn.Parameter,
    given `.requires_grad_()`, or bound to a name the module gives `.requires_grad = True` /
    `.requires_grad_()`."""
    if isinstance(value, cst.Name):
        if f"{value.value}.requires_grad" in module.parsed.text:  # (anywhere in the module: cheap)
            return True
        value = local_values.get(value.value, module.values.get(value.value))
    while isinstance(value, cst.Call):
        func = value.func
        if any(a.keyword is not None and a.keyword.value == "requires_grad" and not
               (isinstance(a.value, cst.Name) and a.value.value == "False") for a in value.args):
            return True
        if project.qualify(func, module, caller) in knowledge.parameter_constructors:
            return True
        if not isinstance(func, cst.Attribute):
            return False
        if func.attr.value == "detach":
            return False  # `w.detach()`: a tensor that needs no grad
        if func.attr.value == "requires_grad_":
            return not (value.args and isinstance(value.args[0].value, cst.Name) and value.args[0].value.value == "False")
        value = func.value  # `torch.randn(3).float()`: what the chain starts from
    return False


def _called_roots(expr: cst.BaseExpression) -> list[str]:
    """The names calls in `expr` start from (`pre` of `pre(x)`, `model` of `model.emb(ids)`),
    and those a parameter is read from (`pre` of `pre.weight`)."""
    roots = []
    found = find_all(expr, (cst.Call, cst.Attribute), skip=NESTED_SCOPES)
    calls = [n for n in found if isinstance(n, cst.Call)]
    reads = [n for n in found if isinstance(n, cst.Attribute) and any(p in n.attr.value for p in PARAMETER_NAMES)]
    for node in calls + reads:
        func = node.func if isinstance(node, cst.Call) else node
        while isinstance(func, cst.Attribute):
            func = func.value
        if isinstance(func, cst.Name):
            roots.append(func.value)
    return roots


PARAMETER_NAMES = ("weight", "bias")  # attribute names of a module's parameters (`pre.weight`, `in_proj_bias`)

