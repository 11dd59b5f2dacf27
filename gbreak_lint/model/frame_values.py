"""The Python values one frame knows: its parameters, locals, globals and `self`'s attributes.

Parameters come from the frame key: constants the call site passes, `PASSED_UNKNOWN` for
arguments it passes that we cannot tell, and the parameter's default for one it does not pass
(an entry named without a call site runs with its defaults). Locals follow the statements in
order; after a branch on an unknown value only what both sides agree on is kept, and a loop
forgets what its body rebinds. Globals are module-level names bound once to a literal.
"""
from __future__ import annotations

import re
from typing import Callable

import libcst as cst

from ..index.project import ProjectIndex
from ..index.symbols import ClassInfo, FunctionInfo, ModuleIndex
from ..knowledge import Knowledge
from ..walk import NESTED_SCOPES, all_params, children, find_all
from .compiling import CompileTimeValues
from .global_values import global_value
from .setter_fields import only_setter_assigns
from .dict_locals import (display_keywords, item_stored_names, joined, loosened, plain_dict_local, stored_keys,
                          with_item)
from ..index.names import RUNTIME_FALSE, binding_counts, target_names  # noqa: F401  (binding_counts re-exported)
from .tensors import TensorScope
from .types import FrameKey
from .class_body import SymbolicNames
from .string_values import ListValue
from .values import (default_value, Const, Keywords, Obj, TensorShape, ValueEvaluator, broadcast, display_length, factory_shape,
                     known_slice, literal)

_UNKNOWN_LOCAL = object()  # a local whose value is not known (shadows globals and defaults)
_RAN, _ENDED = object(), object()  # how a block run for its values came out (FrameValues.unrolled)
MAX_UNROLLED = 16  # items of a constant sequence a loop is unrolled over for its values


class FrameValues:
    def __init__(self, project: ProjectIndex, knowledge: Knowledge, module: ModuleIndex,
                 function: FunctionInfo, key: FrameKey, cls: ClassInfo | None, scope: TensorScope,
                 qualify, compile_time: CompileTimeValues, inherited: bool = False,
                 default_dtype: str | None = None):
        self.project = project
        self.k = knowledge
        self.module = module
        self.function = function
        self.key = key
        self.cls = cls
        self.scope = scope
        self.qualify = qualify
        self.compile_time = compile_time
        # whether grad mode is on at the point read (set by the frame builder, which knows the
        # blocks around it and the state the compiled call runs under)
        self.grad_enabled: Callable[[], bool | None] = lambda: None
        self.default_dtype = default_dtype
        self.locals: dict[str, object] = {}
        self._plain_dicts: dict[str, bool] = {}  # names `plain_dict_local` allows, by name
        # `self` attributes the frame wrote while tracing (directly, or by calling a method of
        # its own that sets them): what they held when the frame was entered no longer holds
        self.written: dict[str, Const | None] = {}
        self.params = {p.name: p for p in function.params} if not inherited else {}
        self.inherited = inherited  # a comprehension's or lambda's frame: its free names are the key's
        self.arguments = dict(key.arguments)
        self.evaluator = ValueEvaluator(self.name_value, self.attribute_value, scope.is_tensor, qualify,
                                        self.has_attribute, self.call_value,
                                        SymbolicNames(project, frozenset(knowledge.dtype_names)))

    def release(self) -> None:
        """Break the cycle with the evaluator, which calls back into this object (see
        `FrameBuilder._release`)."""
        self.__dict__.clear()

    def truth(self, expr: cst.BaseExpression) -> bool | None:
        return self.evaluator.truth(expr)

    def value(self, expr: cst.BaseExpression) -> Const | None:
        return self.evaluator.value(expr)

    # -- names ------------------------------------------------------------------------
    def name_value(self, name: str) -> Const | None:
        if name in self.locals:
            found = self.locals[name]
            return found if isinstance(found, Const) else None
        if name in self.params:
            return self._param(name)
        cell = self.arguments.get(name)
        if isinstance(cell, Const):  # a free variable holding a constant (a decorator's argument)
            return cell
        if name in ("True", "False", "None"):
            return literal(cst.Name(name))
        return self._global(self.module, name)

    def _param(self, name: str) -> Const | None:
        if name in self.arguments:
            passed = self.arguments[name]
            return passed if isinstance(passed, Const) else None
        if name in self.key.tensor_params or name in dict(self.key.bindings):
            return None
        param = self.params[name]
        if param.kind in ("star", "double_star") or self.key.unbound_passed:
            return None
        return default_value(param.default, self.evaluator)

    def _global(self, module: ModuleIndex, name: str) -> Const | None:
        return global_value(self.project, self.k.dtype_names, module, name)

    def assign(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        if isinstance(target, cst.Subscript):
            self.store_item(target, value)
            return
        if isinstance(target, cst.Name) and value is not None:
            found: object = self.value(value) or self._own_dict(target.value, value)
            if isinstance(found, Const) and list_may_change(self.function.node, target.value, found.value):
                found = None  # `parts = name.split(","); parts.append("c")`: its items no longer tell
            if found is None:
                shape = self.shape_of(value)
                found = TensorShape(shape) if shape is not None else _UNKNOWN_LOCAL
            self.locals[target.value] = found
            return
        for item in find_all(target, (cst.Subscript,)) if isinstance(target, (cst.Tuple, cst.List)) else ():
            self.store_item(item, None)  # `d["a"], x = pair`
        if isinstance(target, (cst.Tuple, cst.List)) and value is not None and self._unpack(target, value):
            return
        for name in target_names(target):
            self.locals[name] = _UNKNOWN_LOCAL

    def _own_dict(self, name: str, value: cst.BaseExpression) -> Const | None:
        """A dict display the frame binds `name` to (directly or as the taken side of a
        conditional expression), when the frame's statements show every change to its keys."""
        while isinstance(value, cst.IfExp):
            taken = self.truth(value.test)
            if taken is None:
                return None
            value = value.body if taken else value.orelse
        if not isinstance(value, cst.Dict):
            return None
        if name not in self._plain_dicts:  # walks the whole function: once per name
            self._plain_dicts[name] = plain_dict_local(self.function.node, name)
        if not self._plain_dicts[name]:
            return None
        held = display_keywords(value, self.value, self.scope.is_tensor)
        return Const(held) if held is not None else None

    def store_item(self, target: cst.Subscript, value: cst.BaseExpression | None) -> None:
        """`d["k"] = v` on a dict whose keys are known (built here, or a `**kwargs`): it holds
        "k" now. A key not known, or a dict not known: its keys are unknown."""
        if not isinstance(target.value, cst.Name):
            return
        name = target.value.value
        held = self.name_value(name)
        if held is None or not isinstance(held.value, Keywords):
            return
        index = target.slice[0].slice if len(target.slice) == 1 else None
        key = self.value(index.value) if isinstance(index, cst.Index) else None
        if key is None or not isinstance(key.value, str):
            self.locals[name] = _UNKNOWN_LOCAL
            return
        stored = self.value(value) if value is not None else None
        tensor = value is not None and self.scope.is_tensor(value)
        self.locals[name] = Const(with_item(held.value, key.value, stored, tensor))

    def unrolled(self, loop: cst.For) -> dict | None:
        """The locals after a loop over a known, short sequence of constants, which Dynamo
        unrolls (`for arg_name in ("use_cache", ...)`): the body's assignments run once per
        item with the loop variable bound to it. None when the items are not known or the body
        does something this does not follow (break, continue, return); the caller then
        forgets what the body rebinds."""
        items = self._constant_items(loop.iter)
        if items is None or loop.orelse is not None or not isinstance(loop.target, cst.Name):
            return None
        saved, written = self.snapshot(), dict(self.written)
        try:
            for item in items:
                self.locals[loop.target.value] = Const(item)
                if self._run_block(loop.body) is not _RAN:
                    return None
            return self.snapshot()
        finally:
            self.restore(saved)
            self.written = written

    def bind_only_item(self, loop: cst.For) -> None:
        """A loop over a known sequence of one constant runs its body once, with the loop
        variables bound to that item (`for attribute, version, message in ((a, v, m),)`)."""
        items = self._constant_items(loop.iter)
        if items is None or len(items) != 1 or isinstance(loop.iter, cst.Name) and \
                _handed_on(self.function.node, loop.iter.value):
            return  # (a list handed to a call may grow: the loop may run again)
        target, item = loop.target, items[0]
        if isinstance(target, cst.Name):
            self.locals[target.value] = Const(item)
        elif isinstance(target, (cst.Tuple, cst.List)) and isinstance(item, tuple) and len(item) == len(target.elements) \
                and all(isinstance(el, cst.Element) and isinstance(el.value, cst.Name) for el in target.elements):
            for el, part in zip(target.elements, item):
                self.locals[el.value.value] = Const(part)  # type: ignore[attr-defined]  # (Names)

    def _constant_items(self, expr: cst.BaseExpression) -> tuple | None:
        known = self.value(expr)
        items = known.value if known is not None and isinstance(known.value, tuple) else \
            constant_display(self.function.node, expr)
        return items if items is not None and len(items) <= MAX_UNROLLED else None

    def _run_block(self, block) -> object:
        """Run a block's assignments: _RAN, _ENDED (it raises on every way through) or None."""
        for stmt in block.body if isinstance(block, cst.IndentedBlock) else ():
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    outcome = self._run_small(small)
                    if outcome is not _RAN:
                        return outcome
            elif isinstance(stmt, cst.If):
                outcome = self._run_if(stmt)
                if outcome is not _RAN:
                    return outcome
            else:  # a nested loop, try, with: what it rebinds is unknown after it
                self.forget(stmt)
        return _RAN

    def _run_small(self, small) -> object:
        if isinstance(small, cst.Raise):
            return _ENDED
        if isinstance(small, (cst.Return, cst.Break, cst.Continue, cst.Global, cst.Nonlocal, cst.Del)):
            return None
        if isinstance(small, cst.Assign):
            for target in small.targets:
                self.assign(target.target, small.value)
        elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
            self.assign(small.target, small.value if isinstance(small, cst.AnnAssign) else None)
        return _RAN

    def _run_if(self, node: cst.If) -> object:
        truth = self.truth(node.test)
        orelse = node.orelse
        other = orelse if isinstance(orelse, cst.If) else (orelse.body if isinstance(orelse, cst.Else) else None)
        if truth is not None:
            chosen = node.body if truth else other
            return self._run_branch(chosen)
        before = self.snapshot()
        first = self._run_block(node.body)
        after_body = self.snapshot()
        self.restore(before)
        second = self._run_branch(other)
        if first is None or second is None:
            return None
        if first is _ENDED and second is _ENDED:
            return _ENDED
        if first is _ENDED:
            return _RAN  # only the other way goes on
        if second is _ENDED:
            self.restore(after_body)
            return _RAN
        self.merge([after_body, self.snapshot()])
        return _RAN

    def _run_branch(self, branch) -> object:
        if branch is None:
            return _RAN
        if isinstance(branch, cst.If):
            return self._run_if(branch)
        return self._run_block(branch)

    def _unpack(self, target: cst.Tuple | cst.List, value: cst.BaseExpression) -> bool:
        """`batch_size, seq_length = input_ids.size()`: names bound to a known tuple's items."""
        held = self.value(value)
        items = held.value if held is not None and isinstance(held.value, tuple) else None
        names = [el.value.value for el in target.elements
                 if isinstance(el, cst.Element) and isinstance(el.value, cst.Name)]
        if items is None or len(items) != len(target.elements) or len(names) != len(items):
            return False
        for name, item in zip(names, items):
            self.locals[name] = Const(item)
        return True

    def forget(self, node: cst.CSTNode) -> None:
        """Names a block rebinds are unknown around it (a loop body, a try); the dicts whose
        items it stores may hold the keys it stores."""
        rebound = assigned_names(node)
        dicts = self._loosened_dicts(node, rebound)
        for name in rebound | set(dicts):
            self.locals[name] = dicts.get(name, _UNKNOWN_LOCAL)

    def forget_loop(self, body: cst.CSTNode, target: cst.BaseExpression | None = None) -> None:
        """Before a loop body: the names it rebinds are unknown, except those that every pass
        gives back the value they came in with (`x = x + 1`, `x = torch.relu(x)` on a tensor of
        known shape: Dynamo traces each iteration with that shape)."""
        loop_vars = set(target_names(target)) if target is not None else set()
        self._keep_invariant(body, assigned_names(body) | loop_vars, loop_vars)

    def forget_try(self, body: cst.CSTNode) -> None:
        """In a try's handler, which may run after any statement of the body: the names the
        body rebinds are unknown, except one bound once to the value it already held."""
        counts = binding_counts(body)
        self._keep_invariant(body, set(counts), {n for n, c in counts.items() if c > 1})

    def _loosened_dicts(self, body: cst.CSTNode, rebound: set[str]) -> dict[str, object]:
        """The dicts of known keys whose items a block stores (and does not rebind), as
        the block may leave them: each key it stores may be held (see `loosened`); a dict
        given a key not known there is unknown. The keys are read with `rebound` unknown."""
        saved = self.snapshot()
        self.locals.update(dict.fromkeys(rebound, _UNKNOWN_LOCAL))
        found: dict[str, object] = {}
        for name in item_stored_names(body) - rebound:
            held = saved.get(name) if name in saved else self.name_value(name)
            if not (isinstance(held, Const) and isinstance(held.value, Keywords)):
                continue  # not a dict of known keys (a tensor's items: its value stays)
            keys = stored_keys(body, name, self.value)
            found[name] = Const(loosened(held.value, keys)) if keys is not None else _UNKNOWN_LOCAL
        self.restore(saved)
        return found

    def _keep_invariant(self, body: cst.CSTNode, names: set[str], varying: set[str]) -> None:
        """Bind `names` as a block leaves them when its assignments are run until the names
        kept stop changing (they only ever drop out): a name keeps its value where running the
        block gives it back; `varying` names and the others are unknown. The dicts whose
        items it stores are loosened (`_loosened_dicts`) for the whole run."""
        entry = self.snapshot()
        dicts = self._loosened_dicts(body, names)
        entry.update(dicts)
        names = names - set(dicts)
        for name in names - set(entry):
            entry[name] = self._entry_value(name)
        kept = {n for n in names - varying if entry[n] is not _UNKNOWN_LOCAL}

        def keeping() -> dict:  # the entry locals with the names not kept unknown
            return {n: v if n not in names or n in kept else _UNKNOWN_LOCAL for n, v in entry.items()}

        written = dict(self.written)
        while kept:
            self.restore(keeping())
            ran = self._run_block(body) is _RAN
            after = self.snapshot()
            still = {n for n in kept if ran and after.get(n) == entry[n]}
            if still == kept:
                break
            kept = still
        self.written = written
        self.restore(keeping())

    def _entry_value(self, name: str) -> object:
        """A parameter's value or static shape as a local (a name first bound in the body: unknown)."""
        if name not in self.params:
            return _UNKNOWN_LOCAL
        value = self._param(name)
        if value is not None:
            return value
        shape = self.shape_of(cst.Name(name))
        return TensorShape(shape) if shape is not None else _UNKNOWN_LOCAL

    def snapshot(self) -> dict:
        return dict(self.locals)

    def restore(self, saved: dict) -> None:
        self.locals = dict(saved)

    def merge(self, branches: list[dict]) -> None:
        """After an unknown branch: a local keeps a value only where every way agrees."""
        names = set().union(*branches)
        merged = {}
        for name in names:
            values = [b[name] if name in b else self._entry_value(name) for b in branches]
            merged[name] = values[0] if all(v == values[0] for v in values) else _joined_dicts(values)
        self.locals = merged

    # -- shapes ---------------------------------------------------------------------------
    def shape_of(self, expr: cst.BaseExpression, depth: int = 0) -> tuple[int, ...] | None:
        """A tensor's static shape, where the frame knows it: a parameter the caller passed a
        tensor of known size, a factory call (`torch.randn(4, 4)`), and what elementwise
        operations with Python numbers and shape-preserving functions make of those."""
        if depth > 8:
            return None
        if isinstance(expr, cst.Name):
            held = self.locals.get(expr.value)
            if held is not None:
                return held.dims if isinstance(held, TensorShape) else None
            # a parameter, or a cell of the enclosing frame (never a local: it would be in `locals`)
            return dict(self.key.shapes).get(expr.value)
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            return dict(self.key.shapes).get(f"self.{expr.attr.value}")  # set from a sized tensor
        if isinstance(expr, cst.BinaryOperation):
            if isinstance(expr.operator, cst.MatrixMultiply):
                return None
            return self.broadcast_shape(expr.left, expr.right, depth + 1)
        if isinstance(expr, cst.Call):
            return self._call_shape(expr, depth)
        if isinstance(expr, cst.Subscript):
            base = self.shape_of(expr.value, depth + 1)
            return indexed_shape(base, expr.slice, self.value) if base is not None else None
        return None

    def broadcast_shape(self, left_expr: cst.BaseExpression, right_expr: cst.BaseExpression,
                        depth: int = 0) -> tuple[int, ...] | None:
        """The shape of an elementwise operation's result (`a + b`, `torch.add(a, b)`): the
        operands' shapes broadcast, a Python number taking the other's."""
        left, right = self.shape_of(left_expr, depth), self.shape_of(right_expr, depth)
        if left is None and right is None:
            return None
        if left is not None and right is not None:
            return broadcast(left, right)
        known = self.value(right_expr if left is not None else left_expr)
        return (left or right) if known is not None and type(known.value) in (int, float, bool) else None

    def _call_shape(self, call: cst.Call, depth: int) -> tuple[int, ...] | None:
        func = call.func
        qual = self.qualify(func)
        if isinstance(func, cst.Attribute) and func.attr.value in self.k.shape_preserving \
                and not isinstance(func.value, cst.Call) and qual is None:
            return self.shape_of(func.value, depth + 1)  # x.relu(), x.half() (a chain on a call: below)
        made = factory_shape(call, self.qualify, self.k.sized_tensor_factories,
                             self.k.shape_preserving | self.k.self_returning_tensor_methods,
                             self.k.data_tensor_factories)
        if made is not None:
            return made
        if qual is not None:  # torch.sin(x), F.relu(x)
            module, _, name = qual.rpartition(".")
            if module in ("torch", "torch.nn.functional") and name in self.k.shape_preserving and call.args:
                return self.shape_of(call.args[0].value, depth + 1)
            return None
        if isinstance(func, cst.Attribute) and func.attr.value in self.k.shape_preserving:
            return self.shape_of(func.value, depth + 1)  # x.relu(), x.half()
        if call.args and self._held_module_class(func) in self.k.shape_preserving_modules:
            return self.shape_of(call.args[0].value, depth + 1)  # `self.drop(x)` of an nn.Dropout
        return None

    def _held_module_class(self, func: cst.BaseExpression) -> str | None:
        """The torch class of the module `self.<attr>` holds (its class's `__init__` builds it)."""
        if self.cls is None or not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                                    and func.value.value == "self"):
            return None
        found = self.project.class_attribute(self.cls, func.attr.value)
        if found is None or not isinstance(found[1], cst.Call):
            return None
        return self.project.qualify(found[1].func, self.project.modules[found[0].module])

    def _dtype_fact(self, call: cst.Call) -> Const | None:
        """`x.is_floating_point()`, `x.is_complex()` (or `torch.is_floating_point(x)`) of a
        tensor known to hold integers or bools: False, a constant of the trace. (Other
        tensors' dtypes are only the default float guessed, not known: unknown here.)"""
        func, args = call.func, [a.value for a in call.args if a.keyword is None and not a.star]
        if not isinstance(func, cst.Attribute) or func.attr.value not in _DTYPE_PREDICATES:
            return None
        if not args and not call.args:
            tensor = func.value
        elif len(args) == 1 == len(call.args) and self.qualify(func) == f"torch.{func.attr.value}":
            tensor = args[0]
        else:
            return None
        known = self.scope.is_integer_tensor(tensor) or self.scope.is_bool_tensor(tensor)
        return Const(False) if known else None

    def _shape_fact(self, call: cst.Call) -> Const | None:
        """`x.size()`, `x.size(0)`, `x.dim()`, `x.numel()`, `len(x)` of a tensor of known shape."""
        func, args = call.func, [a.value for a in call.args if a.keyword is None]
        if isinstance(func, cst.Name) and func.value == "len" and len(args) == 1:
            shape = self.shape_of(args[0])
            return Const(shape[0]) if shape else None
        if not isinstance(func, cst.Attribute) or func.attr.value not in ("size", "dim", "numel", "ndimension"):
            return None
        shape = self.shape_of(func.value)
        if shape is None:
            return None
        method = func.attr.value
        if method == "size":
            if not args:
                return Const(shape)
            index = self.value(args[0])
            try:
                return Const(shape[index.value]) if index is not None and type(index.value) is int else None
            except IndexError:
                return None
        if method == "numel":
            total = 1
            for d in shape:
                total *= d
            return Const(total)
        return Const(len(shape))

    # -- attributes ---------------------------------------------------------------------
    def attribute_value(self, expr: cst.Attribute) -> Const | None:
        name = expr.attr.value
        owner = expr.value
        if name == "dtype" and (self.scope.is_tensor(owner) or self._unknown_local(owner)):
            return self._dtype(owner)
        if name in ("shape", "ndim"):
            shape = self.shape_of(owner)
            if shape is not None:
                return Const(shape) if name == "shape" else Const(len(shape))
        if name == "co_varnames":
            code = self._code_of(owner)
            if code is not None:
                return code
        if isinstance(owner, cst.Name) and owner.value == "self" and self.cls is not None:
            if name == "training":
                return Const(self.key.training) if self.key.training is not None else None
            return self._self_attribute(self.cls, name)
        held = self.value(owner) if isinstance(owner, (cst.Attribute, cst.Name)) else None
        if held is not None and isinstance(held.value, Obj):  # `self.config.output_attentions`
            return held.value.get(name)
        qual = self.qualify(expr)  # `config.DEBUG` through a module import
        if qual in RUNTIME_FALSE:  # `typing.TYPE_CHECKING`
            return Const(False)
        if qual is not None:
            module_name, _, attr = qual.rpartition(".")
            module = self.project.modules.get(module_name)
            if module is not None:
                return self._global(module, attr)
        return None

    def _code_of(self, expr: cst.BaseExpression) -> Const | None:
        """`func.__code__.co_varnames` of a function a closure cell holds (a decorator's
        wrapper asking which parameters the decorated function has): its parameters in
        CPython's order (positional, keyword-only, `*args`, `**kwargs`), then its locals."""
        if not (isinstance(expr, cst.Attribute) and expr.attr.value == "__code__" and isinstance(expr.value, cst.Name)):
            return None
        held = dict(self.key.bindings).get(expr.value.value)
        fn = self.project.function(held.qualname) if held is not None else None
        if fn is None:
            return None
        return self.project.derived(f"co_varnames:{fn.qualname}", lambda: Const(_varnames(fn)))

    def _unknown_local(self, expr: cst.BaseExpression) -> bool:
        """A local or parameter holding something the source does not tell (`hidden_states =
        outputs[0]` of a sub-module): `.dtype` is read off tensors, so Dynamo sees the dtype
        the program computes in."""
        return isinstance(expr, cst.Name) and expr.value != "self" and self.value(expr) is None \
            and (expr.value in self.locals or expr.value in self.params)

    def _dtype(self, tensor: cst.BaseExpression) -> Const | None:
        if self.default_dtype is None or self.scope.is_integer_tensor(tensor) or \
                self.scope.is_bool_tensor(tensor):
            return None
        return Const(self.default_dtype)

    def write_self(self, name: str, value: cst.BaseExpression | None) -> None:
        """`self.name = value` ran (value None: something set it to a value we cannot tell)."""
        self.written[name] = self.value(value) if value is not None else None

    def _self_attribute(self, cls: ClassInfo, name: str) -> Const | None:
        if name in self.written:
            return self.written[name]
        built = dict(self.key.attributes)
        if name in built:
            return built[name]  # type: ignore[return-value]  # FrameKey.attributes holds Consts
        found = self.project.class_attribute(cls, name)
        if found is None:
            return None
        holder, value = found
        if name in holder.reassigned:
            return None
        return literal(value)

    def has_attribute(self, obj: cst.BaseExpression, name: str) -> bool | None:
        if isinstance(obj, cst.Name) and obj.value == "self" and self.cls is not None:
            if name not in self.written and name not in dict(self.key.attributes) \
                    and only_setter_assigns(self.project, self.cls, name):
                return False
            if self.project.class_attribute(self.cls, name) is not None or \
                    self.project.method(self.cls, name) is not None or name in self.k.module_attributes:
                return True
            if self._never_set(self.cls, name):
                return False
        if self.scope.is_tensor(obj) and name in self.k.non_tensor_attributes:
            return True
        held = self.value(obj) if isinstance(obj, (cst.Attribute, cst.Name)) else None
        if held is not None and isinstance(held.value, Obj):  # `getattr(self.config, "return_dict", True)`
            cls = self.project.klass(held.value.cls)
            if held.value.get(name) is not None or (cls is not None and (
                    self.project.class_attribute(cls, name) is not None or self.project.method(cls, name) is not None)):
                return True
        return None

    def _never_set(self, cls: ClassInfo, name: str) -> bool:
        """No class of `self`'s MRO sets the attribute, nor does any line of their modules
        (`obj.name = ...`, `setattr`), and its external bases are nn.Module alone."""
        external = self.project.external_bases(cls)
        if not external <= self.k.nn_module_bases:
            return False
        set_elsewhere = re.compile(rf"(?<!\bself)\.{re.escape(name)}\s*=(?!=)|setattr\(")
        for holder in self.project.mro(cls):
            if name in holder.attributes or set_elsewhere.search(self.project.modules[holder.module].parsed.text):
                return False
        return True

    def call_value(self, call: cst.Call) -> Const | None:
        fact = self._shape_fact(call) or self._dtype_fact(call)
        if fact is not None:
            return fact
        qual = self.qualify(call.func)
        if qual in self.k.constant_calls:
            return Const(self.k.constant_calls[qual])
        if qual in self.k.grad_mode_queries and not call.args:
            enabled = self.grad_enabled()
            return Const(enabled) if enabled is not None else None
        known = self.compile_time.value(call, self.qualify)
        if known is not None:
            return Const(known)
        callee = self._callee(call)
        fixed, value = self.compile_time.constant_return(callee) if callee is not None else (False, None)
        return Const(value) if fixed else None

    def _callee(self, call: cst.Call) -> FunctionInfo | None:
        """The project function a call runs, or the method of an instance a global holds
        (`_active_collector.set(v)`): for what it returns while compiling."""
        func = call.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value not in self.locals:
            held = self.name_value(func.value.value)
            cls = self.project.klass(held.value.cls) if held is not None and isinstance(held.value, Obj) else None
            return self.project.method(cls, func.attr.value) if cls is not None else None
        return self.project.function(self.qualify(func) or "")


# tensor methods asking for a kind of dtype: false of integer and bool tensors
_DTYPE_PREDICATES = frozenset({"is_floating_point", "is_complex"})


def _joined_dicts(values: list) -> object:
    """Dicts of known keys that ways leave different: joined (see `joined`); other values
    that differ: unknown."""
    if all(isinstance(v, Const) and isinstance(v.value, Keywords) for v in values):
        return Const(joined([v.value for v in values]))
    return _UNKNOWN_LOCAL


def _varnames(fn: FunctionInfo) -> tuple[str, ...]:
    order = {"positional": 0, "keyword_only": 1, "star": 2, "double_star": 3}
    params = [p.name for p in sorted(fn.params, key=lambda p: order.get(p.kind, 4))]
    # (locals follow in first-store order; here sorted: only the parameters' indices are exact)
    return tuple(params + sorted(assigned_names(fn.node.body) - set(params)))


def single_store(function: cst.CSTNode, name: str) -> cst.BaseExpression | None:
    """The one expression a local name is assigned in `function`, or None."""
    stores = _name_stores(function, name)
    return stores[0] if len(stores) == 1 else None


def constant_display(function: cst.CSTNode, expr: cst.BaseExpression) -> tuple | None:
    """The constants a list/tuple/set display of literals spells, or a local name bound to one
    once in `function` and never changed in place (`names = ["a", "b"]`; `for n in names`),
    nor, a list or set, handed to a call that may change it (`z = []; helper(x, z)`)."""
    if isinstance(expr, cst.Name):
        stores = _name_stores(function, expr.value)
        if len(stores) != 1 or stores[0] is None or _mutated(function, expr.value) \
                or not isinstance(stores[0], cst.Tuple) and _handed_on(function, expr.value):
            return None
        expr = stores[0]
    if not isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
        return None
    items = []
    for el in expr.elements:
        found = literal(el.value) if isinstance(el, cst.Element) else None
        if found is None:
            return None
        items.append(found.value)
    return tuple(items)


def display_size(function: cst.CSTNode, expr: cst.BaseExpression) -> int | None:
    """How many items a list/tuple display has, or a local name bound to one once in `function`
    and never changed in place nor handed to a call (`a = [x]`; `a[i]`)."""
    if isinstance(expr, cst.Name):
        stores = _name_stores(function, expr.value)
        if len(stores) != 1 or stores[0] is None or _mutated(function, expr.value) \
                or _passed_to_call(function, expr.value):
            return None
        expr = stores[0]
    return display_length(expr)


def is_sequence_display(function: cst.CSTNode, expr: cst.BaseExpression) -> bool:
    """A list/tuple display, or a local name every assignment in `function` binds to one
    (changed in place or not: it stays a list)."""
    if isinstance(expr, cst.Name):
        stores = _name_stores(function, expr.value)
        return bool(stores) and all(isinstance(s, (cst.List, cst.Tuple)) for s in stores)
    return isinstance(expr, (cst.List, cst.Tuple))


def list_may_change(function: cst.CSTNode, name: str, value: object) -> bool:
    """A list (what `str.split` or `re.findall` return) bound to `name` that the function
    changes in place or hands to a call (which may): its known items do not hold."""
    return isinstance(value, ListValue) and (_mutated(function, name) or _handed_on(function, name))


def _handed_on(function: cst.CSTNode, name: str) -> bool:
    """Is `name` an argument of a call that may change it (not `len(x)`, `isinstance(x, ...)`...)?"""
    return any(not _reads_only(call) for call in _calls_given(function, name))


# builtins that read their argument without changing it (a list handed to them stays as it is)
_READING_BUILTINS = frozenset({"len", "isinstance", "bool", "str", "repr", "tuple", "list", "sorted", "set",
                               "frozenset", "any", "all", "min", "max", "sum", "enumerate", "zip", "reversed",
                               "print", "hash", "id", "type"})


def _reads_only(call: cst.Call) -> bool:
    func = call.func
    return isinstance(func, cst.Name) and func.value in _READING_BUILTINS \
        or isinstance(func, cst.Attribute) and func.attr.value in ("join", "format", "startswith", "endswith")


def _passed_to_call(function: cst.CSTNode, name: str) -> bool:
    return any(_calls_given(function, name))


def _calls_given(function: cst.CSTNode, name: str):
    """The calls in `function` an argument of which mentions `name`."""
    return (call for call in find_all(function, (cst.Call,))
            if any(isinstance(n, cst.Name) and n.value == name for arg in call.args for n in find_all(arg.value, (cst.Name,))))


def _name_stores(node: cst.CSTNode, name: str) -> list[cst.BaseExpression | None]:
    """The values assigned to the plain name `name` under `node` (None: not one expression)."""
    found: list[cst.BaseExpression | None] = []
    if isinstance(node, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == name
                                            for t in node.targets):
        found.append(node.value)
    elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For)) and isinstance(node.target, cst.Name) \
            and node.target.value == name:
        found.append(None)
    for child in children(node):
        found += _name_stores(child, name)
    return found


# the methods that change a list, set or dict in place (Python's, not Dynamo's)
_IN_PLACE_METHODS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse",
                               "update", "setdefault", "add", "discard", "popitem"})


def _mutated(node: cst.CSTNode, name: str) -> bool:
    """`name.append(...)`, `name[i] = ...`, `del name[i]`: the display it was bound to no
    longer tells (`name.index(v)`, `name[i]` read, leave it as it was)."""
    def is_name(expr) -> bool:
        return isinstance(expr, cst.Name) and expr.value == name
    for n in find_all(node, (cst.Attribute, cst.AssignTarget, cst.AugAssign, cst.Del)):
        if isinstance(n, cst.Attribute):
            if is_name(n.value) and n.attr.value in _IN_PLACE_METHODS:
                return True
            continue
        target = n.target
        if isinstance(target, cst.Name) and isinstance(n, cst.AugAssign) and is_name(target):
            return True  # `xs += [...]` extends the list in place
        if any(isinstance(t, cst.Subscript) and is_name(t.value)
               for t in find_all(target, (cst.Subscript,))):
            return True
    return False


def assigned_names(node: cst.CSTNode) -> set[str]:
    """Names a statement or block binds (assignments, loop targets, `with ... as`), not in
    nested definitions."""
    return set(binding_counts(node))


_INNER_SCOPES = (cst.FunctionDef, cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


def names_inner_scopes_read(node: cst.CSTNode) -> frozenset[str]:
    """Names the functions, lambdas and comprehensions nested in `node` read but do not bind
    themselves: the enclosing function's variables among them are cells (DELETE_DEREF)."""
    return frozenset(name for scope in find_all(node, _INNER_SCOPES) for name in free_names(scope))


def free_names(scope: cst.CSTNode) -> frozenset[str]:
    """Names a function, lambda or comprehension (or the scopes nested in it) reads and does
    not bind itself: its globals, builtins and closure cells."""
    if isinstance(scope, (cst.FunctionDef, cst.Lambda)):
        own = {p.name.value for p in all_params(scope.params)}
        if isinstance(scope, cst.FunctionDef):
            own |= assigned_names(scope.body)
        body: cst.CSTNode = scope.body
    else:
        own = {name for f in find_all(scope, (cst.CompFor,)) for name in target_names(f.target)}
        body = scope
    return loaded_names(body, nested=True) - own


def loaded_names(node: cst.CSTNode, nested: bool = False) -> frozenset[str]:
    """Names `node` reads or binds as variables: not an attribute's name (`obj.y`), not a
    keyword argument's (`f(y=1)`); inside nested functions and lambdas too when `nested`."""
    found: set[str] = set()
    _collect_names(node, found, nested)
    return frozenset(found)


def _collect_names(node: cst.CSTNode, found: set[str], nested: bool) -> None:
    if isinstance(node, cst.Name):
        found.add(node.value)
        return
    if isinstance(node, cst.Attribute):
        _collect_names(node.value, found, nested)
        return
    if isinstance(node, cst.Arg):
        _collect_names(node.value, found, nested)
        return
    if not nested and isinstance(node, NESTED_SCOPES):
        return
    for child in children(node):
        _collect_names(child, found, nested)


def indexed_shape(shape: tuple[int, ...], items, value_of) -> tuple[int, ...] | None:
    """The size basic indexing leaves (`x[:, 0]`, `x[1:3]`, `x[None]`, `x[..., -1]`), or None for
    an index it cannot tell (a tensor, a name of unknown value, advanced indexing)."""
    parts: list = []
    for item in items:
        if isinstance(item.slice, cst.Slice):
            bounds = known_slice(item.slice, value_of)
            if bounds is None:
                return None
            parts.append(bounds)
            continue
        index = item.slice.value
        if isinstance(index, cst.Ellipsis) or isinstance(index, cst.Name) and index.value == "None":
            parts.append(... if isinstance(index, cst.Ellipsis) else None)
            continue
        known = value_of(index)
        if known is None or type(known.value) is not int:
            return None
        parts.append(known.value)
    return _apply_index(shape, parts)


def _apply_index(shape: tuple[int, ...], parts: list) -> tuple[int, ...] | None:
    if parts.count(...) > 1:
        return None
    taking = sum(1 for p in parts if p is not None and p is not ...)
    if taking > len(shape):
        return None
    if ... in parts:
        at = parts.index(...)
        parts = parts[:at] + [slice(None)] * (len(shape) - taking) + parts[at + 1:]
    out: list[int] = []
    dims = iter(shape)
    for part in parts:
        if part is None:
            out.append(1)
            continue
        size = next(dims)
        if isinstance(part, slice):
            out.append(len(range(size)[part]))
        elif not -size <= part < size:
            return None  # IndexError: not this model's business
    return (*out, *dims)
