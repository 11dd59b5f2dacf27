"""The builtin type an expression is known to have, and the TypeErrors that type alone decides.

Dynamo traces Python containers and numbers as the values they are, so an operation Python
rejects for the operands' types (`{"a": 1} | 1`, `[1] + (2,)`, `n[0]` of an int, `s.remove([1])`
on a set, calling a list) raises while Dynamo traces it too (measured 2.13: "Observed
exception", GB0088, the frame is skipped; under fullgraph a compile error). Which operations
fail is asked of Python itself, on a sample value of each type, so the table of what each type
supports is CPython's, not ours. Only TypeError is taken from a sample: the other errors depend
on the values (a KeyError, a ZeroDivisionError), which `values.ValueEvaluator` decides where it
knows them.
"""
from __future__ import annotations

import operator
from typing import Any, Callable

import libcst as cst

from ..walk import all_params, find_all
from .frame_values import binding_counts

# one value of each builtin type: what the type supports does not depend on which value
SAMPLES: dict[type, Any] = {type(None): None, bool: True, int: 2, float: 2.0, complex: 2j, str: "ab",
                               tuple: (1,), list: [1], dict: {1: 1}, set: {1}, frozenset: frozenset({1})}
_BINARY = {cst.Add: operator.add, cst.Subtract: operator.sub, cst.Multiply: operator.mul,
           cst.Divide: operator.truediv, cst.FloorDivide: operator.floordiv, cst.Modulo: operator.mod,
           cst.Power: operator.pow, cst.LeftShift: operator.lshift, cst.RightShift: operator.rshift,
           cst.BitOr: operator.or_, cst.BitAnd: operator.and_, cst.BitXor: operator.xor,
           cst.MatrixMultiply: operator.matmul}
_DISPLAYS = {cst.Dict: dict, cst.DictComp: dict, cst.List: list, cst.ListComp: list, cst.Set: set,
             cst.SetComp: set, cst.Tuple: tuple, cst.SimpleString: str, cst.FormattedString: str,
             cst.ConcatenatedString: str, cst.Integer: int, cst.Float: float, cst.Imaginary: complex}
_CONSTRUCTORS = {"builtins.dict": dict, "builtins.list": list, "builtins.set": set,
                 "builtins.tuple": tuple, "builtins.frozenset": frozenset}
# builtins whose TypeError on these types Dynamo raises too (measured 2.13 one by one: `len(5)`,
# `list(None)`, `int([1])`, `abs("a")`, `sorted(5)`, `min(5)`, `iter(None)`, `hash([1])`,
# `round("a")`, `divmod("a", 2)`, `float({})`, `tuple(5)`, `set(5)`, `dict(5)`; not `range(2.0)`
# nor `enumerate(5)`, which Dynamo lets through)
_CHECKED_BUILTINS: dict[str, Callable] = {
    f"builtins.{f.__name__}": f for f in (len, list, int, abs, sorted, min, iter, hash, round, divmod, float,
                                          tuple, set, dict)}
# the set methods that hash their argument (a set argument is turned into a frozenset first)
_HASHING_METHODS = frozenset({"add", "remove", "discard", "__contains__"})
_UNHASHABLE = (list, dict, set)
_CONSTANT_KINDS = (type(None), bool, int, float, complex, tuple)
MAX_DEPTH = 4


class BuiltinKinds:
    """Kinds of expressions in one function: `qualify(expr)` names a callee; `constant(expr)`
    is the evaluator's known value (a `values.Const`) or None."""

    def __init__(self, function: cst.CSTNode | None, qualify: Callable, constant: Callable):
        self.function = function
        self.qualify = qualify
        self.constant = constant
        self._locals: dict[str, type | None] = {}
        self._stores: dict[str, list[cst.BaseExpression]] | None = None  # name -> values `name = v` assigns

    def of(self, expr: cst.BaseExpression, depth: int = 0) -> type | None:
        if depth > MAX_DEPTH:
            return None
        kind = _DISPLAYS.get(type(expr))
        if kind is not None:
            return kind
        if isinstance(expr, cst.Name):
            if expr.value == "None":
                return type(None)
            if expr.value in ("True", "False"):
                return bool
            return self._local(expr.value, depth) or self._constant(expr)
        if isinstance(expr, cst.Call):
            return _CONSTRUCTORS.get(self.qualify(expr.func) or "")
        return self._constant(expr)

    def made_by(self, expr: cst.BaseExpression, depth: int = 0) -> str | None:
        """The callee whose call made the value (`collections.defaultdict(list)`), also
        through a local every binding of which is a call of that one callee."""
        if isinstance(expr, cst.Call):
            return self.qualify(expr.func)
        if not isinstance(expr, cst.Name) or depth > MAX_DEPTH:
            return None
        makers = {self.made_by(v, depth + 1) for v in self._plain_stores().get(expr.value, ())}
        return makers.pop() if len(makers) == 1 else None

    def _constant(self, expr: cst.BaseExpression) -> type | None:
        """A parameter or global the evaluator knows the value of (a string may stand for a
        dtype's name there, so strings are left out)."""
        known = self.constant(expr)
        return type(known.value) if known is not None and type(known.value) in _CONSTANT_KINDS else None

    def _local(self, name: str, depth: int) -> type | None:
        """A local every binding of which assigns a value of one kind (changed in place or
        not: a list stays a list), not a parameter nor a global."""
        if name not in self._locals:
            self._locals[name] = None  # (a cycle `a = b; b = a` stays unknown)
            self._locals[name] = self._bound_kind(name, depth)
        return self._locals[name]

    def _bound_kind(self, name: str, depth: int) -> type | None:
        values = self._plain_stores().get(name)
        if not values:
            return None
        kinds = {self.of(v, depth + 1) for v in values}
        return kinds.pop() if len(kinds) == 1 else None

    def _plain_stores(self) -> dict[str, list[cst.BaseExpression]]:
        """The function's locals bound only by plain `name = value` assignments (not a
        parameter, not declared global or nonlocal anywhere in it), with those values. Read
        once per frame."""
        if self._stores is not None:
            return self._stores
        self._stores = {}
        function = self.function
        if not isinstance(function, cst.FunctionDef):
            return self._stores
        excluded = {p.name.value for p in all_params(function.params)} | {
            n.name.value for s in find_all(function.body, (cst.Global, cst.Nonlocal)) for n in s.names}
        for a in find_all(function.body, (cst.Assign,)):
            if len(a.targets) == 1 and isinstance(a.targets[0].target, cst.Name):
                self._stores.setdefault(a.targets[0].target.value, []).append(a.value)
        counts = binding_counts(function.body)
        # (a name bound some other way too, a loop, `with ... as`, unpacking, is left out)
        self._stores = {n: v for n, v in self._stores.items() if n not in excluded and counts.get(n) == len(v)}
        return self._stores

    # -- what raises -------------------------------------------------------------------------
    def raised_by(self, node: cst.CSTNode) -> str | None:
        if isinstance(node, cst.BinaryOperation):
            return self._binary_raises(node)
        if isinstance(node, cst.Subscript):
            return self._subscript_raises(node)
        if isinstance(node, cst.Call):
            return self._call_raises(node)
        return None

    def _binary_raises(self, node: cst.BinaryOperation) -> str | None:
        op = _BINARY.get(type(node.operator))
        left, right = self.of(node.left), self.of(node.right)
        if op is None or left is None or right is None or left is str and op is operator.mod:
            return None  # (`"%s" % v`: whether it fails depends on the format string)
        return _type_error(lambda: op(SAMPLES[left], SAMPLES[right]))

    def _subscript_raises(self, node: cst.Subscript) -> str | None:
        base = self.of(node.value)
        if base is None or len(node.slice) != 1:
            return None
        if not hasattr(base, "__getitem__"):
            return "TypeError"  # `n[0]` of an int, `s[0]` of a set
        index = node.slice[0].slice
        if not isinstance(index, cst.Index):
            return None
        key = self.of(index.value)
        if key is None or base is dict and key not in _UNHASHABLE:
            return None  # (a missing dict key is a KeyError on the value)
        return _type_error(lambda: SAMPLES[base][SAMPLES[key]])

    def store_raises(self, target: cst.BaseExpression) -> str | None:
        """`t[0] = v` of a tuple, `d[[1]] = v` of a dict: the item store the types refuse."""
        if not isinstance(target, cst.Subscript) or len(target.slice) != 1:
            return None
        base = self.of(target.value)
        if base is None:
            return None
        if not hasattr(base, "__setitem__"):
            return "TypeError"
        index = target.slice[0].slice
        key = self.of(index.value) if isinstance(index, cst.Index) else None
        if key is None or base is dict and key not in _UNHASHABLE:
            return None
        return _type_error(lambda: _store(SAMPLES[base], SAMPLES[key]))

    def _call_raises(self, node: cst.Call) -> str | None:
        func = node.func
        # (calling an int, a list, None: Dynamo has no call for the value and breaks there,
        # GB0147, before Python's TypeError; model.causes, GBL611)
        builtin = _CHECKED_BUILTINS.get(self.qualify(func) or "")
        if builtin is not None:
            found = [self.of(a.value) for a in node.args]
            kinds = [k for k in found if k is not None]
            if kinds and len(kinds) == len(found) and not any(a.keyword or a.star for a in node.args):
                return _type_error(lambda: builtin(*(SAMPLES[k] for k in kinds)))
            return None
        if not isinstance(func, cst.Attribute) or len(node.args) != 1 or node.args[0].keyword is not None \
                or func.attr.value not in _HASHING_METHODS or self.of(func.value) not in (set, frozenset):
            return None
        return "TypeError" if self.of(node.args[0].value) in _UNHASHABLE[:2] else None


def _store(container, key) -> None:
    copy = type(container)(container)  # (the samples are shared: never change them)
    copy[key] = 1


def _type_error(operation: Callable[[], object]) -> str | None:
    try:
        operation()
    except TypeError:
        return "TypeError"
    except Exception:  # noqa: BLE001 - another error depends on the values, not the types
        return None
    return None
