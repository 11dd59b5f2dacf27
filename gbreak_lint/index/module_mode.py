"""Whether a compiled module instance is in training or eval mode, from how the program
builds and switches that instance: `Net().eval()` and `m.eval()` / `m.train(False)` of the
name holding it set eval; a fresh `Net()` is nn.Module's default, training. Dynamo
specialises on `self.training`, so a branch on it is traced one way only."""
from __future__ import annotations

from typing import Callable

import libcst as cst

from ..walk import find_all
from .names import last_name

_SWITCHES = ("eval", "train")


Switches = list[tuple[cst.BaseExpression, bool]]  # (receiver, mode) of each `.eval()` / `.train(...)`


def instance_training(switches: Switches, instance: cst.BaseExpression | None,
                      value_of: Callable[[str], cst.BaseExpression | None]) -> bool | None:
    """True (training), False (eval) or None (not told: an instance reached through an
    attribute, a parameter, or a mode switched on something that may be the same object).
    `switches`: the module's mode switches (`mode_switches`)."""
    name = instance.value if isinstance(instance, cst.Name) else None
    held = value_of(name) if name is not None else instance
    chained = _chain_mode(held) if held is not None else None
    if name is None:
        return chained
    switched = [mode for receiver, mode in switches if _same_name(receiver, name)]
    if switched:
        return False if False in switched else switched[-1]
    if chained is not None:
        return chained
    if not (isinstance(held, cst.Call) and _builds(held)):
        return None  # a parameter, an attribute, an object some helper returned
    others = [receiver for receiver, mode in switches if mode is False]
    # eval set on some other name or a fresh construction: not this instance (an attribute or
    # a subscript might hold it)
    return True if all(_other_instance(r, name, value_of) for r in others) else None


def _chain_mode(expr: cst.BaseExpression) -> bool | None:
    """`Net().eval()` -> False, `Net().train()` -> True; the outermost switch wins."""
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        mode = _mode(expr)
        if mode is not None:
            return mode
        expr = expr.func.value
    return None


def _builds(call: cst.Call) -> bool:
    """A constructor call (or a chain of same-instance methods on one): `Net(cfg).to(dev)`."""
    while isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Call):
        call = call.func.value
    func = call.func
    return last_name(func)[:1].isupper()


def _mode(call: cst.Call) -> bool | None:
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value not in _SWITCHES:
        return None
    if func.attr.value == "eval":
        return False if not call.args else None
    if not call.args:
        return True
    arg = call.args[0].value
    return {"True": True, "False": False}.get(arg.value) if isinstance(arg, cst.Name) else None


def mode_switches(tree: cst.CSTNode) -> Switches:
    out = []
    for call in find_all(tree, (cst.Call,)):
        mode = _mode(call)
        if mode is not None:
            out.append((call.func.value, mode))
    return out


def _same_name(receiver: cst.BaseExpression, name: str) -> bool:
    return isinstance(receiver, cst.Name) and receiver.value == name


def _other_instance(receiver: cst.BaseExpression, name: str, value_of) -> bool:
    if isinstance(receiver, cst.Call):
        return True  # `Other().eval()`: a fresh object
    if not isinstance(receiver, cst.Name):
        return False
    held = value_of(receiver.value)
    return not (isinstance(held, cst.Name) and held.value == name)  # `alias = model` is the same object
