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
from .resolve import starred_items
from .types import Ctx, Event, FrameInfo, FrameKey

INPUT = "input"  # Sequential.forward's parameter


def sequential_frame(project: ProjectIndex, entry: EntryPoint, training: bool | None,
                     plain_input: bool) -> FrameInfo | None:
    """The frame of the Sequential `entry` compiles: a call of each module's forward in a loop.
    `plain_input`: the program passes an input known not to need grad (the first module's)."""
    host = entry_function(project, entry)
    made = entry.construction
    module = project.modules.get(host.module) if host is not None else None
    if module is None or made is None or entry.span is None:
        return None
    scope = host if host is not None and host.node is not module.parsed.module else None
    items = [i for arg in made.args for i in (starred_items(arg.value) if arg.star == "*" else [arg.value])]
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
