"""`torch.compile(nn.Sequential(Block(), Block()))`: torch's `Sequential.forward` is the compiled
frame. It calls each module in a loop (`for module in self: input = module(input)`), so a break
in one skips that frame (Dynamo reports no frame of torch's own code) and each module's
forward is then compiled on its own (measured 2.13: three breaking Blocks, the break traced
three times: once inlined, then by the first Block and once more for the next one's input that
needs grad)."""
from __future__ import annotations

import libcst as cst

from ..index.entries import EntryPoint, entry_function
from ..index.project import ProjectIndex
from ..vocab import BlockKind, EventKind
from .sequentials import sequential_items
from .types import Ctx, Event, FrameInfo, FrameKey
from ..walk import find_all

INPUT = "input"  # Sequential.forward's parameter


def sequential_frame(project: ProjectIndex, entry: EntryPoint, training: bool | None,
                     plain_input: bool) -> FrameInfo | None:
    """The frame of the Sequential `entry` compiles: a call of each module's forward in a loop.
    `plain_input`: the program passes an input known not to need grad (the first module's)."""
    host = entry_function(project, entry)
    made = entry.construction
    module = project.modules.get(host.module) if host is not None else None
    if host is None or module is None or made is None or entry.span is None:
        return None
    scope = host if host.node is not module.parsed.module else None  # (None: the module's body)
    items = [_made(i, module, scope) for i in sequential_items(made)]
    span = entry.span
    loop = (Ctx(BlockKind.LOOP, span.line),)
    events = []
    for position, item in enumerate(items):
        cls = project.created_class(item, module, scope) if isinstance(item, cst.Call) else None
        forward = project.method(cls, "forward") if cls is not None else None
        if cls is None or forward is None:
            events.append(Event(EventKind.OP, span, loop))
            continue
        params = frozenset([p.name for p in forward.params if p.kind == "positional"][1:2])
        key = FrameKey(forward.qualname, params, instance=f"{entry.function}[{position}]", self_class=cls.qualname,
                       training=training, plain_inputs=params if plain_input and not position else frozenset())
        events.append(Event(EventKind.CALL, span, loop, target=key))
    return FrameInfo(FrameKey(entry.function, frozenset({INPUT}), training=training), "forward", entry.function,
                     entry.path, span.line, tuple(events), torch_frame=True)


def _made(item: cst.BaseExpression, module, scope) -> cst.BaseExpression:
    """A module given by name (`b = Block(); nn.Sequential(b, b)`): the call that made it,
    bound once in the function around the Sequential or at module level."""
    if not isinstance(item, cst.Name):
        return item
    body = scope.node if scope is not None else module.parsed.module
    bound = [a.value for a in find_all(body, (cst.Assign,)) if len(a.targets) == 1
             and isinstance(a.targets[0].target, cst.Name) and a.targets[0].target.value == item.value]
    return bound[0] if len(bound) == 1 else item
