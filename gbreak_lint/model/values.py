"""Python values Dynamo specialises on, as far as the source tells them.

Dynamo does not trace code, it traces values: a branch on a Python value (a flag, `None`,
`self.training`, a length, a dtype) is decided while tracing and only the side that value
selects is traced. This module evaluates expressions to such constants where they are known:
literals, parameters bound to constants at the call site (or their defaults when the caller
does not pass them), module-level constants bound once, `self.<attr>` set once from a constant,
`self.training`, and the operators and builtins Dynamo folds (`is None`, comparisons,
`and`/`or`/`not`, `isinstance`, `len`, `hasattr`, `getattr` with a constant name).

`Const(value)` is a known Python value; `None` (the Python object) means unknown. Unknown is
honest: a branch on it is explored both ways by the frame builder.
"""
from __future__ import annotations

import operator
from functools import lru_cache
from dataclasses import dataclass
from typing import Any, Callable, Protocol

import libcst as cst

from ..walk import children
from .string_values import MAX_TEXT, ListValue, formatted, is_regex_function, is_string_method, regex_call, string_method

# expressions that run in a frame of their own: what raises there raises in that frame
_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
_OWN_FRAMES = (cst.FunctionDef, cst.ClassDef, cst.Lambda) + _COMPREHENSIONS
_RAISING = (cst.Subscript, cst.BinaryOperation, cst.Call, cst.Dict, cst.Set, cst.Attribute) + _COMPREHENSIONS

MAX_DEPTH = 8  # nested evaluation (attribute chains, helpers returning constants)


# (not str: a qualified name, `torch.float16`, is a known value held as a string too)
_CONSTANT_TYPES = (type(None), bool, int, float, complex)


@dataclass(frozen=True)
class Const:
    value: object  # None, bool, int, float, str, a torch dtype's name ("torch.float16"), tuples


@dataclass(frozen=True)
class Obj:
    """An instance whose attributes are known from how it was built (`Config(flag=False)`,
    a module built from it): attribute -> Const."""

    cls: str
    attrs: tuple[tuple[str, Const], ...] = ()
    # the program also uses it outside the compiled calls (stores attributes on it, hands it
    # to other code): what its constructor left is not all it may hold
    shared: bool = False

    def get(self, name: str) -> Const | None:
        return dict(self.attrs).get(name)


@dataclass(frozen=True)
class Seq:
    """A tuple or list whose length is known but not its items (`(a, b)` of tensors)."""

    length: int
    kind: str = "tuple"  # "tuple" | "list"
    # which items are tensors, when known (a callee's `*args`: what a wrapper passes on)
    tensors: tuple[bool, ...] | None = None
    # the constants the others hold, where known (`wrapper(0, x)`: `args[0]` is 0)
    items: tuple["Const | None", ...] | None = None

    def __len__(self) -> int:
        return self.length


@dataclass(frozen=True)
class Keywords:
    """A callee's `**kwargs` when the call site spells every keyword it passes: which names it
    holds is known (`kwargs.get("scale")` of a name not passed is the default), and the values
    of those the caller knows."""

    names: tuple[str, ...] = ()
    tensors: tuple[str, ...] = ()  # the names whose values are tensors
    values: tuple[tuple[str, "Const"], ...] = ()  # the constants some hold (`inputs_embeds=None`)
    # names held on some ways here and not on others (stored behind an undecided branch, in a
    # loop or a try): whether it holds them is unknown, the other names stay known
    maybe: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.names)

    def value_of(self, name: str) -> "Const | None":
        return dict(self.values).get(name)

    def __contains__(self, name: object) -> bool:
        return name in self.names

    def holds(self, name: object) -> bool | None:
        """Whether the dict holds `name`: None for a name held only on some ways."""
        return None if name in self.maybe else name in self.names

    def exact(self) -> bool:
        """Are all its names known (its length, truth and copies are)?"""
        return not self.maybe


def known_truth(value: object) -> bool | None:
    """`bool(value)`, None when it is not known (a dict whose names are partly unknown)."""
    if isinstance(value, Keywords) and not value.exact() and not value.names:
        return None
    try:
        return bool(value)
    except Exception:  # noqa: BLE001 - a value whose truth Python itself could not take
        return None


def star_arguments(params, positional: list, args, is_tensor: Callable,
                   forwarded: Keywords | None = None, forwarded_items: tuple[bool, ...] = (),
                   value_of: Callable = lambda expr: None, receiver_first: bool = False) -> dict[str, "Const"]:
    """What a callee's `*args` / `**kwargs` hold for a call site that unpacks nothing (or only
    a caller's `*args` known to be empty and `**kwargs` whose names are known, `forwarded`):
    the extra positional arguments (their number; left unknown when one is a tensor) and the
    keywords no named parameter takes. Dynamo specialises on both (`if len(args) > 0 or
    kwargs.get("x")`). `receiver_first`: a method's wrapper taking `(*args, **kwargs)`, whose
    `args` starts with the instance the method is called on."""
    if any(a.star for a in args) and forwarded is None:
        return {}
    args = [a for a in args if not a.star]
    out: dict[str, Const] = {}
    flags = [False] * receiver_first + [is_tensor(a.value) for a in args if a.keyword is None] + list(forwarded_items)
    extra = flags[len(positional):]  # (forwarded_items: a caller's `*args` passed on, after these)
    named = {p.name for p in params if p.kind not in ("star", "double_star")}
    keywords = {a.keyword.value: is_tensor(a.value) for a in args if a.keyword is not None}
    constants = {a.keyword.value: value_of(a.value) for a in args if a.keyword is not None and not keywords[a.keyword.value]}
    if forwarded is not None:
        keywords.update((name, name in forwarded.tensors) for name in forwarded.names)
        constants.update(forwarded.values)
    given = [value_of(a.value) for a in args if a.keyword is None][len(positional):] \
        if not forwarded_items and not any(extra) and not receiver_first else [None]
    for param in params:
        if param.kind == "star" and None not in given:  # `deprecate("name", "1.0", msg)`: its values
            out[param.name] = Const(tuple(v.value for v in given))  # type: ignore[union-attr]
        elif param.kind == "star":
            written = [None] * receiver_first + [value_of(a.value) for a in args if a.keyword is None]
            items = tuple(None if tensor else item for tensor, item in zip(extra, written[len(positional):])) \
                if not forwarded_items and len(written) - len(positional) == len(extra) else None
            known = items if items is not None and any(i is not None for i in items) else None  # (one spelling)
            out[param.name] = Const(Seq(len(extra), "tuple", tuple(extra), known))
        elif param.kind == "double_star":
            names = sorted(k for k in keywords if k not in named)
            held = tuple((k, constants[k]) for k in names if constants.get(k) is not None)
            maybe = tuple(k for k in forwarded.maybe if k not in named) if forwarded is not None else ()
            out[param.name] = Const(Keywords(tuple(names), tuple(k for k in names if keywords[k]), held, maybe))
    return out


@dataclass(frozen=True)
class TensorShape:
    """A local tensor's static shape (a frame's locals hold it in place of a Python value)."""

    dims: tuple[int, ...]


def broadcast(left: tuple[int, ...], right: tuple[int, ...]) -> tuple[int, ...] | None:
    """The shape an elementwise operation on tensors of these shapes makes (None: they do not
    broadcast, which fails at run time anyway)."""
    dims = []
    for a, b in zip(reversed(left), reversed(right)):
        if a != b and 1 not in (a, b):
            return None
        dims.append(b if a == 1 else a)
    longer = left if len(left) > len(right) else right
    return longer[:len(longer) - len(dims)] + tuple(reversed(dims))


def factory_shape(call: cst.Call, qualify: Callable, factories: frozenset,
                  keeps: frozenset = frozenset(), data_factories: frozenset = frozenset()) -> tuple[int, ...] | None:
    """`torch.randn(4, 4)` / `torch.zeros((2, 3))` (then `.half()` etc.): the size it makes;
    `torch.tensor([[1, 2], [3, 4]])` (a `data_factories` one): the size of its data.
    `keeps`: the methods that keep a tensor's shape (not `.sum()`)."""
    while isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Call) \
            and qualify(call.func) is None and call.func.attr.value in keeps:
        call = call.func.value  # `torch.randn(2, 3).half()`: the method keeps the shape
    if qualify(call.func) in data_factories and call.args and call.args[0].keyword is None and not call.args[0].star:
        return data_shape(call.args[0].value)
    if qualify(call.func) not in factories:
        return None
    sizes = [a.value for a in call.args if a.keyword is None]
    keyword = [a.value for a in call.args if a.keyword is not None and a.keyword.value == "size"]
    displays = [s for s in keyword or sizes if isinstance(s, (cst.Tuple, cst.List))]
    if len(displays) == 1:  # `torch.zeros((2, 3))`, `torch.randint(0, 9, (2, 16))`, `size=(2, 3)`
        sizes = [el.value for el in displays[0].elements]
    dims = [d.value if d is not None else None for d in map(literal, sizes)]
    if not dims and not displays or any(type(d) is not int for d in dims):  # (`torch.zeros(())`: 0-d)
        return None
    return tuple(d for d in dims if isinstance(d, int))


def known_slice(part: cst.Slice, value_of: Callable) -> slice | None:
    """The slice `a:b:c` spells when every bound given is a known int (or None), and the step
    is not 0; None otherwise."""
    bounds = []
    for bound in (part.lower, part.upper, part.step):
        found = value_of(bound) if bound is not None else Const(None)
        if found is None or not (found.value is None or type(found.value) is int) \
                or (bound is part.step and found.value == 0):
            return None
        bounds.append(found.value)
    return slice(*bounds)


def data_shape(data: cst.BaseExpression, depth: int = 0) -> tuple[int, ...] | None:
    """The size of the tensor nested number displays make (`[[1, 2], [3, 4]]`: (2, 2); `3`: ())."""
    if depth > 8:
        return None
    if not isinstance(data, (cst.List, cst.Tuple)):
        found = literal(data)
        return () if found is not None and type(found.value) in (int, float, bool) else None
    if any(not isinstance(el, cst.Element) for el in data.elements):
        return None
    inner = {data_shape(el.value, depth + 1) for el in data.elements}
    if not data.elements:
        return (0,)
    if len(inner) != 1 or None in inner:
        return None
    return (len(data.elements), *inner.pop())  # type: ignore[misc]  # (None excluded above)


# Marker for a parameter the caller passes with a value we cannot tell (in FrameKey.arguments).
PASSED_UNKNOWN = "<passed>"
# Marker for a parameter the caller passes a number read out of a tensor (`.item()`): symbolic
# when capture_scalar_outputs captures it, so a branch on it depends on data.
PASSED_DATA_SCALAR = "<data scalar>"
# Marker for a parameter the caller passes a caught StopIteration's `value` (GBL627): an
# attribute Dynamo cannot resolve, which the callee cannot compute with either.
PASSED_STOP_VALUE = "<stop iteration value>"
# Marker for a parameter the caller passes a numpy scalar (`np.int64(12)`): Dynamo wraps it as
# a 0-d tensor of unknown value, so a comparison on it is one on data (GB0170 when branched on),
# while `int(x)` and arithmetic with tensors are traced (measured 2.13).
PASSED_NUMPY_SCALAR = "<numpy scalar>"
# Marker for a parameter the caller passes a torch.Generator (knowledge: generator_factories).
PASSED_GENERATOR = "<torch.Generator>"


# Marker for a parameter the caller passes a Python iterator Dynamo cannot wrap (zip, map, a
# generator, dict views: knowledge iterator_factories / iterator_methods).
PASSED_ITERATOR = "<python iterator>"
PASSED_INTEGER_TENSOR = "<integer tensor>"  # `opt(torch.tensor([7, 3]))`: its .tolist() / .item() differ
PASSED_BOOL_TENSOR = "<bool tensor>"  # `opt(x, ids > 2)`: indexing with it is a mask (dynamic shape)
PASSED_TENSOR_SET = "<set of tensors>"  # `opt(x, {a, b})`: Dynamo cannot wrap it (GB0222)
# `opt(x, torch.no_grad())`: a context manager a frame compiled on its own cannot enter
# (knowledge input_unenterable_context_managers)
PASSED_CONTEXT_MANAGER = "<context manager>"
# ... one no compiled frame made: a compiled function's own argument, or such an argument handed
# on to a helper (entered there, inlined or not, it is an input of every trace)
PASSED_CONTEXT_MANAGER_INPUT = "<context manager input>"
# Prefix of the marker for a parameter the caller passes an instance of a project tensor
# subclass (`t.as_subclass(Sub)`): the marker ends with the class's qualified name.
PASSED_TENSOR_SUBCLASS = "<tensor subclass>:"


def makes_iterator(value: cst.BaseExpression, knowledge, qualify, is_generator_function) -> bool:
    """Does the expression make an iterator object Dynamo cannot wrap when a program passes it
    in (only tuple and range iterators are: `iter((a, b))`, `iter(range(3))`)? `qualify`: a
    callee's qualified name as the expression's scope sees it; `is_generator_function(qual)`:
    a project generator function."""
    if isinstance(value, cst.GeneratorExp):
        return True
    if not isinstance(value, cst.Call):
        return False
    func = value.func
    if isinstance(func, cst.Attribute) and func.attr.value in knowledge.iterator_methods and not value.args:
        return True  # `d.items()`
    qual = qualify(func)
    if qual == "builtins.iter" and value.args:
        held = value.args[0].value
        wrapped = isinstance(held, cst.Tuple) or isinstance(held, cst.Call) \
            and qualify(held.func) in ("builtins.range", "builtins.tuple")
        return not wrapped
    return qual in knowledge.iterator_factories or bool(qual and is_generator_function(qual))


def makes_generator(value: cst.BaseExpression, knowledge, qualify) -> bool:
    """Does the expression make a torch.Generator (`torch.Generator().manual_seed(0)` returns
    it too)? `qualify`: the qualified name of a callee, as the expression's scope sees it."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
            and value.func.attr.value in knowledge.generator_returning_methods:
        value = value.func.value
    return isinstance(value, cst.Call) and qualify(value.func) in knowledge.generator_factories

COMPARE: dict[type, Callable[[Any, Any], Any]] = {cst.Equal: operator.eq, cst.NotEqual: operator.ne, cst.LessThan: operator.lt,
           cst.LessThanEqual: operator.le, cst.GreaterThan: operator.gt,
           cst.GreaterThanEqual: operator.ge, cst.In: lambda a, b: operator.contains(b, a),
           cst.NotIn: lambda a, b: not operator.contains(b, a)}
TENSOR_TYPES = frozenset({"torch.Tensor", "torch.nn.Parameter"})
BUILTIN_TYPES = {"builtins.int": int, "builtins.float": float, "builtins.bool": bool, "builtins.str": str,
                 "builtins.tuple": tuple, "builtins.list": list, "builtins.dict": dict,
                 "builtins.type": type}
ARITHMETIC = {cst.Add: operator.add, cst.Subtract: operator.sub, cst.Multiply: operator.mul,
              cst.FloorDivide: operator.floordiv, cst.Modulo: operator.mod}


def default_value(default: cst.BaseExpression | None, evaluator: "ValueEvaluator") -> Const | None:
    """A parameter's default: a literal, or a dtype / enum member it names (`mode=Mode.FAST`)."""
    found = literal(default)
    if found is None and isinstance(default, cst.Attribute):
        return evaluator.symbol(default)
    return found


def literal(expr: cst.BaseExpression | None) -> Const | None:
    """The constant a literal expression spells (`None`, `True`, `3`, `-1.0`, `"x"`, `(1, 2)`)."""
    if expr is None:
        return None
    if isinstance(expr, cst.Name) and expr.value in ("None", "True", "False"):
        return Const({"None": None, "True": True, "False": False}[expr.value])
    if isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString)):
        return _number_or_string(type(expr), expr.value)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        inner = literal(expr.expression)
        return Const(-inner.value) if inner is not None and isinstance(inner.value, (int, float)) else None
    if isinstance(expr, cst.Tuple):
        items = [literal(el.value) if isinstance(el, cst.Element) else None for el in expr.elements]
        known = [i for i in items if i is not None]
        return Const(tuple(i.value for i in known)) if len(known) == len(items) else None
    return None


@lru_cache(maxsize=16_384)
def _number_or_string(kind: type, text: str) -> Const | None:
    """libcst's `evaluated_value` compiles the literal with `ast.literal_eval` each time it is
    asked: the same few spellings (`0`, `1e-6`, `"eager"`) came up tens of thousands of times."""
    try:
        return Const(kind(value=text).evaluated_value)
    except Exception:  # noqa: BLE001 - odd prefixes (bytes): not a constant we use
        return None


class Symbols(Protocol):
    """Dotted names that are values of their own (model.class_body.SymbolicNames)."""

    def __contains__(self, qual: object) -> bool: ...

    def constant(self, qual: str | None) -> "Const | None": ...


class ValueEvaluator:
    """Constants of one frame. The builder supplies what only it knows through callbacks:
    `name_value(name)` (locals, parameters, globals), `attribute_value(expr)` for `self.x`,
    `is_tensor(expr)`, `qualify(expr)`, `has_attribute(expr, name)` and `call_value(call)`
    (project helpers and predicates such as `torch.compiler.is_compiling()`)."""

    def __init__(self, name_value: Callable, attribute_value: Callable, is_tensor: Callable,
                 qualify: Callable, has_attribute: Callable, call_value: Callable, dtypes: "Symbols"):
        self.name_value = name_value
        self.attribute_value = attribute_value
        self.is_tensor = is_tensor
        self.qualify = qualify
        self.has_attribute = has_attribute
        self.call_value = call_value
        self.dtypes = dtypes

    def value(self, expr: cst.BaseExpression, depth: int = 0) -> Const | None:
        if depth > MAX_DEPTH:
            return None
        found = literal(expr)
        if found is not None:
            return found
        handler = getattr(self, f"_{type(expr).__name__}", None)
        return handler(expr, depth + 1) if handler is not None else None

    def truth(self, expr: cst.BaseExpression) -> bool | None:
        """Whether a condition is True / False while Dynamo traces, or None if unknown."""
        found = self.value(expr)
        return None if found is None else known_truth(found.value)

    def raised_by(self, expr: cst.BaseExpression, display: Callable = lambda e: None,
                  size: Callable = lambda e: None, by_kind: Callable = lambda e: None) -> str | None:
        """The exception evaluating `expr` raises on the values known here (`xs.index(v)` of a
        value not in a known list, an index past a known tuple's end, a division by zero), or
        None. Dynamo evaluates such constants as it traces, so it raises there too. `display`:
        the constants a list expression is known to hold (a list never changed in place);
        `size`: how many items it holds (`[x]` of a tensor); `by_kind`: the TypeError the
        operands' builtin types decide (model.builtin_kinds)."""
        for node in self._evaluated(expr):
            found = None
            if isinstance(node, cst.Attribute):
                found = self._attribute_raises(node)
            elif isinstance(node, (cst.Dict, cst.Set)):
                found = _unhashable_item(node)
            elif isinstance(node, cst.Subscript):
                found = self._item_raises(node, size)
            elif isinstance(node, cst.BinaryOperation):
                found = self._division_raises(node)
            elif isinstance(node, _COMPREHENSIONS):
                found = self.iteration_raises(node.for_in.iter, size)
            elif isinstance(node, cst.Call):
                found = self._lookup_raises(node, display) or self._consumer_raises(node, size) \
                    or self._constructor_raises(node)
            if found is None and not self.is_tensor(node):
                found = by_kind(node)
            if found is not None:
                return found
        return None

    def _evaluated(self, expr: cst.BaseExpression) -> list[cst.CSTNode]:
        """The nodes `raised_by` looks at that every evaluation of `expr` evaluates: the
        branch of `a.b if a is not None else c` or the right side of `a is None or a.b` only
        where the condition is known to select it (else they may never run)."""
        out: list[cst.CSTNode] = []
        stack: list[cst.CSTNode] = [expr]
        while stack:
            node = stack.pop()
            if isinstance(node, _RAISING):
                out.append(node)
            if isinstance(node, _OWN_FRAMES):
                continue
            if isinstance(node, cst.IfExp):
                taken = self.truth(node.test)
                stack.extend(reversed([node.test] + ([] if taken is None else [node.body if taken else node.orelse])))
                continue
            if isinstance(node, cst.BooleanOperation):
                left = self.truth(node.left)
                runs_right = left is not None and left != isinstance(node.operator, cst.Or)
                stack.extend(reversed([node.left] + ([node.right] if runs_right else [])))
                continue
            stack.extend(reversed(children(node)))
        return out

    def iteration_raises(self, iterable: cst.BaseExpression, size: Callable = lambda e: None) -> str | None:
        """`for v in 1`, `(x for x in s)` with `s` known to be a number, a bool or None:
        `iter()` raises TypeError (a comprehension's first iterable is evaluated where it is).
        A `zip(..., strict=True)` of known lengths that differ raises ValueError once the
        shortest is exhausted, which the loop reaches."""
        known = self.value(iterable)
        if known is not None and (known.value is None or type(known.value) in (int, float, bool)):
            return "TypeError"
        return self._strict_zip_raises(iterable, size)

    def _consumer_raises(self, node: cst.Call, size: Callable) -> str | None:
        """`list(zip(a, b, strict=True))`: the builtin that drains its argument reaches the end."""
        if len(node.args) != 1 or node.args[0].keyword is not None or node.args[0].star \
                or self.qualify(node.func) not in _DRAINING:
            return None
        return self._strict_zip_raises(node.args[0].value, size)

    def _constructor_raises(self, node: cst.Call) -> str | None:
        """`complex(1, 1, 1)`, `float("x")`, `complex([])` with every argument known (through
        `*args` / `**kwargs` of known values too): Python's TypeError or ValueError, which
        Dynamo raises while tracing as well (measured 2.13 for complex: GB0088)."""
        constructor = _PURE_CONSTRUCTORS.get(self.qualify(node.func) or "")
        if constructor is None:
            return None
        args: list = []
        kwargs: dict = {}
        for arg in node.args:
            known = self.value(arg.value) if not isinstance(arg.value, cst.List) or arg.value.elements else Const([])
            if known is None:
                return None
            value = list(known.value) if isinstance(known.value, ListValue) else known.value
            if arg.star == "*" and isinstance(value, tuple):
                args.extend(value)
            elif arg.star == "**" and isinstance(value, Keywords) and value.exact():
                given = {name: value.value_of(name) for name in value.names}
                if None in given.values():
                    return None
                kwargs.update((name, c.value) for name, c in given.items())  # type: ignore[union-attr]
            elif not arg.star and arg.keyword is None:
                args.append(value)
            elif not arg.star:
                kwargs[arg.keyword.value] = value  # type: ignore[union-attr]
            else:
                return None
        if not all(isinstance(v, (int, float, complex, str, list, tuple, type(None))) and
                   (not isinstance(v, str) or len(v) <= MAX_TEXT) for v in (*args, *kwargs.values())):
            return None
        try:
            constructor(*args, **kwargs)
        except (TypeError, ValueError) as err:
            return type(err).__name__
        except Exception:  # noqa: BLE001 - anything else: not a raise this model knows
            return None
        return None

    def _strict_zip_raises(self, expr: cst.BaseExpression, size: Callable) -> str | None:
        if not isinstance(expr, cst.Call) or self.qualify(expr.func) != "builtins.zip":
            return None
        strict = [a for a in expr.args if a.keyword is not None and a.keyword.value == "strict"]
        if len(strict) != 1 or literal(strict[0].value) != Const(True) or any(a.star for a in expr.args):
            return None
        lengths = {self._length(a.value, size) for a in expr.args if a.keyword is None}
        return "ValueError" if None not in lengths and len(lengths) > 1 else None

    def _length(self, expr: cst.BaseExpression, size: Callable) -> int | None:
        known = self.value(expr)
        if known is not None and isinstance(known.value, (tuple, str, Seq)):
            return len(known.value)
        shown = display_length(expr)
        return shown if shown is not None else size(expr)

    def unpack_raises(self, target: cst.BaseExpression, value: cst.BaseExpression) -> str | None:
        """`a, b = (1, 2, 3)`: a known number of values unpacked into another number of names."""
        if not isinstance(target, (cst.Tuple, cst.List)) \
                or any(isinstance(el, cst.StarredElement) for el in target.elements):
            return None
        known = self.value(value)
        size = len(known.value) if known is not None and isinstance(known.value, (tuple, Seq)) \
            else display_length(value)
        return "ValueError" if size is not None and size != len(target.elements) else None

    def _attribute_raises(self, node: cst.Attribute) -> str | None:
        """`x.max()` with `x` known to be None (or another constant of a builtin type) that has
        no such attribute: AttributeError, in Python and in Dynamo's trace alike."""
        known = self.value(node.value)
        if known is None or not isinstance(known.value, _CONSTANT_TYPES):
            return None
        return None if hasattr(type(known.value), node.attr.value) else "AttributeError"

    def _item_raises(self, node: cst.Subscript, size: Callable) -> str | None:
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
            return None
        index = self.value(node.slice[0].slice.value)
        if index is None or type(index.value) is not int:
            return None
        base = self.value(node.value)
        length = len(base.value) if base is not None and isinstance(base.value, (tuple, str)) else size(node.value)
        if length is None:
            return None
        return "IndexError" if not -length <= index.value < length else None

    def _division_raises(self, node: cst.BinaryOperation) -> str | None:
        if not isinstance(node.operator, (cst.Divide, cst.FloorDivide, cst.Modulo)) or self.is_tensor(node):
            return None
        left, right = self.value(node.left), self.value(node.right)
        numbers = (int, float)
        if left is None or right is None or type(left.value) not in numbers or type(right.value) not in numbers:
            return None
        return "ZeroDivisionError" if right.value == 0 else None

    def _lookup_raises(self, node: cst.Call, display: Callable) -> str | None:
        func, args = node.func, node.args
        if not isinstance(func, cst.Attribute) or func.attr.value != "index" or len(args) != 1 \
                or args[0].keyword is not None or args[0].star:
            return None
        known, item = self.value(func.value), self.value(args[0].value)
        held = known.value if known is not None and isinstance(known.value, (tuple, str)) else display(func.value)
        if held is None or item is None or not isinstance(held, (tuple, str)):
            return None
        if isinstance(held, str) and not isinstance(item.value, str):
            return None
        return "ValueError" if item.value not in held else None

    # -- expression kinds ---------------------------------------------------------------
    def _Name(self, expr: cst.Name, depth: int) -> Const | None:
        return self.name_value(expr.value)

    def _Attribute(self, expr: cst.Attribute, depth: int) -> Const | None:
        return self.symbol(expr) or self.attribute_value(expr)

    def symbol(self, expr: cst.Attribute) -> Const | None:
        """The value a dotted name stands for: a dtype, an enum member (see SymbolicNames)."""
        return self.dtypes.constant(self.qualify(expr))

    def _UnaryOperation(self, expr: cst.UnaryOperation, depth: int) -> Const | None:
        if not isinstance(expr.operator, cst.Not):
            return None
        inner = self.truth_at(expr.expression, depth)
        return None if inner is None else Const(not inner)

    def truth_at(self, expr, depth: int) -> bool | None:
        found = self.value(expr, depth)
        return None if found is None else known_truth(found.value)

    def _BooleanOperation(self, expr: cst.BooleanOperation, depth: int) -> Const | None:
        left = self.value(expr.left, depth)
        is_or = isinstance(expr.operator, cst.Or)
        if left is not None and known_truth(left.value) is None:
            return None
        if left is not None and bool(left.value) == is_or:
            return left  # `True or ...` / `False and ...`: the right side is never evaluated
        right = self.value(expr.right, depth)
        if left is not None:
            return right
        # `x and False` is falsy and `x or True` truthy, whatever a non-tensor `x` held (a
        # tensor: Dynamo would branch on its data first); the value itself may be `x`, so only
        # a right side that is exactly True folds `or` (`name or "eager"` stays unknown)
        folds = right is not None and (right.value is True if is_or else known_truth(right.value) is False)
        return Const(is_or) if folds and not self.is_tensor(expr.left) else None

    def _Comparison(self, expr: cst.Comparison, depth: int) -> Const | None:
        left = expr.left
        result = True
        for target in expr.comparisons:
            outcome = self._compare(left, target.operator, target.comparator, depth)
            if outcome is None:
                return None
            result = result and outcome
            left = target.comparator
        return Const(result)

    def _compare(self, left, op, right, depth: int) -> bool | None:
        if isinstance(op, (cst.Is, cst.IsNot)):
            same = self._identity(left, right, depth)
            return None if same is None else (same if isinstance(op, cst.Is) else not same)
        if isinstance(op, (cst.In, cst.NotIn)):  # `"k" in d` of a dict whose keys are known: by key
            held, key = self.value(right, depth), self.value(left, depth)
            if held is not None and key is not None and isinstance(held.value, Keywords):
                holds = held.value.holds(key.value)
                return None if holds is None else holds == isinstance(op, cst.In)
        if self._tensor(left) or self._tensor(right):
            return None  # a tensor comparison is a tensor, not a Python value
        a, b = self.value(left, depth), self.value(right, depth)
        fn = COMPARE.get(type(op))
        if a is None or b is None or fn is None:
            return None
        if isinstance(op, (cst.Equal, cst.NotEqual)) and _list_against_tuple(a.value, b.value):
            return isinstance(op, cst.NotEqual)  # `[1] == (1,)` is False
        try:
            return bool(fn(a.value, b.value))
        except Exception:  # noqa: BLE001 - e.g. `None < 1`: Python would raise; not ours to fold
            return None

    def _tensor(self, expr) -> bool:
        """Is `expr` a tensor: for an item of a dict whose keys are known (`d.get("k")`,
        `d["k"]`), whether that key holds one; else as the tensor scope says."""
        holder, key, default = _keyed_item(expr)
        held = self.value(holder) if holder is not None else None
        keys = held.value if held is not None and isinstance(held.value, Keywords) else None
        name = self.value(key) if keys is not None else None
        if keys is None or name is None or not isinstance(name.value, str):
            return self.is_tensor(expr)
        if keys.holds(name.value) is None:
            return self.is_tensor(expr)
        if name.value in keys:
            return name.value in keys.tensors
        return default is not None and self.is_tensor(default)

    def _identity(self, left, right, depth: int) -> bool | None:
        """`x is None` / `x is not None`: a tensor is never None; constants compare directly."""
        for a, b in ((left, right), (right, left)):
            if literal(b) == Const(None) and self._tensor(a):
                return False
        va, vb = self.value(left, depth), self.value(right, depth)
        if va is None or vb is None:
            return None
        if va.value is None or vb.value is None or isinstance(va.value, bool):
            return va.value is vb.value
        if va.value in self.dtypes and vb.value in self.dtypes:  # singletons: a dtype, an enum member
            return va.value == vb.value
        return None

    def _BinaryOperation(self, expr: cst.BinaryOperation, depth: int) -> Const | None:
        fn = ARITHMETIC.get(type(expr.operator))
        if fn is None or self.is_tensor(expr):
            return None
        a, b = self.value(expr.left, depth), self.value(expr.right, depth)
        if a is None or b is None or _too_long(fn, a.value, b.value):
            return None
        try:
            return Const(fn(a.value, b.value))
        except Exception:  # noqa: BLE001
            return None

    def _Subscript(self, expr: cst.Subscript, depth: int) -> Const | None:
        """`x.shape[0]`, `sizes[-1]`: an item of a known tuple at a constant index;
        `input_shape[:2]`: a slice of it at constant bounds."""
        if len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Slice):
            return self._sliced(expr.value, expr.slice[0].slice, depth)
        if len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, cst.Index):
            return None
        base, index = self.value(expr.value, depth), self.value(expr.slice[0].slice.value, depth)
        if base is not None and index is not None and isinstance(base.value, Keywords) \
                and isinstance(index.value, str) and base.value.holds(index.value):
            return base.value.value_of(index.value)  # `kwargs["flag"]`: the constant the caller passed
        if base is not None and index is not None and isinstance(base.value, Seq) and base.value.items is not None \
                and type(index.value) is int and -base.value.length <= index.value < base.value.length:
            return base.value.items[index.value]  # `args[0]` of a wrapper given a constant there
        if base is None or index is None or not isinstance(base.value, tuple) or type(index.value) is not int:
            return None
        try:
            return Const(base.value[index.value])
        except IndexError:
            return None

    def _sliced(self, held: cst.BaseExpression, part: cst.Slice, depth: int) -> Const | None:
        base = self.value(held, depth)
        if base is None or not isinstance(base.value, tuple):
            return None
        bounds = known_slice(part, lambda e: self.value(e, depth))
        if bounds is None:
            return None
        items = base.value[bounds]
        return Const(ListValue(items) if isinstance(base.value, ListValue) else items)

    def _Tuple(self, expr: cst.Tuple, depth: int) -> Const | None:
        """`(torch.float16, torch.bfloat16)`: a tuple of known values (`dtype in (...)`)."""
        items = [self.value(el.value, depth) if isinstance(el, cst.Element) else None for el in expr.elements]
        return Const(tuple(i.value for i in items if i is not None)) if None not in items else None

    def _IfExp(self, expr: cst.IfExp, depth: int) -> Const | None:
        test = self.truth_at(expr.test, depth)
        if test is None:
            return None
        return self.value(expr.body if test else expr.orelse, depth)

    def _Call(self, expr: cst.Call, depth: int) -> Const | None:
        func = expr.func
        args = [a.value for a in expr.args if a.keyword is None and not a.star]
        if isinstance(func, cst.Attribute) and func.attr.value in ("get", "pop") and 1 <= len(args) <= 2:
            return self._keyword_lookup(func.value, args, depth)
        if isinstance(func, cst.Attribute) and func.attr.value in ("index", "count") and len(args) == 1:
            return self._sequence_method(func, args[0], depth)  # `co_varnames.index(name)`
        computed = self._string_call(expr, args, depth)
        if computed is not None:
            return computed
        name = func.value if isinstance(func, cst.Name) and self.name_value(func.value) is None else None
        if name == "isinstance" and len(args) == 2:
            return self._isinstance(args[0], args[1], depth)
        if name == "len" and len(args) == 1:
            found = self.value(args[0], depth)
            held = found.value if found is not None else None
            if isinstance(held, (tuple, str, Seq)) or (isinstance(held, Keywords) and held.exact()):
                return Const(len(held))
            return self._len_of_display(args[0]) or self.call_value(expr)
        if name in ("hasattr", "getattr") and len(args) >= 2:
            attr = self.value(args[1], depth)
            if attr is None or not isinstance(attr.value, str):
                return None
            if name == "hasattr":
                known = self.has_attribute(args[0], attr.value)
                if known is None:
                    known = self._builtin_has(args[0], attr.value, depth)
                return None if known is None else Const(known)
            has = self.has_attribute(args[0], attr.value) if len(args) == 3 else True
            if has:
                return self.attribute_value(cst.Attribute(args[0], cst.Name(attr.value)))
            return self.value(args[2], depth) if has is False else None  # never set: the default
        return self.call_value(expr)

    def _string_call(self, expr: cst.Call, args: list, depth: int) -> Const | None:
        """`"|".join(keys)`, `name.startswith("x")`, `re.findall(p, name)` on constants."""
        func = expr.func
        if not isinstance(func, cst.Attribute) or len(args) != len(expr.args) or len(args) > 3:
            return None  # keywords or a spread: not computed
        receiver = None
        if is_string_method(func.attr.value):
            receiver = self.value(func.value, depth)
            if receiver is None or not isinstance(receiver.value, str):
                return None
        qualified = self.qualify(func) if receiver is None else None
        if receiver is None and not is_regex_function(qualified):
            return None
        known = [self.value(a, depth) for a in args]
        if None in known:
            return None
        values = [_iterated(k.value) for k in known]  # type: ignore[union-attr]
        found = string_method(receiver.value, func.attr.value, values) if receiver is not None \
            else regex_call(qualified, values)
        return Const(found) if found is not None else None

    def _FormattedString(self, expr: cst.FormattedString, depth: int) -> Const | None:
        found = formatted(expr, lambda e: self.value(e, depth))
        return Const(found) if found is not None else None

    def _builtin_has(self, obj, name: str, depth: int) -> bool | None:
        """`hasattr(None, "x")`: of a known None, number or bool, as Python answers (its own
        attributes: not those of `type`, such as `__name__`, that its class has)."""
        found = self.value(obj, depth)
        if found is None or not isinstance(found.value, _CONSTANT_TYPES):
            return None
        return hasattr(found.value, name)

    def _sequence_method(self, func: cst.Attribute, arg, depth: int) -> Const | None:
        held, item = self.value(func.value, depth), self.value(arg, depth)
        if held is None or item is None or not isinstance(held.value, (tuple, str)):
            return None
        try:
            return Const(getattr(held.value, func.attr.value)(item.value))
        except (ValueError, TypeError):  # not in it: the program raises there
            return None

    def _keyword_lookup(self, holder, args: list, depth: int) -> Const | None:
        """`kwargs.get("x", d)` / `kwargs.pop("x", d)` of a name the call site did not pass: `d`.
        A name it passed: the value the caller passed, when it knew it."""
        found = self.value(holder, depth)
        key = self.value(args[0], depth)
        if found is None or not isinstance(found.value, Keywords) or key is None:
            return None
        if found.value.holds(key.value) is None:
            return None
        if key.value in found.value:  # passed: its value when the caller knew it
            return found.value.value_of(key.value) if isinstance(key.value, str) else None
        return self.value(args[1], depth) if len(args) == 2 else Const(None)

    def _isinstance(self, obj, kinds, depth: int) -> Const | None:
        names = [self.qualify(el.value) for el in kinds.elements] if isinstance(kinds, cst.Tuple) \
            else [self.qualify(kinds)]
        if None in names:
            return None
        found = self.value(obj, depth)
        if found is not None and isinstance(found.value, Seq):
            return Const(f"builtins.{found.value.kind}" in names)
        if found is not None and isinstance(found.value, Keywords):  # a dict (`**kwargs`, one built here)
            return Const("builtins.dict" in names) if all(n in BUILTIN_TYPES for n in names) else None
        if self.is_tensor(obj):
            if any(n in TENSOR_TYPES for n in names):
                return Const(True)
            return Const(False) if all(n in BUILTIN_TYPES for n in names) else None
        if found is None:
            return None
        if any(n in TENSOR_TYPES for n in names):
            return Const(False)
        if all(n in BUILTIN_TYPES for n in names):
            if isinstance(found.value, ListValue):  # a list held as a tuple
                return Const("builtins.list" in names)
            return Const(isinstance(found.value, tuple(BUILTIN_TYPES[n] for n in names)))
        return None

    @staticmethod
    def _len_of_display(expr) -> Const | None:
        found = display_length(expr)
        return Const(found) if found is not None else None


def _list_against_tuple(a: object, b: object) -> bool:
    """A list (held as a tuple) compared with a tuple: never equal in Python."""
    return isinstance(a, tuple) and isinstance(b, tuple) and isinstance(a, ListValue) != isinstance(b, ListValue)


def _too_long(fn, a: object, b: object) -> bool:
    """`"ab" * 10**9` in a scanned file: a repetition past MAX_TEXT items is not computed (it
    would take the scan's memory and time)."""
    if fn is not operator.mul:
        return False
    for seq, count in ((a, b), (b, a)):
        if isinstance(seq, (str, tuple)) and type(count) is int and len(seq) * count > MAX_TEXT:
            return True
    return False


def _iterated(held: object) -> object:
    """A dict whose keys are all known, as what iterating it yields (its keys, in order)."""
    return held.names if isinstance(held, Keywords) and held.exact() else held


def _keyed_item(expr) -> tuple:
    """(holder, key, default) of `holder.get(key[, default])` or `holder[key]`; Nones else."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "get" \
            and 1 <= len(expr.args) <= 2 and not any(a.keyword or a.star for a in expr.args):
        return expr.func.value, expr.args[0].value, expr.args[1].value if len(expr.args) == 2 else None
    if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
        return expr.value, expr.slice[0].slice.value, None
    return None, None, None


# builtins that run an iterator to its end
_DRAINING = frozenset({"builtins.list", "builtins.tuple", "builtins.dict", "builtins.set", "builtins.sorted",
                       "builtins.sum", "builtins.max", "builtins.min", "builtins.frozenset"})


def display_kind(expr) -> str:
    return "list" if isinstance(expr, cst.List) else "tuple"


def display_length(expr) -> int | None:
    """The length of a tuple/list display without starred items."""
    if isinstance(expr, (cst.List, cst.Tuple)) and not any(
            isinstance(el, cst.StarredElement) for el in expr.elements):
        return len(expr.elements)
    return None


_MUTABLE_DISPLAYS = (cst.List, cst.Dict, cst.Set, cst.ListComp, cst.DictComp, cst.SetComp)


def _unhashable_item(display: cst.Dict | cst.Set) -> str | None:
    """`{[1, 2]: v}` / `{[1, 2]}`: a list, dict or set display as a key or a set item is
    unhashable; building the display raises TypeError."""
    keys = [el.key for el in display.elements if isinstance(el, cst.DictElement)] if isinstance(display, cst.Dict) \
        else [el.value for el in display.elements if isinstance(el, cst.Element)]
    return "TypeError" if any(isinstance(k, _MUTABLE_DISPLAYS) for k in keys) else None

# builtin constructors that compute nothing but their value: called on known constants to see
# whether Python refuses them (`complex(1, 1, 1)`)
_PURE_CONSTRUCTORS: dict[str, Callable] = {"builtins.complex": complex, "builtins.float": float}
