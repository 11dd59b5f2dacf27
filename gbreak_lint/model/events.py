"""A frame's events in execution order: tensor ops, break sites and calls, each with its blocks."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import TypeGuard

import libcst as cst

from ..index.names import binding_counts, dotted, is_none_literal
from ..index.symbols import FunctionInfo, ModuleBody, ModuleIndex
from ..vocab import BreakKind, CauseCheck, EventKind, BlockKind, CallMode
from .builtin_kinds import BuiltinKinds
from .class_body import class_body_names
from .class_members import missing_member
from .callables import nonrecursive
from .causes import CauseMatcher
from .hop_inputs import HopInputs
from .indexing import IndexReads, slice_bounds
from .mapping_proxies import MappingProxies
from .outputs import FrameOutputs
from .check_messages import message_argument, unconvertible_message
from .resolve import CallResolver
from .tensors import TensorScope, comprehension_element, target_names
from .frame_values import (FrameValues, assigned_names, constant_display, display_size, loaded_names, names_inner_scopes_read)
from .liveness import descendants, live_after, pending_operands, statement_reads
from .instance_values import is_reporting_call
from .types import Ctx, Event, FrameInfo, FrameKey, LambdaBody
from .undefined import BUILTIN_NAMES, bound_at_top, undefined_names
from .side_effects import declared_outer, escaping_generator_calls, outer_write
from .deleted_members import assignment_targets, class_body_binds, deleted as deleted_members, first_read, touched_bases
from .empty_modules import empty_module
from .grad_leaks import GradLeaks, PendingBreak, made_with_grad
from .tensor_contents import TensorContents, changed_names
from .values import (broadcast, PASSED_BOOL_TENSOR, PASSED_DATA_SCALAR, PASSED_INTEGER_TENSOR, PASSED_NUMPY_SCALAR,
                     PASSED_STOP_VALUE, PASSED_TENSOR_SET, Const, Keywords, Obj, Seq, literal)
from ..walk import NESTED_SCOPES, children, find_all, own_names

COMPREHENSION_NAMES: dict[type, str] = {cst.ListComp: "<listcomp>", cst.SetComp: "<setcomp>",
                       cst.DictComp: "<dictcomp>", cst.GeneratorExp: "<genexpr>"}

# frame builds under way past which a comprehension's element callee is not built ahead
MAX_ELEMENT_BUILD_DEPTH = 8
MAX_RAISE_DEPTH = 4  # calls followed down to a `raise` that leaves them (an except* body)



@dataclass(frozen=True)
class Comprehension:
    """A comprehension frame (Python 3.11 compiles each into a function of its own)."""

    node: cst.BaseExpression
    parent: FunctionInfo
    line: int
    # Compiled alone, its iterator argument is a real one Dynamo may not wrap (see FrameInfo)
    unwrappable_iterator: bool = False


class FrameBuilder:
    """Walks one function body in execution order and records events."""

    def __init__(self, env, key: FrameKey, source, module: ModuleIndex, inherited: frozenset = frozenset()):
        self.env = env
        self.key = key
        self.source = source
        self.module = module
        self.parsed = module.parsed
        function = source if isinstance(source, FunctionInfo) else source.parent
        self.function = function
        # positions are computed per definition; a module's top-level code is no definition
        self.anchor = None if isinstance(function, ModuleBody) else (function.node, function.def_line)
        self.resolver = CallResolver(env.project, env.knowledge, module, function, dict(key.bindings),
                                     key.self_class)
        self.scope = TensorScope(env.knowledge, self.resolver.qualify,
                                 set(key.tensor_params) | set(inherited),
                                 returns=self._returns, is_module_call=self._is_module_call,
                                 returns_object=self._returns_object, self_tensors=key.tensor_attributes,
                                 free_tensor=self._free_tensor, returns_data_scalar=self._returns_data_scalar)
        self.scope.data_scalars.update(n for n, v in key.arguments if v == PASSED_DATA_SCALAR)
        self.scope.numpy_scalars.update(n for n, v in key.arguments if v == PASSED_NUMPY_SCALAR)
        self.scope.integer_tensors.update(n for n, v in key.arguments if v == PASSED_INTEGER_TENSOR)
        self.scope.bool_tensors.update(n for n, v in key.arguments if v == PASSED_BOOL_TENSOR)
        stars = {p.name for p in function.params if p.kind == "double_star"} if isinstance(source, FunctionInfo) else set()
        self.scope.containers.update(n for n, v in key.arguments  # `f({"x": x})`: a dict holding tensors
                                    if isinstance(v, Const) and isinstance(v.value, Keywords) and v.value.tensors
                                    and n not in stars)  # (`**kwargs`: read by key, as before)
        self.scope.tensor_sequences.update(n for n, v in key.arguments  # `f(x, [a, b])`
                                           if n in key.tensor_params and isinstance(v, Const) and isinstance(v.value, Seq))
        if isinstance(source, FunctionInfo):  # `mask: torch.BoolTensor | None`
            marks = env.knowledge.bool_tensor_annotations
            self.scope.bool_tensors.update(p.name for p in source.params if p.name in key.tensor_params
                                           and p.annotation and any(m in p.annotation for m in marks))
        self.causes = CauseMatcher(env, self)
        self.values = FrameValues(env.project, env.knowledge, module, function, key, self.resolver.cls,
                                  self.scope, self.resolver.qualify, env.compile_time,
                                  inherited=isinstance(source, (Comprehension, LambdaBody)),
                                  default_dtype=env.default_dtype)
        self.scope.keywords_of = self._keywords_of
        self.scope.sequence_of = self._sequence_of
        self.resolver.held_class = self._held_class
        self.resolver.value_of = self.values.value
        # known off only: a callee may be run under a caller's `torch.no_grad()(fn)` wrapper
        self.values.grad_enabled = lambda: False if self.causes.grad_off() else None
        self.resolver.arguments = dict(key.arguments)
        if isinstance(source, LambdaBody):
            self.resolver.lambda_params = source.parameters
        self.events: list[Event] = []
        self.ctx: list[Ctx] = []
        self.returns_tensor = False
        self.yields_tensor = False
        self.returns_elements: tuple[bool, ...] = ()
        self.returns_object: bool | None = None  # every return is an instance of a project class
        self.returned = False  # a `return` statement was walked
        self.returns_data_scalar = False
        self.decided_by: set[str] = set()  # names read by conditions decided while tracing
        self.objects: set[str] = set()  # locals holding such an instance
        # locals bound to a constructor call here (`h = Holder(x)`): its tensor attributes are
        # read when a method is called on the name (most assignments never need them)
        self.built: dict[str, cst.Call] = {}
        self.built_at: dict[str, int] = {}  # name -> how many events the frame had when it was built
        self.tensor_made_at: dict[str, int] = {}  # a local tensor -> how many events the frame had when it was made
        self._free_tensors: dict[str, bool] = {}
        self.rebound: set[str] = set()  # names assigned in this frame so far
        self.parameter_locals: set[str] = set()  # `p` of `for p in m.parameters()`
        self.loggers: set[str] = set()
        self.passed_iterators: set[str] = set()  # locals stepping an iterator the program passed in
        # names holding a value Dynamo cannot wrap, not read yet -> the check its first read
        # breaks with: a parameter given a set of tensors (wrapped lazily, at its first use), a
        # sparse tensor (`s = x.to_sparse()` breaks; the resume function gets `s` as an input)
        self.unwrappable: dict[str, CauseCheck] = {n: CauseCheck.PASSED_TENSOR_SET for n, v in key.arguments
                                                   if v == PASSED_TENSOR_SET}
        self.unwrappable.update((n, CauseCheck.EMPTY_MODULE_USE) for n, v in key.arguments if self._empty_module(v))
        # locals holding a set this frame filled with tensors: kept across a break, the resume
        # function gets it as an input and wraps it at its first use, as a set passed in
        self.tensor_sets: set[str] = set()
        self._kinds: BuiltinKinds | None = None
        self.yields_seen = 0  # in a generator being rebuilt: the yields its consumer already took
        self.deleted_locals: set[str] = set()  # `del y` of a plain local, not bound again since
        # `y.requires_grad_()` of an intermediate, until a return needs it; which tensors need grad
        params = {p.name for p in function.params} if isinstance(source, FunctionInfo) else set()
        self._global_grad: dict[str, bool] = {}
        self._global_modules: dict[str, bool] = {}
        self.frame_parameters = params | set(key.tensor_params)  # (names that are no globals here)
        self.grad_leaks = GradLeaks(key.grad_inputs, key.plain_inputs,
                                    lambda name: name in self.frame_parameters or name in self.rebound
                                    or self._global_needing_grad(name), self._global_module)
        # the elements of tensors made from constants (`opt(torch.ones(3))`): which side a
        # data-dependent branch takes
        self.contents = TensorContents(dict(key.contents), self.resolver.qualify, self.values.value)
        self.leaves_attribute_set = False  # see FrameInfo; set by a callee that leaves one set
        # in a higher-order op's body: outside attributes set and not put back yet ("box.k"),
        # and locals holding an attribute's value read before (`old = box.k`: `box.k = old` restores)
        self.attributes_set: set[str] = set()
        self.saved_attributes: dict[str, str] = {}
        # `del o.a` / `del d["k"]` not stored again since: key -> (base name, what a read raises)
        self.deleted_members: dict[str, tuple[str, str]] = {}
        self.new_globals: set[str] = set()  # globals this frame stored that did not exist before it
        # names no scope binds (NameError); a comprehension or lambda frame reads its parent's
        self.undefined: set[str] = set(self._undefined_names()) if isinstance(source, FunctionInfo) else set()
        self.lambdas: dict[str, cst.Lambda] = {}  # local names bound to a lambda
        self.uncertain = 0  # inside a branch Dynamo may not take (an unknown if, an except handler)
        self.conditions: list[str] = []  # the unknown `if` tests (or their negations) around the walk
        self.break_points: dict[int, cst.CSTNode] = {}  # event index -> the node of a call / break event
        self.new_methods: set[str] = set()  # locals holding a bound method of an object made here
        # break point -> the locals then holding what Dynamo cannot rebuild, and what that is
        self.unrebuildable_held: dict[int, dict[str, CauseCheck]] = {}
        self.outputs = FrameOutputs(self)  # what it cannot hand back when compiled alone
        self.index_reads = IndexReads(self)  # indexes and slice bounds whose value Dynamo reads
        self.proxies = MappingProxies(self)  # existing mapping proxies and the dicts the frame changes
        # locals holding a generator made here -> (its creation's call event, yields taken so far)
        self.generators: dict[str, tuple[int, int]] = {}
        self.evaluated: set[int] = set()  # arguments already evaluated before their call (ids)
        # in a handler `except StopIteration as e`: `e.value` and the locals holding it (GBL627)
        self.stop_values: frozenset[str] = frozenset()
        # the parameters a caller passed such a value for (values.PASSED_STOP_VALUE)
        self.passed_stop_values = frozenset(name for name, held in key.arguments if held == PASSED_STOP_VALUE)
        self.generators_held: dict[int, dict[str, tuple[int, int]]] = {}  # break point -> those locals then
        self.escaping: frozenset[str] = frozenset()  # the names a `return` hands back, while it is evaluated
        self.may_have_left = False  # a return / raise on such a branch came before: later code is not certain
        self.opaque_objects: set[str] = set()  # names holding an object Dynamo cannot trace (`open()`)
        self.profilers: set[str] = set()  # names a `with torch.profiler.profile() as p` bound
        self.tensor_reads = 0  # tensor-valued names read so far (Event.tensor_reads)

    # -- entry -----------------------------------------------------------------------
    def build(self) -> FrameInfo:
        try:
            return self._build()
        finally:
            self._release()

    def _release(self) -> None:
        """Break the builder's reference cycles (its helpers hold it and each other through
        bound-method callbacks): what it held, syntax trees included, is freed when the build
        ends, by reference counting, with the cyclic collector paused during scans."""
        self.values.release()
        self.__dict__.clear()

    def _build(self) -> FrameInfo:
        if isinstance(self.source, Comprehension):
            self._comprehension_body(self.source.node)
            name = COMPREHENSION_NAMES[type(self.source.node)]
            return FrameInfo(self.key, name, self.key.qualname, str(self.parsed.path), self.source.line,
                             tuple(self.events), is_generator=name == "<genexpr>",
                             returns_tensor=False,
                             uses_torch=self._uses_torch(self.source.node, skip_first_iter=True),
                             unwrappable_iterator=self.source.unwrappable_iterator)
        if isinstance(self.source, LambdaBody):
            body = self.source.node.body
            self.expr(body)
            return FrameInfo(self.key, "<lambda>", self.key.qualname, str(self.parsed.path), self.source.line,
                             tuple(self.events), returns_tensor=self.scope.is_tensor(body),
                             uses_torch=self._uses_torch(body), hop_input_faults=self._hop_input_faults(body))
        fn = self.source
        never_returns = self.block(fn.node.body) and not self.returned
        uses_torch = self._uses_torch(fn.node.body)
        events = self._tensorless_resumes(fn, self._unrebuildable_resumes(fn), uses_torch)
        return FrameInfo(self.key, fn.name, fn.qualname, fn.path, fn.def_line, events,
                         is_generator=fn.is_generator or fn.is_async,
                         strict=self.causes.strict_decorator(fn), fullgraph_alone=self.causes.fullgraph_decorator(fn),
                         returns_tensor=self.returns_tensor,
                         yields_tensor=self.yields_tensor,
                         returns_elements=self.returns_elements, uses_torch=uses_torch,
                         returns_object=bool(self.returns_object), returns_data_scalar=self.returns_data_scalar,
                         never_returns=never_returns, only_project_calls=self._only_project_calls(fn),
                         returns_unrebuildable=self.outputs.returned, eager_only=self.key.traced_hook,
                         decided_by=frozenset(self.decided_by),
                         leaves_attribute_set=self.leaves_attribute_set or bool(self.attributes_set),
                         closure_tensors=not self.key.tensor_params and not uses_torch and self._closure_tensors(fn),
                         hop_input_faults=self._hop_input_faults(fn.node.body),
                         first_input_line=self._first_input_line(fn),
                         changes_outer_dict=self.proxies.outer_dict_changed)

    def _first_input_line(self, fn: FunctionInfo) -> int:
        """The line of the first statement reading a tensor parameter (0: none does)."""
        body = fn.node.body.body if isinstance(fn.node.body, cst.IndentedBlock) else ()
        inputs = set(self.key.tensor_params)
        for statement in body:
            if any(n.value in inputs for n in find_all(statement, (cst.Name,))):
                return self.line(statement)
        return 0

    def _hop_input_faults(self, body) -> tuple[str, ...]:
        """See hop_inputs: only a higher-order op's body is asked."""
        if not self.key.hop_body:
            return ()
        return HopInputs(self.env.knowledge, self.resolver.qualify, frozenset(self.key.tensor_params),
                         self.scope.is_tensor).faults(body)

    def _sets_own_object(self, node: cst.BaseSmallStatement) -> bool:
        """`b = Box(); b.val = 1` in a higher-order op's body: an attribute of an object the
        body made is its own (measured 2.13: allowed; `self.x = y` in a module's forward is not)."""
        if not isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)) or not isinstance(self.source, FunctionInfo):
            return False
        fn = self.source
        made = self.env.node_memo("made_names", fn.node, lambda: frozenset(
            assigned_names(fn.node.body) - {p.name for p in fn.params} - declared_outer(fn.node.body)))
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
        return all(isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value in made
                   for t in targets)

    def _sets_attribute_to_non_tensor(self, node: cst.BaseSmallStatement) -> bool:
        """`box.k = 1`, `self.count += 1`: Dynamo records the attribute and checks it when the
        higher-order op's body ends; a tensor stored or changed in place (`self.w += 1` of a
        buffer) is an unsafe side effect at the statement (measured 2.13)."""
        if isinstance(node, cst.AugAssign):
            return isinstance(node.target, cst.Attribute) and not self.scope.is_tensor(node.target) \
                and not self.self_attribute_is_tensor(node.target)
        if not isinstance(node, (cst.Assign, cst.AnnAssign)) or node.value is None:
            return False
        # `obj.val = 1` of an attribute the object's project class never sets (and no library
        # base could): a new attribute is an unsafe side effect at the statement (GB0067,
        # measured 2.13), not a value to put back
        return all(isinstance(t, cst.Attribute) and self._class_sets(t, in_methods=True) is not False
                   for t in assignment_targets(node)) and not self.scope.is_tensor(node.value)

    def _adds_attribute(self, node: cst.BaseSmallStatement) -> bool:
        """`obj.val = 1` of an attribute the class of an object from outside the compiled code
        never sets, to a value that is not a tensor: when the higher-order op's body ends,
        Dynamo looks for the attribute's old value and meets the AttributeError (measured 2.13:
        GB0088, no resume point; a tensor stored there, or any value on an object the compiled
        code made, is an unsafe side effect at the statement, GB0067)."""
        if not isinstance(node, (cst.Assign, cst.AnnAssign)) or node.value is None or self.scope.is_tensor(node.value):
            return False
        targets = assignment_targets(node)
        return bool(targets) and all(isinstance(t, cst.Attribute) and self._class_sets(t, in_methods=True) is False
                                     and not self._built_around(t.value) for t in targets)

    def _built_around(self, base: cst.BaseExpression) -> bool:
        """`note = Note()` in the function around the op's body: an object the compiled code
        made, which Dynamo tracks as new (a new attribute on it is an unsafe side effect,
        GB0067, measured 2.13)."""
        found = self.resolver.enclosing_value(base.value) if isinstance(base, cst.Name) else None
        return found is not None and isinstance(found[1], cst.Call)

    def _class_sets(self, target: cst.Attribute, in_methods: bool) -> bool | None:
        """Does the project class of `target`'s object bind the attribute in its body (or, with
        `in_methods`, as `self.<attr>` in a method)? None: the class is unknown, or a library
        base it has could (nn.Module itself sets only the attributes the knowledge file lists)."""
        cls = self.resolver.class_of(target.value)
        if cls is None:
            return None
        name = target.attr.value
        bases = self.env.project.external_bases(cls) if in_methods else set()
        if bases and not bases <= self.env.knowledge.nn_module_bases:  # nn.Linear sets `weight`, ...
            return None
        if bases and name in self.env.knowledge.module_attributes:
            return True
        return any((in_methods and name in c.attributes) or class_body_binds(c.node, name)
                   for c in self.env.project.mro(cls))

    def _note_attribute_set(self, node: cst.BaseSmallStatement) -> None:
        """An outside attribute set in a higher-order op's body; setting it back to the value
        read before (`old = s.flag; s.flag = True; ...; s.flag = old`, a context manager that
        restores a flag) leaves nothing for Dynamo to find when the body ends."""
        value = getattr(node, "value", None)
        for target in assignment_targets(node):
            key = _source(target)
            if isinstance(node, cst.Assign) and isinstance(value, cst.Name) \
                    and self.saved_attributes.get(value.value) == key:
                self.attributes_set.discard(key)
            else:
                self.attributes_set.add(key)

    def _note_saved_attribute(self, node: cst.BaseSmallStatement) -> None:
        if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            name = node.targets[0].target.value
            if isinstance(node.value, cst.Attribute):
                self.saved_attributes[name] = _source(node.value)
            else:
                self.saved_attributes.pop(name, None)

    def self_attribute_is_tensor(self, target: cst.Attribute) -> bool:
        """`self.w` in a method (or a function defined in one) whose class sets it from a torch
        call (`self.w = nn.Buffer(torch.ones(4))`)."""
        if not (isinstance(target.value, cst.Name) and target.value.value == "self"):
            return False
        fn: FunctionInfo | None = self.function
        while fn is not None and fn.class_qualname is None:
            fn = self.env.project.function(fn.parent_function) if fn.parent_function else None
        cls = self.env.project.klass(fn.class_qualname) if fn is not None else None
        found = self.env.project.class_attribute(cls, target.attr.value) if cls is not None else None
        return found is not None and any(self._makes_tensor(call, None) for call in find_all(found[1], (cst.Call,)))

    def _self_is_module(self) -> bool:
        cls = self.resolver.cls
        return cls is not None and self.resolver.is_nn_module(cls)

    def rebound_by(self, call: cst.Call) -> frozenset[str]:
        """The names rebound around a call from one run of it to the next: by the statement it
        is the value of (`x = layer(x)`, `x = layer(x)[0]`, `x, _ = layer(x)`) or by the body of
        the loop it is in; empty for a call anywhere else."""
        rebinding = self.env.node_memo("rebinding_calls", self.function.node, lambda: _rebinding_calls(self.function.node))
        return rebinding.get(id(call), frozenset())

    def _statements(self, fn: FunctionInfo) -> list:
        return self.env.node_memo("statements", fn.node, lambda: [
            (self.line(s), s, reads, writes) for s, reads, writes in statement_reads(fn.node.body, self._names_read)])

    def _unrebuildable_resumes(self, fn: FunctionInfo) -> tuple[Event, ...]:
        """Mark the break points after which a live local holds a bound method of an object this
        frame made (`f = Helper().run`, read later) or a @contextmanager object it made (`ctx =
        scope()`, entered later): the resume function needs it rebuilt, which Dynamo cannot do
        (measured 2.13: GB0092 / GB2533 at the break, the frame runs eagerly)."""
        out = list(self.events)
        for i, kinds in self.unrebuildable_held.items():
            live = sorted(live_after(self._statements(fn), out[i].line) & kinds.keys())
            if live:
                out[i] = replace(out[i], rebuilds_local=kinds[live[0]].value)
        for i, held in self.generators_held.items():
            self._rebuild_live_generator(fn, out, i, held)
        return tuple(out)

    def _hold_generator(self, name: str, value: cst.BaseExpression) -> None:
        """`gen = make(t)` of a generator function: the local holds the generator object."""
        last = self.events[-1] if self.events else None
        if isinstance(value, cst.Call) and _stepped(value) is None and last is not None \
                and last.kind == EventKind.CALL and last.mode == CallMode.GENERATOR and last.target is not None \
                and last.span == self.span(value) and not last.target.reconstructing and not last.context_by_hand:
            # making a generator runs none of its body: each later use runs its part
            created = replace(last.target, take_yields=0)
            self.env.frame(created)
            self.events[-1] = replace(last, target=created)
            self.generators[name] = (len(self.events) - 1, 0)
        else:
            self.generators.pop(name, None)

    def _stepped_by_callee(self, node: cst.Call) -> bool:
        """`helper(gen)` of a generator held here, where the helper only takes items from it
        with `next(...)` (not in a loop or a branch): those steps run at the call, and the
        generator stays held (before, any call handed it ran its whole body)."""
        held = [(i, a.value) for i, a in enumerate(node.args) if a.keyword is None and not a.star
                and id(a.value) not in self.evaluated and (isinstance(a.value, cst.Name) and a.value.value in self.generators
                                                           or self._makes_generator(a.value))]
        target = self.resolver.resolve(node.func) if len(held) == 1 else None
        if target is None:
            return False
        position, given = held[0]
        params = [p for p in target.function.params if p.kind == "positional"][int(target.skip_first_param):]
        steps = _next_steps(target.function.node, params[position].name) if position < len(params) else None
        if steps is None:
            return False
        name = given.value if isinstance(given, cst.Name) else f"<argument {position}>"
        if not isinstance(given, cst.Name):  # `peek(batches(data))`: made here, held for the call
            self.expr(given)
            self._hold_generator(name, given)
            self.evaluated.add(id(given))
        for default in steps:
            if name not in self.generators or self._step(node, name, (), default):
                break  # (the generator raised: no later step is taken)
        generators, self.generators = self.generators, {k: v for k, v in self.generators.items() if k != name}
        try:
            self.call(node)  # (the callee gets the generator as an object it does not step)
        finally:
            self.evaluated.discard(id(given))
            if name in generators and isinstance(given, cst.Name):
                self.generators = {**self.generators, name: generators[name]}
        return True

    def _makes_generator(self, expr: cst.BaseExpression) -> bool:
        """A call of a project generator function (`batches(data, 2)`)."""
        if not isinstance(expr, cst.Call) or _stepped(expr) is not None:
            return False
        target = self.resolver.resolve(expr.func)
        return target is not None and target.function.is_generator

    def _step_generator(self, node: cst.Call) -> bool:
        """`next(gen)` / `gen.send(v)` of a generator held here: its body runs to the next yield."""
        name = _stepped(node)
        if name not in self.generators:
            return False
        given = node.args if isinstance(node.func, cst.Attribute) else node.args[1:]
        self._step(node, name, given, isinstance(node.func, cst.Name) and len(node.args) > 1)
        return True

    def _step(self, node: cst.Call, name: str, given, default: bool) -> bool:
        """One item taken from the held generator `name`; True when its body raised its own
        exception. `default`: `next(gen, default)`, which gives it for StopIteration."""
        for arg in given:
            self.expr(arg.value)
        made, taken = self.generators.pop(name)
        if self._sends_into_delegation(node, made, taken):
            rule = self.causes.rule_for_check(CauseCheck.SEND_INTO_YIELD_FROM)
            thrown = isinstance(node.func, cst.Attribute) and node.func.attr.value == "throw"
            self.emit_break(rule, node, gb_code=rule.gb_code_when.get("throw", rule.gb_code) if thrown else rule.gb_code)
        if self._yields_left(made, taken) == 0:  # past its last yield: the rest of its body runs,
            self.generators[name] = (made, CLOSED)  # then Python raises StopIteration, so does Dynamo
            if taken != CLOSED and self._run_rest_raises(node, made, taken):
                return True  # (the body raised its own exception)
            if not default:
                self.raises(node, "StopIteration")
            return False
        if any(c.kind == BlockKind.LOOP for c in self.ctx):  # stepped again and again: all the rest runs
            self._run_generator(node, made, skip_yields=taken)
        else:
            self.generators[name] = (made, taken + 1)
            self._run_generator(node, made, skip_yields=taken, take_yields=1)
        return False

    def _run_rest_raises(self, node: cst.Call, made: int, taken: int) -> bool:
        """Run what follows a held generator's last yield; True when that always raises."""
        self._run_generator(node, made, skip_yields=taken)
        target = self.events[-1].target
        info = self.env.frame(target) if target is not None else None
        return info is not None and info.never_returns

    def is_stop_value(self, expr: cst.BaseExpression) -> bool:
        """`e.value` of a caught StopIteration, a local holding it, or a parameter the caller
        passed it for (Dynamo's exception object has no `value` it can use: a GetAttrVariable)."""
        if isinstance(expr, cst.Attribute):
            return expr.attr.value == "value" and isinstance(expr.value, cst.Name) and expr.value.value in self.stop_values
        return isinstance(expr, cst.Name) and (f"={expr.value}" in self.stop_values or expr.value not in self.rebound
                                               and expr.value in self.passed_stop_values)

    def _stop_value_operation(self, node: cst.BaseExpression) -> bool:
        """`e.value + 1`, `e.value == 3`, `isinstance(e.value, int)` of a caught StopIteration's
        value: Dynamo cannot compute with it (GBL627; measured 2.13, `return e.value`, `[e.value]`
        and `e.value is None` trace)."""
        if not (self.stop_values or self.passed_stop_values) \
                or not self.causes.check_enabled(CauseCheck.STOP_ITERATION_VALUE):
            return False
        rule = self.causes.rule_for_check(CauseCheck.STOP_ITERATION_VALUE)
        if isinstance(node, cst.Comparison):
            operands = [node.left, *(c.comparator for c in node.comparisons)]
            if all(isinstance(c.operator, (cst.Is, cst.IsNot)) for c in node.comparisons):
                return False
            code = rule.gb_code_when.get("comparison")
        elif isinstance(node, cst.BinaryOperation):
            operands, code = [node.left, node.right], None
        elif isinstance(node, cst.UnaryOperation):
            operands, code = [node.expression], None
        elif isinstance(node, cst.Call) and self.resolver.qualify(node.func) == "builtins.isinstance" and node.args:
            operands, code = [node.args[0].value], rule.gb_code_when.get("isinstance")
        else:
            return False
        held = [op for op in operands if self.is_stop_value(op)]
        if not held:
            return False
        # (an operator instruction has no resume point: a partial graph, then the frame runs
        # eagerly; the isinstance call resumes after it). A parameter given the value holds a
        # plain number once the callee is compiled as a frame of its own: inlined only.
        passed = all(isinstance(op, cst.Name) and f"={op.value}" not in self.stop_values for op in held)
        self.emit_break(rule, node, gb_code=code or rule.gb_code, inlined_only=passed,
                        break_kind=BreakKind.RESUMABLE if isinstance(node, cst.Call) else rule.break_kind)
        return True

    def _data_pointer_operation(self, node: cst.Comparison | cst.BinaryOperation) -> bool:
        """`a.data_ptr() == b.data_ptr()` breaks (GB5976, resumed); `a.data_ptr() + n` makes
        Dynamo raise TypeError inside its trace (GB0088, the frame runs eagerly). Measured 2.13;
        `p = t.data_ptr()` alone is traced."""
        operands = [node.left, *(c.comparator for c in node.comparisons)] if isinstance(node, cst.Comparison) \
            else [node.left, node.right]
        if not any(map(self.scope.is_data_pointer, operands)):
            return False
        check = CauseCheck.DATA_POINTER_COMPARISON if isinstance(node, cst.Comparison) \
            else CauseCheck.DATA_POINTER_ARITHMETIC
        if not self.causes.check_enabled(check):
            return False
        rule = self.causes.rule_for_check(check)
        code = rule.gb_code_when.get("tensor_operand") if any(map(self.scope.is_tensor, operands)) else None
        self.emit_break(rule, node, gb_code=code or rule.gb_code,
                        detail="TypeError" if check == CauseCheck.DATA_POINTER_ARITHMETIC else "")
        return True

    def _by_hand(self, call: cst.Call) -> tuple[str, str] | None:
        """(local, method) of `ctx.__enter__()` / `ctx.__exit__(...)` on a @contextmanager
        object held here."""
        func = call.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value in self.generators \
                and func.attr.value in self.env.knowledge.passed_generator_stepping_methods:
            return func.value.value, func.attr.value
        return None

    def _entered_by_hand(self, call: cst.Call) -> FrameKey | None:
        """The generator frame `ctx.__enter__()` runs, for a @contextmanager object held here."""
        found = self._by_hand(call)
        if found is None or found[1] != "__enter__":
            return None
        return self.events[self.generators[found[0]][0]].target

    def _context_by_hand(self, node: cst.Call) -> bool:
        """`ctx.__enter__()` / `ctx.__exit__(...)` of a @contextmanager object held here: the
        generator runs to its yield, or from it to its end. A break there resumes at the call,
        where Dynamo cannot rebuild the object (measured 2.13: GB0092 at the call, and the
        frame runs eagerly, nested graph breaks or not)."""
        found = self._by_hand(node)
        if found is None:
            return False
        for arg in node.args:
            self.expr(arg.value)
        name, method = found
        made, taken = self.generators[name]
        if taken == CLOSED:
            return True
        if method == "__enter__":
            self.generators[name] = (made, taken + 1)
            self._run_generator(node, made, skip_yields=taken, take_yields=1)
        else:
            self.generators[name] = (made, CLOSED)
            self._run_generator(node, made, skip_yields=taken)
        self.events[-1] = replace(self.events[-1], context_by_hand=True)
        return True

    def _close_generator(self, node: cst.Call) -> bool:
        """`gen.close()` of a generator held here: nothing more of it runs (a later `next` is
        StopIteration); one whose `except GeneratorExit:` yields again raises RuntimeError
        when it was started (measured 2.13: both "Observed exception", GB0088)."""
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "close" and isinstance(func.value, cst.Name)
                and func.value.value in self.generators):
            return False
        made, taken = self.generators[func.value.value]
        self.generators[func.value.value] = (made, CLOSED)
        fn = self._generator_function(made)
        if taken > 0 and fn is not None and _yields_on_exit(fn.node):
            self.raises(node, "RuntimeError")
        return True

    def _generator_function(self, made: int) -> FunctionInfo | None:
        target = self.events[made].target
        return self.env.project.function(target.qualname) if target is not None else None

    def _sends_into_delegation(self, node: cst.Call, made: int, taken: int) -> bool:
        """`gen.send(v)` of a value that is not None, or `gen.throw(exc)`, while the generator
        waits in a `yield from` (its `taken`-th yield is one of the sub-generator's): Dynamo does
        not pass either on to a sub-generator (measured 2.13: GB0120 / GB0088 at the call, the
        frame runs eagerly)."""
        if not (isinstance(node.func, cst.Attribute) and node.args and not is_none_literal(node.args[0].value)) \
                or taken == CLOSED or taken < 1 or not self.causes.check_enabled(CauseCheck.SEND_INTO_YIELD_FROM):
            return False
        fn = self._generator_function(made)
        points = self.env.node_memo("yield_points", fn.node, lambda: self._yield_points(fn)) if fn else None
        return points is not None and taken <= len(points) and points[taken - 1]

    def _yield_points(self, fn: FunctionInfo, depth: int = 0) -> tuple[bool, ...] | None:
        """Whether each yield a straight-line generator gives comes from a `yield from` of a
        project generator (its own yields, in turn); None when the count is not fixed."""
        if depth > 3 or _yields_in_blocks(fn.node):
            return None
        module = self.env.project.modules[fn.module]
        points: list[bool] = []
        for y in find_all(fn.node.body, (cst.Yield,), skip=NESTED_SCOPES):
            if not isinstance(y.value, cst.From):
                points.append(False)
                continue
            item = y.value.item
            sub = self.env.project.function(self.env.project.qualify(item.func, module, fn)) \
                if isinstance(item, cst.Call) else None
            if sub is None or not sub.is_generator:
                return None
            inner = self._yield_points(sub, depth + 1)
            if not inner:  # how often it yields is not fixed: its first yield at least is delegated
                return tuple(points) + (True,)
            points.extend([True] * len(inner))
        return tuple(points)

    def _yields_left(self, made: int, taken: int) -> int | None:
        """How many more items the generator made at event `made` gives after `taken`, when
        its body yields a fixed number of times (no yield under a loop or a branch)."""
        if taken == CLOSED:
            return 0
        fn = self._generator_function(made)
        total = _straight_yields(fn.node) if fn is not None else None
        return None if total is None else max(0, total - taken)

    def _consume_generator(self, node: cst.Name) -> None:
        """Any other use of a held generator (iterated, passed on, returned) runs the rest of its
        body there; returned, Dynamo rebuilds it by tracing that rest (reconstructing). A
        @contextmanager object returned is not rebuilt: the return fails first (GBL394)."""
        if node.value in self.escaping and self.outputs.holds_context_object(node.value):
            return
        made, taken = self.generators.pop(node.value)
        self._run_generator(node, made, skip_yields=taken, reconstructing=node.value in self.escaping)

    def _run_generator(self, node: cst.CSTNode, made: int, **part) -> None:
        target = self.events[made].target
        assert target is not None  # a generator's creation names its frame
        key = replace(target, **{"take_yields": None, **part})
        self.env.frame(key)
        self.emit(EventKind.CALL, node, target=key, mode=CallMode.GENERATOR)

    def _rebuild_live_generator(self, fn: FunctionInfo, out: list[Event], i: int,
                                held: dict[str, tuple[int, int]]) -> None:
        """A generator made here and read after break point `i` is rebuilt for the resume
        function by tracing the rest of its body (measured 2.13: a write there to state made
        elsewhere is GB8335 and the frame runs eagerly)."""
        for name in sorted(live_after(self._statements(fn), out[i].line) & held.keys()):
            made, taken = held[name]
            target = out[made].target
            assert target is not None  # a generator's creation names its frame
            key = replace(target, reconstructing=True, skip_yields=taken, take_yields=None)
            info = self.env.frame(key)
            if info is not None and any(ev.kind == EventKind.BREAK for ev in info.events):
                out[i] = replace(out[i], rebuilds_generator=key)
                return

    def _tensorless_resumes(self, fn: FunctionInfo, events: tuple[Event, ...], uses_torch: bool) -> tuple[Event, ...]:
        """Mark the break points after which nothing live holds a tensor (a module `self`
        counts): Dynamo does not compile such a resume function (convert_frame.has_tensor_in_frame)
        unless its code names torch, the rest runs eagerly. Live: read by a later statement (`out
        = model(x)` then `out.logits.sum().backward()`, with `out` a model output, leaves no
        tensor in the frame)."""
        if not self.break_points:
            return events
        module_self = self._self_is_module()
        statements = self._statements(fn)
        tensors = self.scope.ever_tensors | set(self.key.tensor_params) | ({"self"} if module_self else set())
        out = list(events)
        branch_rule = self.causes.rule_for_check(CauseCheck.DATA_DEPENDENT_BRANCH)
        branch = branch_rule.code if branch_rule is not None else None
        for i, node in self.break_points.items():
            span = out[i].span
            _, holder, _, writes = next((s for s in reversed(statements) if s[0] <= span.line),
                                        (0, None, frozenset(), frozenset()))
            rest = self._read_after(holder, (span.end_line, span.end_column))
            rebound = set().union(*(w for at, _s, _r, w in statements if at <= span.line))
            if (live_after(statements, span.line) | rest) & (set(self.key.tensor_params) - rebound):
                out[i] = replace(out[i], resume_live_inputs=True)
            # what the statement itself assigns (`out = y.mul(h(y))`) is bound after the point,
            # from a value computed there; the call's own result (`x = f(x)`) is on the stack
            bound_later: frozenset[str] = frozenset() if _assigns(holder, node) else writes - rest
            if (live_after(statements, span.line) - bound_later) & tensors:
                continue
            # the call's result is on the resume function's stack: a tensor there counts too (a
            # branch's condition is not: the jump takes it, each way resumes on its own)
            if isinstance(node, cst.BaseExpression) and self.scope.is_tensor(node) and out[i].rule != branch:
                continue
            if rest & tensors:
                continue
            # what the statement evaluated before the call waits on the stack (`x + h()`)
            if not any(self.scope.is_tensor(e) for e in pending_operands(holder, node)):
                out[i] = replace(out[i], resume_live_tensors=False, resume_has_tensors=uses_torch)
        return tuple(out)

    def _read_after(self, stmt, end: tuple[int, int]) -> set[str]:
        """Names the rest of a statement reads after a point (`a(x), b(x)` after `a(x)`)."""
        if stmt is None:
            return set()
        spans = ((n.value, self.span(n)) for n in descendants(stmt) if isinstance(n, cst.Name))
        return {name for name, span in spans if (span.line, span.column) > end}

    def _names_read(self, node, skip_first_iter: bool = False) -> frozenset[str]:
        return self.env.node_memo(f"names_read:{skip_first_iter}", node,
                                  lambda: frozenset(_names_read(node, skip_first_iter)))

    # -- recording -------------------------------------------------------------------
    def span(self, node: cst.CSTNode):
        return self.parsed.span(node, self.anchor)

    def line(self, node: cst.CSTNode) -> int:
        return self.parsed.line(node, self.anchor)

    def emit(self, kind: EventKind, node: cst.CSTNode, **fields) -> None:
        if self.yields_seen < self.key.skip_yields:
            return  # run by the frame that consumed these yields, not by the rebuild
        if self.key.take_yields is not None and self.yields_seen >= self.key.skip_yields + self.key.take_yields:
            return  # run by a later `next(gen)`
        if self.conditions:
            fields.setdefault("condition", " and ".join(self.conditions))
        if kind in (EventKind.CALL, EventKind.BREAK):
            self.break_points[len(self.events)] = node
            if kind == EventKind.CALL and isinstance(node, cst.Call):  # (a break in the callee: GBL624)
                fields.setdefault("hands_module_generator", self._module_generator_argument(node))
            held = {**dict.fromkeys(self.new_methods, CauseCheck.LIVE_NEW_OBJECT_METHOD),
                    **dict.fromkeys(self.outputs.context_objects(), CauseCheck.LIVE_CONTEXT_OBJECT)}
            if held:
                self.unrebuildable_held[len(self.events)] = held
            if self.generators:
                self.generators_held[len(self.events)] = dict(self.generators)
        self.events.append(Event(kind=kind, span=self.span(node), ctx=tuple(self.ctx),
                                 tensor_reads=self.tensor_reads, **fields))

    def emit_break(self, rule, node: cst.CSTNode, **fields) -> None:
        fields.setdefault("break_kind", rule.break_kind)
        fields.setdefault("gb_code", rule.gb_code)
        if fields["break_kind"] == BreakKind.RESUMABLE and isinstance(node, cst.Call):
            fields.setdefault("hands_module_generator", self._module_generator_argument(node))
        self.emit(EventKind.BREAK, node, rule=rule.code, **fields)
        self.proxies.broke()
        if fields["break_kind"] == BreakKind.RESUMABLE:
            self.unwrappable.update(dict.fromkeys(self.tensor_sets, CauseCheck.PASSED_TENSOR_SET))

    def _module_generator_argument(self, call: cst.Call) -> str:
        """The module generator method (`parameters`) whose call, written there or held in a
        local, is an argument of `call`; "" if none."""
        for arg in call.args:
            value = self.built.get(arg.value.value, arg.value) if isinstance(arg.value, cst.Name) else arg.value
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                    and value.func.attr.value in self.env.knowledge.module_tree_generators \
                    and all(a.keyword is not None for a in value.args):
                return value.func.attr.value
        return ""

    # -- statements ------------------------------------------------------------------
    def block(self, body) -> bool:
        """Walk a block; True when it always ends the frame (a `return`/`raise` reached on the
        path the known values select): what follows is never traced (a recursion whose
        base case returns ends there)."""
        smalls = body.body if isinstance(body, (cst.IndentedBlock, cst.SimpleStatementSuite)) else ()
        for stmt in smalls:
            ends = self.stmt(stmt) if isinstance(stmt, cst.BaseStatement) else self._small_ends(stmt)
            if ends:
                return True
        return False

    def stmt(self, node: cst.CSTNode) -> bool:
        handler = getattr(self, f"stmt_{type(node).__name__}", None)
        if handler is not None:
            return bool(handler(node))
        if isinstance(node, cst.SimpleStatementLine):
            return any([self._small_ends(small) for small in node.body])
        return False

    def _small_ends(self, node: cst.BaseSmallStatement) -> bool:
        self.small(node)
        ends = isinstance(node, (cst.Return, cst.Raise))
        self.may_have_left |= ends and self.uncertain > 0
        return ends

    def small(self, node: cst.BaseSmallStatement) -> None:
        if self.key.traced_hook and self._writes_outside(node, CauseCheck.HOOK_SIDE_EFFECT):
            self.emit_break(self.causes.rule_for_check(CauseCheck.HOOK_SIDE_EFFECT), node)
        if self.key.hop_body:
            self._note_saved_attribute(node)
        if self.key.hop_body and not self._sets_own_object(node) \
                and self._writes_outside(node, CauseCheck.HOP_SIDE_EFFECT):
            if self._adds_attribute(node) and self.causes.check_enabled(CauseCheck.HOP_NEW_ATTRIBUTE):
                self.emit_break(self.causes.rule_for_check(CauseCheck.HOP_NEW_ATTRIBUTE), node, detail="AttributeError")
            elif self._sets_attribute_to_non_tensor(node):
                self._note_attribute_set(node)  # reported at the op's call (model.causes)
            else:
                self.emit_break(self.causes.rule_for_check(CauseCheck.HOP_SIDE_EFFECT), node)
        if self.key.reconstructing and self._mutates_outside(node):
            self.emit_break(self.causes.rule_for_check(CauseCheck.GENERATOR_MUTATION), node)
        self._raises_on_known_values(node)
        if self.deleted_locals:
            self._reads_deleted(node)
        if self.deleted_members:
            self._reads_deleted_member(node)
        if self.new_globals:
            self._reads_new_global(node)
        if self.undefined:
            self._reads_unloadable(node, self.undefined, CauseCheck.UNDEFINED_NAME_READ)
        self._small(node)
        if self.key.skip_yields or self.key.take_yields is not None:
            self.yields_seen += len(find_all(node, (cst.Yield,), skip=NESTED_SCOPES))

    def _small(self, node: cst.BaseSmallStatement) -> None:
        if isinstance(node, cst.Assign):
            alias = self._lazy_alias(node.value)
            if alias is None:
                self.expr(node.value)
            for target in node.targets:
                self.assign_target(target.target, node.value)
                if alias is not None and isinstance(target.target, cst.Name):
                    self.unwrappable[target.target.value] = alias
                self.grad_leaks.assigned(target_names(target.target), node.value, not self.causes.grad_off())
                self.contents.assign(target_names(target.target), node.value)
        elif isinstance(node, cst.AnnAssign) and node.value is not None:
            self.expr(node.value)
            self.assign_target(node.target, node.value)
        elif isinstance(node, cst.AugAssign):
            self.contents.forget_all(changed_names(node))
            if isinstance(node.target, cst.Subscript):  # `h[mask] += v` reads `h[mask]` first
                self.expr(node.target)
            self.expr(node.value)
            self.values.assign(node.target, None)
            if self.scope.is_tensor(node.target) or self.scope.is_tensor(node.value):
                self.emit(EventKind.OP, node)
                self.scope.assign(node.target, None, tensor=True)
        elif isinstance(node, cst.Expr):
            self.expr(node.value)
        elif isinstance(node, cst.Raise):
            self.raise_(node)
        elif isinstance(node, cst.Del):
            self.delete(node)
        elif isinstance(node, (cst.Import, cst.ImportFrom)):
            self.import_(node)
        elif isinstance(node, cst.Return) and node.value is not None:
            self.returned = True
            items = [el.value for el in node.value.elements] if isinstance(node.value, cst.Tuple) else [node.value]
            self.escaping = frozenset(item.value for item in items if isinstance(item, cst.Name))
            self.expr(node.value)
            self.escaping = frozenset()
            self._returns_marked_intermediate(node.value)
            self.returns_tensor |= self.scope.is_tensor(node.value)
            self.returns_data_scalar |= self.scope.is_data_scalar(node.value)
            self.returns_object = self._is_object(node.value) and self.returns_object is not False
            self.outputs.at_return(node)
            if isinstance(node.value, cst.Tuple):
                flags = [self.scope.is_tensor(el.value) for el in node.value.elements]
                old = self.returns_elements
                self.returns_elements = tuple(a or b for a, b in zip(flags, old)) if len(old) == len(flags) else tuple(flags)
        elif isinstance(node, cst.Return):
            self.returned = True
            self.outputs.at_return(node)
        elif isinstance(node, cst.Raise) and node.exc is not None:
            self.expr(node.exc)
        elif isinstance(node, cst.Assert):
            self.expr(node.test)
            if not self.scope.is_tensor(node.test) and self.values.truth(node.test) is False \
                    and not self.reads_default(node.test):
                self._failing_assert(node)
                return
            # Dynamo rewrites `assert cond` and `assert cond, "text"` into torch._assert (no
            # break, measured 2.13): the message must be one LOAD_CONST; with any other message
            # (an f-string with a placeholder, a variable) it jumps on the condition's truth
            if node.msg is not None and not _constant_string(node.msg):
                self.truthiness(node.test)

    def reads_symbols(self, test: cst.BaseExpression) -> bool:
        """Does a condition read what dynamic=True makes a symbol: a tensor's size (`x.shape`,
        `x.size(0)`, `x.numel()`, `len(x)`) or an int argument? Dynamo then evaluates the
        failing assert on symbolic shapes and cannot go on (measured 2.13: GB0002, the frame
        compiles up to a checkpoint or is skipped); a bool or None still fails at the jump."""
        for node in find_all(test, (cst.Attribute, cst.Call, cst.Name)):
            if isinstance(node, cst.Attribute) and node.attr.value == "shape" and self.scope.is_tensor(node.value):
                return True
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                    and node.func.attr.value in ("size", "numel") and self.scope.is_tensor(node.func.value):
                return True
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "len" \
                    and node.args and self.scope.is_tensor(node.args[0].value):
                return True
            if isinstance(node, cst.Name) and any(name == node.value for name, _ in self.key.arguments):
                value = self.values.value(node)
                if value is not None and type(value.value) is int:
                    return True
        return False

    def reads_default(self, expr: cst.BaseExpression) -> bool:
        """Does the expression read a parameter no call site passed (its default stands in)?
        A library entry is simulated with defaults a real caller would override, so what
        they make fail (`assert scale is not None`) is not reported as certain."""
        key = self.key
        passed = {n for n, _ in key.arguments} | set(key.tensor_params) | {n for n, _ in key.bindings}
        params = {p.name for p in self.function.params} if isinstance(self.source, FunctionInfo) else set()
        return any(n.value in params and n.value not in passed and n.value not in self.rebound
                   for n in find_all(expr, (cst.Name,)))

    def _failing_assert(self, node: cst.Assert) -> None:
        """An assert Dynamo knows fails (`assert x is None` of a tensor): it breaks at the
        jump and lets the program raise eagerly (measured 2.13: GB0170; inside a `with` it
        cannot compile a partial graph, GB0034, and the frame is skipped)."""
        if self.key.dynamic and self.reads_symbols(node.test) and self.causes.check_enabled(CauseCheck.SYMBOLIC_ASSERT):
            self.emit_break(self.causes.rule_for_check(CauseCheck.SYMBOLIC_ASSERT), node.test,
                            detail="assert " + cst.Module([]).code_for_node(node.test))
            return
        if not self.causes.check_enabled(CauseCheck.DATA_DEPENDENT_BRANCH):
            return
        in_with = any(c.kind == BlockKind.WITH for c in self.ctx)
        self.emit_break(self.causes.rule_for_check(CauseCheck.DATA_DEPENDENT_BRANCH), node.test,
                        gb_code=self.env.knowledge.gb_codes["failed_assert_in_with" if in_with else "failed_assert"])

    def assign_target(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        self.outputs.assign(target, value)
        if isinstance(target, (cst.Attribute, cst.Subscript)) and self._outside(target):
            self._returns_marked_intermediate(value)  # `box.v = y * 3`: an output as well
        if isinstance(target, cst.Attribute):
            self.causes.attribute_assign(target, value)
            return
        if isinstance(target, cst.Subscript):
            if isinstance(target.value, cst.Name):
                self.contents.forget(target.value.value)  # `x[0] = 5`: changed in place
            self.expr(target.value)
            self._index_parts(target)
            self.values.store_item(target, value)
            self.proxies.store(target)
            if self.index_reads.store(target):
                return
            self._item_dunder(target, "__setitem__", BreakKind.RESUMABLE)
            self.causes.item_store_dunder(target, value)
            return
        if isinstance(target, cst.Name):
            self._stores_global_hook_handle(target, value)
        self.parameter_locals.difference_update(target_names(target))  # (`p = x * 2`: no longer a parameter)
        if self._never_returns(value):
            return  # the call raises: nothing is stored
        self._build_element_callee(value)
        self.scope.assign(target, value)
        self.values.assign(target, value)
        self.resolver.remember(target, value)
        self.rebound.update(target_names(target))
        self.deleted_locals.difference_update(target_names(target))
        for name in target_names(target):
            self.unwrappable.pop(name, None)
            self.tensor_sets.discard(name)
        if isinstance(target, cst.Name) and isinstance(value, cst.Set) \
                and any(self.scope.is_tensor(el.value) for el in value.elements):
            self.tensor_sets.add(target.value)  # `seen = {a, b}`
        if isinstance(target, cst.Name) and self._makes_sparse(value):
            self.unwrappable[target.value] = CauseCheck.SPARSE_TENSOR_USE
        if isinstance(target, cst.Name) and target.value in self._fresh_globals():
            self.new_globals.add(target.value)
        if isinstance(target, cst.Name):
            self.index_reads.assign(target, value)
            (self.objects.add if self._is_object(value) else self.objects.discard)(target.value)
            (self.new_methods.add if self.causes.new_bound_method(value) else self.new_methods.discard)(target.value)
            self._hold_generator(target.value, value)
            if isinstance(value, cst.Call):
                self.built[target.value] = value
                self.built_at[target.value] = len(self.events)
            else:
                self.built.pop(target.value, None)
            if self.scope.is_tensor(value):
                self.tensor_made_at[target.value] = len(self.events)
            else:
                self.tensor_made_at.pop(target.value, None)
        if isinstance(target, cst.Name) and self.causes.is_logger(value):
            self.loggers.add(target.value)
        if isinstance(target, cst.Name):
            steps_passed = isinstance(value, cst.Call) and self.resolver.qualify(value.func) == "builtins.iter" \
                and bool(value.args) and self.causes.passed_iterator(value.args[0].value)
            (self.passed_iterators.add if steps_passed else self.passed_iterators.discard)(target.value)
            if isinstance(value, cst.Lambda):
                self.lambdas[target.value] = value
            else:
                self.lambdas.pop(target.value, None)
            self.profilers.discard(target.value)
            if self.causes.makes_opaque_object(value):
                self.opaque_objects.add(target.value)
            else:
                self.opaque_objects.discard(target.value)

    def _stores_global_hook_handle(self, target: cst.Name, value: cst.BaseExpression) -> None:
        """`global h; h = x.register_hook(fn)`: Dynamo refuses to store a tensor hook's handle
        in a global, at the STORE_GLOBAL it cannot resume after (measured 2.13: GB0100; in a
        local, a list, an attribute or returned, the handle is fine)."""
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                and value.func.attr.value in self.env.knowledge.hook_handle_methods \
                and self.scope.is_tensor(value.func.value) \
                and target.value in declared_outer(self.function.node.body, (cst.Global,)) \
                and self.causes.check_enabled(CauseCheck.GLOBAL_HOOK_HANDLE):
            self.emit_break(self.causes.rule_for_check(CauseCheck.GLOBAL_HOOK_HANDLE), target, detail=target.value)

    def _item_dunder(self, target: cst.Subscript, dunder: str, kind: BreakKind) -> None:
        """`os.environ[k] = v` / `del os.environ[k]` on a mapping whose item methods Dynamo
        skips (a rule names `os.environ.__setitem__`): a break at the store, which resumes, or
        at the delete, which does not (DELETE_SUBSCR; measured 2.13)."""
        holder = self.resolver.qualify(target.value)
        for rule in self.env.calls.get(f"{holder}.{dunder}", ()) if holder else ():
            if self.causes.rule_enabled(rule):
                self.emit_break(rule, target, break_kind=kind, detail=f"{holder}.{dunder}")
                return

    def delete(self, node: cst.Del) -> None:
        """`del name` of a global or a cell is DELETE_GLOBAL / DELETE_DEREF, which Dynamo has no
        handler for (measured 2.13: GB0082, the frame is skipped)."""
        for item in find_all(node.target, (cst.Subscript,)):
            self.proxies.store(item)
            self._item_dunder(item, "__delitem__", BreakKind.INSTRUCTION)
            self.causes.item_store_dunder(item, None)
        for target, base, key, exception in deleted_members(node):
            if not self.uncertain and not self._class_level(target):
                self.deleted_members[key] = (base, exception)
        names = list(target_names(node.target))
        if not names:
            return
        body = self.function.node.body
        cells = declared_outer(body) | (self.own_variables() & names_inner_scopes_read(body))
        for name in names:
            if name in cells:
                if self.causes.check_enabled(CauseCheck.DELETED_CELL):
                    self.emit_break(self.causes.rule_for_check(CauseCheck.DELETED_CELL), node, detail=f"del {name}")
                return
            if not self.uncertain:  # a plain local (DELETE_FAST): unbound until assigned again
                self.deleted_locals.add(name)

    def import_(self, node: cst.Import | cst.ImportFrom) -> None:
        """Importing a module the program cannot find: Dynamo turns the ImportError into a
        break it cannot resume after (measured 2.13: GB0069, the frame is skipped even when a
        `try` around the import catches ImportError). A relative import is the project's own."""
        if isinstance(node, cst.ImportFrom):
            names = [dotted(node.module)] if not node.relative and node.module is not None else []
        else:
            names = [dotted(alias.name) for alias in node.names]
        for name in names:
            if name and self.env.project.importable(name) is False and not self._named_in_text(name.split(".")[0]) \
                    and self.causes.check_enabled(CauseCheck.MISSING_IMPORT):
                self.emit_break(self.causes.rule_for_check(CauseCheck.MISSING_IMPORT), node, detail=f"import {name}")
                return

    def _named_in_text(self, module: str) -> bool:
        """Does the program make modules itself (`sys.modules[name] = ...`, `types.ModuleType`,
        an import hook on sys.meta_path), or does a string name this one: it may provide it."""
        project = self.env.project
        if any(project.mentioning(text) for text in (f'"{module}"', f"'{module}'", "meta_path")):
            return True
        return any(_COMPUTED_MODULE.search(m.parsed.text) for text in ("sys.modules[", "ModuleType(")
                   for m in project.mentioning(text))

    def raise_(self, node: cst.Raise) -> None:
        """A `raise` every trace reaches: the exception leaves the frame unless a try around it
        (here or in a caller Dynamo inlines this frame into) catches it (model.trace)."""
        if node.exc is not None:
            self.expr(node.exc)
        if node.exc is None:
            return
        exc = node.exc.func if isinstance(node.exc, cst.Call) else node.exc
        self.raises(node, (self.resolver.qualify(exc) or "").removeprefix("builtins."))

    def _raises_on_known_values(self, node: cst.BaseSmallStatement) -> None:
        """A statement Python raises in on the values known here (`a, b = (1, 2, 3)`,
        `xs.index("absent")`): Dynamo traces the same values and raises as well."""
        evaluator = self.values.evaluator
        if not isinstance(node, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Expr, cst.Return)) or node.value is None:
            return
        kinds = self.builtin_kinds()
        found = evaluator.raised_by(node.value, lambda expr: constant_display(self.function.node, expr),
                                    self._known_length, lambda n: kinds.raised_by(n) or missing_member(
                                        self.env.project, self.module, self.resolver, n))
        if found is None and isinstance(node, cst.Assign):
            found = next(filter(None, (kinds.store_raises(t.target) for t in node.targets)), None)
        if found is None and isinstance(node, cst.Assign):
            found = next(filter(None, (evaluator.unpack_raises(t.target, node.value) for t in node.targets)), None)
        if found is None and isinstance(node, cst.Assign):
            found = next(filter(None, (self._tensor_unpack_raises(t.target, node.value) for t in node.targets)), None)
            self.tensor_reads += found is not None  # unpacking wraps the tensor (its sizes are guarded)
        if found is None:
            found = self._operands_unsupported(node.value)
        if found is not None and not self.reads_default(node.value):
            self.raises(node, found)
        self._broadcast_mismatch(node.value)
        self._out_resized(node.value)

    def _tensor_unpack_raises(self, target: cst.BaseExpression, value: cst.BaseExpression) -> str | None:
        """`a, b = x` of a tensor whose known first size is not the number of names: ValueError,
        which Dynamo raises while tracing too (measured 2.13: GB0088, uncaught it skips the frame)."""
        if not isinstance(target, (cst.Tuple, cst.List)) or not self.scope.is_tensor(value) \
                or any(isinstance(el, cst.StarredElement) for el in target.elements):
            return None
        shape = self.values.shape_of(value)
        if not shape or shape[0] is None:
            return None  # (a 0-d tensor: Dynamo's own assertion, not an exception it traces)
        return "ValueError" if shape[0] != len(target.elements) else None

    def _broadcast_mismatch(self, expr: cst.BaseExpression) -> None:
        """`x + y` of tensors whose known sizes do not broadcast: the fake-tensor run fails."""
        if self.uncertain or not self.causes.check_enabled(CauseCheck.BROADCAST_MISMATCH):
            return
        shape_of = self.values.shape_of
        for node in find_all(expr, (cst.BinaryOperation,), skip=NESTED_SCOPES):
            if isinstance(node.operator, cst.MatrixMultiply):
                continue
            left, right = shape_of(node.left), shape_of(node.right)
            if left is not None and right is not None and broadcast(left, right) is None:
                sizes = f"{list(left)} and {list(right)}"
                self.emit_break(self.causes.rule_for_check(CauseCheck.BROADCAST_MISMATCH), node, detail=sizes)
                return

    def _out_resized(self, expr: cst.BaseExpression) -> None:
        """`torch.sigmoid(x, out=buf)` where buf's known size is not the result's: Dynamo breaks
        rather than resize an `out=` tensor (GB0247, measured 2.13: a local, an argument)."""
        if self.uncertain or not self.causes.check_enabled(CauseCheck.OUT_TENSOR_RESIZED):
            return
        for call in find_all(expr, (cst.Call,), skip=NESTED_SCOPES):
            out = out_argument(call)
            qual = self.resolver.qualify(call.func) if out is not None else None
            if out is None or qual is None or not qual.startswith("torch."):
                continue
            if isinstance(out, (cst.Tuple, cst.List)):
                if self._out_items_resized(call, qual, out):
                    return
                continue
            have = self.values.shape_of(out)
            result = self._result_shape(call, qual) if have is not None else None
            if have is None:
                continue
            if result is not None and have != result:
                sizes = f"{list(have)} for a result of {list(result)}"
            elif result is None and 0 in have and self._has_elements(call):  # an empty out tensor: resized
                sizes = f"{list(have)} for a result of non-empty operands"
            else:
                continue
            self.emit_break(self.causes.rule_for_check(CauseCheck.OUT_TENSOR_RESIZED), call, detail=sizes)
            return

    def _out_items_resized(self, call: cst.Call, qual: str, out: cst.Tuple | cst.List) -> bool:
        """`torch.sort(x, out=(values, indices))` with an out tensor whose known size is not
        the input's, of an op whose outputs all have its input's size (GB0240)."""
        operands = [a.value for a in call.args if a.keyword is None and not a.star]
        if qual.rpartition(".")[2] not in self.env.knowledge.input_sized_multi_output_ops or not operands:
            return False
        result = self.values.shape_of(operands[0])
        wrong = [have for have in (self.values.shape_of(el.value) for el in out.elements)
                 if result is not None and have is not None and have != result]
        if not wrong:
            return False
        rule = self.causes.rule_for_check(CauseCheck.OUT_TENSOR_RESIZED)
        self.emit_break(rule, call, gb_code=rule.gb_code_when["out_tuple"],
                        detail=f"{list(wrong[0])} for a result of {list(result)}")  # type: ignore[arg-type]
        return True

    def _has_elements(self, call: cst.Call) -> bool:
        """Does a tensor operand of the call have a known size with elements (whatever the op
        makes of it, a result with elements)?"""
        shapes = [self.values.shape_of(a.value) for a in call.args if a.keyword is None and not a.star]
        return any(shape is not None and 0 not in shape for shape in shapes)

    def _result_shape(self, call: cst.Call, qual: str) -> tuple[int, ...] | None:
        """The size of what a torch op returns: a shape-preserving op's argument's, the
        broadcast of a binary elementwise op's operands (FrameValues.broadcast_shape)."""
        if qual.rpartition(".")[2] not in self.env.knowledge.broadcasting_ops:
            return self.values.shape_of(call)
        operands = [a.value for a in call.args if a.keyword is None]
        return self.values.broadcast_shape(operands[0], operands[1]) if len(operands) >= 2 else None

    def _known_length(self, expr: cst.BaseExpression) -> int | None:
        """How many items a list/tuple display (or a local bound once to one) holds."""
        found = display_size(self.function.node, expr)
        if found is None:
            held = constant_display(self.function.node, expr)
            found = len(held) if held is not None else None
        return found

    def _keywords_of(self, name: str) -> Keywords | None:
        held = self.values.name_value(name)
        return held.value if held is not None and isinstance(held.value, Keywords) else None

    def _global_needing_grad(self, name: str) -> bool:
        """A module-level tensor that needs grad (`SCALE = nn.Parameter(...)`): what the frame
        computes from it is not plain."""
        if name not in self._global_grad:
            self._global_grad[name] = name in self.module.values and made_with_grad(
                self.env.project, self.env.knowledge, self.module, cst.Name(name), {}, None)
        return self._global_grad[name]

    def _global_module(self, name: str) -> bool:
        """A module-level module instance (`pre = nn.Linear(8, 8)`): its output needs grad."""
        if name not in self._global_modules:
            value = self.module.values.get(name) if name not in self.frame_parameters else None
            self._global_modules[name] = value is not None and self._module_instance(value)
        return self._global_modules[name]

    def _module_instance(self, value: cst.BaseExpression) -> bool:
        if not isinstance(value, cst.Call):
            return False
        qual = self.env.project.qualify(value.func, self.module) or ""
        if any(qual.startswith(prefix + ".") for prefix in self.env.knowledge.torch_module_prefixes):
            return True
        cls = self.env.project.created_class(value, self.module, None)
        return cls is not None and self.resolver.is_nn_module(cls)

    def _sequence_of(self, name: str) -> Seq | None:
        held = self.values.name_value(name)
        return held.value if held is not None and isinstance(held.value, Seq) else None

    def builtin_kinds(self) -> BuiltinKinds:
        if self._kinds is None:  # (one per frame: it memoises its locals' kinds)
            self._kinds = BuiltinKinds(self.function.node, self.resolver.qualify, self.values.evaluator.value)
        return self._kinds

    def _operands_unsupported(self, expr: cst.BaseExpression) -> str | None:
        """`a - b` on instances of project classes (with no base outside the project) that
        define neither `__sub__` on the left nor `__rsub__` on the right: Python raises
        TypeError, and so does Dynamo, tracing the same objects."""
        project = self.env.project
        for node in find_all(expr, (cst.BinaryOperation,), skip=NESTED_SCOPES):
            dunders = BINARY_DUNDERS.get(type(node.operator))
            if dunders is None or not (isinstance(node.left, cst.Name) and isinstance(node.right, cst.Name)):
                continue
            left, right = self.resolver.class_of(node.left), self.resolver.class_of(node.right)
            if left is None or right is None or project.external_bases(left) or project.external_bases(right):
                continue
            if project.method(left, dunders[0]) is None and project.method(right, dunders[1]) is None \
                    and project.class_attribute(left, dunders[0]) is None \
                    and project.class_attribute(right, dunders[1]) is None:
                return "TypeError"
        return None

    def _reads_deleted(self, node: cst.BaseSmallStatement) -> None:
        """Reading a local after `del` of it: Dynamo stops at the load (measured 2.13: GB0011,
        "Attempted to read undefined local variable", no resume point) and the program raises
        UnboundLocalError eagerly."""
        self._reads_unloadable(node, self.deleted_locals, CauseCheck.DELETED_LOCAL_READ)

    def _reads_deleted_member(self, node: cst.BaseSmallStatement) -> None:
        """Reading `o.a` / `d["k"]` after deleting it (model.deleted_members)."""
        hit = first_read(node, set(self.deleted_members))
        if hit is not None:
            self.raises(node, self.deleted_members.pop(hit[1])[1])
        touched = touched_bases(node)
        for key in [k for k, (base, _) in self.deleted_members.items() if base in touched]:
            del self.deleted_members[key]

    def _class_level(self, target: cst.CSTNode) -> bool:
        """`del self.a` of an attribute its class also sets at class level: reading it again
        finds the class's."""
        return isinstance(target, cst.Attribute) and self._class_sets(target, in_methods=False) is True

    def _reads_new_global(self, node: cst.BaseSmallStatement) -> None:
        """Reading a global this frame stored that existed nowhere before: Dynamo defers the
        store and finds the name neither in the frame's globals nor in its builtins (GB0354,
        measured 2.13), at a load it cannot resume after."""
        self._reads_unloadable(node, self.new_globals, CauseCheck.NEW_GLOBAL_READ)

    def _reads_unloadable(self, node: cst.BaseSmallStatement, names: set[str], check: CauseCheck) -> None:
        hit = sorted(_statement_reads(node) & names)
        if not hit:
            return
        names.discard(hit[0])  # the trace stops at the first such load
        if self.causes.check_enabled(check):
            self.emit_break(self.causes.rule_for_check(check), node, detail=hit[0])

    def _undefined_names(self) -> frozenset[str]:
        return self.env.node_memo("undefined_names", self.function.node,
                                  lambda: undefined_names(self.env.project, self.module, self.function))

    def _fresh_globals(self) -> frozenset[str]:
        """Names this function declares `global` that no module-level statement binds and no
        other function of the module declares `global` (which could create it first)."""
        if "global" not in self.parsed.text:  # most modules: no declaration to look for
            return frozenset()
        return self.env.node_memo("fresh_globals", self.function.node, self._find_fresh_globals)

    def _find_fresh_globals(self) -> frozenset[str]:
        module, own = self.module, self.function.node
        declared = declared_outer(own.body, (cst.Global,))
        if not declared or module.star_imports:
            return frozenset()
        elsewhere = set().union(*(declared_outer(fn.node.body, (cst.Global,))
                                  for fn in module.functions.values() if fn.node is not own))
        return frozenset(name for name in declared
                         if name not in elsewhere and not _bound_in_module(module, name))

    def raises(self, node: cst.CSTNode, exception: str) -> None:
        if self.uncertain or self.may_have_left or not self.causes.check_enabled(CauseCheck.UNCAUGHT_RAISE):
            return
        self.emit_break(self.causes.rule_for_check(CauseCheck.UNCAUGHT_RAISE), node, detail=exception)

    def stmt_If(self, node: cst.If) -> bool:
        self.expr(node.test)
        known = self.compile_time(node.test)
        if known is None:
            self.truthiness(node.test)
            known = self.contents.truth(node.test)  # the data decides: the break, then one side
            if known is None and self._skipped_guard(node):
                return False
        if known is not None:  # Dynamo specialises on the value: one side is traced
            branch = node.body if known else node.orelse
            return self._branch(branch)
        before = self.values.snapshot()
        self.uncertain += 1
        test = self.env.node_memo("source", node.test, lambda: _source(node.test))
        self.conditions.append(test)
        body_ends = self.block(node.body)
        self.conditions[-1] = f"not ({test})"
        after_body = self.values.snapshot()
        self.values.restore(before)
        else_ends = self._branch(node.orelse)
        self.conditions.pop()
        self.uncertain -= 1
        self.values.merge([after_body, self.values.snapshot()])
        return body_ends and else_ends

    def _branch(self, branch) -> bool:
        if isinstance(branch, cst.If):
            return self.stmt_If(branch)
        if isinstance(branch, cst.Else):
            return self.block(branch.body)
        if branch is not None:
            return self.block(branch)
        return False

    def compile_time(self, expr: cst.BaseExpression) -> bool | None:
        """The truth of a condition while Dynamo traces, when the values decide it (the names
        it reads are then guarded: a number there stays specialised, see FrameInfo.decided_by)."""
        truth = self.values.truth(expr)
        if truth is not None:
            self.decided_by.update(n.value for n in find_all(expr, (cst.Name,)))
        return truth

    def _skipped_guard(self, node: cst.If) -> bool:
        """`if torch.isnan(loss).any(): print(...)` / `if self.config.debug: print(...)`: an if
        with no else whose body only reports, guarded by tensor data, a configuration flag or
        sizes the frame does not know (`if x.shape[0] > 1024: warnings.warn(...)`).
        Which way it goes is unknowable statically; such guards are assumed not taken
        (knowledge: guards_not_taken) so their bodies are not traced."""
        k = self.env.knowledge
        if not k.guards_not_taken or node.orelse is not None or not _only_reports(node.body):
            return False
        test = node.test
        if self.scope.is_tensor(test) or self.scope.is_data_scalar(test) or _reads_sizes(test):
            return True  # (sizes the frame does not know: `if x.shape[0] > 1024: warn(...)`)
        return _is_flag(test) and test.attr.value not in k.flags_usually_on

    def stmt_While(self, node: cst.While) -> None:
        self.contents.forget_all(changed_names(node))
        # The first test runs before the loop; Dynamo resumes there and meets the
        # re-test at the loop's bottom once more in the resume function (measured: 2 hits).
        self.values.forget_loop(node.body)
        self.expr(node.test)
        self.truthiness(node.test, hits=2)
        self.loop_body(node, node.body)
        if node.orelse is not None:
            self.block(node.orelse.body)

    def stmt_For(self, node: cst.For) -> None:
        self.contents.forget_all(changed_names(node))  # (what a later iteration sees is not followed)
        # The iterable is evaluated once, before the loop: a break there is not in the loop
        # (Dynamo finds no back-edge after it). A generator's body runs at each FOR_ITER: in it.
        in_loop = self._runs_generator(node.iter)
        if in_loop:
            self.ctx.append(Ctx(BlockKind.LOOP, self.line(node)))
        self.expr(node.iter)
        if in_loop:
            self.ctx.pop()
        self.causes.iteration_dunder(node.iter)
        self._iterates_passed_iterator(node.iter)
        raised = self.values.evaluator.iteration_raises(node.iter, self._known_length)
        if raised is not None:  # `for v in n` of a number: iter() raises before the body runs
            self.raises(node.iter, raised)
        self.scope.assign(node.target, None, tensor=self.scope.iterates_tensors(node.iter))
        # `for layer in self.layers:` a layer holds parameters: what it computes needs grad
        self.grad_leaks.assigned(target_names(node.target), node.iter, not self.causes.grad_off())
        key = _dict_items_key(node)
        if key is not None:  # `for name, loss in losses.items()`: a key is no tensor
            self.scope.assign(key, None, tensor=False)
        self.rebound.update(target_names(node.target))
        self._iterated_parameters(node)
        unrolled = self.values.unrolled(node)  # the locals after it, when Dynamo unrolls it on constants
        self.values.assign(node.target, None)
        self.values.forget_loop(node.body, node.target)
        self.values.bind_only_item(node)
        self.resolver.remember_iteration(node.target, node.iter)
        self.loop_body(node, node.body)
        if node.orelse is not None:
            self.block(node.orelse.body)
        if unrolled is not None:
            self.values.restore(unrolled)

    def _runs_generator(self, iterable: cst.BaseExpression) -> bool:
        """Does iterating `iterable` run code at each step: a generator's body (a generator
        expression, a call of a generator function, directly or inside `enumerate(...)` /
        `zip(...)`), the function given to `map` / `filter`?"""
        lazy = self.env.knowledge.lazy_calling_iterators
        if any(n.value in self.generators for n in find_all(iterable, (cst.Name,), skip=NESTED_SCOPES)):
            return True  # a generator held in a local
        for node in find_all(iterable, (cst.GeneratorExp, cst.Call), skip=NESTED_SCOPES):
            if isinstance(node, cst.GeneratorExp) or self.resolver.qualify(node.func) in lazy:
                return True
            target = self.resolver.resolve(node.func)
            if target is not None and target.function.is_generator:
                return True
        return False

    def _callee_raises(self, start: int) -> bool:
        """Does a call made since event `start`, always run, reach a `raise` every trace of its
        frame meets, uncaught there (`try: y = check(y)` of a check raising on these shapes)?"""
        return any(ev.kind == EventKind.CALL and ev.target is not None and not ev.condition
                   and _raises_uncaught(self.env.frame(ev.target), self.env) for ev in self.events[start:])

    def loop_body(self, node, body) -> None:
        start = len(self.events)
        stepped = self.yields_seen < self.key.skip_yields and bool(find_all(body, (cst.Yield,), skip=NESTED_SCOPES))
        if stepped:
            # the consumer's items may all come from this loop, whose body then runs again: the
            # step resumes at its yield (what follows it in the body runs) and stops at the next
            self.yields_seen = self.key.skip_yields - 1
        self.ctx.append(Ctx(BlockKind.LOOP, self.line(node)))
        self.block(body)
        self.ctx.pop()
        if stepped and self.key.take_yields is not None:  # (its next iteration gives the item taken)
            self.yields_seen = max(self.yields_seen, self.key.skip_yields + self.key.take_yields)
        returns = _own_return_lines(body, self.line)
        if returns:  # Dynamo's back-edge scan stops at a return: such breaks are resumable
            self.events[start:] = [_mark_escape(ev, returns, self.line(node)) for ev in self.events[start:]]

    def stmt_Try(self, node) -> None:
        line = self.line(node)
        self.ctx.append(Ctx(BlockKind.TRY, line, swallows=tuple(n for h in node.handlers for n in _swallows(h))))
        raises = self._may_raise(node.body)  # (asked before the body binds its names)
        start, before = len(self.events), self.values.snapshot()
        body_ends = self.block(node.body)
        if isinstance(node, cst.TryStar) and (_raises_at_top(node.body) or self._callee_raises(start)) \
                and self.causes.check_enabled(CauseCheck.EXCEPT_STAR_MATCH):
            protected = self.ctx.pop()  # (the match runs in the handler, outside the protected body)
            self.emit_break(self.causes.rule_for_check(CauseCheck.EXCEPT_STAR_MATCH), node.handlers[0], detail="except*")
            self.ctx.append(protected)
        self.uncertain += 1
        ways = [self.values.snapshot()]  # the body ran through, or one handler ran after it
        for handler in node.handlers if raises else ():
            self.values.restore(before)
            self.values.forget_try(node.body)  # (it may run after any statement of the body)
            found = _stop_iteration_values(handler, self.resolver.qualify, self.function.node.body)
            outer, self.stop_values = self.stop_values, self.stop_values | found
            try:
                if not self.block(handler.body):  # (one that raises or returns leaves no values after the try)
                    ways.append(self.values.snapshot())
            finally:  # (`e` is deleted after its handler; a local holding `e.value` lives on)
                self.stop_values = outer | {held for held in found if held.startswith("=")}
        self.values.merge(ways)
        self.uncertain -= 1
        self.ctx.pop()
        if node.orelse is not None and not body_ends:  # `else:` runs only when the body finished
            # which the handlers say it may not: `try: del tb.x / except TypeError: pass / else:
            # raise AssertionError` (a test's assertRaises) raises only if the body did not
            self.uncertain += bool(node.handlers)
            self.block(node.orelse.body)
            self.uncertain -= bool(node.handlers)
        if node.finalbody is not None:
            self.block(node.finalbody.body)

    stmt_TryStar = stmt_Try

    def _may_raise(self, body) -> bool:
        """Can the body raise while Dynamo traces it? Only then does it trace a handler. Tensor
        operations and torch functions do not (a tensor divided by zero holds inf); a `raise`,
        an `assert`, a call of anything else or indexing a Python value may."""
        for node in find_all(body, (cst.Raise, cst.Assert, cst.Call, cst.Subscript), skip=NESTED_SCOPES):
            if isinstance(node, cst.Call):
                receiver = node.func.value if isinstance(node.func, cst.Attribute) else None
                qual = self.resolver.qualify(node.func)
                if (receiver is not None and self.scope.is_tensor(receiver)) or (qual or "").startswith("torch."):
                    continue
            elif isinstance(node, cst.Subscript) and self.scope.is_tensor(node.value):
                continue
            return True
        return False

    def stmt_With(self, node: cst.With) -> bool:
        """True when the body always ends the frame (a `return` in it: what follows the block
        is not reached on that path)."""
        pushed = 0
        for item in node.items:
            self.expr(item.item)
            ctx = self.causes.context_manager(item.item, node)
            if ctx is None:  # entering it is itself an unresumable break: the body then runs
                # eagerly, and the functions it calls are still compiled as frames of their own
                ctx = Ctx(BlockKind.WITH, self.line(node), label="")
            self.ctx.append(ctx)
            pushed += 1
            if ctx.kind == BlockKind.WITH:
                self._enter_generator_context(item.item, ctx)
                self.causes.context_method(item.item, "__enter__")
            if item.asname is not None:
                self.scope.assign(item.asname.name, None, tensor=False)
                self.values.assign(item.asname.name, None)
                self._hold_profiler(item)
        ends = self.block(node.body)
        for item, ctx in zip(reversed(node.items[:pushed]), reversed(self.ctx[len(self.ctx) - pushed:])):
            if ctx.kind == BlockKind.WITH:
                self.causes.context_method(item.item, "__exit__")
        del self.ctx[len(self.ctx) - pushed:]
        return ends

    def _hold_profiler(self, item: cst.WithItem) -> None:
        name = item.asname.name if item.asname is not None else None
        if not isinstance(name, cst.Name):
            return
        made_by = self.resolver.qualify(item.item.func) if isinstance(item.item, cst.Call) else None
        (self.profilers.add if made_by in self.env.knowledge.profiler_objects else self.profilers.discard)(name.value)

    def _enter_generator_context(self, item: cst.BaseExpression, ctx: Ctx) -> None:
        """`with cm(x):` of a @contextmanager generator: its body runs as the block is entered
        and left, so a break there (before or after the yield) is a break entering an
        unsupported block, not a consumed generator (measured 2.13: the frame is compiled up
        to its checkpoint before the `with` and runs eagerly from there)."""
        last = self.events[-1] if self.events else None
        if last is None or last.kind != EventKind.CALL or last.span != self.span(item):
            return
        if last.mode == CallMode.GENERATOR:
            self.events[-1] = replace(last, mode=CallMode.INLINE, ctx=last.ctx + (ctx,), with_method=True)
            return
        made = self._returned_context_generator(last.target)
        if made is not None:  # `with self.region():` of a helper returning `scope("r")`: entering runs scope's body
            self.events.append(replace(last, target=made, mode=CallMode.INLINE, ctx=last.ctx + (ctx,),
                                       with_method=True))

    def _returned_context_generator(self, target) -> FrameKey | None:
        """The @contextmanager generator a called frame makes and returns (built there with
        none of its body run): its frame as entering the object runs it."""
        info = self.env.frame(target) if isinstance(target, FrameKey) else None
        returned = [ev.target for ev in info.events if ev.kind == EventKind.CALL and isinstance(ev.target, FrameKey)
                    and ev.target.take_yields == 0] if info is not None else []
        return replace(returned[-1], take_yields=None) if len(returned) == 1 else None

    def stmt_Match(self, node) -> None:
        self.expr(node.subject)
        for case in node.cases:
            self.block(case.body)

    def stmt_FunctionDef(self, node) -> None:
        for dec in node.decorators:
            if self._nonstrict_trace_in_region(dec):
                continue
            self.expr(dec.decorator)
            self._decorator_call(dec.decorator)
            self._comptime_body(dec.decorator, node)

    def _decorator_call(self, decorator: cst.BaseExpression) -> None:
        """`@torch.compiler.disable` on a def inside compiled code calls the decorator there: a
        decorator that is itself a function Dynamo skips breaks at its line (measured 2.13: GB0007)."""
        if isinstance(decorator, cst.Call):
            self._disable_factory_applied(decorator)  # `@deco(args)`: that call was classified with the expression
            return
        qual = self.resolver.qualify(decorator)
        for rule in self.env.calls.get(qual or "", ()):
            if self.causes.rule_enabled(rule):
                self.emit_break(rule, decorator, detail=(qual or "").rsplit(".", 1)[-1])
                return

    def _disable_factory_applied(self, factory: cst.Call) -> None:
        """`@torch.compiler.disable(recursive=False)` on a def inside compiled code (or
        `torch._dynamo.disable(reason=...)(fn)`): the call without the function broke already
        (GB0007) and returned a decorator Dynamo skips too, so applying it breaks again at the
        same line (measured 2.13: GB0007 for `recursive=False`'s function, GB0008 for the
        DisableContext of a recursive disable)."""
        qual = self.resolver.qualify(factory.func)
        if qual is None or qual not in self.env.knowledge.disable_factories or any(
                a.keyword is None or a.keyword.value == "fn" for a in factory.args):
            return
        how = "applied_nonrecursive_factory" if nonrecursive(factory) else "applied_factory"
        for rule in self.env.calls.get(qual, ()):
            if self.causes.rule_enabled(rule):
                self.emit_break(rule, factory, detail=qual.rsplit(".", 1)[-1],
                                gb_code=self.env.knowledge.disable_gb_codes.get(how, rule.gb_code))
                return

    def _comptime_body(self, decorator: cst.BaseExpression, fn: cst.FunctionDef | cst.Lambda) -> None:
        """`@comptime def _(ctx): ctx.graph_break()` (or `comptime(lambda ctx: ...)`): Dynamo runs
        the body while tracing, and its context's `graph_break()` breaks there (GB0030)."""
        if self.resolver.qualify(decorator) not in self.env.knowledge.comptime_runners:
            return
        params = fn.params.params
        if not params:
            return
        ctx = params[0].name.value
        asks = any(isinstance(c.func, cst.Attribute) and c.func.attr.value == "graph_break"
                   and isinstance(c.func.value, cst.Name) and c.func.value.value == ctx
                   for c in find_all(fn.body, (cst.Call,)))
        if not asks:
            return
        for name in self.env.knowledge.comptime_graph_breaks:  # the rule `comptime.graph_break()` calls name
            for rule in self.env.calls.get(name, ()):
                if self.causes.rule_enabled(rule):
                    self.emit_break(rule, decorator, detail="graph_break")
                    return

    def stmt_ClassDef(self, node) -> None:
        for expr in [d.decorator for d in node.decorators] + [arg.value for arg in node.bases]:
            self.expr(expr)
        rule = self.causes.rule_for_check(CauseCheck.CLASS_DEFINITION)
        if rule is not None and self.causes.check_enabled(CauseCheck.CLASS_DEFINITION):
            self.emit_break(rule, node.name, detail=node.name.value)
            self._class_body_frame(node)

    def _class_body_frame(self, node: cst.ClassDef) -> None:
        """Past the break, Python runs the class body as a frame of its own under Dynamo's
        frame hook, which compiles it when its code names a global bound to torch
        (has_tensor_in_frame) and stops at its first instruction, LOAD_NAME, which has no
        handler (measured 2.13: GB0082, the body skipped)."""
        rule = self.causes.rule_for_check(CauseCheck.CLASS_BODY)
        if rule is None or not self.causes.check_enabled(CauseCheck.CLASS_BODY):
            return
        evaluated = self.module.imports.get("annotations") != "__future__.annotations"
        if not any(self.env.project.is_frame_trigger_global(self.module, n)
                   for n in class_body_names(node, annotations=evaluated)):
            return
        # the body's first instruction is on the first decorator's line, the code object's on
        # the `class` line (measured 3.11)
        span = self.span(node.decorators[0].decorator if node.decorators else node.name)
        name = node.name.value
        qualname = f"{self.function.qualname}.{name}.<body>"
        first = Event(EventKind.BREAK, span, (), rule=rule.code, break_kind=rule.break_kind,
                      gb_code=rule.gb_code, detail="LOAD_NAME")
        key = FrameKey(f"{qualname}@{span.line}")
        self.env.register_synthetic(FrameInfo(key, name, qualname, str(self.parsed.path), self.line(node.name),
                                              (first,), uses_torch=True))
        self.emit(EventKind.CALL, node.name, target=key, mode=CallMode.WRAPPED)

    # -- expressions -----------------------------------------------------------------
    def expr(self, node: cst.BaseExpression) -> None:
        if isinstance(node, cst.Name) and self.scope.is_tensor(node):
            self.tensor_reads += 1
        if isinstance(node, cst.Call):
            if not self._stop_value_operation(node):
                self.call(node)
        elif isinstance(node, (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)):
            self.comprehension(node)
        elif isinstance(node, cst.Lambda):
            return
        elif isinstance(node, cst.Name) and node.value in self.generators:
            self._consume_generator(node)
        elif isinstance(node, cst.Name) and node.value in self.unwrappable:
            self._wraps_unwrappable(node, self.unwrappable.pop(node.value), node.value)
        elif isinstance(node, cst.IfExp):
            self.expr(node.test)
            known = self.compile_time(node.test)
            if known is None:
                self.truthiness(node.test)
            if known is not False:
                self.expr(node.body)
            if known is not True:
                self.expr(node.orelse)
        elif isinstance(node, cst.BooleanOperation):
            self.expr(node.left)
            if self._short_circuits(node):
                return  # `is_compiling() or x`, `self.training and ...`: the right side never runs
            if self.compile_time(node.left) is None:
                self.truthiness(node.left, compound=False)
            self.expr(node.right)
        elif isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            self.expr(node.expression)
            self.truthiness(node.expression, compound=False)
        elif isinstance(node, cst.Attribute):
            self.expr(node.value)
            self.causes.attribute_read(node)
        elif isinstance(node, cst.Subscript):
            self.expr(node.value)
            self._index_parts(node)
            self.subscript(node)
            self.causes.operator_dunder(node)
        else:
            for child in _expr_children(node):
                if not (isinstance(node, (cst.List, cst.Tuple, cst.Set)) and self._lazy_alias(child)):
                    self.expr(child)  # (an uninitialized module put in a list is not wrapped yet)
            if isinstance(node, cst.Yield) and isinstance(node.value, cst.BaseExpression):
                self.yields_tensor |= self.scope.is_tensor(node.value)
            if isinstance(node, (cst.Comparison, cst.BinaryOperation)) and self._data_pointer_operation(node):
                return
            if self._stop_value_operation(node):
                return
            if isinstance(node, (cst.BinaryOperation, cst.Comparison, cst.UnaryOperation)) \
                    and self.scope.is_tensor(node):
                self.emit(EventKind.OP, node)
            elif isinstance(node, cst.Comparison) and self.scope.is_tensor_contains(node) \
                    and self.causes.check_enabled(CauseCheck.TENSOR_CONTAINS):
                operator = "not in" if isinstance(node.comparisons[0].operator, cst.NotIn) else "in"
                self.emit_break(self.causes.rule_for_check(CauseCheck.TENSOR_CONTAINS), node, detail=operator)
            elif isinstance(node, (cst.BinaryOperation, cst.Comparison)):
                self.causes.operator_dunder(node)

    def _index_parts(self, node: cst.Subscript) -> None:
        """The indexes and slice bounds, evaluated before the item is read or stored."""
        for el in node.slice:
            if isinstance(el.slice, cst.Index):
                self.expr(el.slice.value)
            for bound in slice_bounds(el):
                self.expr(bound)

    def star_tuple(self, expr: cst.BaseExpression) -> bool:
        """The frame's `*args` (or `list(args)` / `tuple(args)` of it): a tuple holding
        tensors, not a tensor; indexing or copying it is no graph op."""
        if isinstance(expr, cst.Call) and len(expr.args) == 1 and \
                self.resolver.qualify(expr.func) in ("builtins.list", "builtins.tuple"):
            expr = expr.args[0].value
        return isinstance(expr, cst.Name) and any(p.kind == "star" and p.name == expr.value for p in self.function.params)

    def _short_circuits(self, node: cst.BooleanOperation) -> bool:
        """Is the right operand never evaluated under Dynamo (`True or x`, `False and x`)?"""
        left = self.compile_time(node.left)
        return left is not None and left == isinstance(node.operator, cst.Or)

    def subscript(self, node: cst.Subscript) -> None:
        if self.index_reads.subscript(node) or self.proxies.subscript(node):
            return
        if not self.scope.is_tensor(node.value) or self.star_tuple(node.value):
            return
        masks = [el.slice.value for el in node.slice
                 if isinstance(el.slice, cst.Index) and self.scope.is_bool_tensor(el.slice.value)]
        if masks and self.causes.check_enabled(CauseCheck.DYNAMIC_SHAPE_INDEX):
            self.emit_break(self.causes.rule_for_check(CauseCheck.DYNAMIC_SHAPE_INDEX), node)
        else:
            self.emit(EventKind.OP, node)

    def truthiness(self, test: cst.BaseExpression, hits: int = 1, compound: bool = True) -> None:
        """Python asks a value for its truth here: a tensor value is a data-dependent jump."""
        if compound and isinstance(test, cst.BooleanOperation):
            if not self._short_circuits(test):
                self.truthiness(test.right, hits)  # the left side was checked when it was evaluated
            return
        if compound and isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            return
        self.causes.truth_dunder(test)
        if not self.causes.check_enabled(CauseCheck.DATA_DEPENDENT_BRANCH):
            return
        rule = self.causes.rule_for_check(CauseCheck.DATA_DEPENDENT_BRANCH)
        if self.scope.is_tensor(test) or isinstance(test, cst.Comparison) and self.scope.is_tensor_membership(test):
            self.emit_break(rule, test, hits=hits)
        elif self.scope.is_data_scalar(test):  # `.item()` breaks unless captured: then its value is symbolic
            passed = {n for n, v in self.key.arguments if v == PASSED_DATA_SCALAR} - self.rebound
            # under fullgraph the branch on the captured value raises a UserError (a guard on
            # data-dependent symbols) that carries no GB code: nothing reported, nothing cached
            self.emit_break(rule, test, hits=hits, needs_config=CAPTURED_SCALARS, lenient_only=True,
                            inlined_only=any(n.value in passed for n in find_all(test, (cst.Name,))))

    def call(self, node: cst.Call) -> None:
        if self.generators and (self._step_generator(node) or self._close_generator(node)
                                or self._context_by_hand(node)) or self._stepped_by_callee(node):
            return
        func = node.func
        if isinstance(func, cst.Attribute):
            self.expr(func.value)
            self.causes.property_read(func)  # `self.loss_function(...)`: the getter runs first
            if self._makes_sparse(func.value):  # `x.to_sparse().to_dense()`: the resume function's input
                self._wraps_unwrappable(node, CauseCheck.SPARSE_TENSOR_USE, cst.Module([]).code_for_node(func.value))
        elif not isinstance(func, cst.Name):
            self.expr(func)
        arguments_from = len(self.events)
        if isinstance(func, cst.Call):  # `torch._dynamo.disable(recursive=False)(fn)`
            self._disable_factory_applied(func)
        for arg in node.args:
            if id(arg.value) not in self.evaluated:
                self.expr(arg.value)
        self._pending_method(node, arguments_from)
        self._forget_resized(node)
        if isinstance(func, cst.Name) and self.unwrappable.get(func.value) == CauseCheck.EMPTY_MODULE_USE:
            self.expr(func)  # `mod(x)` of an uninitialized module: the call wraps it and stops there
            return
        if isinstance(func, cst.Attribute) and func.attr.value == "add" and isinstance(func.value, cst.Name) \
                and len(node.args) == 1 and self.scope.is_tensor(node.args[0].value):
            self.tensor_sets.add(func.value.value)  # `seen.add(t)`: only sets have `add`
        if node.args and isinstance(node.args[0].value, cst.Lambda):  # `comptime(lambda ctx: ...)`
            self._comptime_body(func, node.args[0].value)
        if self._asks_tensor_truth(node) and self.causes.check_enabled(CauseCheck.DATA_DEPENDENT_BRANCH):
            self.emit_break(self.causes.rule_for_check(CauseCheck.DATA_DEPENDENT_BRANCH), node)
            return
        if self._captured_many_elements(node):
            return
        keys = self._non_constant_sort_keys(node)
        if keys is not None and self.causes.check_enabled(CauseCheck.SORT_NON_CONSTANT_KEYS):
            self.emit_break(self.causes.rule_for_check(CauseCheck.SORT_NON_CONSTANT_KEYS), node, detail=keys)
            return
        if self._bad_check_message(node) or self._nonstrict_trace_in_region(node) or self.index_reads.slice_call(node) \
                or self.proxies.call(node):
            return
        self._marks_intermediate(node)
        self._stored_outside(node)
        self.contents.forget_changed(node, self.resolver.qualify(node.func))
        self.causes.classify_call(node)

    def _pending_method(self, node: cst.Call, arguments_from: int) -> None:
        """`x.mul(h(x))` with a break point among the arguments: a resume function starting
        there gets the bound method from the stack. A bound C method of a tensor Dynamo wraps
        as a skipped function, so calling it breaks again (measured 2.13: GB0007 at the call, in
        `torch_dynamo_resume_in_f_at_N`, resumed; nested graph breaks too); `torch.mul(x, h(x))`,
        module calls and tensor methods written in Python are rebuilt and do not. A method of a
        class Dynamo skips (`self.assertTrue(h(x))`) is called there as a skipped function
        too: GB0007, not the GB0008 of inlining it (model.trace skips that call after it)."""
        func = node.func
        if not isinstance(func, cst.Attribute) \
                or not any(e.kind in (EventKind.CALL, EventKind.BREAK) for e in self.events[arguments_from:]):
            return
        if func.attr.value not in self.env.knowledge.python_tensor_methods and self._holds_tensor(func.value) \
                and self.causes.check_enabled(CauseCheck.PENDING_TENSOR_METHOD):
            rule, detail = self.causes.rule_for_check(CauseCheck.PENDING_TENSOR_METHOD), func.attr.value
        elif (skipped := self.causes.skipped_method(node)) is not None:
            rule, detail = self.causes.rule_for_check(CauseCheck.DISALLOWED_CALL), skipped
        else:
            return
        self.emit(EventKind.PENDING, node, rule=rule.code, gb_code=rule.gb_code, break_kind=BreakKind.RESUMABLE,
                  detail=detail, input_from=arguments_from + 1)

    def _holds_tensor(self, expr: cst.BaseExpression) -> bool:
        """A tensor value, a module's tensor attribute (`self.weight`) or a torch layer's
        parameter (`self.fc.weight`) included."""
        if self.scope.is_tensor(expr):
            return True
        return isinstance(expr, cst.Attribute) and (self.self_attribute_is_tensor(expr) or (
            expr.attr.value in self.env.knowledge.layer_parameters and self.resolver.torch_layer(expr.value)))

    def _forget_resized(self, node: cst.Call) -> None:
        """`y.t_()`, `y.resize_(3)`, `torch.add(a, b, out=y)`: the call gives `y` another size
        (the statement's own size checks ran before it); what follows no longer knows it."""
        func = node.func
        changed = [func.value] if isinstance(func, cst.Attribute) \
            and func.attr.value in self.env.knowledge.size_changing_inplace_methods else []
        out = out_argument(node)
        changed += [el.value for el in out.elements] if isinstance(out, (cst.Tuple, cst.List)) else [out] if out else []
        for target in changed:
            if isinstance(target, cst.Name):
                self.values.assign(target, None)

    def _captured_many_elements(self, node: cst.Call) -> bool:
        """`bool(t)` / `int(t)` / `float(t)` of a tensor known to hold other than one element,
        with capture_scalar_outputs on: Dynamo captures the conversion as an `.item()` and the
        fake-tensor run of it fails (measured 2.13: GB4315, torch.compile raises, with or
        without fullgraph). Off, the conversion is a break (GBL309) and fails when run eagerly."""
        if self.uncertain or not self.env.flag(CAPTURED_SCALARS) or not isinstance(node.func, cst.Name) \
                or node.func.value not in _SCALAR_CONVERSIONS or len(node.args) != 1 or node.args[0].keyword:
            return False
        if self.resolver.qualify(node.func) != f"builtins.{node.func.value}":
            return False
        shape = self.values.shape_of(node.args[0].value) if self.scope.is_tensor(node.args[0].value) else None
        if shape is None or math.prod(shape) == 1 or not self.causes.check_enabled(CauseCheck.CAPTURED_MANY_ELEMENTS):
            return False
        self.emit_break(self.causes.rule_for_check(CauseCheck.CAPTURED_MANY_ELEMENTS), node, detail=str(list(shape)))
        return True

    def _marks_intermediate(self, node: cst.Call) -> None:
        """`y.requires_grad_()` (or `(True)`) of a tensor this frame computed, not an input: kept
        pending until a returned value needs it (model.grad_leaks)."""
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "requires_grad_" or len(node.args) > 1 \
                or node.args and not (isinstance(node.args[0].value, cst.Name) and node.args[0].value.value == "True"):
            return
        receiver = func.value
        computed = isinstance(receiver, cst.Name) and receiver.value in self.rebound \
            and receiver.value not in self.parameter_locals or isinstance(receiver, (cst.Call, cst.BinaryOperation))
        if computed and self.scope.is_tensor(receiver) and not self.grad_leaks.needs_grad(receiver):
            self.grad_leaks.marked(node, receiver, PendingBreak(len(self.events), node, tuple(self.ctx), self.tensor_reads))

    def _stored_outside(self, node: cst.Call) -> None:
        """`store.append(y * 3)` into a container the frame was given (or a global): what it
        holds outlives the frame, an output of the graph like a returned value. Into one the
        frame made, the container carries the mark (returned later, it needs the grad)."""
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "clear" and isinstance(func.value, cst.Name):
            self.grad_leaks.cleared(func.value.value)
        if not (isinstance(func, cst.Attribute) and func.attr.value in _CONTAINER_STORES) \
                or self.scope.is_tensor(func.value):  # (`x.add(y)` of a tensor stores nothing)
            return
        if self._outside(func.value):
            for arg in node.args:
                self._returns_marked_intermediate(arg.value)
        elif isinstance(func.value, cst.Name):  # `acc.append(y * 3)`: the frame's list holds it now
            self.grad_leaks.stored(func.value.value, [arg.value for arg in node.args])

    def _outside(self, target: cst.BaseExpression) -> bool:
        """A store target the frame did not make: rooted at a parameter, `self` or a global."""
        while isinstance(target, (cst.Attribute, cst.Subscript)):
            target = target.value
        return isinstance(target, cst.Name) and target.value not in self.rebound

    def _returns_marked_intermediate(self, value: cst.BaseExpression) -> None:
        """A returned value needs grad from a marked intermediate: the break Dynamo makes at the
        first `requires_grad_()` call after restarting, put where that call was traced."""
        pending = self.grad_leaks.returned(value)
        check = CauseCheck.REQUIRES_GRAD_INTERMEDIATE_RETURNED
        if pending is None or not self.causes.check_enabled(check):
            return
        rule = self.causes.rule_for_check(check)
        span = self.span(pending.node)
        # the resume function starts after the call: it is no method of a resumed input there
        self.events[pending.index:] = [Event(kind=EventKind.BREAK, span=span, ctx=pending.ctx,
                                             tensor_reads=pending.tensor_reads, rule=rule.code,
                                             break_kind=rule.break_kind, gb_code=rule.gb_code, lenient_only=True),
                                       *(e for e in self.events[pending.index:]
                                         if not (e.span == span and e.input_from >= 0))]

    def _nonstrict_trace_in_region(self, node: cst.Call | cst.Decorator) -> bool:
        """`nonstrict_trace(inner)` in compiled code, of a function the frame defines (a nested
        def, a lambda) or as a nested def's decorator: Dynamo refuses it (GB0078) and breaks there."""
        if isinstance(node, cst.Decorator):
            func: cst.BaseExpression = node.decorator
            defined_here = True
        else:
            func, first = node.func, node.args[0].value if node.args else None
            defined_here = isinstance(first, cst.Lambda) or \
                isinstance(first, cst.Name) and first.value in self.function.local_functions
        if not defined_here or self.resolver.qualify(func) not in self.env.knowledge.region_nonstrict_trace \
                or not self.causes.check_enabled(CauseCheck.NONSTRICT_TRACE_IN_REGION):
            return False
        self.emit_break(self.causes.rule_for_check(CauseCheck.NONSTRICT_TRACE_IN_REGION), func)
        return True

    def _bad_check_message(self, node: cst.Call) -> bool:
        """`torch._check(cond, message)` whose message Dynamo cannot convert: a break at the call."""
        message = message_argument(node, self.resolver.qualify(node.func), self.env.knowledge)
        bad = unconvertible_message(self, message) if message is not None else None
        if bad is None or not self.causes.check_enabled(CauseCheck.CHECK_MESSAGE):
            return False
        self.emit_break(self.causes.rule_for_check(CauseCheck.CHECK_MESSAGE), node, detail=bad.detail,
                        gb_code=self.env.knowledge.gb_codes[bad.gb_key])
        return True

    def _non_constant_sort_keys(self, node: cst.Call) -> str | None:
        """What the keys of `sorted(xs, key=...)` / `xs.sort(key=...)` are when they are not
        Python constants, which Dynamo cannot sort: tensors, or instances of a project class."""
        k, func = self.env.knowledge, node.func
        first = node.args[0] if node.args else None
        if self.resolver.qualify(func) in k.constant_key_sorts and first is not None \
                and first.keyword is None and not first.star:
            items = first.value
        elif isinstance(func, cst.Attribute) and func.attr.value in k.constant_key_sort_methods \
                and not self.scope.is_tensor(func.value):
            items = func.value
        else:
            return None
        key = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == "key"), None)
        tensors = self._holds_tensors(items) or self.scope.is_tensor_sequence(items)
        if key is None or literal(key) == Const(None):
            return "tensors" if tensors else None
        if isinstance(key, cst.Lambda) and tensors \
                and self._tensor_with(key.body, [p.name.value for p in key.params.params]):
            return "tensors"
        cls = self.env.project.klass(self.resolver.qualify(key))
        return f"`{cls.name}` objects" if cls is not None else None

    def _asks_tensor_truth(self, node: cst.Call) -> bool:
        """`all([a > 0, b > 0])`, `any([t.sum() > 0 for t in (y, z)])`, `filter(lambda t:
        t.sum() > 0, [y, z])`: the builtin's polyfill branches on each tensor; `xs.index(t)`
        on a list of tensors compares them with `t`."""
        k = self.env.knowledge
        qual = self.resolver.qualify(node.func)
        args = [a.value for a in node.args if a.keyword is None and not a.star]
        if qual in k.tensor_truth_consumers and len(args) == 1:
            return self._holds_tensors(args[0])
        if qual in k.tensor_truth_filters and len(args) == 2 and isinstance(args[0], cst.Lambda) \
                and (self._holds_tensors(args[1]) or self.scope.is_tensor(args[1])):
            return self._tensor_with(args[0].body, [p.name.value for p in args[0].params.params])
        func = node.func  # `xs.index(t)`, `xs.remove(t)`: the polyfill compares items with `==`
        if isinstance(func, cst.Attribute) and func.attr.value in k.tensor_comparing_sequence_methods and args:
            sequence = func.value
            return self.scope.is_tensor(args[0]) and (self.scope.is_tensor_sequence(sequence)
                                                      or self._holds_tensors(sequence))
        return False

    def _holds_tensors(self, items: cst.BaseExpression) -> bool:
        """A list or tuple display (or list comprehension) with tensor elements."""
        if isinstance(items, (cst.List, cst.Tuple)):
            return any(self.scope.is_tensor(el.value) for el in items.elements)
        if isinstance(items, cst.ListComp) and items.for_in.inner_for_in is None:
            source = items.for_in.iter
            if not (self.scope.is_tensor(source) or self._holds_tensors(source)):
                return False
            return self._tensor_with(items.elt, target_names(items.for_in.target))
        return False

    def _tensor_with(self, expr: cst.BaseExpression, names: list[str]) -> bool:
        """Is `expr` a tensor when `names` hold tensors (a comprehension's or lambda's own)?"""
        added = [n for n in names if n not in self.scope.tensors]
        self.scope.tensors.update(added)
        try:
            return self.scope.is_tensor(expr)
        finally:
            self.scope.tensors.difference_update(added)

    def comprehension(self, node) -> None:
        self.expr(node.for_in.iter)
        self._iterates_passed_iterator(node.for_in.iter)
        if not self.env.knowledge.comprehension_frames:
            self.ctx.append(Ctx(BlockKind.LOOP, self.line(node)))
            self._comprehension_body(node, outer=True)
            self.ctx.pop()
            return
        span = self.span(node)
        line = span.line
        name = COMPREHENSION_NAMES[type(node)]
        # Only the enclosing tensors the comprehension reads reach its frame (as free variables).
        read = self._names_read(node, skip_first_iter=True)
        # `self` read inside is a free variable too: a module makes Dynamo compile the frame
        owner = self.resolver.cls.qualname if "self" in read and self.resolver.cls is not None else ""
        tensors = read & self.scope.tensors
        # the static shapes of those it knows: a callee's `if x.shape[0] > 1` is decided there too
        shapes = ((n, self.values.shape_of(cst.Name(n))) for n in sorted(tensors))
        key = FrameKey(f"{self.function.qualname}.{name}@{line}:{span.column - 1}", frozenset(tensors),
                       self_class=owner, shapes=tuple((n, s) for n, s in shapes if s is not None))
        source = Comprehension(node, self.function, line, not self._wrappable_iterator(node.for_in.iter))
        self.env.register_expression_frame(key, source, self.module)
        mode = CallMode.GENERATOR if isinstance(node, cst.GeneratorExp) else CallMode.COMPREHENSION
        self.emit(EventKind.CALL, node, target=key, mode=mode, closes_over=bool(read & self.own_variables()))

    def _empty_module(self, value) -> bool:
        """An instance passed in whose module class never ran nn.Module's `__init__` (GBL608)."""
        return isinstance(value, Const) and isinstance(value.value, Obj) and not value.value.shared \
            and empty_module(self.env.project, self.env.knowledge, value.value)

    def _lazy_alias(self, value: cst.BaseExpression) -> CauseCheck | None:
        """`other = mod` of an uninitialized module not used yet: a store wraps nothing (the
        new name is used later, or never)."""
        if isinstance(value, cst.Name) and self.unwrappable.get(value.value) == CauseCheck.EMPTY_MODULE_USE:
            return CauseCheck.EMPTY_MODULE_USE
        return None

    def _wraps_unwrappable(self, node: cst.CSTNode, check: CauseCheck, detail: str) -> None:
        """The first read of a value Dynamo wraps there and cannot (measured 2.13: a set of
        tensors passed in, GB0222 "Attempted to wrap a set with tensors"; a sparse tensor made
        before a break, GB0015 "Attempted to wrap sparse Tensor"), at an instruction it
        cannot resume after. A value never read costs nothing."""
        if self.causes.check_enabled(check):
            self.emit_break(self.causes.rule_for_check(check), node, detail=detail)

    def _makes_sparse(self, value: cst.BaseExpression | None) -> bool:
        """`x.to_sparse()`: a sparse tensor, which breaks as it is made (GBL346)."""
        return isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
            and value.func.attr.value in self.env.knowledge.sparse_tensor_methods

    def _iterates_passed_iterator(self, iterable: cst.BaseExpression) -> None:
        """GET_ITER of an iterator the program passed in (`for v in it`, `[... for v in it]`):
        Dynamo cannot wrap it and cannot resume at GET_ITER (measured 2.13: GB0811, skipped)."""
        if self.causes.passed_iterator(iterable) and self.causes.check_enabled(CauseCheck.PASSED_ITERATOR):
            self.emit_break(self.causes.rule_for_check(CauseCheck.PASSED_ITERATOR), iterable,
                            break_kind=BreakKind.INSTRUCTION, gb_code=self.env.knowledge.gb_codes["iterated_passed_iterator"],
                            detail=f"iter({iterable.value})")  # type: ignore[attr-defined]

    def _free_tensor(self, name: str) -> bool:
        """A name this frame does not bind, holding a tensor a torch call made: a module-level
        name bound once (`W = torch.randn(3)`), or the enclosing function's single assignment
        (a test's `v = torch.tensor(...)` read by the function it compiles)."""
        found = self._free_tensors.get(name)
        if found is None:
            found = self._free_tensors[name] = self._find_free_tensor(name)
        return found

    def _find_free_tensor(self, name: str) -> bool:
        if name in self.own_variables():
            return False
        enclosing = self.resolver.enclosing_value(name)
        if enclosing is not None:
            return self._makes_tensor(enclosing[1], enclosing[0])
        value = self.module.values.get(name)
        return value is not None and name not in self.module.reassigned and self._makes_tensor(value, None)

    def _makes_tensor(self, value: cst.BaseExpression, scope: FunctionInfo | None) -> bool:
        project = self.env.project
        while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                and project.qualify(value.func, self.module, scope) is None:
            value = value.func.value  # `torch.randn(3).cuda()`
        if not isinstance(value, cst.Call):
            return False
        qual = project.qualify(value.func, self.module, scope)
        return qual is not None and self.scope.is_torch_function(qual)

    def _closure_tensors(self, fn: FunctionInfo) -> bool:
        """Does the function read a cell of an enclosing function that some assignment there
        fills from a torch call (`c1, c2 = (torch.zeros(3),) * 2`)? Such a frame has a tensor
        in it (convert_frame.has_tensor_in_frame looks at the cells too): Dynamo compiles it."""
        if fn.parent_function is None:
            return False
        cells = declared_outer(fn.node.body, (cst.Nonlocal,))
        free = (self._names_read(fn.node.body) | cells) - (self.own_variables() - cells) \
            - declared_outer(fn.node.body, (cst.Global,))
        scope = self.env.project.function(fn.parent_function)
        while scope is not None and free:
            free = free - declared_outer(scope.node.body, (cst.Global,))  # globals are not cells
            for assign in find_all(scope.node.body, (cst.Assign, cst.AugAssign), skip=NESTED_SCOPES):
                targets = [t.target for t in assign.targets] if isinstance(assign, cst.Assign) else [assign.target]
                names = {n.value for t in targets for n in find_all(t, (cst.Name,))}
                if names & free and any(self._makes_tensor(c, scope) for c in find_all(assign.value, (cst.Call,))):
                    return True
            scope = self.env.project.function(scope.parent_function) if scope.parent_function else None
        return False

    def own_variables(self) -> frozenset[str]:
        """The frame's parameters and the names it binds (a comprehension reading one gets it
        as a cell)."""
        fn = self.function
        return self.env.node_memo("own_variables", fn.node, lambda: frozenset(
            {p.name for p in fn.params} | assigned_names(fn.node.body)))

    def _wrappable_iterator(self, iterable: cst.BaseExpression) -> bool:
        """Would Dynamo wrap `iter(iterable)` as an argument of a frame? It models only
        tuple and range iterators (variables/builder.py); iterating a tensor gives a tuple
        iterator (`Tensor.__iter__` unbinds)."""
        if self.scope.is_tensor(iterable) or isinstance(iterable, cst.Tuple):
            return True
        if isinstance(iterable, cst.Call) and self.resolver.qualify(iterable.func) in ("builtins.range", "builtins.tuple"):
            return True
        if isinstance(iterable, cst.Name) and any(p.name == iterable.value and p.kind == "star"
                                                  for p in self.function.params):
            return True  # `*args`
        known = self.values.value(iterable)
        return known is not None and (isinstance(known.value, tuple)
                                      or isinstance(known.value, Seq) and known.value.kind == "tuple")

    def _comprehension_body(self, node, outer: bool = False) -> None:
        """Element, conditions and inner loops of a comprehension, all inside its loop."""
        if not outer:
            self.ctx.append(Ctx(BlockKind.LOOP, self.line(node)))
        comp_for = node.for_in
        first = True
        while comp_for is not None:
            if not first:
                self.expr(comp_for.iter)
            self.scope.assign(comp_for.target, None, tensor=self.scope.is_tensor(comp_for.iter))
            for cond in comp_for.ifs:
                self.expr(cond.test)
                self.truthiness(cond.test)
            comp_for = comp_for.inner_for_in
            first = False
        if isinstance(node, cst.DictComp):
            self.expr(node.key)
            self.expr(node.value)
        else:
            self.expr(node.elt)
        if not outer:
            self.ctx.pop()

    def _uses_torch(self, node, skip_first_iter: bool = False) -> bool:
        """Does the code read a global bound to a torch module (Dynamo's has_tensor_in_frame)?"""
        return self.env.node_memo(f"uses_torch:{skip_first_iter}", node, lambda: any(
            self.env.project.is_frame_trigger_global(self.module, n)
            for n in self._names_read(node, skip_first_iter)))

    # -- callbacks for tensor inference ------------------------------------------------
    def _returns(self, call: cst.Call) -> tuple[bool, tuple[bool, ...]]:
        """(returns a tensor, tensor-ness of returned tuple items) of a project call."""
        held = self._entered_by_hand(call)
        if held is not None:  # `y = ctx.__enter__()`: what the @contextmanager generator yields
            info = self.env.frame_if_built(held)
            return (info is not None and info.yields_tensor, ())
        target = self.resolver.resolve(call.func)
        if target is None:
            lam = self.causes.lambda_frame(call)
            info = self.env.frame_if_built(lam) if lam is not None else None
            return (info.returns_tensor, ()) if info else (False, ())
        info = self.env.frame_if_built(self.causes.callee_key(target, call))
        return (info.returns_tensor, info.returns_elements) if info else (False, ())

    def _mutates_outside(self, node: cst.BaseSmallStatement) -> bool:
        """A statement of a generator Dynamo rebuilds that changes an object it did not make
        (a parameter's item or attribute, a nonlocal): measured 2.13, GB8335."""
        return self.causes.check_enabled(CauseCheck.GENERATOR_MUTATION) and self._outer_write(node, owns_parameters=False)

    def returned_calls(self) -> frozenset[int]:
        """id() of the calls whose result the frame returns directly (`return t, make(t)`)."""
        return self.env.node_memo("escaping_generators", self.function.node,
                                  lambda: escaping_generator_calls(self.function.node))

    def _writes_outside(self, node: cst.BaseSmallStatement, check: CauseCheck) -> bool:
        """A statement of a traced hook or higher-order op body changing state it does not own
        (side_effects.py)."""
        return self.causes.check_enabled(check) and self._outer_write(node, owns_parameters=True)

    def _outer_write(self, node: cst.BaseSmallStatement, owns_parameters: bool) -> bool:
        """Does the statement write state the function does not own: `global`/`nonlocal` names,
        items and attributes of objects it did not make (its parameters' too, unless it owns them)?"""
        if not isinstance(self.source, FunctionInfo):
            return False
        fn = self.source
        declared = self.env.node_memo("declared_outer", fn.node, lambda: declared_outer(fn.node.body))
        declared = declared - self._bound_in_hop_body(fn, declared)
        params = {p.name for p in fn.params}

        def owned() -> frozenset[str]:
            made = assigned_names(fn.node.body)
            return frozenset((made | params if owns_parameters else made - params) - declared)
        local = self.env.node_memo(f"owned_names:{owns_parameters}", fn.node, owned)
        return outer_write(node, local, declared, self.env.knowledge.container_mutators)

    def _bound_in_hop_body(self, fn: FunctionInfo, declared: frozenset[str]) -> frozenset[str]:
        """The `nonlocal` names of a function nested in a higher-order op's body that the body
        (or a function between them) binds: the body's own state (measured 2.13: no break)."""
        root = self.key.hop_root
        if not root or not fn.qualname.startswith(root + "."):
            return frozenset()
        nonlocals = declared & declared_outer(fn.node.body, (cst.Nonlocal,))
        own: set[str] = set()
        parent = self.env.project.function(fn.parent_function) if fn.parent_function else None
        while parent is not None and (parent.qualname == root or parent.qualname.startswith(root + ".")):
            own |= (assigned_names(parent.node.body) | {p.name for p in parent.params}) & nonlocals
            parent = self.env.project.function(parent.parent_function) if parent.parent_function else None
        return frozenset(own)

    def _returns_data_scalar(self, call: cst.Call) -> bool:
        """A project call returning a number read out of a tensor (`def big(v): return v > 2`
        called with an `.item()` value). Asked only with capture_scalar_outputs on (a branch on
        such a number is a break only then; resolving every call in a condition costs)."""
        if not self.env.flag(CAPTURED_SCALARS):
            return False
        target = self.resolver.resolve(call.func)
        info = self.env.frame_if_built(self.causes.callee_key(target, call)) if target is not None else None
        return info is not None and info.returns_data_scalar

    def is_graph_input(self, expr: cst.BaseExpression) -> bool:
        """A tensor parameter the frame was given and has not rebound (a graph input when the
        frame is compiled, and still one inlined with a caller's input passed on), or a
        parameter or buffer of `self`."""
        if isinstance(expr, cst.Attribute):  # `self.w`, `m.weight`, `self.block.w`
            return self._module_parameter(expr.value, expr.attr.value)
        if isinstance(expr, cst.Name) and expr.value in self.parameter_locals:
            return True
        return isinstance(expr, cst.Name) and expr.value in self.key.tensor_params and expr.value not in self.rebound

    def _module_parameter(self, module: cst.BaseExpression, name: str) -> bool:
        """`m.weight` of a torch layer, `self.block.w` of a project module registering `w`:
        a parameter Dynamo lifts as a graph input."""
        if name in self.env.knowledge.layer_parameters and self.resolver.torch_layer(module):
            return True
        cls = self.resolver.class_of(module)
        return cls is not None and self.causes.registered_tensor(name, cls)

    def _iterated_parameters(self, node: cst.For) -> None:
        """`for p in m.parameters():` / `for n, p in m.named_parameters():` of a module:
        `p` is each parameter, a graph input (see is_graph_input)."""
        self.parameter_locals.difference_update(target_names(node.target))
        it, k = node.iter, self.env.knowledge
        if not (isinstance(it, cst.Call) and isinstance(it.func, cst.Attribute)) or any(a.star for a in it.args):
            return
        method, module = it.func.attr.value, it.func.value
        if not self.resolver.is_module_instance(module):
            return
        if method in k.parameter_iterators and isinstance(node.target, cst.Name):
            self.parameter_locals.add(node.target.value)
        elif method in k.named_parameter_iterators and isinstance(node.target, cst.Tuple) \
                and len(node.target.elements) == 2 and isinstance(node.target.elements[1].value, cst.Name):
            self.parameter_locals.add(node.target.elements[1].value.value)

    def _is_object(self, expr: cst.BaseExpression) -> bool:
        """An instance of a plain project class (a model's output object, not a module, not a
        tuple): Dynamo's has_tensor_in_frame does not look inside it."""
        if isinstance(expr, cst.Name):
            return expr.value in self.objects
        if not isinstance(expr, cst.Call):
            return False
        cls = self.resolver.instantiated_class(expr)
        if cls is not None:
            return not self.resolver.is_nn_module(cls) and not _tuple_like(cls, self.env.project)
        return self._returns_object(expr)

    def _only_project_calls(self, fn: FunctionInfo) -> bool:
        return all(self.resolver.resolve(call.func) is not None
                   for call in find_all(fn.node.body, (cst.Call,), skip=NESTED_SCOPES))

    def _build_element_callee(self, value: cst.BaseExpression | None) -> None:
        """`ys = {i: f(x) for i in ...}`: the comprehension's frame is built later, so build the
        function its element calls now, to tell whether the result holds tensors."""
        element = comprehension_element(value)
        if not isinstance(element, cst.Call):
            return
        target = self.resolver.resolve(element.func)
        # not a recursion (`[rec(x, n - 1) for ...]` would build n, n - 1, ... without end)
        if target is not None and target.function.qualname != self.key.qualname \
                and self.env.building_depth() < MAX_ELEMENT_BUILD_DEPTH:
            self.env.frame(self.causes.callee_key(target, element))

    def _never_returns(self, value: cst.BaseExpression | None) -> bool:
        """A project call every path of which raises (calling a generator function does not:
        it returns the generator, whatever its body does)."""
        info = self._callee_info(value) if isinstance(value, cst.Call) else None
        return info is not None and info.never_returns and not info.is_generator

    def _callee_info(self, call: cst.Call) -> FrameInfo | None:
        """The frame a project call runs, when it has been built."""
        target = self.resolver.resolve(call.func)
        return self.env.frame_if_built(self.causes.callee_key(target, call)) if target is not None else None

    def _returns_object(self, call: cst.Call) -> bool:
        info = self._callee_info(call)
        return info is not None and info.returns_object

    def _held_class(self, expr: cst.Attribute) -> str | None:
        """`self.encoder`: the class of the instance the frame's `self` was built holding."""
        root = expr.value
        while isinstance(root, cst.Attribute):
            root = root.value
        if not self.key.attributes or not (isinstance(root, cst.Name) and root.value == "self"):
            return None  # (only what `self` was built with is known: nothing to evaluate)
        held = self.values.value(expr)
        return held.value.cls if held is not None and isinstance(held.value, Obj) else None

    def _is_module_call(self, call: cst.Call) -> bool:
        if self.resolver.torch_layer(call.func):
            return True
        cls = self.resolver.class_of(call.func)
        return cls is not None and self.resolver.is_nn_module(cls)


# the method Python looks up on each operand of a binary operator (left, then reflected right)
BINARY_DUNDERS = {
    cst.Add: ("__add__", "__radd__"), cst.Subtract: ("__sub__", "__rsub__"),
    cst.Multiply: ("__mul__", "__rmul__"), cst.Divide: ("__truediv__", "__rtruediv__"),
    cst.FloorDivide: ("__floordiv__", "__rfloordiv__"), cst.Modulo: ("__mod__", "__rmod__"),
    cst.Power: ("__pow__", "__rpow__"), cst.MatrixMultiply: ("__matmul__", "__rmatmul__"),
    cst.BitAnd: ("__and__", "__rand__"), cst.BitOr: ("__or__", "__ror__"), cst.BitXor: ("__xor__", "__rxor__"),
    cst.LeftShift: ("__lshift__", "__rlshift__"), cst.RightShift: ("__rshift__", "__rrshift__"),
}


def _expr_children(node: cst.CSTNode):
    """Sub-expressions in source order (`walk.children`: libcst's `node.children` regenerates
    them through a visitor, a tenth of a task's time; the two orders differ only for IfExp,
    which `expr` handles itself, and Arg, whose keyword comes first here as in the source)."""
    for child in children(node):
        if isinstance(child, cst.BaseExpression):
            yield child
        elif isinstance(child, cst.Arg):
            if child.keyword is not None:
                yield child.keyword
            yield child.value
        elif isinstance(child, (cst.Element, cst.DictElement, cst.StarredDictElement,
                                cst.StarredElement, cst.ComparisonTarget, cst.FormattedStringExpression)):
            yield from _expr_children(child)
        elif isinstance(child, cst.Index):
            yield child.value
        elif isinstance(child, cst.From):  # `yield from sub(t)`: the sub-generator runs here
            yield child.item


def _own_return_lines(body, line_of) -> list[int]:
    """Lines of `return` statements in a loop body (not in nested defs)."""
    return [line_of(node) for node in find_all(body, (cst.Return,), skip=NESTED_SCOPES)]


def _mark_escape(ev: Event, returns: list[int], loop_line: int) -> Event:
    innermost = next((c for c in reversed(ev.ctx) if c.kind == BlockKind.LOOP), None)
    if ev.kind == EventKind.OP or innermost is None or innermost.line != loop_line:
        return ev
    if any(r > ev.span.end_line for r in returns):
        return replace(ev, loop_escapes=True, hits=2)  # the resumed loop meets it again
    return ev


def _names_read(node: cst.CSTNode, skip_first_iter: bool = False) -> set[str]:
    """Names a code object reads itself (not inside nested defs, lambdas or comprehensions)."""
    if isinstance(node, (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)):
        parts = [node.elt] if not isinstance(node, cst.DictComp) else [node.key, node.value]
        comp_for: cst.CompFor | None = node.for_in
        targets: set[str] = set()
        while comp_for is not None:
            if comp_for is not node.for_in or not skip_first_iter:
                parts.append(comp_for.iter)
            parts += [c.test for c in comp_for.ifs]
            targets |= _names_read(comp_for.target)
            comp_for = comp_for.inner_for_in
        return {name for part in parts for name in own_names(part)} - targets
    return own_names(node)


def _constant_string(expr: cst.BaseExpression) -> bool:
    """A string the compiler folds into one constant: plain, an f-string without placeholders,
    an implicit concatenation of those."""
    if isinstance(expr, cst.SimpleString):
        return True
    if isinstance(expr, cst.FormattedString):
        return not any(isinstance(part, cst.FormattedStringExpression) for part in expr.parts)
    if isinstance(expr, cst.ConcatenatedString):
        return _constant_string(expr.left) and _constant_string(expr.right)
    return False


def _statement_reads(node: cst.BaseSmallStatement) -> set[str]:
    """Names a small statement loads (its value's, and an augmented assignment's target)."""
    value = getattr(node, "value", None)
    read = set(loaded_names(value)) if value is not None else set()
    if isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Name):
        read.add(node.target.value)
    return read




def _next_steps(fn: cst.FunctionDef, param: str) -> tuple[bool, ...] | None:
    """The `next(param)` calls a function makes, in order (True: with a default), when that is
    all it does with its parameter and none is in a loop, a branch or a nested scope; else None."""
    uses = [n for n in find_all(fn.body, (cst.Name,)) if n.value == param]
    steps = [c for c in find_all(fn.body, (cst.Call,), skip=NESTED_SCOPES + (cst.For, cst.While, cst.If, cst.Try))
             if isinstance(c.func, cst.Name) and c.func.value == "next" and c.args
             and isinstance(c.args[0].value, cst.Name) and c.args[0].value.value == param]
    if not steps or len(steps) != len(uses) or binding_counts(fn.body).get(param):
        return None
    return tuple(len(c.args) > 1 for c in steps)


def _stepped(call: cst.Call) -> str | None:
    """The local `next(gen)` / `gen.send(v)` / `gen.throw(exc)` takes one item from."""
    func = call.func
    if isinstance(func, cst.Name) and func.value == "next" and call.args and isinstance(call.args[0].value, cst.Name):
        return call.args[0].value.value
    if isinstance(func, cst.Attribute) and func.attr.value in ("send", "throw") and isinstance(func.value, cst.Name):
        return func.value.value
    return None


def _dict_items_key(loop: cst.For) -> cst.BaseExpression | None:
    """`k` of `for k, v in d.items():`"""
    it, target = loop.iter, loop.target
    if isinstance(it, cst.Call) and isinstance(it.func, cst.Attribute) and it.func.attr.value == "items" \
            and not it.args and isinstance(target, cst.Tuple) and len(target.elements) == 2:
        return target.elements[0].value
    return None


def _bound_in_module(module, name: str) -> bool:
    """Bound by a module-level statement (or a builtin, which Dynamo finds in the frame's builtins)."""
    return bound_at_top(module, name) or name in BUILTIN_NAMES


# the config switch that makes `.item()` a symbolic value in the graph instead of a break
CAPTURED_SCALARS = "capture_scalar_outputs"
_SCALAR_CONVERSIONS = frozenset({"bool", "int", "float"})
# a module made under a computed name (`sys.modules[prefix + name] = ...`): any name may be it
_COMPUTED_MODULE = re.compile(r"""(?:sys\.modules\[|ModuleType\()\s*[^\s"'\])]""")


def out_argument(call: cst.Call) -> cst.BaseExpression | None:
    """The `out=` tensor (or tuple of tensors) a call writes, if any."""
    return next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "out"), None)


def _is_flag(test) -> TypeGuard[cst.Attribute]:
    """`self.verbose`, `self.config.output_attentions`, `args.debug`: an attribute chain."""
    node = test
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(test, cst.Attribute) and isinstance(node, cst.Name)


_SIZE_ATTRIBUTES = frozenset({"shape", "ndim"})
_SIZE_METHODS = frozenset({"size", "dim", "numel", "ndimension"})


def _reads_sizes(test: cst.BaseExpression) -> bool:
    """A condition on a tensor's sizes (`x.shape[0] > n`, `x.dim() != 3`, `x.numel() == 0`)."""
    for node in find_all(test, (cst.Attribute,), skip=NESTED_SCOPES):
        if node.attr.value in _SIZE_ATTRIBUTES:
            return True
    return any(isinstance(c.func, cst.Attribute) and c.func.attr.value in _SIZE_METHODS
               for c in find_all(test, (cst.Call,), skip=NESTED_SCOPES))


def _only_reports(body) -> bool:
    """A block that only prints, logs, warns, raises or passes."""
    statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
    smalls = []
    for stmt in statements:
        if not isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            return False
        smalls += list(stmt.body)
    return bool(smalls) and all(_is_report(small) for small in smalls)


def _is_report(small) -> bool:
    if isinstance(small, (cst.Raise, cst.Pass)):
        return True
    return isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and is_reporting_call(small.value)


def _source(expr: cst.BaseExpression) -> str:
    """An expression's source on one line (a condition quoted in a finding)."""
    return " ".join(cst.Module([]).code_for_node(expr).split())


def _tuple_like(cls, project) -> bool:
    """A NamedTuple / tuple subclass (has_tensor_in_frame looks inside those)."""
    names = {(base.attr if isinstance(base, cst.Attribute) else base).value
             for c in project.mro(cls) for base in c.bases if isinstance(base, (cst.Name, cst.Attribute))}
    return bool(names & {"NamedTuple", "tuple"})


CLOSED = -1  # the items taken from a generator that was closed


def _straight_yields(fn: cst.FunctionDef) -> int | None:
    """The number of `yield`s a generator's body runs when none sits under a loop, a branch,
    a try or a `with` (and there is no `yield from`), else None."""
    yields = find_all(fn.body, (cst.Yield,), skip=NESTED_SCOPES)
    if any(isinstance(y.value, cst.From) for y in yields) or _yields_in_blocks(fn):
        return None
    return len(yields)


def _yields_in_blocks(fn: cst.FunctionDef) -> bool:
    """Does a `yield` sit under a loop, a branch, a try or a `with` (its count not fixed)?"""
    blocks = find_all(fn.body, (cst.For, cst.While, cst.If, cst.Try, cst.With, cst.Match), skip=NESTED_SCOPES)
    return any(find_all(b, (cst.Yield,), skip=NESTED_SCOPES) for b in blocks)


def _yields_on_exit(fn: cst.FunctionDef) -> bool:
    """`except GeneratorExit:` with a `yield` in the handler: the generator ignores close()."""
    return any(isinstance(h.type, cst.Name) and h.type.value == "GeneratorExit"
               and find_all(h.body, (cst.Yield,), skip=NESTED_SCOPES)
               for t in find_all(fn.body, (cst.Try,), skip=NESTED_SCOPES) for h in t.handlers)

# methods putting a value into a container (kept past the frame when the container is)
_CONTAINER_STORES = frozenset({"append", "extend", "insert", "add", "update", "setdefault"})


def _assigns(statement, node) -> bool:
    """Is `node` the very value a simple statement assigns (`x = f(x)`, `x += f(x)`)?"""
    smalls = statement.body if isinstance(statement, cst.SimpleStatementLine) else [statement]
    return any(isinstance(s, (cst.Assign, cst.AnnAssign, cst.AugAssign)) and s.value is node for s in smalls)


def _rebinding_calls(fn: cst.FunctionDef) -> dict[int, frozenset[str]]:
    """id of each call -> the names passed from one iteration to the next around it: those its
    own assignment rebinds (`x = layer(x)`), or, for a call in a loop, those the loop's body
    assigns (`out = layer(x); x = out[0]`)."""
    found: dict[int, set[str]] = {}
    for loop in find_all(fn.body, (cst.For, cst.While), skip=NESTED_SCOPES):  # outer loops first
        written = assigned_names(loop.body)
        for call in find_all(loop.body, (cst.Call,), skip=NESTED_SCOPES):
            found[id(call)] = set(written)
    for small in find_all(fn.body, (cst.Assign,), skip=NESTED_SCOPES):
        value = small.value.value if isinstance(small.value, cst.Subscript) else small.value
        if isinstance(value, cst.Call):
            found.setdefault(id(value), set()).update(n.value for t in small.targets for n in find_all(t.target, (cst.Name,)))
    return {k: frozenset(v) for k, v in found.items()}


BROAD_EXCEPTIONS = frozenset({"Exception", "BaseException"})


def _swallows(handler: cst.ExceptHandler) -> tuple[str, ...]:
    """The exceptions a handler takes and lets the code after the `try` run ("*": any)."""
    if find_all(handler.body, (cst.Raise, cst.Return), skip=NESTED_SCOPES):
        return ()
    kind = handler.type
    names = [e.value for e in kind.elements] if isinstance(kind, cst.Tuple) else [kind] if kind is not None else []
    if kind is None or any(isinstance(n, cst.Name) and n.value in BROAD_EXCEPTIONS for n in names):
        return ("*",)
    return tuple(n.value.split(".")[-1] if isinstance(n, cst.Name) else dotted(n) or "" for n in names)


def _stop_iteration_values(handler: cst.ExceptHandler, qualify, function_body: cst.CSTNode) -> frozenset[str]:
    """`e` of `except StopIteration as e`, and "=v" for each local the handler binds to
    `e.value`, bound nowhere else in the function (the stop values, EventBuilder.stop_values)."""
    name = handler.name.name if handler.name is not None else None
    if not isinstance(name, cst.Name) or handler.type is None \
            or qualify(handler.type) not in ("builtins.StopIteration", "builtins.StopAsyncIteration"):
        return frozenset()
    held = {t.target.value for a in find_all(handler.body, (cst.Assign,), skip=NESTED_SCOPES)
            if len(a.targets) == 1 and isinstance(a.targets[0].target, cst.Name) and isinstance(a.value, cst.Attribute)
            and a.value.attr.value == "value" and isinstance(a.value.value, cst.Name) and a.value.value.value == name.value
            for t in a.targets}
    counts = binding_counts(function_body)
    return frozenset({name.value} | {f"={n}" for n in held if counts.get(n) == 1})


def _raises_uncaught(info, env, depth: int = 0) -> bool:
    """A frame's events reach an exception leaving it: a raise outside any try, under no
    condition, or a call of such a frame (a few calls deep)."""
    if info is None or depth > MAX_RAISE_DEPTH:
        return False
    for ev in info.events:
        if ev.condition or any(c.kind == BlockKind.TRY for c in ev.ctx):
            continue
        if ev.kind == EventKind.BREAK and ev.break_kind == BreakKind.EXCEPTION:
            return True
        if ev.kind == EventKind.CALL and ev.target is not None and _raises_uncaught(env.frame(ev.target), env, depth + 1):
            return True
    return False


def _raises_at_top(body: cst.BaseSuite) -> bool:
    """A `raise` statement the block always reaches (not under a branch or a loop)."""
    return any(isinstance(small, cst.Raise) for stmt in getattr(body, "body", ())
               if isinstance(stmt, cst.SimpleStatementLine) for small in stmt.body)
