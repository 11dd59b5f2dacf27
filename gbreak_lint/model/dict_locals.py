"""Dicts a frame builds itself, as values: `outputs = {}` (or `outputs = outputs if outputs is
not None else {}`), items stored by constant keys on some branches, then `outputs.get("image")
is not None` deciding a branch. Dynamo specialises on which keys such a dict holds, so a key
no taken path stored makes `.get` None and the branch behind it is never traced.

Only a name used in ways whose effect on the keys FrameValues follows statement by statement
is modelled: item stores and loads, `.get` / `.keys()` / `.items()` / `.values()`, `in`,
`len()`, truth tests, rebinding, `f(**d)` (a copy). Anything else (passed to a call, `.update`, `.pop`,
`del d[k]`, read in a nested function or comprehension) may change the keys where the frame's
statements do not show it: then the dict is not a value at all.
"""
from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from ..walk import children, find_all
from .values import Const, Keywords

READ_METHODS = frozenset({"get", "keys", "items", "values", "copy"})
_TRUTH_USERS = (cst.If, cst.While, cst.IfExp, cst.UnaryOperation, cst.BooleanOperation, cst.Assert)
_OWN_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp,
               cst.GeneratorExp)


def display_keywords(display: cst.Dict, value_of: Callable, is_tensor: Callable) -> Keywords | None:
    """The keys a dict display of string constants holds, which of them hold tensors, and the
    constants the others hold. None: a key is not a string constant, or `**other` is spread."""
    names, tensors, values = [], [], []
    for el in display.elements:
        key = value_of(el.key) if isinstance(el, cst.DictElement) else None
        if key is None or not isinstance(key.value, str):
            return None
        names.append(key.value)
        if is_tensor(el.value):
            tensors.append(key.value)
        else:
            known = value_of(el.value)
            values += [(key.value, known)] if known is not None else []
    return Keywords(tuple(names), tuple(tensors), tuple(values))


def with_item(held: Keywords, key: str, value: Const | None, tensor: bool) -> Keywords:
    """`d[key] = value` on a dict holding `held`."""
    names = held.names if key in held.names else held.names + (key,)
    tensors = tuple(k for k in held.tensors if k != key) + ((key,) if tensor else ())
    values = tuple((k, v) for k, v in held.values if k != key) + (((key, value),) if value is not None else ())
    return Keywords(names, tensors, values, tuple(k for k in held.maybe if k != key))


def joined(ways: list[Keywords]) -> Keywords:
    """The dict after ways that leave it holding `ways`: a name all of them hold is held, one
    only some hold may be; an item keeps what it is (a tensor, a constant) where all agree."""
    names = tuple(k for k in ways[0].names if all(k in w.names for w in ways))
    seen = {k for w in ways for k in w.names + w.maybe}
    tensors = tuple(k for k in names if all(k in w.tensors for w in ways))
    values = tuple((k, v) for k, v in ways[0].values
                   if k in names and all(w.value_of(k) == v for w in ways))
    return Keywords(names, tensors, values, tuple(sorted(seen - set(names))))


def loosened(held: Keywords, keys: set[str]) -> Keywords:
    """`held` around a block that may store `keys` (a loop, a try): they may be held, holding
    what is not known; the other names stay as they were."""
    return joined([held, Keywords(held.names + tuple(sorted(keys - set(held.names))))]) \
        if keys else held


def stored_keys(node: cst.CSTNode, name: str, value_of: Callable) -> set[str] | None:
    """The keys a block stores into `name` (`name["k"] = v`, `name[k] += v` with `k` known as
    the block is entered); None when one is not a known string."""
    keys: set[str] = set()
    for n in find_all(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign)):
        for sub in find_all(n.target, (cst.Subscript,)):
            if not (isinstance(sub.value, cst.Name) and sub.value.value == name):
                continue
            index = sub.slice[0].slice if len(sub.slice) == 1 else None
            key = value_of(index.value) if isinstance(index, cst.Index) else None
            if key is None or not isinstance(key.value, str):
                return None
            keys.add(key.value)
    return keys


def item_stored_names(node: cst.CSTNode) -> set[str]:
    """Names whose items a block stores (`d[k] = v`, `d[k] += v`): a loop or try around it
    leaves their keys unknown."""
    found: set[str] = set()
    for n in find_all(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign)):
        for sub in find_all(n.target, (cst.Subscript,)):
            if isinstance(sub.value, cst.Name):
                found.add(sub.value.value)
    return found


def plain_dict_local(function: cst.CSTNode, name: str) -> bool:
    """Is every use of `name` in `function` one whose effect on a dict's keys the frame's
    statements show (see the module docstring)?"""
    body = function.body if isinstance(function, cst.FunctionDef) else function
    if any(isinstance(n, cst.Del) and _mentions(n, name) for n in find_all(body, (cst.Del,))):
        return False
    return all(_plain_use(chain, name) for chain in _name_uses(body, name, ()))


def _mentions(node: cst.CSTNode, name: str) -> bool:
    return any(n.value == name for n in find_all(node, (cst.Name,)))


def _name_uses(node: cst.CSTNode, name: str, parents: tuple):
    """The parent chains (innermost last) of each `Name(name)` under `node`."""
    for child in children(node):
        if isinstance(child, cst.Name) and child.value == name:
            yield parents + (node,)
        elif isinstance(child, _OWN_SCOPES) and _mentions(child, name):
            yield parents + (node, child)  # read or bound in another scope: not plain
        elif not isinstance(child, _OWN_SCOPES):
            yield from _name_uses(child, name, parents + (node,))


def _plain_use(chain: tuple, name: str) -> bool:
    parent = chain[-1]
    if isinstance(parent, _OWN_SCOPES):
        return False
    if isinstance(parent, (cst.AssignTarget, cst.AnnAssign)) or isinstance(parent, cst.For):
        return _is_name(parent.target, name)  # rebinding the name itself
    if isinstance(parent, cst.Subscript):
        return _is_name(parent.value, name)  # an item load or store (not a name used as a key)
    if isinstance(parent, cst.Attribute):
        return _is_name(parent.value, name) and parent.attr.value in READ_METHODS
    if isinstance(parent, (cst.Comparison, cst.ComparisonTarget)):
        return True  # `k in d`, `d is None`: compares, changes nothing
    if isinstance(parent, _TRUTH_USERS) and not isinstance(parent, cst.IfExp):
        return True
    if isinstance(parent, cst.IfExp):
        return _is_name(parent.test, name) or _reassigns_itself(chain, name)
    if isinstance(parent, cst.Arg) and parent.star == "**":
        return True  # `f(**d)` hands the callee a copy of the items
    if isinstance(parent, cst.Arg) and len(chain) >= 2 and isinstance(chain[-2], cst.Call):
        call = chain[-2]
        return not parent.star and isinstance(call.func, cst.Name) and call.func.value in ("len", "bool")
    return False


def _reassigns_itself(chain: tuple, name: str) -> bool:
    """`d = d if d is not None else {}`: the IfExp is the value of an assignment to `d`."""
    if len(chain) < 2:
        return False
    holder = chain[-2]
    if isinstance(holder, cst.Assign):
        return holder.value is chain[-1] and all(_is_name(t.target, name) for t in holder.targets)
    if isinstance(holder, cst.AnnAssign):
        return holder.value is chain[-1] and _is_name(holder.target, name)
    return False


def _is_name(node, name: str) -> bool:
    return isinstance(node, cst.Name) and node.value == name
