"""The global torch state a compiled call runs under, which Dynamo's guards check.

Every compiled code object carries a guard on torch's global state: grad mode, inference mode,
autocast, the default dtype, deterministic algorithms. Calling the compiled function again
under another state recompiles it, and coming back to a state seen before reuses that compile
(measured 2.13: `f(x)`, then `with torch.no_grad(): f(x)`, then `f(x)` compiles twice; the same
for `inference_mode`, `autocast`, `set_grad_enabled(False)`, `set_default_dtype(torch.float64)`
and `use_deterministic_algorithms(True)`; `no_grad` and `set_grad_enabled(False)` are one
state). Not exact for `inference_mode` after `no_grad`: Dynamo then recompiles the entry
frame but not a helper frame below it (measured: a nested break hit 5 times where this model
counts 6). A state is a set of tags: the contexts in force and the setters called before, each
with the value that differs from torch's default.
"""
from __future__ import annotations

import libcst as cst

from .values import Const, literal

State = frozenset[str]
DEFAULT: State = frozenset()
GRAD_OFF = "grad=off"
INFERENCE = "inference_mode"


class StateReader:
    """`qualify(expr)`: a callee's qualified name where the call is; `knowledge`: which calls
    change the state (`grad_off_contexts`, `inference_contexts`, `grad_on_contexts`,
    `grad_mode_setters`, `autocast_contexts`, `global_state_setters`)."""

    def __init__(self, knowledge, qualify):
        self.k = knowledge
        self.qualify = qualify

    def entered(self, state: State, item: cst.BaseExpression) -> State:
        """The state inside `with item:` (or a function decorated with it)."""
        if not isinstance(item, cst.Call):
            return state
        qual = self.qualify(item.func)
        if qual in self.k.grad_mode_setters or qual in self.k.global_state_setters:
            return self.set(state, item)
        if _switched_off(item):
            return state  # `inference_mode(False)`, `autocast(..., enabled=False)`
        if qual in self.k.grad_off_contexts:
            return state | {GRAD_OFF}
        if qual in self.k.inference_contexts:
            return state | {GRAD_OFF, INFERENCE}
        if qual in self.k.grad_on_contexts:
            return state - {GRAD_OFF}
        if qual in self.k.autocast_contexts:
            return state | {"autocast"}
        return state

    def set(self, state: State, call: cst.BaseExpression) -> State:
        """The state after a setter call (`torch.set_grad_enabled(False)`), or `state`."""
        if not isinstance(call, cst.Call) or not call.args:
            return state
        qual = self.qualify(call.func)
        value = call.args[0].value
        known = literal(value)
        if qual in self.k.grad_mode_setters:
            if known is None or not isinstance(known.value, bool):
                return state
            return state - {GRAD_OFF} if known.value else state | {GRAD_OFF}
        if qual not in self.k.global_state_setters:
            return state
        shown = repr(known.value) if known is not None else self.qualify(value) or "?"
        kept = frozenset(t for t in state if not t.startswith(f"{qual}="))
        return kept if shown == self.k.global_state_setters[qual] else kept | {f"{qual}={shown}"}


def _switched_off(call: cst.Call) -> bool:
    given = [a.value for a in call.args if a.keyword is None][:1] + \
        [a.value for a in call.args if a.keyword is not None and a.keyword.value in ("mode", "enabled")]
    return Const(False) in map(literal, given)
