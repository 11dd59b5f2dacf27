"""Which expressions hold tensors: the little type inference graph-break rules need.

Deliberately conservative: an expression is a tensor only when we can tell (a tensor
parameter, a torch op result, arithmetic on tensors).  Unknown values are not tensors, so
branches on them are never reported as data-dependent.
"""
from __future__ import annotations

from typing import Callable

import libcst as cst

from ..index.names import target_names  # noqa: F401  (re-exported)
from ..walk import STRING_NODES
from .values import Keywords, Seq, literal

from ..knowledge import Knowledge

NON_TENSOR_COMPARISONS = (cst.Is, cst.IsNot, cst.In, cst.NotIn)


class TensorScope:
    """Tensor-valued names of one frame, and the rules to extend them."""

    def __init__(self, knowledge: Knowledge, qualify, tensors: set[str],
                 returns=None, is_module_call=None, returns_object=None,
                 self_tensors: frozenset[str] = frozenset(), free_tensor=None, returns_data_scalar=None):
        self.k = knowledge
        self.qualify = qualify  # expr -> qualified name or None
        self.tensors = set(tensors)
        self.self_tensors = self_tensors  # `self.<attr>` known to hold a tensor
        # a name the frame does not bind holding a tensor (a global, the enclosing test's local)
        self.free_tensor = free_tensor or (lambda name: False)
        # every name that held a tensor (or a numpy array, or a display of tensors: has_tensor_in_frame
        # counts them) at some point
        self.ever_tensors = set(tensors)
        self.bool_tensors: set[str] = set()
        self.data_scalars: set[str] = set()  # Python numbers read out of tensors (.item(), float(t))
        self.numpy_scalars: set[str] = set()  # numpy scalars passed in: compared, they are data
        self.numpy_values: set[str] = set()  # numpy arrays (traced as tensors under trace_numpy)
        self.integer_tensors: set[str] = set()
        self.python_values: set[str] = set()  # lists / numbers read out of tensors (`.tolist()`)
        self.data_pointers: set[str] = set()  # `p = t.data_ptr()`: Dynamo's DataPtrVariable
        # numbers Python's random module made (`r = random.uniform(0, 1)`): Dynamo holds them as
        # tensors for torch ops, but its builtins and math functions fail on them differently
        self.random_numbers: set[str] = set()
        self.containers: set[str] = set()  # a list / tuple / dict display holding tensors (`xs = [x]`)
        self.tensor_sequences: set[str] = set()  # those of them that are lists or tuples
        # a dict whose keys are known (a `**kwargs`, a dict argument): name -> model.values.Keywords
        self.keywords_of: Callable[[str], Keywords | None] = lambda name: None
        self.sequence_of: Callable[[str], Seq | None] = lambda name: None
        self.returns = returns or (lambda call: (False, ()))
        self.is_module_call = is_module_call or (lambda call: False)
        self.returns_object = returns_object or (lambda call: False)
        self.returns_data_scalar = returns_data_scalar or (lambda call: False)

    # -- queries ---------------------------------------------------------------------
    def is_tensor(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Name):
            return expr.value in self.tensors or self.free_tensor(expr.value)
        if isinstance(expr, cst.Attribute):
            if expr.attr.value in self.self_tensors and isinstance(expr.value, cst.Name) and expr.value.value == "self":
                return True
            return expr.attr.value in self.k.tensor_attributes and self.is_tensor(expr.value)
        if isinstance(expr, cst.Call):
            return self._call_is_tensor(expr)
        if isinstance(expr, cst.BinaryOperation):
            return self.is_tensor(expr.left) or self.is_tensor(expr.right)
        if isinstance(expr, cst.UnaryOperation):
            return not isinstance(expr.operator, cst.Not) and self.is_tensor(expr.expression)
        if isinstance(expr, cst.Comparison):
            return self._comparison_is_tensor(expr)
        if isinstance(expr, cst.Subscript):
            held = self._held_item(expr.value, expr.slice[0].slice.value if len(expr.slice) == 1
                                   and isinstance(expr.slice[0].slice, cst.Index) else None)
            return held if held is not None else self.is_tensor(expr.value) or self._container(expr.value)
        if isinstance(expr, cst.IfExp):
            return self.is_tensor(expr.body) or self.is_tensor(expr.orelse)
        if isinstance(expr, cst.BooleanOperation):
            return self.is_tensor(expr.right)
        return False

    def is_bool_tensor(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Name):
            return expr.value in self.bool_tensors
        if isinstance(expr, cst.Comparison):
            return self._comparison_is_tensor(expr)
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.BitInvert):
            return self.is_bool_tensor(expr.expression)
        if isinstance(expr, cst.BinaryOperation) and isinstance(
                expr.operator, (cst.BitAnd, cst.BitOr, cst.BitXor)):
            return self.is_bool_tensor(expr.left) or self.is_bool_tensor(expr.right)
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
            method, receiver = expr.func.attr.value, expr.func.value
            if method == "bool":
                return self.is_tensor(receiver)
            return method in self.k.dtype_keeping_methods and _keeps_dtype(method, expr) \
                and self.is_bool_tensor(receiver)
        return False

    def is_numpy(self, expr: cst.BaseExpression) -> bool:
        """A numpy array or scalar: `.numpy()` of a tensor, or a numpy call on one."""
        if isinstance(expr, cst.Name):
            return expr.value in self.numpy_values
        if isinstance(expr, cst.Call):
            func = expr.func
            if isinstance(func, cst.Attribute) and func.attr.value == "numpy":
                return self.is_tensor(func.value)
            qual = self.qualify(func)
            if qual in self.k.numpy_array_factories:
                return True
            if qual is not None and qual.split(".")[0] == "numpy":
                return any(self.is_numpy(a.value) or self.is_tensor(a.value) for a in expr.args)
            if isinstance(func, cst.Attribute):  # arr.mean(), arr.std()
                return self.is_numpy(func.value)
        if isinstance(expr, cst.BinaryOperation):
            return self.is_numpy(expr.left) or self.is_numpy(expr.right)
        if isinstance(expr, cst.Subscript):  # `arr[0]`, `np.nonzero(a)[0]`
            return self.is_numpy(expr.value)
        return False

    def is_integer_tensor(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Name):
            return expr.value in self.integer_tensors
        if isinstance(expr, cst.Call) and makes_integer_tensor(expr, self.k, self.qualify):
            return True
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
            method = expr.func.attr.value
            if method in self.k.integer_preserving_methods:  # `mask.long().sum(0)` stays integer
                return self.is_integer_tensor(expr.func.value)
            return method in self.k.integer_tensor_methods and self.is_tensor(expr.func.value)
        return False

    def is_data_pointer(self, expr: cst.BaseExpression) -> bool:
        """`t.data_ptr()` of a tensor, or a local holding one."""
        if isinstance(expr, cst.Name):
            return expr.value in self.data_pointers
        return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
            and expr.func.attr.value == "data_ptr" and not expr.args and self.is_tensor(expr.func.value)

    def is_data_scalar(self, expr: cst.BaseExpression) -> bool:
        """A Python value computed from tensor data (`loss.item() > 10`)."""
        if isinstance(expr, cst.Name):
            return expr.value in self.data_scalars
        if isinstance(expr, cst.Call):
            func = expr.func
            if isinstance(func, cst.Attribute) and func.attr.value in ("item", "tolist"):
                return self.is_tensor(func.value)
            if isinstance(func, cst.Name) and func.value in ("float", "int", "bool") and expr.args:
                return self.is_tensor(expr.args[0].value)
            return self.returns_data_scalar(expr)
        if isinstance(expr, cst.Comparison):
            return self.is_data_scalar(expr.left) or any(self.is_data_scalar(t.comparator)
                                                          for t in expr.comparisons) \
                or self.is_tensor_contains(expr)  # its `.item()`, when scalar outputs are captured
        if isinstance(expr, cst.BooleanOperation):
            return self.is_data_scalar(expr.left) or self.is_data_scalar(expr.right)
        if isinstance(expr, cst.UnaryOperation):
            return self.is_data_scalar(expr.expression)
        if isinstance(expr, cst.BinaryOperation):
            return self.is_data_scalar(expr.left) or self.is_data_scalar(expr.right)
        return False

    def _comparison_is_tensor(self, expr: cst.Comparison) -> bool:
        if any(isinstance(t.operator, NON_TENSOR_COMPARISONS) for t in expr.comparisons):
            return False
        operands = [expr.left, *(t.comparator for t in expr.comparisons)]
        return any(self.is_tensor(o) or isinstance(o, cst.Name) and o.value in self.numpy_scalars for o in operands)

    def is_tensor_membership(self, expr: cst.Comparison) -> bool:
        """`t in [a, b]` with a tensor on the left of a list or tuple of tensors: the sequence
        compares its items with `==`; branching on the answer is a data-dependent jump
        (measured 2.13, GB0170). `not in`, or an answer stored, break otherwise (GB0033, the
        frame skipped): not modelled."""
        items = _membership_items(expr, (cst.In,))
        return items is not None and self.is_tensor_sequence(items) and self.is_tensor(expr.left)

    def is_tensor_contains(self, expr: cst.Comparison) -> bool:
        """`v in t` / `v not in t` with a tensor on the right: Tensor.__contains__, which reads
        its answer out of the tensor (a list of tensors passed in is a sequence, not a tensor)."""
        items = _membership_items(expr, (cst.In, cst.NotIn))
        if items is None or isinstance(items, cst.Name) and self.is_tensor_sequence(items):
            return False
        if isinstance(expr.left, STRING_NODES):
            return False  # `"aux" in outputs`: a string is never looked for in a tensor
        return self.is_tensor(items)

    def is_tensor_sequence(self, items: cst.BaseExpression) -> bool:
        """A list or tuple of tensors: a display of them, or a name holding one."""
        if isinstance(items, cst.Name):
            return items.value in self.tensor_sequences
        return isinstance(items, (cst.List, cst.Tuple)) and self._holds_tensors(items)

    def _held_item(self, container: cst.BaseExpression, key: cst.BaseExpression | None) -> bool | None:
        """`kwargs["flag"]` of a dict whose keys are known, `args[1]` of a tuple whose items'
        kinds are known (a wrapper's `*args`): whether the item is a tensor (None: not known)."""
        if isinstance(container, cst.Name) and isinstance(key, cst.Integer):
            items = self.sequence_of(container.value)
            position = int(key.value)
            return items.tensors[position] if items is not None and items.tensors is not None \
                and len(items.tensors) == items.length and position < items.length else None
        if not isinstance(container, cst.Name) or not isinstance(key, cst.SimpleString):
            return None
        held = self.keywords_of(container.value)
        name = key.evaluated_value
        if held is None or held.holds(name) is None:
            return None
        return name in held.tensors  # (a name it does not hold: the default, no tensor here)

    def iterates_tensors(self, iterable: cst.BaseExpression) -> bool:
        """`for v in x` of a tensor, of a list or tuple holding tensors, or of a dict's
        `.values()` / `.items()` (the key of an item is no tensor: the caller unbinds it; a dict
        itself iterates its keys)."""
        if self.is_tensor(iterable) or isinstance(iterable, cst.Name) and iterable.value in self.tensor_sequences:
            return True
        if not (isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute)
                and iterable.func.attr.value in ("values", "items") and self._container(iterable.func.value)):
            return False
        held = self.keywords_of(iterable.func.value.value)  # type: ignore[attr-defined]
        return held is None or set(held.tensors) == set(held.names)  # (with a number among them: not known)

    def _container(self, expr: cst.BaseExpression) -> bool:
        return isinstance(expr, cst.Name) and expr.value in self.containers

    def _call_is_tensor(self, call: cst.Call) -> bool:
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("get", "pop") and call.args:
            held = self._held_item(func.value, call.args[0].value)
            if held is not None:  # `batch.get("x")`, `kwargs.pop("return_dict", True)` of a dict whose keys are known
                return held or len(call.args) > 1 and self.is_tensor(call.args[1].value)
        if isinstance(func, cst.Attribute) and func.attr.value in _ITEM_TAKING_METHODS and self._container(func.value):
            return True  # `xs.pop()`, `d.get("a")` of a container holding tensors
        qual = self.qualify(func)
        if qual is not None and (self.is_torch_function(qual) or qual in self.k.tensor_valued_random_functions):
            return True
        if qual is not None and qual.split(".")[0] == "numpy":
            # trace_numpy: numpy calls on tensors (and their .numpy() views) are traced as tensors
            return any(self.is_tensor(a.value) for a in call.args)
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in self.k.non_tensor_methods or method in self.k.container_only_methods \
                    or _flag_lookup(call):
                return False
            if self.is_tensor(func.value):
                return True
            if method in self.k.tensor_only_methods and self._could_be_tensor(func.value):
                return True
        if self.is_module_call(call):  # a module's output: a tensor unless its forward returns an object
            return not self.returns_object(call)
        return self.returns(call)[0]

    def is_random_number(self, expr: cst.BaseExpression) -> bool:
        """A number from Python's random module Dynamo traces, or arithmetic on one."""
        if isinstance(expr, cst.Name):
            return expr.value in self.random_numbers
        if isinstance(expr, cst.Call):
            return self.qualify(expr.func) in self.k.tensor_valued_random_functions
        if isinstance(expr, cst.BinaryOperation):
            return self.is_random_number(expr.left) or self.is_random_number(expr.right)
        return isinstance(expr, cst.UnaryOperation) and self.is_random_number(expr.expression)

    def _could_be_tensor(self, expr: cst.BaseExpression) -> bool:
        """A receiver of tensor-only methods whose type we do not otherwise know."""
        return self.is_tensor(expr) or isinstance(expr, (cst.Call, cst.Subscript, cst.BinaryOperation, cst.Attribute))

    def is_torch_function(self, qual: str) -> bool:
        if qual in self.k.non_tensor_functions:
            return False
        namespace, _, name = qual.rpartition(".")
        if name.startswith(tuple(self.k.non_tensor_prefixes)):
            return False  # torch.is_*, torch.get_device_module, torch.set_*: not tensor ops
        return namespace in self.k.tensor_namespaces and name[:1].islower() and not name.startswith("_")

    # -- updates ---------------------------------------------------------------------
    def assign(self, target: cst.BaseExpression, value: cst.BaseExpression | None,
               tensor: bool | None = None) -> None:
        if tensor is None and isinstance(target, (cst.Tuple, cst.List)) and self._unpack(target, value):
            return
        is_t = self.is_tensor(value) if tensor is None and value is not None else bool(tensor)
        is_bool = value is not None and self.is_bool_tensor(value)
        is_scalar = value is not None and not is_t and self.is_data_scalar(value)
        is_np = value is not None and self.is_numpy(value)
        is_int = value is not None and self.is_integer_tensor(value)
        is_ptr = value is not None and self.is_data_pointer(value)
        is_py = value is not None and _python_value_call(value) and not is_t
        is_random = value is not None and self.is_random_number(value)
        holds = value is not None and self._holds_tensors(value)
        sequence = holds and isinstance(value, (cst.List, cst.Tuple, cst.ListComp))
        # a callee's tuple with a tensor in it (`out = helper(x)`, `return (y,)`): which item is
        # which is not tracked through subscripts, but the frame holds a tensor
        returned_tuple = isinstance(value, cst.Call) and any(self.returns(value)[1])
        for name in target_names(target):
            (self.containers.add if holds else self.containers.discard)(name)
            (self.tensor_sequences.add if sequence else self.tensor_sequences.discard)(name)
            if holds or returned_tuple:  # has_tensor_in_frame looks inside lists, tuples and dicts
                self.ever_tensors.add(name)
            (self.python_values.add if is_py else self.python_values.discard)(name)
            (self.numpy_values.add if is_np else self.numpy_values.discard)(name)
            if is_np:
                self.ever_tensors.add(name)
            (self.integer_tensors.add if is_int else self.integer_tensors.discard)(name)
            (self.data_pointers.add if is_ptr else self.data_pointers.discard)(name)
            (self.random_numbers.add if is_random else self.random_numbers.discard)(name)
            (self.data_scalars.add if is_scalar else self.data_scalars.discard)(name)
            self.numpy_scalars.discard(name)
            if is_t:
                self.tensors.add(name)
                self.ever_tensors.add(name)
            else:
                self.tensors.discard(name)
            if is_bool:
                self.bool_tensors.add(name)
            else:
                self.bool_tensors.discard(name)


    def _holds_tensors(self, value: cst.BaseExpression) -> bool:
        """A list, tuple or set display with a tensor item, a comprehension making tensors, or a
        dict display with a tensor value."""
        if isinstance(value, (cst.List, cst.Tuple, cst.Set)):
            return any(isinstance(el, cst.Element) and self.is_tensor(el.value) for el in value.elements)
        element = comprehension_element(value)
        if element is not None and isinstance(value, (cst.ListComp, cst.DictComp)):  # `[torch.tensor([i]) for i in ...]`
            # a name the comprehension binds is not the frame's (`[x for x in names]`)
            shadowed = set(target_names(value.for_in.target)) & self.tensors
            self.tensors -= shadowed
            try:
                return self.is_tensor(element)
            finally:
                self.tensors |= shadowed
        if isinstance(value, cst.Dict):
            return any(isinstance(el, cst.DictElement) and self.is_tensor(el.value) for el in value.elements)
        return False

    def _unpack(self, target, value) -> bool:
        """`a, b = t, 1` or `y, t0 = helper(x)`: item by item where the items are known."""
        if isinstance(value, (cst.Tuple, cst.List)):
            items = [self.is_tensor(el.value) for el in value.elements]
        elif isinstance(value, cst.Call):
            items = list(self.returns(value)[1])
        else:
            return False
        if len(items) != len(target.elements) or any(
                isinstance(el.value, cst.StarredElement) for el in target.elements):
            return False
        for el, is_t in zip(target.elements, items):
            self.assign(el.value, None, tensor=is_t)
        return True


PYTHON_VALUE_METHODS = frozenset({"tolist", "item", "numpy", "size", "dim", "numel", "__len__"})


def _python_value_call(value: cst.BaseExpression) -> bool:
    """`t.tolist()`, `t.item()`, `t.numpy()`: the result is a Python value (or array), not a tensor."""
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
        and value.func.attr.value in PYTHON_VALUE_METHODS


# methods that hand back one of a container's items
_ITEM_TAKING_METHODS = frozenset({"pop", "get", "__getitem__"})


def _keeps_dtype(method: str, call: cst.Call) -> bool:
    """`.to(x.device)` / `.to("cpu")` keep the dtype; `.to(torch.float)` does not."""
    if method != "to":
        return True
    if len(call.args) != 1 or call.args[0].keyword is not None:
        return False
    arg = call.args[0].value
    return isinstance(arg, cst.SimpleString) or (isinstance(arg, cst.Attribute) and arg.attr.value == "device") \
        or (isinstance(arg, cst.Name) and "device" in arg.value)


def _membership_items(expr: cst.Comparison, operators: tuple[type, ...]) -> cst.BaseExpression | None:
    """The right side of a single `in` / `not in` test (of `operators`), else None."""
    if len(expr.comparisons) != 1 or not isinstance(expr.comparisons[0].operator, operators):
        return None
    return expr.comparisons[0].comparator


def makes_integer_tensor(call: cst.Call, knowledge: Knowledge, qualify) -> bool:
    """`torch.randint(...)`, `torch.tensor([7, 3])`, `torch.arange(5)`, `torch.zeros(3, dtype=torch.long)`:
    a torch factory whose result is an integer tensor."""
    qual = qualify(call.func)
    if qual is None or not qual.startswith("torch."):
        return False
    dtype = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "dtype"), None)
    if dtype is not None:
        return qualify(dtype) in knowledge.integer_dtypes
    if qual in knowledge.integer_tensor_factories:
        return True
    values = [a.value for a in call.args if a.keyword is None]
    return qual in knowledge.literal_tensor_factories and bool(values) and all(map(_integer_literals, values))


def _integer_literals(node: cst.BaseExpression) -> bool:
    """An int, or a list/tuple display of them (nested): no float, no name."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    if isinstance(node, cst.Integer):
        return True
    if isinstance(node, (cst.List, cst.Tuple)):
        return bool(node.elements) and all(isinstance(el, cst.Element) and _integer_literals(el.value)
                                           for el in node.elements)
    return False


def comprehension_element(value: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """What a list comprehension makes, or a dict comprehension's values; None otherwise."""
    if isinstance(value, cst.ListComp):
        return value.elt
    return value.value if isinstance(value, cst.DictComp) else None


def _flag_lookup(call: cst.Call) -> bool:
    """`d.get(key, False)` / `d.pop(key, 0)`: a lookup given a constant default, a Python value."""
    method = call.func.attr.value if isinstance(call.func, cst.Attribute) else ""
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return method in ("get", "pop", "setdefault") and len(positional) == 2 and literal(positional[1].value) is not None
