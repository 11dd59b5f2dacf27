"""Match calls, assignments and `with` items against the break-cause catalog and knowledge."""
from __future__ import annotations

import builtins
import re
from collections import Counter
from dataclasses import replace

import libcst as cst

from ..index.symbols import ClassInfo, FunctionInfo
from ..index.entries import REORDERABLE, call_argument
from ..index.compiled_autograd import CONFIG_FLAG as COMPILED_AUTOGRAD_FLAG
from ..index.project import SAME_INSTANCE_METHODS
from ..index.names import FULLGRAPH_KEYWORDS, decorator_callee, is_none_literal, is_super, keyword_true
from ..vocab import BlockKind, BreakKind, CallMode, CauseCheck, EventKind
from ..walk import NESTED_SCOPES, STRING_NODES, children, find_all
from .attributes import getattr_override, global_hook_key, property_getter, property_setter, setattr_override
from .built_objects import attribute_shapes, tensor_attributes
from . import hop_inputs
from .callables import context_wrapped, nonrecursive
from .frame_values import constant_display, free_names, single_store
from .held_objects import HeldValues
from .class_body import class_body_values
from .sequentials import MAX_UNROLLED_ELEMENTS
from .instances import EACH, built_at_top, element_count, element_objects, is_optimizer_class, optimizer_method_parts
from .number_arguments import tensor_in_number_parameter
from .opaque_arguments import argument_kind
from .partials import PARTIAL, partial_bindings, through_partials
from .resolve import CallTarget
from .side_effects import declared_outer
from .global_state import GRAD_OFF
from .types import TRANSFORMED_UNKNOWN_SIZES, Ctx, Event, FnValue, FrameInfo, FrameKey, LambdaBody, batch_levels
from .values import (PASSED_CONTEXT_MANAGER, PASSED_CONTEXT_MANAGER_INPUT, PASSED_DATA_SCALAR, PASSED_GENERATOR, PASSED_ITERATOR,
                     PASSED_STOP_VALUE,
                     PASSED_TENSOR_SUBCLASS, PASSED_UNKNOWN, Const, Keywords, Obj, Seq, display_kind, display_length,
                     literal, makes_generator, star_arguments)

LOGGING_FACTORIES = ("logging.getLogger", "logging.Logger", "logging.LoggerAdapter")


# `m.eval()`, `m.train()`, `m.train(True)`, `m.train(False)`: the mode each sets (else unknown)
_SWITCH_MODES = {"eval": False, "train": True, "trainTrue": True, "trainFalse": False}


class CauseMatcher:
    def __init__(self, env, builder):
        self.env = env
        self.b = builder
        self.k = env.knowledge
        self.later_element = False  # keying a call of a container's later class (its input needs grad)
        self.element_variant: int | None = None  # keying a call of a module list's element built otherwise

    # -- catalog access --------------------------------------------------------------
    def rule_for_check(self, check: CauseCheck):
        return self.env.checks.get(check)

    def check_enabled(self, check: CauseCheck) -> bool:
        rule = self.env.checks.get(check)
        return rule is not None and not self.env.flag(rule.unless_config)

    def _any_flag(self, flags) -> bool:
        """Is one of these torch._dynamo.config flags on for this program?"""
        return any(map(self.env.flag, flags))

    def rule_enabled(self, rule) -> bool:
        return not self.env.flag(rule.unless_config)

    # -- calls -----------------------------------------------------------------------
    def classify_call(self, node: cst.Call) -> None:
        if self._registered_hooks(node, "backward") and self.check_enabled(CauseCheck.MODULE_BACKWARD_HOOK):
            self.b.emit_break(self.rule_for_check(CauseCheck.MODULE_BACKWARD_HOOK), node)  # GB0083, resumes
            return
        pre, post = self._hooks(node, "pre"), self._hooks(node, "post")
        if pre or post:
            self._call_with_hooks(node, pre, post)
        elif self._transform_call(node):
            self._call_through_functorch(node)
        else:
            self._classify_call(node)

    def _transform_call(self, node: cst.Call) -> bool:
        """`torch.vmap(g)(x)`, `torch.func.grad(f)(x)`, or a name bound to one (`batched =
        vmap(g); batched(x)`): a function run by a torch.func transform."""
        inner = node.func
        if isinstance(inner, cst.Name):
            return bool(self._named_transform(inner))
        return isinstance(inner, cst.Call) and self.b.resolver.qualify(inner.func) in self.k.function_transforms

    def _named_transform(self, func: cst.Name) -> str:
        """FnValue.transformed of the function a name holds ("" when none)."""
        target = self.b.resolver.resolve(func)
        return target.transformed if target is not None else ""

    def _call_through_functorch(self, node: cst.Call) -> None:
        """The transformed function runs under functorch's own frame (its `wrapped`), which
        Dynamo inlines too: one more frame of the chain, traced again on a nested break."""
        start = len(self.b.events)
        self._classify_call(node)
        if not any(ev.kind == EventKind.CALL for ev in self.b.events[start:]):
            return
        for level in range(self._transform_depth(node.func)):  # `vmap(vmap(f))`: a frame each
            inner = tuple(self.b.events[start:])
            del self.b.events[start:]
            # functorch's frame holds the tensors it passes on: Dynamo compiles it when run eagerly
            self._call_torch_frame(node, f"functorch{level or ''}", "wrapped", inner,
                                   mode=CallMode.NO_NESTING, uses_torch=True)

    def _transform_depth(self, func: cst.BaseExpression) -> int:
        """How many torch.func transforms are around the function: 2 for `vmap(vmap(f))`, or for
        a name bound to `vmap(inner)` where `inner = vmap(f)`."""
        if isinstance(func, cst.Name):
            return len(batch_levels(self._named_transform(func)) or [[]])
        depth = 0
        while isinstance(func, cst.Call) and self.b.resolver.qualify(func.func) in self.k.function_transforms \
                and func.args and func.args[0].keyword is None:
            depth, func = depth + 1, func.args[0].value
        return max(depth, 1)

    def _call_with_hooks(self, node: cst.Call, pre: list, post: list) -> None:
        """A sub-module with forward hooks runs through torch's `Module._call_impl`, which
        loops over the hooks around forward: modelled as a torch frame of its own (inlined,
        never compiled alone) holding the hook calls inside a loop and the call itself."""
        span = self.b.span(node)
        start = len(self.b.events)
        self._classify_call(node)
        # the hook loops follow the forward call too: Dynamo's back-edge scan sees a loop there
        loop = (Ctx(BlockKind.LOOP, span.line),)
        inner = [replace(ev, ctx=loop) for ev in self.b.events[start:]]
        del self.b.events[start:]
        events = [self._hook_event(k, span, loop) for k in pre] + inner + \
            [self._hook_event(k, span, loop) for k in post]
        self._call_torch_frame(node, "_call_impl", "_call_impl", tuple(events), eager_only=True)

    def _call_torch_frame(self, node: cst.Call, label: str, name: str, events: tuple,
                          mode: CallMode = CallMode.INLINE, **facts) -> None:
        """A call that runs through a frame of torch's own (functorch's `wrapped`, a module's
        `_call_impl`, nn.Sequential's `forward`), holding `events`: one more frame of the chain."""
        span = self.b.span(node)
        qualname = f"{self.b.function.qualname}.<{label}@{span.line}:{span.column}>"
        key = FrameKey(qualname, caller=self.b.key)
        self.env.register_synthetic(FrameInfo(key, name, qualname, self.b.function.path, span.line, events, **facts))
        self.b.emit(EventKind.CALL, node, target=key, mode=mode)

    def _classify_call(self, node: cst.Call) -> None:
        b = self.b
        qual = b.resolver.qualify(node.func)
        args = tuple(node.args)
        wrapped = None
        if qual is None and isinstance(node.func, cst.Name):
            bindings = self.env.node_memo("partials", b.function.node,
                                          lambda: partial_bindings(b.function.node, b.resolver.qualify))
            wrapped = through_partials(node, bindings, b.resolver.qualify)
        if wrapped is not None and self.env.project.function(wrapped[0]) is None:
            qual, args = wrapped  # `make()` of `make = partial(torch.rand, requires_grad=True)`
        inner = context_wrapped(node.func, b.resolver.qualify, self.k) if isinstance(node.func, cst.Call) else None
        if qual is None and inner is not None:
            qual = b.resolver.qualify(inner)  # `torch.no_grad()(skipped_fn)(x)` calls skipped_fn
        if self.env.skips(qual) and self.check_enabled(CauseCheck.DISALLOWED_CALL):
            rule = self.rule_for_check(CauseCheck.DISALLOWED_CALL)
            b.emit_break(rule, node, detail=qual, gb_code=self._skipped_code(rule, qual))
            self._run_by_skipped(node)
            return
        if qual == "builtins.setattr" and len(args) == 3 and not any(a.star for a in args):
            unsupported = self._unsupported_setattr_receiver(args[0].value)  # `setattr(p, "tag", 1)`
            if unsupported and self.check_enabled(CauseCheck.UNSUPPORTED_SETATTR):
                b.expr(args[2].value)
                b.emit_break(self.rule_for_check(CauseCheck.UNSUPPORTED_SETATTR), node, detail=unsupported)
                return
        if qual is None and self._skipped_method(node):
            return
        if self._disabled_instance(node):
            return
        if self._invalid_builtin_call(node, qual) or self._shallow_copy(node, qual) or self._failing_check(node, qual) \
                or self._refused_operator_arguments(node, qual) or self._data_pointer_argument(node, qual) \
                or self._non_callable_call(node):
            return
        self.builtin_dunder(node, qual)
        recurrent = self._recurrent_module(node.func)
        if recurrent is not None and self.check_enabled(CauseCheck.RECURRENT_MODULE_CALL):
            b.emit_break(self.rule_for_check(CauseCheck.RECURRENT_MODULE_CALL), node, detail=recurrent)
            return
        if isinstance(node.func, cst.Attribute) and self._profiler_method(node) \
                and self.check_enabled(CauseCheck.PROFILER_OBJECT_METHOD):
            b.emit_break(self.rule_for_check(CauseCheck.PROFILER_OBJECT_METHOD), node, detail=node.func.attr.value)
            return
        opaque = self._opaque_method(node)
        if opaque is not None and self.check_enabled(CauseCheck.OPAQUE_OBJECT_METHOD):
            b.emit_break(self.rule_for_check(CauseCheck.OPAQUE_OBJECT_METHOD), node, detail=opaque)
            return
        generator_code = self._generator_use(node, qual)
        if generator_code is not None and self.check_enabled(CauseCheck.TORCH_GENERATOR):
            b.emit_break(self.rule_for_check(CauseCheck.TORCH_GENERATOR), node, gb_code=generator_code,
                         detail=node.func.attr.value if isinstance(node.func, cst.Attribute) else qual or "")
            return
        stepped = self._steps_passed_iterator(node, qual)
        if stepped is not None and self.check_enabled(CauseCheck.PASSED_ITERATOR):
            rule = self.rule_for_check(CauseCheck.PASSED_ITERATOR)
            b.emit_break(rule, node, gb_code=self._gb_code(rule, node), detail=stepped)
            return
        if is_optimizer_class(qual) and self.check_enabled(CauseCheck.OPTIMIZER_CONSTRUCTION):
            # torch.optim's __init__ patches `step` (`_patch_step_function`), which Dynamo
            # refuses (measured 2.13: GB0467, reported at the constructor's line, resumed)
            b.emit_break(self.rule_for_check(CauseCheck.OPTIMIZER_CONSTRUCTION), node, detail=qual or "")
            return
        method, unwrapped = self._optimizer_method(node)
        if method is not None and self.check_enabled(CauseCheck.OPTIMIZER_METHOD):
            start = len(b.events)
            b.emit_break(self.rule_for_check(CauseCheck.OPTIMIZER_METHOD), node, detail=method,
                         gb_code=self.k.optimizer_methods[method])
            if unwrapped:  # `step.__wrapped__` is `_use_grad` itself: its break sits in its try block
                self._wrap_in_torch_try(node, start, "_use_grad")
            return
        if self._dynamic_shape_form(node, qual) and self.check_enabled(CauseCheck.DYNAMIC_SHAPE_INDEX):
            b.emit_break(self.rule_for_check(CauseCheck.DYNAMIC_SHAPE_INDEX), node)
            return
        if qual in self.k.unsized_one_hot and _class_count_left_to_data(node) \
                and self.check_enabled(CauseCheck.UNSIZED_ONE_HOT):
            b.emit_break(self.rule_for_check(CauseCheck.UNSIZED_ONE_HOT), node)
            return
        if qual in self.k.dynamic_shape_ops_without_meta and self.check_enabled(CauseCheck.DYNAMIC_SHAPE_NO_META):
            captured = self._any_flag(self.k.dynamic_shape_capture_flags)  # set by the program, not by fullgraph
            b.emit_break(self.rule_for_check(CauseCheck.DYNAMIC_SHAPE_NO_META), node, detail=qual,
                         gb_code=self.k.gb_codes["dynamic_shape_no_meta" if captured else "dynamic_shape_op"])
            return
        if self._requires_grad_factory(args, qual) and self.check_enabled(CauseCheck.REQUIRES_GRAD_FACTORY):
            b.emit_break(self.rule_for_check(CauseCheck.REQUIRES_GRAD_FACTORY), node, detail=qual)
            return
        if tensor_in_number_parameter(node, qual, b.scope, b.is_graph_input, b.function.node) is not None \
                and self.check_enabled(CauseCheck.TENSOR_NUMBER_ARGUMENT):
            callee = node.func.attr.value if isinstance(node.func, cst.Attribute) else qual or ""
            b.emit_break(self.rule_for_check(CauseCheck.TENSOR_NUMBER_ARGUMENT), node, detail=callee)
            return
        rule = self._cause_rule(node, qual)
        if rule is not None:
            name = node.func.attr.value if isinstance(node.func, cst.Attribute) else (qual or "")
            if qual in self.env.tensor_or_module_arg_calls and node.args and not b.scope.is_tensor(node.args[0].value):
                name = MODULE_OPERAND  # `copy.deepcopy(layer)`: a module, which fake tensors copy fine
            b.emit_break(rule, node, detail=name, gb_code=self._gb_code(rule, node))
            return
        if self._input_method_after_resume(node):
            return
        if self._higher_order(node, qual):
            return
        if self._traced_tensor_hook(node):
            return
        self._callback_call(node, qual)
        target = b.resolver.resolve(node.func)
        if self._custom_op_call(node, qual, target):
            return
        if target is not None:
            self._project_call(node, target)
            for other in b.resolver.other_element_targets(node.func):  # the loop's other classes
                self._later_element_call(node, other)
            if target.instance == "*" and isinstance(node.func, cst.Name):  # elements built otherwise
                for index in self._other_element_variants(node.func):
                    self._later_element_call(node, target, index)
            return
        if self._module_base_init(node):
            b.emit_break(self.rule_for_check(CauseCheck.UNINITIALIZED_MODULE), node)
            return
        if self._exception_base_init(node):
            rule = self.rule_for_check(CauseCheck.EXCEPTION_BASE_INIT)
            explicit = not is_super(node.func.value)  # type: ignore[attr-defined]  # (`Exception.__init__(self, ...)`)
            b.emit_break(rule, node, detail=_source_of(node.func),
                         gb_code=rule.gb_code_when.get("explicit_base") if explicit else None)
            return
        if self._container_call(node):
            return
        lam = self.lambda_frame(node)
        if lam is not None:
            self.env.frame(lam)
            b.emit(EventKind.CALL, node, target=lam, mode=CallMode.INLINE)
            return
        for makers, check in ((self.k.module_scripting_functions, CauseCheck.SCRIPTED_MODULE_CALL),
                              (self.k.module_tracing_functions, CauseCheck.TRACED_MODULE_CALL)):
            if self._torchscript_module(node.func, makers) and self.check_enabled(check):
                b.emit_break(self.rule_for_check(check), node,
                             detail=_source_of(node.func) + "(...)")
                return
        held = self._held_layer(node.func)
        if held or b.scope.is_tensor(node) and not b.star_tuple(node):
            b.emit(EventKind.OP, node, detail=HELD_MODULE if held else "")

    def _held_call(self, func: cst.BaseExpression):
        """(the call, its module) that made the object a called local, attribute or global
        holds (`self.sub = torch.jit.script(...)`, `rnn = nn.LSTM(8, 8)`); (None, None) for
        parameters, rebound names and anything not made by a call."""
        b = self.b
        if isinstance(func, cst.Name) and func.value in b.built:
            return b.built[func.value], b.module
        if isinstance(func, cst.Name) and (func.value in b.rebound or func.value in b.key.arguments
                                           or any(p.name == func.value for p in b.function.params)):
            return None, None
        value, module = b.resolver.held_value(func)
        return (value, module) if isinstance(value, cst.Call) else (None, None)

    def _recurrent_module(self, func: cst.BaseExpression) -> str | None:
        """The torch recurrent layer class (nn.RNN, nn.GRU, nn.LSTM, or a project class deriving
        one) of the module a call reaches through a name or an attribute: Dynamo refuses to
        wrap such a module when it loads it (GB0014, while `config.allow_rnn` is off)."""
        value, module = self._held_call(func)
        if value is None:
            return None
        project = self.env.project
        qual = project.qualify(value.func, module)
        cls = project.klass(qual)
        bases = project.external_bases(cls) if cls is not None else {qual}
        return next((base for base in sorted(bases) if base in self.k.recurrent_modules), None)

    def _torchscript_module(self, func: cst.BaseExpression, makers: frozenset) -> bool:
        """A module one of `makers` turned into TorchScript (`torch.jit.script(nn.Linear(3, 3))`),
        held in a local, an attribute or a global. A scripted or traced function is not one."""
        value, module = self._held_call(func)
        project = self.env.project
        if value is None or not value.args or project.qualify(value.func, module) not in makers:
            return False
        made = value.args[0].value
        if isinstance(made, cst.Name):  # `inner = nn.Linear(3, 3)` at module level
            made = module.values.get(made.value, made)
        if not isinstance(made, cst.Call):
            return False
        qual = project.qualify(made.func, module)
        cls = project.klass(qual)
        return bool(qual and self.k.is_module_class(qual)) or (cls is not None and self.b.resolver.is_nn_module(cls))

    def _held_layer(self, func: cst.BaseExpression) -> bool:
        """A torch layer this code did not build: a module-level one (`H(x)`), or a deep copy of
        one (`v = copy.deepcopy(H)`). Its parameters are real tensors, which a run on fake
        tensors (an allow_in_graph function) cannot mix with its fake inputs."""
        resolver = self.b.resolver
        if not isinstance(func, cst.Name) or func.value in resolver.local_layers:
            return False
        made = self.b.built.get(func.value)
        if made is not None and resolver.qualify(made.func) in self.env.tensor_or_module_arg_calls and made.args:
            return self._held_layer(made.args[0].value)
        return made is None and resolver.torch_layer(func)

    def _module_base_init(self, node: cst.Call) -> bool:
        """`super().__init__()` in a module's constructor reaching torch's `nn.Module.__init__`
        (no project base defines `__init__` in between). Inlined into the code that builds the
        module it traces; compiled as a frame of its own (after a break in the constructor,
        e.g. GBL335) Dynamo meets `self` uninitialized and skips the frame (GB0119)."""
        func, resolver = node.func, self.b.resolver
        if not (isinstance(func, cst.Attribute) and func.attr.value == "__init__" and isinstance(func.value, cst.Call)
                and isinstance(func.value.func, cst.Name) and func.value.func.value == "super"):
            return False
        if self.b.function.name != "__init__" or resolver.cls is None or not resolver.is_nn_module(resolver.cls):
            return False
        return self.check_enabled(CauseCheck.UNINITIALIZED_MODULE)

    def _exception_base_init(self, node: cst.Call) -> bool:
        """`super().__init__(msg)` (or `ValueError.__init__(self, msg)`) in the `__init__` of a
        class whose bases outside the project are builtin exceptions: Dynamo, building the
        exception, cannot call the builtin `__init__` (GBL626)."""
        func, resolver = node.func, self.b.resolver
        if self.b.function.name != "__init__" or resolver.cls is None or not isinstance(func, cst.Attribute) \
                or func.attr.value != "__init__" or not self.check_enabled(CauseCheck.EXCEPTION_BASE_INIT):
            return False
        external = self.env.project.external_bases(resolver.cls)
        if not external or not all(_builtin_exception(name) for name in external):
            return False
        return is_super(func.value) or _builtin_exception(resolver.qualify(func.value) or "")

    def _callback_call(self, node: cst.Call, qual: str | None) -> None:
        """`map(f, xs)`, `filter(f, xs)`, `functools.reduce(f, xs)`, `sorted(xs, key=f)`,
        `xs.sort(key=f)`: the builtin calls the function it is given, which Dynamo inlines
        there (measured 2.13: a break in `f` breaks at its own line and resumes; consumed by a
        `for`, at FOR_ITER in the loop). Knowledge: callback_calling_functions / _methods."""
        b = self.b
        where = self.k.callback_calling_functions.get(qual or "")
        if where is None and isinstance(node.func, cst.Attribute):
            where = self.k.callback_calling_methods.get(node.func.attr.value)
            if where is None and self.b.resolver.is_module_instance(node.func.value):  # `self.apply(init_fn)`
                where = self.k.module_callback_methods.get(node.func.attr.value)
        position = int(where) if where is not None and where.isdigit() else None
        fn_expr = call_argument(node, where, position) if where is not None else None
        if fn_expr is None:
            return
        items = [a.value for a in node.args if a.keyword is None and not a.star and a.value is not fn_expr]
        tensors = any(b.scope.is_tensor_sequence(item) for item in items)  # (`tree_map_only(T, f, tree)`)
        key = self._callback_frame(fn_expr, 2 if qual in self.k.callback_pairing_functions else 1, tensors)
        if key is not None and self.env.frame(key) is not None:
            b.emit(EventKind.CALL, node, target=key, mode=CallMode.INLINE)

    def _run_by_skipped(self, node: cst.Call) -> None:
        """`skipped(fn, x)`: a function handed to a function Dynamo skips is called by it,
        eagerly, where Dynamo's frame hook compiles it as a frame of its own (measured 2.13: a
        break in `fn` is reported in `fn`, resumed there), given the call's other arguments."""
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        for fn_expr in positional:
            if not isinstance(fn_expr, (cst.Name, cst.Attribute, cst.Lambda)) or self.b.scope.is_tensor(fn_expr) \
                    or self.b.resolver.class_of(fn_expr) is not None:  # (an object is passed, not run)
                continue
            rest = [v for v in positional if v is not fn_expr]
            key = self._callback_frame(fn_expr, len(rest), any(self.b.scope.is_tensor(v) for v in rest))
            if key is not None and self.env.frame(key) is not None:
                self.b.emit(EventKind.CALL, node, target=key, mode=CallMode.WRAPPED)

    def _compiled_name(self, func: cst.BaseExpression) -> bool:
        """`cg(y)` of `cg = torch.compile(f)`: the call runs through torch.compile's wrapper
        frame (`_fn`), as an `@torch.compile` def's does (measured 2.13: a break in `f` is
        traced twice, nested graph breaks on or off)."""
        value, module = self.b.resolver.held_value(func)
        return isinstance(value, cst.Call) and module is not None \
            and self.env.project.qualify(value.func, module) in self.k.compile_functions

    def _callback_frame(self, fn_expr: cst.BaseExpression, given: int, tensors: bool) -> FrameKey | None:
        """The frame of a function a builtin calls with `given` elements (tensors or not)."""
        b = self.b
        if isinstance(fn_expr, cst.Lambda):
            names = [p.name.value for p in fn_expr.params.params][:given]
            return self._lambda_key(fn_expr, frozenset(names if tensors else ()))
        target = b.resolver.resolve(fn_expr) if isinstance(fn_expr, (cst.Name, cst.Attribute)) else None
        if target is None:
            return None
        params = [p for p in target.function.params if p.kind == "positional"]
        params = params[(1 if target.skip_first_param else 0) + target.bound:][:given]
        unknown = () if tensors else tuple((p.name, PASSED_UNKNOWN) for p in params)
        return FrameKey(target.function.qualname, frozenset(p.name for p in params) if tensors else frozenset(),
                        tuple(target.captured), target.instance, target.self_class,
                        arguments=tuple(sorted(dict(target.constants).items())) + unknown)

    def lambda_frame(self, node: cst.Call) -> FrameKey | None:
        """The frame of a lambda called by a name bound to it here or at module level (Dynamo
        inlines it like any function; after a break it is compiled as `<lambda>`)."""
        func, b = node.func, self.b
        if not isinstance(func, cst.Name):
            return None
        lam = b.lambdas.get(func.value)
        if lam is None and func.value not in b.module.reassigned:
            found = b.module.values.get(func.value)
            lam = found if isinstance(found, cst.Lambda) else None
        if lam is None or any(a.star or a.keyword for a in node.args):
            return None
        params = [p.name.value for p in lam.params.params]
        tensors = frozenset(p for p, a in zip(params, node.args) if b.scope.is_tensor(a.value))
        return self._lambda_key(lam, tensors, f":{func.value}")

    def _lambda_key(self, lam: cst.Lambda, tensors: frozenset[str], label: str = "", **facts) -> FrameKey:
        """The frame of a lambda written in this frame's function (Dynamo inlines it like any
        function), registered so it can be built."""
        b = self.b
        span = b.span(lam)
        line = span.line  # (and the column: `while_loop(lambda c, t: ..., lambda c, t: ...)`)
        key = FrameKey(f"{b.module.name}.<lambda>@{line}:{span.column}{label}", tensors, **facts)
        self.env.register_expression_frame(key, LambdaBody(lam, b.function, line), b.module)
        return key

    def _container_call(self, node: cst.Call) -> bool:
        """`self.seq(x)` on an nn.Sequential of project modules: torch's forward calls each.

        Dynamo inlines torch's Sequential.forward but never compiles it as a frame of its
        own, so after a break its elements' forwards become top-level frames.
        """
        elements = self.b.resolver.sequential_elements(node.func)
        if not elements or not any(elements):
            return False
        span = self.b.span(node)
        loop = (Ctx(BlockKind.LOOP, span.line),)  # `for module in self:`: a break there does not nest
        held = self.b.values.value(node.func)
        container = held.value if held is not None and isinstance(held.value, Obj) else Obj("")
        built = element_count(container)
        if len(elements) == 1 and built is not None:  # `Sequential(*[Block(cfg) for _ in range(n)])`
            elements = elements * max(0, min(built, MAX_UNROLLED_ELEMENTS))
        events = []
        for position, cls in enumerate(elements):
            fn = self.env.project.method(cls, "forward") if cls else None
            if fn is None:
                events.append(Event(EventKind.OP, span, loop))
                continue
            params = frozenset([p.name for p in fn.params if p.kind == "positional"][1:2])
            given = node.args[0].value if node.args and not position else None  # (later ones: an output)
            key = FrameKey(fn.qualname, params,
                           instance=f"{self.b.resolver.instance_name(node.func)}[{position}]",
                           training=self.b.key.training,  # sub-modules share the mode
                           attributes=_element_built(container, position),
                           plain_inputs=params if given is not None and self.b.grad_leaks.is_plain(given) else frozenset())
            self.env.frame(key)
            events.append(Event(EventKind.CALL, span, loop, target=key))
        self._call_torch_frame(node, "Sequential", "forward", tuple(events), eager_only=True)
        return True

    def _input_method_after_resume(self, node: cst.Call) -> bool:
        """`a.unsqueeze_(2)` on a local tensor made before a graph break: the resume function
        after that break gets `a` as a graph input, where the method breaks as on a parameter
        (measured 2.13: GB0148). The event holds only in a resume function starting after `a`
        was made (model.trace)."""
        func = node.func
        if not isinstance(func, cst.Attribute) or not isinstance(func.value, cst.Name):
            return False
        name = func.value.value
        made_at = self.b.tensor_made_at.get(name)
        if made_at is None or name in self.b.key.tensor_params or not self.b.scope.is_tensor(func.value):
            return False
        for rule in self.env.input_tensor_methods.get(func.attr.value, ()):
            if self.rule_enabled(rule):
                self.b.emit_break(rule, node, detail=func.attr.value, gb_code=self._gb_code(rule, node),
                                  input_from=made_at)
                return True
        return False

    def _cause_rule(self, node: cst.Call, qual: str | None):
        env = self.env
        first_arg = node.args[0].value if node.args else None
        if qual in self.k.parameter_constructors and first_arg is not None and self._sourced_tensor(first_arg):
            return None  # Dynamo makes a parameter of a tensor it reads from outside the frame
        if qual in self.k.traced_on_class_or_module and first_arg is not None and self._class_or_module(first_arg):
            return None
        if qual in self.k.breaks_only_on_class and not (first_arg is not None and self._class_or_module(first_arg)):
            return None
        if qual is not None:
            for rule in env.calls.get(qual, ()):
                if self.rule_enabled(rule) and not env.flag(REORDERABLE + qual):
                    return rule
            for rule in env.tensor_arg_calls.get(qual, ()):
                if first_arg is not None and (self.b.scope.is_tensor(first_arg) or self.b.scope.is_numpy(first_arg)) \
                        and self.rule_enabled(rule):
                    return rule
            for rule in env.tensor_or_module_arg_calls.get(qual, ()):
                if first_arg is not None and self._tensor_or_module(first_arg) and self.rule_enabled(rule):
                    return rule
        if isinstance(node.func, cst.Attribute):
            method = node.func.attr.value
            receiver = node.func.value
            for rule in env.input_tensor_methods.get(method, ()):  # (before the rule for any tensor)
                if self.b.is_graph_input(receiver) and self.rule_enabled(rule):
                    return rule
            for rule in env.tensor_methods.get(method, ()):
                # a numpy array is traced as a tensor: its `.item()` reads data the same way
                if (self.b.scope.is_tensor(receiver) or self.b.scope.is_numpy(receiver)
                        or self._unknown_tensor_receiver(method, receiver)) and self.rule_enabled(rule) \
                        and not self._captured_integer_method(method, receiver):
                    return rule
            for rule in env.logger_methods.get(method, ()):
                if self.is_logger(receiver) and self.rule_enabled(rule):
                    return rule
        return None

    def _class_or_module(self, expr: cst.BaseExpression) -> bool:
        """A project class, or a module the file imports (`dir(Config)`, `dir(torch)`)."""
        module = self.b.module
        if isinstance(expr, cst.Name) and expr.value in module.module_imports:
            return True
        return self.env.project.klass(self.b.resolver.qualify(expr)) is not None

    def _captured_integer_method(self, method: str, receiver: cst.BaseExpression) -> bool:
        """`i.tolist()` of an integer tensor with capture_scalar_outputs on: Dynamo captures
        the values as unbacked ints (measured 2.13; of a float tensor it still breaks, GB0109)."""
        return method in self.k.captured_integer_methods and self._any_flag(self.k.scalar_capture_flags) \
            and self.b.scope.is_integer_tensor(receiver)

    def _sourced_tensor(self, expr: cst.BaseExpression) -> bool:
        """A tensor the frame reads from outside itself (an input it has not rebound, a tensor
        attribute of `self` it does not assign): Dynamo has a source for it, and
        `nn.Parameter(data)` of such data is put in the graph as an input (measured 2.13: no
        break, variables/torch.py `_nn_param_via_prefix_insert`)."""
        b = self.b
        if b.is_graph_input(expr):
            return True
        if not (isinstance(expr, cst.Attribute) and b.self_attribute_is_tensor(expr)):
            return False
        fn = b.function.node
        return expr.attr.value not in self.env.node_memo("self_writes", fn, lambda: _self_writes(fn))

    def _dynamic_shape_form(self, node: cst.Call, qual: str | None) -> bool:
        """`torch.where(cond)` (the condition alone) and `repeat_interleave` with a tensor of
        repeats: the same calls in their other forms have static shapes."""
        func = node.func
        name = func.attr.value if isinstance(func, cst.Attribute) else None
        if qual not in self.k.dynamic_shape_condition_only and qual not in self.k.dynamic_shape_tensor_repeats \
                and name not in self.k.dynamic_shape_tensor_repeats:
            return False
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        keywords = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
        if qual in self.k.dynamic_shape_condition_only:
            return len(positional) == 1 and not keywords and self.b.scope.is_tensor(positional[0])
        if isinstance(func, cst.Attribute) and name in self.k.dynamic_shape_tensor_repeats \
                and self.b.scope.is_tensor(func.value):
            repeats = positional[0] if positional else keywords.get("repeats")
        elif qual in self.k.dynamic_shape_tensor_repeats:
            repeats = positional[1] if len(positional) > 1 else keywords.get("repeats", positional[0] if positional else None)
        else:
            return False
        return repeats is not None and self.b.scope.is_tensor(repeats)

    def _requires_grad_factory(self, args: tuple[cst.Arg, ...], qual: str | None) -> bool:
        """A torch function making a tensor, called with `requires_grad=` a true constant."""
        flag = next((a.value for a in args if a.keyword is not None and a.keyword.value == "requires_grad"), None)
        if flag is None or qual is None or not self.b.scope.is_torch_function(qual):
            return False
        known = self.b.values.value(flag)
        return known is not None and known.value is True

    def registered_tensor(self, name: str, owner: ClassInfo | None = None) -> bool:
        """`self.<name>` (or `<obj>.<name>` of an instance of `owner`) of a module is a
        parameter or buffer: assigned an `nn.Parameter` / `nn.Buffer`, or registered by that
        name (`self.register_buffer("name", ...)`)."""
        resolver, project = self.b.resolver, self.env.project
        owner = owner or resolver.cls
        if owner is None or not resolver.is_nn_module(owner):
            return False
        registered = re.compile(rf"register_(?:buffer|parameter)\(\s*['\"]{re.escape(name)}['\"]")
        makers = self.k.parameter_constructors | self.k.buffer_constructors
        for cls in project.mro(owner):
            module = project.modules[cls.module]
            value = cls.attributes.get(name)
            if isinstance(value, cst.Call) and project.qualify(value.func, module) in makers:
                return True
            if registered.search(module.parsed.text):
                return True
        return False

    def _unknown_tensor_receiver(self, method: str, receiver: cst.BaseExpression) -> bool:
        """`model(x).loss.backward()`, `out.max().item()`: the receiver's type is unknown here,
        but only tensors have these methods (knowledge: tensor_only_methods), and Dynamo sees a
        tensor."""
        return method in self.k.tensor_only_methods and self._unknown_receiver(receiver)

    def _unknown_receiver(self, receiver: cst.BaseExpression) -> bool:
        """Nothing tells what the receiver is. A receiver we know to be something else (a
        constant, a project instance, a module or global function) is not unknown."""
        if self.b.values.value(receiver) is not None or self.b.resolver.class_of(receiver) is not None:
            return False
        root = receiver
        while isinstance(root, (cst.Attribute, cst.Call, cst.Subscript)):
            root = root.func if isinstance(root, cst.Call) else root.value
        if isinstance(root, cst.Name) and (self.b.resolver.qualify(root) is not None
                                           or root.value in self.b.scope.python_values
                                           or root.value in self.b.scope.data_scalars
                                           or root.value in self.b.scope.numpy_values):
            return False  # a module or global function (`np.arange(3).tolist()`), or a Python
            # value read out of a tensor (`x = t.tolist(); x.item()` is not a tensor method)
        return True

    def _steps_passed_iterator(self, node: cst.Call, qual: str | None) -> str | None:
        """`next(it)` / `list(it)` of an iterator passed in, or `ctx.__enter__()` of a passed
        @contextmanager object (which steps its generator): the callee's name."""
        if qual in self.k.iterator_consumers and node.args and self.passed_iterator(node.args[0].value):
            return (qual or "").removeprefix("builtins.")
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in self.k.passed_generator_stepping_methods \
                and self.passed_iterator(func.value):
            return func.attr.value
        return None

    def _skipped_method(self, node: cst.Call) -> bool:
        """`case.assertEqual(a, b)` of `case = unittest.TestCase()`: a method of an object whose
        class lives where Dynamo skips, which it will not inline (measured 2.13: GB0008
        "Attempted to inline function marked as skipped", resumed)."""
        method = self.skipped_method(node)
        if method is None:
            return False
        cls = method.rpartition(".")[0]
        rule = self.rule_for_check(CauseCheck.DISALLOWED_CALL)
        # a mock's attributes come from its `__getattr__`, which breaks at LOAD_ATTR: no resuming
        how = {"break_kind": BreakKind.INSTRUCTION} if cls in self.k.skipped_classes_with_new else {}
        self.b.emit_break(rule, node, detail=method, gb_code=rule.gb_code_when.get("skipped_method", rule.gb_code), **how)
        return True

    def skipped_method(self, node: cst.Call) -> str | None:
        """`case.assertEqual` (qualified by its library class) when the call is a method of an
        object whose class lives where Dynamo skips."""
        if not isinstance(node.func, cst.Attribute) or not self.check_enabled(CauseCheck.DISALLOWED_CALL):
            return None
        cls = self.b.resolver.library_class_of(node.func.value) or self._skipped_base(node.func)
        method = f"{cls}.{node.func.attr.value}" if cls is not None else None
        return method if self.env.skips(method) else None

    def _skipped_base(self, func: cst.Attribute) -> str | None:
        """`self.assertEqual(...)` in a `unittest.TestCase` subclass of the project (or on an
        instance of one): a method no project class of it defines, so one of its library
        bases does; the base, when every library base is one Dynamo skips."""
        project = self.env.project
        owner = self.b.resolver.class_of(func.value)
        name = func.attr.value
        if owner is None or project.method(owner, name) is not None or project.class_attribute(owner, name) is not None:
            return None
        bases = sorted(project.external_bases(owner) - {"builtins.object", "object"})
        defining = [b for b in bases if _defines(self.k.skipped_base_methods.get(b, ()), name)]
        return defining[0] if defining and all(self.env.skips(f"{b}.{name}") for b in bases) else None

    def _skipped_code(self, rule, qual: str) -> str | None:
        """A library class where Dynamo skips (`unittest.TestCase()`): its `__init__` is a
        method Dynamo will not inline (measured 2.13: GB0008, not a skipped call's GB0007)."""
        library_class = self.env.project.is_library_class(qual) and qual not in self.k.skipped_classes_with_new
        return rule.gb_code_when.get("skipped_method", rule.gb_code) if library_class else rule.gb_code

    def _gb_code(self, rule, node: cst.Call) -> str | None:
        """Some causes have a different Dynamo code by operand (declared in the rule)."""
        when = rule.gb_code_when
        scope = self.b.scope
        if "integer_receiver" in when and isinstance(node.func, cst.Attribute) \
                and scope.is_integer_tensor(node.func.value):
            return when["integer_receiver"]
        if "numpy_argument" in when and node.args and scope.is_numpy(node.args[0].value):
            return when["numpy_argument"]
        if "numpy_receiver" in when and isinstance(node.func, cst.Attribute) and scope.is_numpy(node.func.value):
            return when["numpy_receiver"]
        callee = self.b.resolver.qualify(node.func)
        by_callee = self.k.gb_codes_by_callee.get(callee or "")
        if by_callee is None and isinstance(node.func, cst.Attribute):
            by_callee = self.k.gb_codes_by_callee.get(node.func.attr.value)
        return by_callee if by_callee in rule.gb_codes else rule.gb_code

    def _tensor_or_module(self, expr: cst.BaseExpression) -> bool:
        return self.b.scope.is_tensor(expr) or self.b.resolver.is_module_instance(expr)

    def makes_opaque_object(self, value: cst.BaseExpression | None) -> bool:
        return isinstance(value, cst.Call) and self.b.resolver.qualify(value.func) in self.k.opaque_object_factories

    def _profiler_method(self, node: cst.Call) -> bool:
        """`p.step()` / `p.key_averages()` / `p.profiler.kineto_results.events()` on the object
        `with torch.profiler.profile() as p` bound (or one it holds)."""
        receiver = node.func.value if isinstance(node.func, cst.Attribute) else None
        while isinstance(receiver, cst.Attribute):
            receiver = receiver.value
        return isinstance(receiver, cst.Name) and receiver.value in self.b.profilers

    def _opaque_method(self, node: cst.Call) -> str | None:
        """The method name of `fh.write(...)` when `fh` holds an object Dynamo cannot trace."""
        func = node.func
        if not isinstance(func, cst.Attribute):
            return None
        receiver = func.value
        if isinstance(receiver, cst.Name) and receiver.value in self.b.opaque_objects:
            return func.attr.value
        made_by = self._global_made_by(receiver) or self._self_attribute_made_by(receiver)
        return func.attr.value if made_by in self.k.opaque_object_factories else None

    def _self_attribute_made_by(self, expr: cst.BaseExpression) -> str | None:
        """The factory of the object `self.<attr>` holds, from the class's `__init__`
        (`self.context_var = ContextVar(name)`)."""
        return self._factory(self._self_attribute_value(expr))

    def _factory(self, held) -> str | None:
        """The qualified callee that made a (value, module, scope) a name holds, or None."""
        if held is None or not isinstance(held[0], cst.Call):
            return None
        value, module, scope = held
        return self.env.project.qualify(value.func, module, scope)

    def _self_attribute_value(self, expr: cst.BaseExpression):
        """(value, module, scope) the class assigns to `self.<attr>`, or None."""
        cls = self.b.resolver.cls
        if cls is None or not (isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name)
                               and expr.value.value == "self"):
            return None
        found = self.env.project.class_attribute(cls, expr.attr.value)
        return (found[1], self.env.project.modules[found[0].module], None) if found is not None else None

    def is_logger(self, expr: cst.BaseExpression, depth: int = 0) -> bool:
        if isinstance(expr, cst.Call):
            return self.env.project.makes(expr, self.b.module, self.b.function, LOGGING_FACTORIES)
        if isinstance(expr, cst.Name):
            if expr.value in self.b.loggers:
                return True
            value = self.b.module.values.get(expr.value)  # `logger = logging.getLogger(...)`, `log = logger`
            return value is not None and depth < 4 and self.is_logger(value, depth + 1)
        if isinstance(expr, cst.Attribute) and self.b.resolver.cls is not None \
                and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            found = self.env.project.class_attribute(self.b.resolver.cls, expr.attr.value)
            return found is not None and isinstance(found[1], cst.Call) and self.is_logger(found[1])
        return False

    def attribute_assign(self, target: cst.Attribute, value: cst.BaseExpression | None) -> None:
        self.b.expr(target.value)
        if isinstance(target.value, cst.Name) and target.value.value == "self":
            # on a branch Dynamo may not take, the old value may still hold: unknown after
            self.b.values.write_self(target.attr.value, None if self.b.uncertain else value)
        if value is not None and self._buffer_alias(target, value):
            self.b.emit_break(self.rule_for_check(CauseCheck.BUFFER_REASSIGN), target)
            return
        if target.attr.value == "__class__" and not self.b.scope.is_tensor(target.value) \
                and self.check_enabled(CauseCheck.CLASS_REASSIGN):
            self.b.emit_break(self.rule_for_check(CauseCheck.CLASS_REASSIGN), target)
            return
        if target.attr.value == "data" and self._made_in_trace(target.value) \
                and self.check_enabled(CauseCheck.DATA_OF_NEW_TENSOR):
            self.b.emit_break(self.rule_for_check(CauseCheck.DATA_OF_NEW_TENSOR), target)
            return
        unsupported = self._unsupported_setattr_receiver(target.value)
        if unsupported and self.check_enabled(CauseCheck.UNSUPPORTED_SETATTR):
            self.b.emit_break(self.rule_for_check(CauseCheck.UNSUPPORTED_SETATTR), target, detail=unsupported)
            return
        for rule in self.env.attribute_assigns.get(target.attr.value, ()):
            # the trigger names tensor attributes (`.requires_grad`): a receiver nothing else
            # is known about (`h = values[:, None]` of a forwarded kwarg, a parameter) is a tensor
            tensor = self.b.scope.is_tensor(target.value) or self._unknown_receiver(target.value)
            if tensor and self.rule_enabled(rule):
                self.b.emit_break(rule, target)
                return
        cls = self.b.resolver.class_of(target.value)
        setter = setattr_override(self.env.project, cls) if cls is not None else None
        if setter is not None:  # `self.x = v` runs the class's __setattr__ (inlined, resumable)
            self._implicit_call(setter, target, cls, CallMode.DUNDER, Const(target.attr.value))
            return
        prop = property_setter(self.env.project, cls, target.attr.value) if cls is not None else None
        if prop is not None and not self._module_stores_it(cls, value):
            # `obj.scale = v` runs the setter like a call (resumable; run eagerly, compiled alone: measured 2.13)
            tensor = value is not None and self.b.scope.is_tensor(value)
            known = self.b.values.value(value) if value is not None and not tensor else None
            self._implicit_call(prop, target, cls, CallMode.INLINE, known or PASSED_UNKNOWN, tensor_value=tensor)

    def _unsupported_setattr_receiver(self, receiver: cst.BaseExpression) -> str:
        """What Dynamo cannot set an attribute on: "functools.partial" (made here, or held by a
        global), "function" (one defined at module level); "" for anything else."""
        if not isinstance(receiver, cst.Name):
            return ""
        name = receiver.value
        made = self.b.built.get(name)
        if made is None and name not in self.b.rebound and name not in self.b.frame_parameters:
            held = self.b.module.values.get(name) if name not in self.b.module.reassigned else None
            made = held if isinstance(held, cst.Call) else None
            fn = self.env.project.function(f"{self.b.module.name}.{name}")
            if made is None and (isinstance(held, cst.Lambda) or fn is not None and fn.parent_function is None
                                 and fn.class_qualname is None):
                return "function"
        if made is not None and self.b.resolver.qualify(made.func) == PARTIAL:
            return "functools.partial"
        return ""

    def _module_stores_it(self, cls: ClassInfo, value: cst.BaseExpression | None) -> bool:
        """nn.Module.__setattr__ keeps a module or a Parameter in its registries and never calls
        the property's setter (measured 2.13)."""
        if value is None or not self.b.resolver.is_nn_module(cls):
            return False
        made = self.b.resolver.class_of(value)
        return made is not None and self.b.resolver.is_nn_module(made) or self.b.resolver.torch_layer(value) \
            or isinstance(value, cst.Call) and self.b.resolver.qualify(value.func) in self.k.parameter_constructors

    def _made_in_trace(self, expr: cst.BaseExpression) -> bool:
        """A local tensor this trace built by a call (`z = torch.zeros(4)`) with no break since:
        Dynamo knows no source for it (past a break the resume function gets it as an input)."""
        b = self.b
        if not isinstance(expr, cst.Name) or expr.value not in b.built or not b.scope.is_tensor(expr):
            return False
        return not self._broken_since_built(expr.value)

    def _broken_since_built(self, name: str) -> bool:
        """Has the graph broken since local `name` was built here? Past a break the resume
        function gets the object as an input: Dynamo no longer sees it made in the trace."""
        b = self.b
        return any(ev.kind == EventKind.BREAK for ev in b.events[b.built_at[name]:])

    def _buffer_alias(self, target: cst.Attribute, value: cst.BaseExpression) -> bool:
        """`self.pe = self.pe.to(x.dtype)` with `pe` made by `nn.Buffer(...)`: the method hands
        back the Buffer object itself (nothing to convert), so `nn.Module.__setattr__` takes the
        Buffer path and reads `value.persistent`, which Dynamo cannot (GB4841)."""
        if not self.check_enabled(CauseCheck.BUFFER_REASSIGN) or not isinstance(value, cst.Call):
            return False
        cls = self.b.resolver.class_of(target.value)
        found = self.env.project.class_attribute(cls, target.attr.value) if cls is not None else None
        if found is None or not isinstance(found[1], cst.Call):
            return False
        holder, made = found
        if self.env.project.qualify(made.func, self.env.project.modules[holder.module]) not in self.k.buffer_constructors:
            return False
        if self.b.resolver.qualify(value.func) in self.k.buffer_constructors:
            return True
        func = value.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in self.k.self_returning_tensor_methods:
            return False
        if not (self.b.scope.is_tensor(func.value) or self._unknown_receiver(func.value)):
            return False
        default = self.env.default_dtype
        for arg in value.args:  # `.to(torch.float16)`: a new tensor, unless it is the dtype already
            known = self.b.values.value(arg.value)
            if known is not None and isinstance(known.value, str) and known.value in self.k.dtype_names \
                    and self.k.dtype_names[known.value] != default:
                return False
        return func.attr.value != "float" or default in (None, "torch.float32")

    def attribute_read(self, node: cst.Attribute) -> None:
        """`obj.name` that runs code: a property getter or a `__getattr__` override."""
        name = node.attr.value
        if name in self.k.module_attributes:
            return
        overriding = self._overridden_tensor_attribute(node)
        if overriding is not None and self.check_enabled(CauseCheck.SUBCLASS_OVERRIDDEN_ATTRIBUTE):
            self.b.emit_break(self.rule_for_check(CauseCheck.SUBCLASS_OVERRIDDEN_ATTRIBUTE), node,
                              detail=f"{overriding.rsplit('.', 1)[-1]}.{name}")
            return
        cls = self.b.resolver.class_of(node.value)
        if cls is None or self._run_getter(node, cls):
            return
        fallback = getattr_override(self.env.project, cls, name)
        if fallback is not None:
            self._implicit_call(fallback, node, cls, CallMode.ATTRIBUTE_DUNDER, Const(name))

    def property_read(self, node: cst.Attribute) -> None:
        """`obj.name(...)` where `name` is a property of a project class: Python runs the
        getter (inlined, unresumable like any attribute read) and calls what it returns."""
        cls = self.b.resolver.class_of(node.value)
        if cls is not None:
            self._run_getter(node, cls)

    def _run_getter(self, node: cst.Attribute, cls: ClassInfo) -> bool:
        """Inline the getter when `node` names a property of `cls`; False when it does not."""
        getter = property_getter(self.env.project, cls, node.attr.value)
        if getter is not None:
            self._implicit_call(getter, node, cls, CallMode.ATTRIBUTE, Const(node.attr.value))
        return getter is not None

    def _overridden_tensor_attribute(self, node: cst.Attribute) -> str | None:
        """`x.ndim` on a parameter given an instance of a project tensor subclass that sets
        `ndim = ...` in its class body: the class overriding it. Dynamo handles a function,
        property or classmethod there, not a plain value (GB0164, measured 2.13)."""
        receiver, name = node.value, node.attr.value
        if name not in self.k.tensor_data_attributes or not isinstance(receiver, cst.Name) \
                or receiver.value in self.b.rebound:
            return None
        passed = self.b.resolver.arguments.get(receiver.value)
        if not isinstance(passed, str) or not passed.startswith(PASSED_TENSOR_SUBCLASS):
            return None
        project = self.env.project
        cls = project.klass(passed[len(PASSED_TENSOR_SUBCLASS):])
        mro = project.mro(cls) if cls is not None else []
        return next((c.qualname for c in mro if name in dict(class_body_values(c.node))), None)

    def _implicit_call(self, fn: FunctionInfo, node, cls, mode: CallMode, name, tensor_value: bool = False) -> None:
        """`name`: what the method's first parameter after `self` holds (the attribute's name for
        `__getattr__`/`__setattr__`, the value stored for a property setter: `tensor_value`
        when it is a tensor)."""
        on_self = isinstance(node.value, cst.Name) and node.value.value == "self"
        params = [p.name for p in fn.params[1:2]]
        key = FrameKey(fn.qualname, frozenset(params) if tensor_value else frozenset(), self_class=cls.qualname,
                       arguments=tuple((p, name) for p in params) if not tensor_value else (),
                       training=self.b.key.training if on_self else None,
                       attributes=self.b.key.attributes if on_self else (),
                       tensor_attributes=self.tensor_attributes_of(node.value),
                       shapes=self.attribute_shapes_of(node.value))
        self.env.frame(key)
        self.b.emit(EventKind.CALL, node, target=key, mode=mode)

    def operator_dunder(self, node: cst.BaseExpression) -> None:
        """`a + b`, `a == b`, `a[k]`, `k in a` on an instance of a project class that defines
        the operator's method: Python calls it, and Dynamo inlines it like any method (a break
        there is met at the expression, the method then compiled alone). Under BINARY_OP and
        CONTAINS_OP the frame cannot resume (measured 2.13: `1 in bag` with a print in
        `__contains__` skips the frame; with nested graph breaks it resumes)."""
        for receiver, name, other in _operator_calls(node):
            mode = CallMode.OPERATOR if isinstance(node, cst.BinaryOperation) or name == "__contains__" \
                else CallMode.INLINE
            self._dunder_call(node, receiver, name, other, mode)

    def _invalid_builtin_call(self, node: cst.Call, qual: str | None) -> bool:
        """A builtin called with arguments its signature cannot bind (knowledge
        builtin_signatures): refused by Dynamo's handler at the call, or raised inside the trace."""
        signature = self.k.builtin_signatures.get(qual or "")
        if signature is None or any(a.star for a in node.args):
            return False
        keywords = {a.keyword.value for a in node.args if a.keyword is not None}
        if signature.binds(len(node.args) - len(keywords), keywords):
            return self._refuses_tensor(node, qual)
        if not signature.handler:
            self.b.raises(node, "TypeError")
        elif self.check_enabled(CauseCheck.INVALID_BUILTIN_CALL):
            self.b.emit_break(self.rule_for_check(CauseCheck.INVALID_BUILTIN_CALL), node, detail=qual)
        return True

    def _non_callable_call(self, node: cst.Call) -> bool:
        """`n()` of a parameter the call site gave a number, a string or an iterator: Dynamo
        has no call for it (measured 2.13: GB0147, resumed; eagerly the call raises TypeError)."""
        func = node.func
        if not isinstance(func, cst.Name):  # (an attribute `__init__` left None may be set later)
            return False
        passed = self.b.resolver.arguments.get(func.value) if func.value not in self.b.rebound else None
        called = passed == PASSED_ITERATOR or isinstance(passed, Const) and (
            type(passed.value) in _NOT_CALLABLE or isinstance(passed.value, Seq)) \
            or self.b.builtin_kinds().of(func) is not None  # a local int, list, None...
        if not called or not self.check_enabled(CauseCheck.NON_CALLABLE_CALL):
            return False
        self.b.emit_break(self.rule_for_check(CauseCheck.NON_CALLABLE_CALL), node,
                          detail=_source_of(func))
        return True

    def _data_pointer_argument(self, node: cst.Call, qual: str | None) -> bool:
        """A torch function or tensor method given `t.data_ptr()`: Dynamo has no graph
        argument for the pointer (measured 2.13: GB0055, resumed after the call)."""
        scope = self.b.scope
        func = node.func
        torch_op = qual is not None and scope.is_torch_function(qual) or \
            isinstance(func, cst.Attribute) and scope.is_tensor(func.value)
        given = [el.value for a in node.args for el in (a.value.elements if isinstance(a.value, (cst.List, cst.Tuple))
                                                          else (a,))]  # (`a.new_tensor([a.data_ptr()])`)
        if not torch_op or not any(scope.is_data_pointer(v) for v in given) \
                or not self.check_enabled(CauseCheck.DATA_POINTER_ARGUMENT):
            return False
        name = qual or (func.attr.value if isinstance(func, cst.Attribute) else "")
        self.b.emit_break(self.rule_for_check(CauseCheck.DATA_POINTER_ARGUMENT), node, detail=name)
        return True

    def _refused_operator_arguments(self, node: cst.Call, qual: str | None) -> bool:
        """A higher-order operator object (`cond_op(...)`) called with arguments Dynamo's handler
        refuses (knowledge hop_operator_arguments): a compile error at the call."""
        spec = self.k.hop_operator_arguments.get(qual or "")
        if spec is None or any(a.star for a in node.args) or not self.check_enabled(CauseCheck.HOP_OPERATOR_ARGUMENTS):
            return False
        names, needed, code = spec
        count = sum(1 for a in node.args if a.keyword is None)
        keywords = [a.keyword.value for a in node.args if a.keyword is not None]
        for position, name in enumerate(names):
            if name in keywords:
                if position != count:
                    return False  # Dynamo's own assertion (not a graph break): not modelled
                count += 1
                keywords.remove(name)
        if count == needed and not keywords:
            return False
        self.b.emit_break(self.rule_for_check(CauseCheck.HOP_OPERATOR_ARGUMENTS), node, gb_code=code, detail=qual)
        return True

    def _refuses_tensor(self, node: cst.Call, qual: str | None) -> bool:
        """`issubclass(t, int)` of a tensor: the handler takes classes only (measured 2.13: GB4393)."""
        if qual not in self.k.builtins_refusing_tensors or not self.b.scope.is_tensor(node.args[0].value) \
                or not self.check_enabled(CauseCheck.INVALID_BUILTIN_CALL):
            return False
        rule = self.rule_for_check(CauseCheck.INVALID_BUILTIN_CALL)
        self.b.emit_break(rule, node, detail=qual, gb_code=rule.gb_code_when.get("tensor_operand", rule.gb_code))
        return True

    def _failing_check(self, node: cst.Call, qual: str | None) -> bool:
        """`torch._check(cond, msg)` with `cond` known False: RuntimeError while tracing (the
        frame skipped unless a handler catches it); a compile error when `cond` reads sizes or
        ints that are symbols (dynamic=True). Knowledge: check_functions."""
        if qual not in self.k.check_functions or not node.args or node.args[0].keyword or node.args[0].star:
            return False
        condition = node.args[0].value
        if self.b.values.evaluator.truth(condition) is not False or self.b.reads_default(condition):
            return False  # (a library entry's defaults stand in for what a caller passes)
        if not (self.b.key.dynamic and self.b.reads_symbols(condition)):
            self.b.raises(node, "RuntimeError")
        elif self.check_enabled(CauseCheck.SYMBOLIC_CHECK):
            self.b.emit_break(self.rule_for_check(CauseCheck.SYMBOLIC_CHECK), node,
                              detail=_source_of(condition))
        return True

    def _shallow_copy(self, node: cst.Call, qual: str | None) -> bool:
        """`copy.copy(obj)` of a kind whose copier Dynamo cannot trace (knowledge shallow_copy_breaks)."""
        if qual != "copy.copy" or len(node.args) != 1 or node.args[0].star or node.args[0].keyword is not None:
            return False
        gb_code = self.k.shallow_copy_breaks.get(self._copied_kind(node.args[0].value) or "")
        if gb_code is None or not self.check_enabled(CauseCheck.SHALLOW_COPY):
            return False
        self.b.emit_break(self.rule_for_check(CauseCheck.SHALLOW_COPY), node, gb_code=gb_code,
                          detail=_source_of(node.args[0].value))
        return True

    def _copied_kind(self, expr: cst.BaseExpression) -> str | None:
        if self.b.scope.is_tensor(expr):
            return "tensor"
        if self.b.resolver.is_module_instance(expr):
            return "module"
        kinds = self.b.builtin_kinds()
        builtin = kinds.of(expr)
        return f"builtins.{builtin.__name__}" if builtin is not None else kinds.made_by(expr)

    def builtin_dunder(self, node: cst.Call, qual: str | None) -> None:
        """`len(obj)`, `abs(obj)`, `bool(obj)`, `next(obj)`, `list(obj)` on an instance of a
        project class defining the method the builtin runs (`__len__`, `__bool__`,
        `__iter__`...): Dynamo inlines that method at the call (measured 2.13: a print there
        breaks and resumes; a `torch.compiler.disable`d one is skipped at the call, GB0099)."""
        name = _BUILTIN_DUNDERS.get(qual or "")
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        if name is None and qual in self.k.iterating_builtins:
            for value in positional if qual == "builtins.zip" else positional[:1]:
                self._dunder_call(node, value, "__iter__", None, CallMode.INLINE)
            return
        if name is None or len(node.args) != 1 or len(positional) != 1:
            return
        if name == "__bool__":
            self.truth_dunder(node.args[0].value, CallMode.INLINE, at=node)
        else:
            self._dunder_call(node, node.args[0].value, name, None, CallMode.INLINE)

    def truth_dunder(self, value: cst.BaseExpression, mode: CallMode = CallMode.OPERATOR,
                     at: cst.BaseExpression | None = None) -> None:
        """`if obj:` / `while obj:` / `not obj` / `obj and ...` on an instance of a project class
        defining `__bool__` (else `__len__`): Python asks that method, and Dynamo inlines it
        under the jump, an instruction it cannot resume after (measured 2.13: a print in
        `__bool__` skips the frame; in `__len__` too)."""
        cls = self._project_class(value)
        if cls is None:
            return
        name = "__bool__" if self.env.project.method(cls, "__bool__") is not None else "__len__"
        self._dunder_call(at if at is not None else value, value, name, None, mode)

    def iteration_dunder(self, iterable: cst.BaseExpression) -> None:
        """`for v in obj` on an instance of a project class defining `__iter__`: Dynamo inlines
        it under GET_ITER (no resume: a break there skips the frame, measured 2.13), and a
        generator `__iter__` steps at each FOR_ITER, inside the loop. An `__iter__` returning
        `self` hands each step to the class's `__next__`, also run inside the loop."""
        if isinstance(iterable, cst.Call) and self.b.resolver.qualify(iterable.func) == "builtins.enumerate" \
                and iterable.args and iterable.args[0].keyword is None:
            iterable = iterable.args[0].value  # enumerate asks for the iterator at the loop
        cls = self._project_class(iterable)
        method = self.env.project.method(cls, "__iter__") if cls is not None else None
        if method is None:
            return
        if method.is_generator:
            self._step_in_loop(iterable, "__iter__", CallMode.GENERATOR)
            return
        self._dunder_call(iterable, iterable, "__iter__", None, CallMode.OPERATOR)
        if _returns_self(method) and self.env.project.method(cls, "__next__") is not None:
            self._step_in_loop(iterable, "__next__", CallMode.OPERATOR)

    def _step_in_loop(self, iterable: cst.BaseExpression, name: str, mode: CallMode) -> None:
        """A method the loop runs at each FOR_ITER: inside the loop, a break there skips the frame."""
        self.b.ctx.append(Ctx(BlockKind.LOOP, self.b.line(iterable)))
        self._dunder_call(iterable, iterable, name, None, mode)
        self.b.ctx.pop()

    def item_store_dunder(self, target: cst.Subscript, value: cst.BaseExpression | None) -> None:
        """`obj[k] = v` / `del obj[k]` (value None) on an instance of a project class defining
        `__setitem__` / `__delitem__`: inlined like any method. Measured 2.13: a break there
        resumes after STORE_SUBSCR but not after DELETE_SUBSCR (the frame is skipped, like a
        break under BINARY_OP)."""
        if value is None:
            self._dunder_call(target, target.value, "__delitem__", None, CallMode.OPERATOR)
        else:
            self._dunder_call(target, target.value, "__setitem__", value, CallMode.INLINE)

    def _project_class(self, value: cst.BaseExpression) -> ClassInfo | None:
        """The project class of an object Python runs a method of for an operator or builtin."""
        return self.b.resolver.class_of(value) if not self.b.scope.is_tensor(value) else None

    def _dunder_call(self, node, receiver: cst.BaseExpression, name: str, other, mode: CallMode) -> None:
        cls = self._project_class(receiver)
        if cls is None:
            return
        fn = self.env.project.method(cls, name)  # the class's own or inherited one
        if fn is None and name == "__ne__":
            # object.__ne__ calls __eq__ from C: a break there does not nest (measured 2.13)
            fn, mode = self.env.project.method(cls, "__eq__"), CallMode.NO_NESTING
        if fn is None:
            return
        how = self.disabled(fn)
        if how is not None:  # inlining it is refused at the expression
            self._emit_disabled(node, how, fn.qualname, decorator="implicit")
            return
        operands = {p.name for p in fn.params[1:2]} if other is not None and self.b.scope.is_tensor(other) else set()
        key = FrameKey(fn.qualname, frozenset(operands), self_class=cls.qualname,
                       tensor_attributes=self.tensor_attributes_of(receiver),
                       shapes=self.attribute_shapes_of(receiver))
        self.env.frame(key)
        self.b.emit(EventKind.CALL, node, target=key, mode=mode)

    def _passed_to_constructor(self, func: cst.BaseExpression) -> bool:
        """`self.lin` set from a constructor parameter (`Wrapper(lin)`): an object the class
        does not build, taken for the module its registered hooks name."""
        cls = self.b.resolver.cls
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"
                and cls is not None):
            return False
        found = self.env.project.class_attribute(cls, func.attr.value)
        init = self.env.project.method(cls, "__init__")
        return found is not None and isinstance(found[1], cst.Name) and init is not None \
            and any(p.name == found[1].value for p in init.params)

    def _hook_event(self, key: FrameKey, span, ctx) -> Event:
        """Running one hook: a call, or a break when the hook is `torch.compiler.disable`d
        (measured 2.13: GB0098 reported inside torch's _call_impl for the calling line)."""
        fn = self.env.project.function(key.qualname)
        how = self.disabled(fn) if fn is not None else None
        rule = self.rule_for_check(CauseCheck.DISABLED_CALL) if how is not None else None
        if rule is None:
            return Event(EventKind.CALL, span, ctx, target=key)
        return Event(EventKind.BREAK, span, ctx, rule=rule.code, break_kind=rule.break_kind,
                     gb_code=self.k.disable_gb_codes.get(how, rule.gb_code), detail=key.qualname)

    def _hooks(self, node: cst.Call, kind: str) -> list[FrameKey]:
        """Frames of the forward (pre-)hooks registered on the sub-module this call runs."""
        keys = []
        for hook in self._registered_hooks(node, kind):
            fn = self.env.project.function(hook.qualname)
            if fn is not None:
                tensors = frozenset(p.name for p in fn.params[1:] if p.kind == "positional")
                # run inside a higher-order op's body, the hook is checked as the body is
                keys.append(FrameKey(fn.qualname, tensors, hook.captured, hop_body=self.b.key.hop_body,
                                     hop_root=self.b.key.hop_root))
                self.env.frame(keys[-1])
        return keys

    def _registered_hooks(self, node: cst.Call, kind: str) -> list:
        """The hooks of `kind` registered on the sub-module this call runs (FnValues)."""
        func = node.func
        if not isinstance(func, (cst.Attribute, cst.Name)):
            return []
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value
        resolver = self.b.resolver
        on_self = isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"
        owner = resolver.cls.qualname if on_self and resolver.cls is not None else ""
        called = resolver.class_of(func) if isinstance(func, cst.Name) else None
        held = global_hook_key(self.env.project, self.b.module, self.b.function, func)
        model = self.b.key.instance if on_self else resolver.instance_name(func) if called is not None else ""
        hooks = self.env.hooks.for_attribute(name, kind, self.b.module.name, owner,
                                             called.qualname if called is not None else "", held,
                                             model if self._built_instance(model) else "")
        if not hooks or not (self.b.resolver.torch_layer(func) or self.b._is_module_call(node)
                             or self._passed_to_constructor(func)):
            return []
        return hooks

    def _built_instance(self, instance: str) -> bool:
        """Does an instance name ("<module>:<name>") denote a model the module builds under that
        name (`model = Net()`), rather than one reached through a parameter or an attribute
        (which may be any instance, the hooked one too)?"""
        module_name, _, name = instance.partition(":")
        module = self.env.project.modules.get(module_name) if name.isidentifier() else None
        return module is not None and re.search(rf"^[ \t]*{name}\s*=\s*[\w.]+\(", module.parsed.text, re.M) is not None

    def _project_call(self, node: cst.Call, target: CallTarget) -> None:
        fn = target.function
        if target.opaque or self._opaque(fn):  # allow_in_graph / nonstrict_trace / assume_constant_result
            key = self.frame_key(target, node)
            self.env.frame(key)  # its return type, not its breaks
            leaf = self._decorated_with(self._decorators(fn), fn.module, self.k.leaf_decorators)
            if not leaf and (self._object_argument(node, fn, key, target.opaque)
                             or self._fake_run(node, fn, key, target.opaque)):
                return
            if self.b.scope.is_tensor(node) or any(self.b.scope.is_tensor(a.value) for a in node.args):
                self.b.emit(EventKind.OP, node)
            return
        disabled = target.disabled or self.disabled(fn) or self._disabled_class(target)
        key = self.callee_key(target, node)
        if self.env.flag(REORDERABLE + fn.qualname) and isinstance(node.func, cst.Name):
            # reorderable_logging_functions: Dynamo calls it after the graph instead of tracing it
            self.env.frame(key)
            rule = self.rule_for_check(CauseCheck.UNREORDERABLE_LOGGING_CALL)
            if self._reorderable(node) or rule is None:
                self.b.emit(EventKind.CALL, node, target=key, mode=CallMode.DEFERRED)
            else:  # the call breaks; the function then runs as a frame of its own
                self.b.emit_break(rule, node, detail=fn.name, target=key)
            return
        if self.b.key.hop_body:  # traced inside a higher-order op's body: the same checks apply
            key = replace(key, hop_body=True, hop_root=self.b.key.hop_root)
        info = self.env.frame(key)  # build the callee first so its return type is known
        if info is not None and info.leaves_attribute_set:
            self.b.leaves_attribute_set = True
        if info is not None:
            self.b.proxies.callee(info.changes_outer_dict, any(ev.kind == EventKind.BREAK for ev in info.events))
        if _on_self(node):  # `self.set_attention_type("original_full")` sets `self.attention_type`
            for name in self.env.node_memo("self_writes", fn.node, lambda: _self_writes(fn.node)):
                self.b.values.write_self(name, None)
        if disabled is not None:
            self._emit_disabled(node, disabled, fn.qualname, self._disabled_by(fn))
            if disabled == "nonrecursive":
                self.b.emit(EventKind.CALL, node, target=key, mode=CallMode.EAGER)
            return
        if self._context_decorated(fn) and self.check_enabled(CauseCheck.CONTEXT_DECORATED_CALL):
            self.b.emit_break(self.rule_for_check(CauseCheck.CONTEXT_DECORATED_CALL), node, detail=fn.qualname)
            self.b.emit(EventKind.CALL, node, target=key, mode=CallMode.WRAPPED)
            return
        if self._custom_derivative(node, fn) or self._classmethod_function(node, fn) \
                or self._duplicate_apply_input(node, fn):
            return
        if self.contextmanager_function(fn) and self.check_enabled(CauseCheck.UNTRACED_CONTEXTMANAGER):
            # enable_trace_contextlib off (the rule's unless_config): contextlib makes it eagerly
            self.b.emit_break(self.rule_for_check(CauseCheck.UNTRACED_CONTEXTMANAGER), node, detail=fn.qualname)
            self.b.emit(EventKind.CALL, node, target=key, mode=CallMode.EAGER)
            return
        mode = CallMode.GENERATOR if fn.is_generator else CallMode.INLINE
        if self._applied_function(fn) is not None:  # a break in its forward does not nest through apply
            mode = CallMode.NO_NESTING
        context_object = self.contextmanager_function(fn)
        returned = id(node) in self.b.returned_calls()
        if fn.is_generator and returned and not context_object or self.b.key.reconstructing:
            key = replace(key, reconstructing=True)  # its body (a callee's too) is traced again to rebuild it
            self.env.frame(key)
        elif context_object and returned:  # not rebuilt: the return fails first (GBL394)
            key = replace(key, take_yields=0)  # made to be returned: none of its body runs here
            self.env.frame(key)
        start = len(self.b.events)
        self.b.emit(EventKind.CALL, node, target=key, mode=mode, new_receiver=self._new_receiver(node, target))
        if self._decorated_with(fn.decorators, fn.module, self.k.compilers) or self._compiled_name(node.func):
            # torch.compile's wrapper (`_fn`, torch code: never compiled itself) runs it: a break
            # inside does not nest through it, and the function is then compiled on its own with
            # its own settings (measured 2.13: traced twice, nested graph breaks on or off)
            inner = tuple(self.b.events[start:])
            del self.b.events[start:]
            self._call_torch_frame(node, COMPILE_WRAPPER_LABEL, "_fn", inner, mode=CallMode.COMPILE_WRAPPER,
                                   uses_torch=True, eager_only=True)
        if self._decorated_with(fn.decorators, fn.module, self.k.frame_adding_decorators):
            inner = tuple(self.b.events[start:])  # run by the decorator's own frame
            del self.b.events[start:]
            self._call_torch_frame(node, "dynamo_decorator", "_fn", inner, uses_torch=True)
        if target.generated_init:  # the dataclass's generated `__init__` (code of its own) calls it;
            # a break there is traced again when that frame runs, nested graph breaks on or off (measured 2.13)
            inner = tuple(self.b.events[start:])
            del self.b.events[start:]
            self._call_torch_frame(node, "dataclass_init", "__init__", inner, mode=CallMode.NO_NESTING, uses_torch=True)
        self._autograd_backward(node, fn)

    def _applied_function(self, forward: FunctionInfo) -> ClassInfo | None:
        """The autograd.Function class whose `forward` this is (what `Fn.apply(x)` runs)."""
        cls = self.env.project.klass(forward.class_qualname) if forward.name == "forward" else None
        return cls if cls is not None and self.b.resolver.callables.autograd_apply(cls) is not None else None

    def _duplicate_apply_input(self, node: cst.Call, forward: FunctionInfo) -> bool:
        """`Fn.apply(y, y)`: one tensor given twice, and it needs grad (measured 2.13: GB6297,
        resumed; traced when no input needs grad)."""
        if self._applied_function(forward) is None or not self.check_enabled(CauseCheck.DUPLICATE_APPLY_INPUT):
            return False
        names = [a.value.value for a in node.args if a.keyword is None and isinstance(a.value, cst.Name)]
        twice = [a.value for a in node.args if isinstance(a.value, cst.Name) and names.count(a.value.value) > 1]
        if not twice or not self.b.scope.is_tensor(twice[0]) or not self.b.grad_leaks.needs_grad(twice[0]):
            return False
        self.b.emit_break(self.rule_for_check(CauseCheck.DUPLICATE_APPLY_INPUT), node,
                          detail=_source_of(node.func))
        return True

    def _custom_derivative(self, node: cst.Call, forward: FunctionInfo) -> bool:
        """`Fn.apply(x)` of a Function defining its own `vjp` or `jvp`: Dynamo refuses it
        before tracing forward when an input needs grad (measured 2.13: GB0145 / GB0144 at the
        call, which resumes). Inputs all made here without requires_grad do not need it."""
        cls = self._applied_function(forward)
        if cls is None or not self.check_enabled(CauseCheck.CUSTOM_DERIVATIVE) or self._no_grad_inputs(node):
            return False
        methods = [(key.removeprefix("custom_"), code) for key, code in self.k.gb_codes.items()
                   if key.startswith("custom_")]  # in the order Dynamo checks them
        for method, code in methods:
            if self.env.project.method(cls, method) is not None:
                self.b.emit_break(self.rule_for_check(CauseCheck.CUSTOM_DERIVATIVE), node, detail=method, gb_code=code)
                return True
        return False

    def _classmethod_function(self, node: cst.Call, forward: FunctionInfo) -> bool:
        """`Fn.apply(x)` of an autograd.Function whose forward or backward is a classmethod:
        Dynamo binds them as static methods and fails (measured 2.13: GB7312 "failed to bind
        arguments", at the call, which resumes; eager runs fine)."""
        cls = self._applied_function(forward)
        if cls is None or not self.check_enabled(CauseCheck.CLASSMETHOD_AUTOGRAD_FUNCTION):
            return False
        project, module = self.env.project, self.env.project.modules[cls.module]
        found = [name for name in ("forward", "backward")
                 if (method := project.method(cls, name)) is not None
                 and any(project.qualify(d.decorator, module) == "builtins.classmethod" for d in method.decorators)]
        if found:
            self.b.emit_break(self.rule_for_check(CauseCheck.CLASSMETHOD_AUTOGRAD_FUNCTION), node, detail=found[0])
        return bool(found)

    def _no_grad_inputs(self, node: cst.Call) -> bool:
        """Every argument is a local this frame made with a torch factory, without requires_grad."""
        return all(self._made_without_grad(arg.value) or self.b.values.value(arg.value) is not None
                   for arg in node.args)  # a Python constant needs no grad either

    def _made_without_grad(self, expr: cst.BaseExpression) -> bool:
        made = self.b.built.get(expr.value) if isinstance(expr, cst.Name) else None
        if made is None:
            return False
        qual = self.b.resolver.qualify(made.func)
        return qual is not None and self.b.scope.is_torch_function(qual) \
            and not any(a.keyword is not None and a.keyword.value == "requires_grad" for a in made.args)

    def _autograd_backward(self, node: cst.Call, forward: FunctionInfo) -> None:
        """`Fn.apply(x)`: after forward, Dynamo traces the Function's `backward` to put both in
        the graph (measured 2.13, an input needing grad): a break there breaks at the apply
        call, traced once per frame of the chain; backward itself is never a frame compiled
        alone (autograd calls it later, outside the compiled code), so it is inlined only."""
        backward = self.b.resolver.callables.autograd_backward(forward)
        if backward is None or self.grad_off():
            return
        grads = frozenset(p.name for p in backward.params[1:] if p.kind == "positional")
        # traced as a higher-order op's body: a write outside it breaks (measured 2.13, GB0067;
        # an attribute left set, GB4413 at the apply call); forward is not checked so
        info = self.env.frame(FrameKey(backward.qualname, grads, hop_body=True, hop_root=backward.qualname))
        if info is None:
            return
        if self._attribute_left_set([info]):
            self.b.emit_break(self.rule_for_check(CauseCheck.HOP_ATTRIBUTE_LEFT_SET), node)
            return
        key = FrameKey(f"{backward.qualname}.<traced at apply>", grads)
        self.env.register_synthetic(replace(info, key=key, eager_only=True))
        self.b.emit(EventKind.CALL, node, target=key)

    def grad_off(self) -> bool:
        """Grad is off here: the compiled call runs under `no_grad` / `inference_mode`, or this
        point is inside such a block. Nothing needs grad, so Dynamo does not trace an
        autograd.Function's backward (measured 2.13: no break in it)."""
        if GRAD_OFF in self.b.key.global_state:
            return True
        off = self.k.grad_off_contexts | self.k.inference_contexts
        return any(c.kind == BlockKind.RESUMABLE_WITH and c.label in off for c in self.b.ctx)

    def _traced_tensor_hook(self, node: cst.Call) -> bool:
        """`h.register_hook(fn)` on a tensor the graph computes: Dynamo traces `fn` there, on
        the gradient's stand-in (measured 2.13: a print or a write outside the hook breaks at
        this call, traced once per frame of the chain; a hook on a graph input or a parameter
        is only registered). Hooks it cannot name are left alone. Under compiled autograd the
        hook is only registered too: the backward graph traces it (index.compiled_autograd)."""
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in self.k.traced_tensor_hooks and node.args):
            return False
        if self.env.flag(COMPILED_AUTOGRAD_FLAG):
            return True
        receiver = func.value
        if not self.b.scope.is_tensor(receiver) or self.b.is_graph_input(receiver):
            return False
        target = self.b.resolver.resolve(node.args[0].value)
        if target is None:
            return False
        params = [p for p in target.function.params if p.kind == "positional"][1 if target.skip_first_param else 0:]
        key = FrameKey(target.function.qualname, frozenset(p.name for p in params[:1]), tuple(target.captured),
                       target.instance, target.self_class, traced_hook=True)
        if self.env.frame(key) is not None:
            self.b.emit(EventKind.CALL, node, target=key)
        return True

    def _custom_op_call(self, node: cst.Call, qual: str | None, target: CallTarget | None) -> bool:
        """A project custom op, called as its function or through `torch.ops.<ns>.<name>`:
        an op in the graph (its body untraced), which cannot compile without a fake."""
        ops = self.env.custom_ops
        if not ops.ops and not ops.library_ops:
            return False
        op = ops.op_of_function(target.function.qualname) if target is not None else ops.op_of_namespace_call(qual)
        if op is None or (target is None and not ops.declared(op)):
            return False
        if op in ops.kernel_only and self.check_enabled(CauseCheck.LIBRARY_OP_WITHOUT_FAKE):
            self.b.emit_break(self.rule_for_check(CauseCheck.LIBRARY_OP_WITHOUT_FAKE), node, detail=op)
        elif op in ops.library_ops:
            self.b.emit(EventKind.OP, node)
        elif op not in ops.faked and self.check_enabled(CauseCheck.CUSTOM_OP_WITHOUT_FAKE):
            self.b.emit_break(self.rule_for_check(CauseCheck.CUSTOM_OP_WITHOUT_FAKE), node, detail=op)
        elif op in ops.unfakeable and self.check_enabled(CauseCheck.CUSTOM_OP_FAKE_NOT_IMPLEMENTED):
            self.b.emit_break(self.rule_for_check(CauseCheck.CUSTOM_OP_FAKE_NOT_IMPLEMENTED), node, detail=op)
        else:
            self.b.emit(EventKind.OP, node)
        return True

    def _fake_run(self, node: cst.Call, fn: FunctionInfo, key: FrameKey, applied: str = "") -> bool:
        """allow_in_graph / nonstrict_trace: Dynamo runs the function on fake tensors at the
        call. The first cause in its body that fake tensors cannot pass decides (knowledge:
        fake_run): a data read or a dynamic shape breaks at the call (the function then
        compiled alone), an op they cannot run at all is a compile error."""
        table = self._fake_run_table(fn, applied)
        found = self._first_fake_failure(key, table, set()) if table is not None else None
        if table is None or found is None and not self._object_output(key, table):
            return False
        # a rule's break, an op on a held layer (HELD_MODULE), or the output (OBJECT_OUTPUT)
        cause = OBJECT_OUTPUT if found is None else found.rule or found.detail
        error = cause in table["errors"]
        rule = self.rule_for_check(CauseCheck.FAKE_RUN_ERROR if error else CauseCheck.FAKE_RUN_BREAK)
        if rule is None:
            return False
        gb_code = table["breaks"].get(cause, rule.gb_code)
        self.b.emit_break(rule, node, gb_code=gb_code, detail=cause, target=None if error else key)
        return True

    def _object_argument(self, node: cst.Call, fn: FunctionInfo, key: FrameKey, applied: str = "") -> bool:
        """allow_in_graph / nonstrict_trace given an argument a graph node cannot take (an
        object of the project, a module, None: knowledge fake_run `arguments`): the graph
        breaks at the call, the function then compiled as a frame of its own."""
        table = self._fake_run_table(fn, applied)
        kinds = table["arguments"] if table is not None else {}
        rule = self.rule_for_check(CauseCheck.OPAQUE_OBJECT_ARGUMENT) if kinds else None
        kind = next((k for arg in node.args if (k := argument_kind(self.env.project, self.b.resolver, arg)) in kinds),
                    None) if rule is not None else None
        if rule is None or kind is None:
            return False
        self.b.emit_break(rule, node, gb_code=kinds[kind], detail=fn.name, target=key)
        return True

    def _object_output(self, key: FrameKey, table) -> bool:
        """nonstrict_trace returning an instance of a project class, None or a string: its
        output must be tensors, numbers or pytree containers of them (measured 2.13: GB0251 at
        the call; a function that returns nothing returns None)."""
        info = self.env.frame(key) if OBJECT_OUTPUT in table["breaks"] else None
        fn = self.env.project.function(key.qualname) if info is not None else None
        return info is not None and (info.returns_object or fn is not None and _returns_none_or_string(fn))

    def _fake_run_table(self, fn: FunctionInfo, applied: str = ""):
        """The knowledge of how the opaque decorator on `fn` (or the one `applied` to it by a
        call) runs it."""
        if applied:
            return self.k.fake_run.get(applied)
        module = self.env.project.modules[fn.module]
        for dec in self._decorators(fn):
            table = self.k.fake_run.get(self.env.project.qualify(decorator_callee(dec), module) or "")
            if table is not None:
                return table
        return None

    def _first_fake_failure(self, key: FrameKey, table, seen: set) -> Event | None:
        info = self.env.frame(key) if key not in seen and len(seen) < 8 else None
        seen.add(key)
        for ev in info.events if info is not None else ():
            if ev.kind == EventKind.BREAK and ev.detail != MODULE_OPERAND \
                    and (ev.rule in table["breaks"] or ev.rule in table["errors"]):
                return ev
            if ev.kind == EventKind.OP and ev.detail == HELD_MODULE and HELD_MODULE in table["errors"]:
                return ev
            if ev.kind == EventKind.CALL and ev.target is not None:
                found = self._first_fake_failure(ev.target, table, seen)
                if found is not None:
                    return found
        return None

    def _passing_own_self(self, node: cst.Call, target: CallTarget) -> CallTarget:
        """`func(self, *args, **kwargs)` in a decorator's wrapper: the wrapped method (or the
        next wrapper, or a helper taking the module first) runs on the instance the caller was
        called on (its class, sub-modules, mode)."""
        key, fn = self.b.key, target.function
        first = node.args[0] if node.args else None
        takes_self = bool(fn.params) and fn.params[0].kind == "positional"
        if target.skip_first_param or not takes_self or not key.self_class or first is None \
                or first.keyword is not None or first.star or not isinstance(first.value, cst.Name) \
                or first.value.value != "self":
            return target
        return replace(target, instance=key.instance or f"{key.self_class}:self", self_class=key.self_class)

    def _new_receiver(self, node: cst.Call, target: CallTarget) -> bool:
        """Is this a method of a plain object the frame itself created (`Helper().run(x)`, or
        `h = Helper()` then `h.run(x)`)? Resuming after a break inside it needs the new object
        rebuilt, which Dynamo cannot do (nn.Module instances, and objects made elsewhere, it can)."""
        func = node.func
        if not target.skip_first_param or not isinstance(func, cst.Attribute):
            return False
        return self._new_object_class(func.value) is not None

    def makes_context_object(self, call: cst.Call) -> bool:
        """A call of a project generator function decorated with `contextlib.contextmanager`:
        it makes a context manager object holding the generator, not a generator."""
        target = self.b.resolver.resolve(call.func)
        return target is not None and self.contextmanager_function(target.function)

    def _untraced_contextmanager(self, item: cst.BaseExpression) -> bool:
        """`with whoo(x):` of a @contextmanager function while the program turns
        `enable_trace_contextlib` off: Dynamo does not trace the call making the object."""
        return isinstance(item, cst.Call) and self.check_enabled(CauseCheck.UNTRACED_CONTEXTMANAGER) \
            and self.makes_context_object(item)

    def contextmanager_function(self, fn: FunctionInfo) -> bool:
        return fn.is_generator and self._decorated_with(fn.decorators, fn.module, self.k.contextmanager_decorators)

    def type_union(self, value: cst.BaseExpression) -> bool:
        """`torch.Tensor | None`, `int | str`: a types.UnionType (PEP 604) of classes, None and
        generic aliases (`list[int]`). `typing.Optional[int]` is another object, rebuilt fine."""
        if not (isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.BitOr)):
            return False
        return all(self.type_union(side) or self._names_type(side) for side in (value.left, value.right))

    def _names_type(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Name) and expr.value == "None":
            return True
        if isinstance(expr, cst.Subscript):  # `list[int]`
            expr = expr.value
        qual = self.b.resolver.qualify(expr)
        if qual is None:
            return False
        return qual in self.k.builtin_types or self.env.project.klass(qual) is not None \
            or qual.startswith("torch.") and qual.rsplit(".", 1)[-1][:1].isupper()

    def new_bound_method(self, value: cst.BaseExpression) -> bool:
        """`Helper().run` / `h.run` of a plain object this frame created: a bound method that
        Dynamo cannot rebuild when a resume function needs it (measured 2.13: GB0092)."""
        if not isinstance(value, cst.Attribute):
            return False
        cls = self._new_object_class(value.value)
        method = self.env.project.method(cls, value.attr.value) if cls is not None else None
        return method is not None and not method.decorators  # a staticmethod's is a plain function

    def _new_object_class(self, receiver: cst.BaseExpression) -> ClassInfo | None:
        """The class of a plain (non-module) object this frame created: `Helper()`, or a local
        `h = Helper()`."""
        resolver = self.b.resolver
        if isinstance(receiver, cst.Call):
            cls = resolver.instantiated_class(receiver)
        elif isinstance(receiver, cst.Name) and receiver.value in resolver.local_types \
                and receiver.value not in resolver.many:
            cls = self.env.project.klass(resolver.local_types[receiver.value])
        else:
            return None
        return cls if cls is not None and not resolver.is_nn_module(cls) else None

    def callee_key(self, target: CallTarget, node: cst.Call) -> FrameKey:
        """The frame a project call runs (a wrapper's `func(self, ...)` keeps the instance)."""
        return self.frame_key(self._passing_own_self(node, target), node)

    def frame_key(self, target: CallTarget, node: cst.Call) -> FrameKey:
        params = [p for p in target.function.params]
        if target.skip_first_param and params and params[0].kind == "positional":
            params = params[1:]
        positional = [p for p in params if p.kind == "positional"][target.bound:]
        tensors: set[str] = set()
        bindings: dict[str, FnValue] = dict(target.captured)
        arguments: dict[str, object] = dict(target.constants)  # free variables holding constants
        passed: dict[str, cst.BaseExpression] = {}  # parameter -> the argument bound to it
        extra_tensors: list[cst.BaseExpression] = []  # tensors landing in the callee's *args
        forwarded, items = self._forwarded(node) or (None, ())
        args = [a for a in node.args if not a.star] if forwarded is not None else node.args
        given = [a for a in args if a.keyword is None]
        for i, is_tensor in enumerate(items, start=len(given)):  # a wrapper's `*args` passed on
            if i < len(positional):
                (tensors.add if is_tensor else lambda n: arguments.setdefault(n, PASSED_UNKNOWN))(positional[i].name)
        star = next((p.name for p in params if p.kind == "star"), "")
        passed_on = {positional[i].name if i < len(positional) else star
                     for i, is_tensor in enumerate(items, start=len(given)) if is_tensor} - {""}
        forwarded_grad = passed_on if self._passes_on(node, self.b.key.grad_inputs) else set()
        for i, arg in enumerate(given):
            if arg.star == "*":  # `fn(*args)`: a wrapper forwarding what it was given, or a list of tensors
                if self.b.scope.is_tensor(arg.value) or self.b.scope.is_tensor_sequence(arg.value):
                    tensors.update(p.name for p in positional[i:])
                    tensors.update(p.name for p in params if p.kind == "star")
                break
            if i < len(positional):
                passed[positional[i].name] = arg.value
                self._bind(positional[i].name, arg.value, tensors, bindings, arguments)
            elif self.b.scope.is_tensor(arg.value):  # extra arguments land in the callee's *args
                tensors.update(p.name for p in params if p.kind == "star")
                extra_tensors.append(arg.value)
        by_name = {p.name for p in params}
        for arg in args:
            if arg.keyword is not None and arg.keyword.value in by_name:
                passed[arg.keyword.value] = arg.value
                self._bind(arg.keyword.value, arg.value, tensors, bindings, arguments)
        spread = forwarded or Keywords()  # passed on by `**kwargs`: tensors, or values we do not know
        tensors.update(name for name in spread.tensors if name in by_name)
        for name in spread.names + spread.maybe:
            if name in by_name and name not in spread.tensors:
                arguments.setdefault(name, spread.value_of(name) or PASSED_UNKNOWN)
        arguments.update(star_arguments(params, positional, node.args, self.b.scope.is_tensor, forwarded, items,
                                        self.b.values.value, receiver_first=target.skip_first_param
                                        and bool(target.function.params)
                                        and target.function.params[0].kind == "star"))
        if any(items[max(0, len(positional) - len(given)):]):
            tensors.update(p.name for p in params if p.kind == "star")
        cells = self._cells_holding_tensors(target.function)
        tensors.update(cells)
        shapes = self._transformed_shapes(target.transformed, self._callee_shapes(
            node, params, positional, args, passed, tensors, spread, len(items)), params)
        if not target.transformed:  # a cell holds the tensor the caller has at the call
            rebound = self.b.env.node_memo("nonlocal_names", self.b.function.node,
                                           lambda: declared_outer(self.b.function.node, (cst.Nonlocal,), nested=True))
            shapes.update((name, self.b.values.shape_of(cst.Name(name))) for name in cells
                          if name not in shapes and name not in rebound)  # (a nested `nonlocal` may rebind it)
        return FrameKey(target.function.qualname, frozenset(tensors), tuple(sorted(bindings.items(), key=_first)),
                        target.instance or self._element_handed(node, target), target.self_class,
                        tuple(sorted(arguments.items(), key=_first)),
                        unbound_passed=forwarded is None and any(a.star for a in node.args),
                        training=self._callee_training(target, node),
                        attributes=self._callee_attributes(target, node),
                        shapes=tuple(sorted([(n, s) for n, s in shapes.items() if s is not None]
                                            + list(self._callee_attribute_shapes(target, node)))),
                        tensor_attributes=self._callee_tensor_attributes(target, node),
                        dynamic=self.b.key.dynamic, region=self.b.key.region,
                        grad_inputs=frozenset(name for name, arg in passed.items()
                                              if name in tensors and self.b.grad_leaks.needs_grad(arg))
                        | self._star_when_all(params, extra_tensors, self.b.grad_leaks.needs_grad) | forwarded_grad,
                        plain_inputs=frozenset() if self.later_element or self.grad_off() else frozenset(
                            name for name, arg in passed.items() if name in tensors and self.b.grad_leaks.is_plain(arg))
                        | self._star_when_all(params, self._carried_tensors(node, extra_tensors) or extra_tensors,
                                              self.b.grad_leaks.is_plain)
                        | (passed_on if self._passes_on(node, self.b.key.plain_inputs) else frozenset()),
                        carried=self._carried(node, params, passed, extra_tensors, passed_on))

    def _element_handed(self, node: cst.Call, target: CallTarget) -> str:
        """A function handed each element of a module container in turn (`for layer in
        self.layers: x = run(layer, x)`): its frame runs once per element, like the
        element's own forward ("*", see FrameKey.instance)."""
        many = self.b.resolver.many
        if target.function.class_qualname is None and \
                any(isinstance(a.value, cst.Name) and a.value.value in many for a in node.args):
            return "*"
        return ""

    def _rebound_around(self, node: cst.Call) -> frozenset[str]:
        """What the call's statement (or loop) rebinds, or what this frame was handed so."""
        return frozenset(self.b.rebound_by(node) | (self.b.key.carried or frozenset()))

    def _carried_tensors(self, node: cst.Call, extra_tensors: list) -> list:
        """The tensors landing in a callee's `*args` that a layer passes to the next (`x` of
        `x = block(x, pos)`): its first input changes with them, not with `pos`."""
        rebound = self._rebound_around(node)
        return [t for t in extra_tensors if isinstance(t, cst.Name) and t.value in rebound]

    def _carried(self, node: cst.Call, params, passed: dict, extra_tensors: list, passed_on: set[str]) -> frozenset[str]:
        """The parameters given what the call's statement rebinds (`x = layer(x, mask)`), or
        what a wrapper was given so (its `*args` passed on: `forward(self, *args, **kwargs)`)."""
        rebound = self._rebound_around(node)
        carried = {name for name, arg in passed.items() if isinstance(arg, cst.Name) and arg.value in rebound}
        if self._carried_tensors(node, extra_tensors):
            carried.update(p.name for p in params if p.kind == "star")
        if self._passes_on(node, self.b.key.carried or frozenset()):
            carried |= passed_on
        return frozenset(carried)

    @staticmethod
    def _passes_on(node: cst.Call, names: frozenset[str]) -> bool:
        """`fn(*args, **kwargs)` passing on a `*args` named in `names`."""
        return any(a.star == "*" and isinstance(a.value, cst.Name) and a.value.value in names for a in node.args)

    @staticmethod
    def _star_when_all(params, extra_tensors: list[cst.BaseExpression], holds) -> frozenset[str]:
        """The callee's `*args`, when every tensor that lands in it `holds` (needs grad; is
        known not to)."""
        if not extra_tensors or not all(holds(t) for t in extra_tensors):
            return frozenset()
        return frozenset(p.name for p in params if p.kind == "star")

    def _cells_holding_tensors(self, callee: FunctionInfo) -> frozenset[str]:
        """A function defined in the calling one reads the caller's variables as cells: those
        holding tensors at the call are tensors in the callee too (`y = x + 1; def g(): y * 2`)."""
        if callee.parent_function != self.b.function.qualname:
            return frozenset()
        return self.b.env.node_memo("free_names", callee.node, lambda: free_names(callee.node)) \
            & frozenset(self.b.scope.tensors)

    def _callee_attribute_shapes(self, target: CallTarget, node: cst.Call) -> tuple:
        """`recv.method(...)` on an object built from tensors of known shape: its attributes' shapes."""
        receiver = _method_receiver(target, node)
        return self.attribute_shapes_of(receiver) if receiver is not None else ()

    def _callee_tensor_attributes(self, target: CallTarget, node: cst.Call) -> frozenset[str]:
        """`recv.method(...)` on an object built from tensors: its `self`'s tensor attributes
        (not a sub-module's forward run by `self.sub(x)`, whose `self` is another object)."""
        receiver = _method_receiver(target, node)
        return self.tensor_attributes_of(receiver) if receiver is not None else frozenset()

    def attribute_shapes_of(self, value: cst.BaseExpression) -> tuple[tuple[str, tuple[int, ...]], ...]:
        """The known shapes of the tensor attributes (`self.x`) of the object an expression is,
        as FrameKey.shapes entries: `self`'s own, or those of an object built here (`C(x)`)."""
        if isinstance(value, cst.Name) and value.value == "self":
            return tuple(item for item in self.b.key.shapes if item[0].startswith("self."))
        built = self._built_object(value)
        if built is None:
            return ()
        cls, call = built
        return tuple(sorted(attribute_shapes(self.env.project, cls, call, self.b.values.shape_of).items()))

    def _built_object(self, value: cst.BaseExpression):
        """(class, constructor call) of `C(x)` or of a local bound to it, else None."""
        if isinstance(value, cst.Name):
            value = self.b.built.get(value.value)
        cls = self.b.resolver.instantiated_class(value) if isinstance(value, cst.Call) else None
        return (cls, value) if cls is not None else None

    def tensor_attributes_of(self, value: cst.BaseExpression) -> frozenset[str]:
        """The attributes holding tensors of the object an expression is: `self` (what this
        frame's own holds), a local bound to an object built here, or `C(x)` itself."""
        if isinstance(value, cst.Name) and value.value == "self":
            return self.b.key.tensor_attributes
        built = self._built_object(value)
        if built is None:
            return frozenset()
        cls, call = built
        return tensor_attributes(self.env.project, self.k, cls, call, self.b.scope.is_tensor)

    @staticmethod
    def _transformed_shapes(transformed: str, shapes: dict, params) -> dict:
        """The sizes a function run by a torch.func transform gets (FnValue.transformed): each
        vmap level takes its dimension off (a size left unknown where it cannot)."""
        levels = batch_levels(transformed)
        if levels is None:
            return {} if transformed == TRANSFORMED_UNKNOWN_SIZES else shapes
        order = [p.name for p in params if p.kind == "positional"]
        for dims in levels:
            shapes = {name: kept for name, size in shapes.items()
                      if (kept := _unbatched(size, dims[0] if len(dims) == 1 else
                                             dims[order.index(name)] if name in order[:len(dims)] else None)) is not None}
        return shapes

    def _callee_shapes(self, node: cst.Call, params, positional, args, passed, tensors, spread: Keywords,
                       forwarded_items: int) -> dict:
        """Static sizes of the tensors a callee gets: by parameter name; items of its `*args`
        as `args[i]` and keywords of its `**kwargs` by their name, so a wrapper passing them on
        (`func(self, *args, **kwargs)`) hands the sizes to the function it wraps."""
        values, known = self.b.values, dict(self.b.key.shapes)
        shapes = {name: values.shape_of(value) for name, value in passed.items() if name in tensors}
        given = [a for a in args if a.keyword is None]
        star = next((p.name for p in params if p.kind == "star"), None)
        if not any(a.star for a in given):
            origin = next((a.value.value for a in node.args if a.star == "*" and isinstance(a.value, cst.Name)), "")
            sizes = [values.shape_of(a.value) if values.scope.is_tensor(a.value) else None for a in given]
            sizes += [known.get(f"{origin}[{j}]") for j in range(forwarded_items)]
            for i, size in enumerate(sizes):
                name = positional[i].name if i < len(positional) else (f"{star}[{i - len(positional)}]" if star else None)
                if name is not None and size is not None and (i >= len(positional) or name in tensors):
                    shapes.setdefault(name, size)
        by_name = {p.name for p in params}
        if any(p.kind == "double_star" for p in params):  # keywords landing in the callee's **kwargs
            shapes.update((a.keyword.value, values.shape_of(a.value)) for a in args
                          if a.keyword is not None and a.keyword.value not in by_name and values.scope.is_tensor(a.value))
        # sizes the caller's own caller passed by keyword, passed on
        shapes.update((name, known[name]) for name in spread.tensors if name in known and name not in passed)
        return shapes

    def _forwarded(self, node: cst.Call) -> tuple[Keywords, tuple[bool, ...]] | None:
        """What a wrapper passes on with `fn(*args, **kwargs)` when the call that reached it
        spelled it all: the keywords (names known, the frame adding only known ones: `kwargs[k]
        = v` with `k` known) and the positional items of its `*args` (whether each is a tensor).
        None: unknown."""
        starred = [a for a in node.args if a.star]
        if not starred:
            return None
        found = Keywords()
        items: tuple[bool, ...] = ()
        for arg in starred:
            known = self.b.values.value(arg.value)
            value = known.value if known is not None else None
            if arg.star == "*" and isinstance(value, (Seq, tuple)) and len(value) == 0:
                continue
            if arg.star == "*" and isinstance(value, Seq) and value.tensors is not None and not items:
                items = value.tensors
                continue
            if arg.star == "*" and isinstance(value, tuple) and not items:  # constants: no tensor
                items = (False,) * len(value)
                continue
            if arg.star != "**" or not isinstance(value, Keywords) or not isinstance(arg.value, cst.Name):
                return None
            if arg.value.value not in {p.name for p in self.b.function.params}:
                # a dict this frame built: its value followed each store up to here
                found = Keywords(found.names + value.names, found.tensors + value.tensors,
                                 found.values + value.values, found.maybe + value.maybe)
                continue
            stored = self._stored_keys(arg.value.value)
            if stored is None:
                return None
            names = tuple(sorted((set(value.names) | stored) - set(value.maybe)))
            kept = tuple((k, v) for k, v in value.values if k not in stored)  # a key it stores holds something else
            kept += tuple(self._constant_stores(arg.value.value, node).items())
            found = Keywords(found.names + names, found.tensors + value.tensors, found.values + kept,
                             found.maybe + value.maybe)
        return found, items

    def _stored_keys(self, name: str) -> set[str] | None:
        """The keys this frame may store into the dict `name` (`name["k"] = v`, or `name[k]`
        with `k` a known constant); None when one is unknown or it calls `name.update(...)`."""
        keys: set[str] = set()
        function = self.b.function.node
        stores = self.env.node_memo(f"stores_into:{name}", function, lambda: _stores_into(function, name))
        for key in stores:
            known = self.b.values.value(key) if key is not None else None
            if known is not None and isinstance(known.value, str):
                keys.add(known.value)
                continue
            looped = self._loop_strings(key) if isinstance(key, cst.Name) else None
            if looped is None:
                return None
            keys |= looped  # `for k in ("use_cache", ...): kwargs[k] = v`
        return keys

    def _constant_stores(self, name: str, call: cst.Call) -> dict[str, Const]:
        """Keys of the dict `name` this function sets to a literal once, in a statement of its
        own body before `call` (`kwargs["output_hidden_states"] = True` in a decorator's
        wrapper): the callee gets that value."""
        function = self.b.function.node
        stores = self.env.node_memo(f"stores_into:{name}", function, lambda: _stores_into(function, name))
        counts = Counter(k.value for k in map(literal, (key for key in stores if key is not None)) if k is not None)
        found: dict[str, Const] = {}
        line = self.b.line(call)
        for stmt in function.body.body if isinstance(function.body, cst.IndentedBlock) else ():
            if self.b.line(stmt) >= line:
                break
            for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
                key, value = _literal_store(small, name)
                if key is not None and value is not None and counts.get(key) == 1:
                    found[key] = value
        return found

    def _loop_strings(self, name: cst.Name) -> set[str] | None:
        """The strings a `for` loop of this function binds `name` to, when it iterates a
        display of string literals (or a local bound once to one)."""
        function = self.b.function.node
        loops = self.env.node_memo(f"loops_over:{name.value}", function, lambda: _loops_binding(function, name.value))
        found: set[str] = set()
        for iterable in loops:
            items = constant_display(function, iterable)
            if items is None or not all(isinstance(i, str) for i in items):
                return None
            found |= set(items)
        return found or None

    def _callee_training(self, target: CallTarget, node: cst.Call) -> bool | None:
        """`self.training` in the callee: a method of the same instance or a sub-module shares
        the caller's mode (`module.eval()` sets it on every sub-module); a module instance held
        by a module-level name has its own (`m = Net().eval()`)."""
        if target.instance and not target.skip_first_param:
            return self.b.key.training  # the method a decorator's wrapper calls: the same self
        if isinstance(node.func, cst.Name) and node.func.value in self.b.resolver.many:
            return self.b.key.training  # `for layer in self.layers: layer(x)`: a sub-module
        if isinstance(node.func, cst.Name) and target.instance:
            return self._global_instance_training(node.func.value)
        if target.skip_first_param or target.instance:
            return self.b.key.training
        return None

    def _global_instance_training(self, name: str) -> bool | None:
        """`m = Net().eval()` / `Net().train(False)`: eval; `m = Net()`: nn.Module's default,
        training, unless the module switches it (`m.eval()` / `m.train(...)` anywhere)."""
        module = self.b.module
        value = module.values.get(name)
        if name in module.reassigned or not isinstance(value, cst.Call):
            return None
        while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                and value.func.attr.value in SAME_INSTANCE_METHODS:
            method, args = value.func.attr.value, value.args
            if method == "eval":
                return False
            if method == "train":
                mode = self.b.values.value(args[0].value) if args else Const(True)
                return bool(mode.value) if mode is not None else None
            value = value.func.value
        if self.b.resolver.instantiated_class(value) is None:
            return None  # a factory's result: its mode is whatever the factory set
        modes = {_SWITCH_MODES.get(m.group(1) + m.group(2).replace(" ", ""))
                 for m in re.finditer(rf"\b{re.escape(name)}\s*\.\s*(eval|train)\s*\(([^)]*)\)", module.parsed.text)}
        if not modes:
            return True
        return modes.pop() if len(modes) == 1 else None  # switched both ways: which one holds is unknown

    def _callee_attributes(self, target: CallTarget, node: cst.Call) -> tuple:
        """What the callee's `self` holds: the caller's own for `self.method()`, the built
        sub-module's for `self.attn(x)` and `self.model.decoder(x)`."""
        func = node.func
        if target.instance and not target.skip_first_param:
            return self.b.key.attributes  # the method a decorator's wrapper calls: the same self
        if target.instance == "*":  # `for blk in self.blocks: blk(x)`, `self.blocks[0](x)`
            return self._element_attributes(func)
        if self._passes_own_instance(target, node):
            return self.b.key.attributes
        if isinstance(func, cst.Name) and target.instance:  # `model = Net(debug=True)` at module level
            return self._global_instance_attributes(func.value, target)
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and target.skip_first_param:
            passed = self.b.resolver.arguments.get(func.value.value)
            if isinstance(passed, Const) and isinstance(passed.value, Obj):  # `helper.apply(x)`, helper passed in
                return passed.value.attrs
        root = func
        while isinstance(root, cst.Attribute):
            root = root.value
        if not isinstance(func, cst.Attribute) or not isinstance(root, cst.Name) or root.value != "self":
            return ()
        if target.instance:
            held = self.b.values.value(func)
            return held.value.attrs if held is not None and isinstance(held.value, Obj) else ()
        if not isinstance(func.value, cst.Name):  # `self.helper.method()`: another object's method
            return ()
        return self.b.key.attributes if target.skip_first_param else ()

    def _passes_own_instance(self, target: CallTarget, node: cst.Call) -> bool:
        """A method decorator's wrapper, called on an instance, calling the method it wraps
        with that instance first: `fn(*args, **kwargs)` or `fn(self, *args, **kwargs)`."""
        if not self.b.key.instance or target.skip_first_param or target.function.class_qualname is None \
                or not node.args or node.args[0].keyword is not None:
            return False
        first = node.args[0]
        params = self.b.function.params
        return first.star == "*" and bool(params) and params[0].kind == "star" \
            or isinstance(first.value, cst.Name) and not first.star and bool(params) \
            and params[0].kind == "positional" and first.value.value == params[0].name

    def _later_element_call(self, node: cst.Call, target: CallTarget, variant: int | None = None) -> None:
        """The loop's call of a later element: another class, or one built with other values."""
        self.later_element, self.element_variant = True, variant  # (given a layer's output)
        try:
            self._project_call(node, target)
        finally:
            self.later_element, self.element_variant = False, None

    def _element_attributes(self, func: cst.BaseExpression) -> tuple:
        """What the element called holds: `self.blocks[2]` its own object, the loop's name the
        first element's (the others are called as variants); what all share when the index is
        unknown (instances.EACH, ITEMS)."""
        container = func.value if isinstance(func, cst.Subscript) else \
            self.b.resolver.element_of.get(func.value) if isinstance(func, cst.Name) else None
        held = self.b.values.value(container) if container is not None else None
        if held is None or not isinstance(held.value, Obj):
            return ()
        index = self.element_variant
        if index is None:
            index = self._constant_index(func) if isinstance(func, cst.Subscript) else 0
        return _element_built(held.value, index)

    def _constant_index(self, func: cst.Subscript) -> int | None:
        if len(func.slice) != 1 or not isinstance(func.slice[0].slice, cst.Index):
            return None
        known = self.b.values.value(func.slice[0].slice.value)
        return known.value if known is not None and type(known.value) is int else None

    def _other_element_variants(self, func: cst.Name) -> list[int]:
        """The positions of a loop's module list elements built unlike every earlier one."""
        container = self.b.resolver.element_of.get(func.value)
        held = self.b.values.value(container) if container is not None else None
        objs = element_objects(held.value) if held is not None and isinstance(held.value, Obj) else ()
        return [i for i, obj in enumerate(objs) if i and obj not in objs[:i]]

    def _global_instance_attributes(self, name: str, target: CallTarget) -> tuple:
        value = self.b.module.values.get(name)
        cls = self.env.project.klass(target.self_class)
        if not isinstance(value, cst.Call) or cls is None or name in self.b.module.reassigned:
            return ()
        return built_at_top(self.env.project, self.k.dtype_names, cls, value, self.b.module).attrs

    def _bind(self, name, value, tensors, bindings, arguments) -> None:
        """A tensor argument, a function value passed in (a callback), or a Python value (a
        constant where the caller's values tell it)."""
        if self.b.scope.is_tensor(value):
            tensors.add(name)
            return
        length = display_length(value)
        if length is not None:  # `f((a, b))`: its length is a constant, its items may be tensors
            arguments[name] = Const(Seq(length, display_kind(value)))
            if any(self.b.scope.is_tensor(el.value) for el in value.elements):
                tensors.add(name)
            return
        function = self.b.resolver.function_value(value)
        if function is not None:
            bindings[name] = function
            return
        if self.b.scope.is_data_scalar(value):
            arguments[name] = PASSED_DATA_SCALAR
            return
        if self.b.is_stop_value(value):
            arguments[name] = PASSED_STOP_VALUE
            return
        if self._holds_generator(value):
            arguments[name] = PASSED_GENERATOR
            return
        if self._handed_input(value):  # `enter(ctx, x)` of the compiled function's own `ctx`
            arguments[name] = PASSED_CONTEXT_MANAGER_INPUT
            return
        made = self._made(value)
        if isinstance(made, cst.Call) and self.b.resolver.qualify(made.func) in self.k.input_unenterable_context_managers:
            arguments[name] = PASSED_CONTEXT_MANAGER
            return
        known = self.b.values.value(value)
        if known is None:
            known = self._passed_instance(value)
        arguments[name] = known if known is not None else PASSED_UNKNOWN

    def _passed_instance(self, value: cst.BaseExpression) -> Const | None:
        """A module of the project handed to a helper (`run_layer(block, x)`, `block` from
        `self.blocks`): calling it there runs its forward. Its attributes are not known here."""
        if not isinstance(value, (cst.Name, cst.Attribute, cst.Subscript)) or _names_self(value):
            return None  # (`self` handed on keeps its own class and instance: _passing_own_self)
        cls = self.b.resolver.class_of(value)
        if cls is None or not self.b.resolver.is_nn_module(cls):
            return None
        return Const(Obj(cls.qualname, shared=True))

    def _emit_disabled(self, node: cst.Call, how: str, detail: str, decorator: str | None = None) -> None:
        rule = self.rule_for_check(CauseCheck.DISABLED_CALL)
        if rule is not None:
            code = self.k.disable_gb_codes.get(decorator or "") or self.k.disable_gb_codes.get(how, rule.gb_code)
            self.b.emit_break(rule, node, gb_code=code, detail=detail)

    def _context_decorated(self, fn: FunctionInfo) -> bool:
        """Decorated with a config patch, a context manager Dynamo cannot enter."""
        return self._decorated_with(fn.decorators, fn.module, self.k.config_patch)

    def _opaque(self, fn: FunctionInfo) -> bool:
        return self._decorated_with(self._decorators(fn), fn.module, self.k.opaque_decorators)

    def _decorators(self, fn: FunctionInfo) -> tuple[cst.Decorator, ...]:
        """Its decorators, and those its module applies by a statement that changes the
        function itself (`torch._dynamo.allow_in_graph(helper)` at module level)."""
        if fn.parent_function is not None or fn.class_qualname is not None:
            return fn.decorators
        registered = self.env.project.derived(f"registered:{fn.module}", lambda: self._registered(fn.module))
        return fn.decorators + registered.get(fn.name, ())

    def _registered(self, module_name: str) -> dict[str, tuple[cst.Decorator, ...]]:
        module = self.env.project.modules[module_name]
        if not any(name.rsplit(".", 1)[-1] in module.parsed.text for name in self.k.registering_decorators):
            return {}
        found: dict[str, tuple[cst.Decorator, ...]] = {}
        for stmt in module.parsed.module.body:
            for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
                call = small.value if isinstance(small, cst.Expr) else None
                if isinstance(call, cst.Call) and len(call.args) == 1 and isinstance(call.args[0].value, cst.Name) \
                        and self.env.project.qualify(call.func, module) in self.k.registering_decorators:
                    name = call.args[0].value.value
                    found[name] = found.get(name, ()) + (cst.Decorator(decorator=call.func),)
        return found

    def _disabled_class(self, target: CallTarget) -> str | None:
        """Calling an instance of an nn.Module class decorated with torch.compiler.disable."""
        cls = self.env.project.klass(target.self_class) if target.instance else None
        if cls is None:
            return None
        return "class" if self._decorated_with(cls.decorators, cls.module, self.k.disable_decorators) else None

    def _decorated_with(self, decorators, module_name: str, names: frozenset[str]) -> bool:
        return self.env.project.decorated_with(decorators, module_name, names)

    def _disabled_instance(self, node: cst.Call) -> bool:
        """Calling what `torch.compiler.disable(...)` returned: `self.noisy = disable(Noisy())`,
        `helper = disable(HelperModule())`, `fast = disable(fn)`, or a name the module patched
        with one (`torch.ops.ns.op = disable(torch.ops.ns.op)`; the wrapped code is not traced)."""
        module = self.b.module
        patched = self.env.project.derived(f"patched_disabled:{module.name}", lambda: self._patched_disabled(module))
        qual = self.b.resolver.qualify(node.func)
        found = (patched[qual], module) if qual in patched else \
            self._patched_attribute(node.func) or self._held_value(node.func)
        if found is None:
            return False
        value, module = found
        if not isinstance(value, cst.Call) or not value.args or \
                self.env.project.qualify(value.func, module) not in self.k.disable_decorators:
            return False
        wrapped = value.args[0].value
        how = "instance" if self._makes_instance(wrapped, module) else \
            ("nonrecursive" if nonrecursive(value) else "recursive")
        self._emit_disabled(node, how, _source_of(node.func))
        return True

    def _patched_disabled(self, module) -> dict[str, cst.Call]:
        """`pkg.fn = torch.compiler.disable(pkg.fn)` anywhere in the module: calls of `pkg.fn`
        run the disabled wrapper (a test's or a script's monkeypatch)."""
        text = module.parsed.text
        if "disable(" not in text or not _PATCHING.search(text):  # the substring test is 20x cheaper
            return {}
        # a tree of its own: the module's may be one the parse cache re-made, whose nodes the
        # frames being built do not share (positions are looked up by node)
        found: dict[str, cst.Call] = {}
        for target, value in self._disable_assignments(module, cst.parse_module(text)):
            qual = self.env.project.qualify(target, module) if isinstance(target, cst.Attribute) else None
            if qual is not None:
                found[qual] = value
        return found

    def _disable_assignments(self, module, tree: cst.CSTNode):
        """(target, value) of every `target = torch.compiler.disable(...)` in `tree`."""
        for assign in find_all(tree, (cst.Assign,)):
            value = assign.value
            if isinstance(value, cst.Call) and self.env.project.qualify(value.func, module) in self.k.disable_decorators:
                for target in assign.targets:
                    yield target.target, value

    def _makes_instance(self, wrapped: cst.BaseExpression, module) -> bool:
        """What `disable(...)` wraps is an object, not a function: `Noisy()`, or an instance's
        sub-module (`model.layer0`, set to `SimpleLinear()` in the class's `__init__`)."""
        if isinstance(wrapped, cst.Call):
            return True
        if not isinstance(wrapped, cst.Attribute) or not isinstance(wrapped.value, cst.Name):
            return False
        for cls in self.env.project.classes_bound(module, wrapped.value.value):
            held = self.env.project.class_attribute(cls, wrapped.attr.value)
            if held is not None and isinstance(held[1], cst.Call):
                return True
        return False

    def _patched_attribute(self, func: cst.BaseExpression):
        """`self.layer0(x)` where a script patched that attribute of an instance of the class:
        `model.layer0 = torch.compiler.disable(model.layer0)` (any instance of the class is
        taken to be the patched one)."""
        if not isinstance(func, cst.Attribute):
            return None
        owner = self.b.resolver.class_of(func.value)
        if owner is None:
            return None
        patches = self.env.project.derived("patched_instance_disabled", self._patched_instances)
        return patches.get((owner.qualname, func.attr.value))

    def _patched_instances(self) -> dict[tuple[str, str], tuple[cst.Call, object]]:
        """(class, attribute) -> (the disable call, its module) for every `obj.attr =
        torch.compiler.disable(...)` whose `obj` is a module-level instance of a project class."""
        project, found = self.env.project, {}
        for module in project.mentioning("disable("):
            if not _PATCHING.search(module.parsed.text):
                continue
            for target, value in self._disable_assignments(module, module.parsed.module):
                obj = target.value if isinstance(target, cst.Attribute) else None
                if not isinstance(obj, cst.Name) or not isinstance(target, cst.Attribute):
                    continue
                for cls in project.classes_bound(module, obj.value):
                    found[(cls.qualname, target.attr.value)] = (value, module)
        return found

    def _held_value(self, func: cst.BaseExpression):
        """The expression a called name or `self` attribute was bound to, with its module."""
        if isinstance(func, cst.Name) and func.value not in self.b.module.reassigned \
                and self.b.resolver.qualify(func) is None and func.value in self.b.module.values:
            return self.b.module.values[func.value], self.b.module
        if isinstance(func, cst.Attribute):
            owner = self.b.resolver.class_of(func.value)
            found = self.env.project.class_attribute(owner, func.attr.value) if owner is not None else None
            if found is not None:
                return found[1], self.env.project.modules[found[0].module]
        return None

    def disabled(self, fn: FunctionInfo) -> str | None:
        """"recursive" / "nonrecursive" when `fn` is decorated with torch.compiler.disable."""
        found = self._disable_decorator(fn)
        if found is None:
            return None
        call = found[1]
        return "nonrecursive" if call is not None and nonrecursive(call) else "recursive"

    def _disabled_by(self, fn: FunctionInfo) -> str | None:
        """The disabling decorator's qualified name (`torch._disable_dynamo` breaks differently)."""
        found = self._disable_decorator(fn)
        return found[0] if found is not None else None

    def _disable_decorator(self, fn: FunctionInfo) -> tuple[str, cst.Call | None] | None:
        module = self.env.project.modules[fn.module]
        for dec in fn.decorators:
            expr = dec.decorator
            call = expr if isinstance(expr, cst.Call) else None
            qual = self.env.project.qualify(call.func if call else expr, module)
            if qual in self.k.disable_decorators:
                return qual, call
        return None

    def strict_decorator(self, fn: FunctionInfo) -> bool | None:
        module = self.env.project.modules[fn.module]
        for dec in fn.decorators:
            if isinstance(dec.decorator, cst.Call):
                qual = self.env.project.qualify(dec.decorator.func, module)
                if qual in self.k.error_on_graph_break:
                    return _bool_arg(dec.decorator)
        return None

    def fullgraph_decorator(self, fn: FunctionInfo) -> bool:
        """`@torch.compile(..., fullgraph=True)` on the function."""
        module = self.env.project.modules[fn.module]
        return any(isinstance(dec.decorator, cst.Call) and keyword_true(dec.decorator, FULLGRAPH_KEYWORDS)
                   and self.env.project.qualify(dec.decorator.func, module) in self.k.compile_functions
                   for dec in fn.decorators)

    def _higher_order(self, node: cst.Call, qual: str | None) -> bool:
        if qual in self.k.checkpoint_functions and node.args:
            # torch.utils.checkpoint's body is not checked under the flag that allows side effects
            checked = qual not in self.k.side_effect_checkpoints or not self._any_flag(self.k.side_effect_checkpoint_flags)
            return self._hop_call(node, [node.args[0].value], CallMode.CHECKPOINT, checked)
        if qual in self.k.strict_higher_order_functions:
            traced = (call_argument(node, name, position)
                      for name, position in self.k.strict_higher_order_functions[qual].items())
            return self._hop_call(node, [fn for fn in traced if fn is not None], CallMode.STRICT_HOP, op=qual)
        return False

    def _hop_call(self, node: cst.Call, fns, mode: str, checked: bool = True, op: str | None = None) -> bool:
        """The op's functions are traced as its bodies, inside this frame's trace; checkpoint
        passes its first argument on as a tensor, the strict ops every operand. `checked`:
        Dynamo checks the bodies for side effects."""
        keys = [key for key in (self._hop_body(fn_expr, mode, checked) for fn_expr in fns) if key is not None]
        bodies = [info for info in map(self.env.frame, keys) if info is not None]
        if self._attribute_left_set(bodies):  # the op fails as a whole: the call runs eagerly
            self.b.emit_break(self.rule_for_check(CauseCheck.HOP_ATTRIBUTE_LEFT_SET), node, mode=mode)
            return True
        fault = self._input_fault(op, bodies)
        if fault:  # the op fails as a whole: a compile error at the call
            rule = self.rule_for_check(CauseCheck.HOP_INPUT_FAULT)
            self.b.emit_break(rule, node, mode=mode, detail=hop_inputs.SAID[fault],
                              gb_code=rule.gb_code_when.get(fault, rule.gb_code))
            return True
        for key in keys:
            self.b.emit(EventKind.CALL, node, target=key, mode=mode)
        if not keys:
            self.b.emit(EventKind.OP, node)
        return True

    def _input_fault(self, op: str | None, bodies: list[FrameInfo]) -> str:
        """The first fault Dynamo meets checking the bodies in order, mutation before aliasing
        (model/hop_inputs): map and scan check both always, while_loop aliasing always and
        mutation while grad is on, cond both while grad is on (measured 2.13)."""
        if op is None or not self.check_enabled(CauseCheck.HOP_INPUT_FAULT):
            return ""
        k, grad_on = self.k, not self.grad_off()
        checked = {hop_inputs.MUTATION: op in k.hop_mutation_checks or grad_on and op in k.hop_mutation_checks_with_grad,
                   hop_inputs.ALIASING: op in k.hop_aliasing_checks or grad_on and op in k.hop_aliasing_checks_with_grad}
        for info in bodies:  # each body is checked once traced: a break while tracing it comes first
            if any(ev.kind == EventKind.BREAK for ev in info.events):
                return ""
            fault = next((fault for fault in info.hop_input_faults if checked[fault]), "")
            if fault:
                return fault
        return ""

    def _attribute_left_set(self, bodies: list[FrameInfo]) -> bool:
        """Does Dynamo find, when the op's bodies end, an outside attribute not put back
        (GB4413)? Only if no break inside them came first."""
        return self.check_enabled(CauseCheck.HOP_ATTRIBUTE_LEFT_SET) \
            and any(info.leaves_attribute_set for info in bodies) \
            and not any(ev.kind == EventKind.BREAK for info in bodies for ev in info.events)

    def _hop_body(self, fn_expr: cst.BaseExpression, mode: str, checked: bool) -> FrameKey | None:
        """The frame of a function a higher-order op traces (a def, a method, a lambda)."""
        b = self.b
        if isinstance(fn_expr, cst.Lambda):
            return self._lambda_key(fn_expr, frozenset(p.name.value for p in fn_expr.params.params),
                                    hop_body=checked, tensor_attributes=b.key.tensor_attributes)
        target = b.resolver.resolve(fn_expr) if isinstance(fn_expr, (cst.Name, cst.Attribute)) else None
        fn = target.function if target else self.env.project.function(b.resolver.qualify(fn_expr))
        if fn is None:
            return None
        params = fn.params[:1] if mode == CallMode.CHECKPOINT else [p for p in fn.params if p.name not in ("self", "cls")]
        return FrameKey(fn.qualname, frozenset(p.name for p in params), hop_body=checked,
                        hop_root=fn.qualname if checked else "",
                        tensor_attributes=b.key.tensor_attributes)

    # -- context managers ------------------------------------------------------------
    def context_method(self, item: cst.BaseExpression, method: str) -> None:
        """A user class's `__enter__` / `__exit__`: Dynamo inlines it inside the `with` block, so
        a break there cannot be resumed at the `with` (the frame is compiled partially or
        skipped), and the method then runs as a frame of its own."""
        resolver = self.b.resolver
        cls = resolver.instantiated_class(item) if isinstance(item, cst.Call) else resolver.class_of(item)
        fn = self.env.project.method(cls, method) if cls is not None and not resolver.is_nn_module(cls) else None
        if fn is None or self.disabled(fn) is not None:
            return
        call = cst.Call(func=cst.Attribute(value=item, attr=cst.Name(method)))
        key = self.frame_key(CallTarget(fn, True, self_class=cls.qualname), call)
        self.env.frame(key)
        self.b.emit(EventKind.CALL, item, target=key, mode=CallMode.INLINE, with_method=True)

    def _global_made_by(self, item: cst.BaseExpression) -> str | None:
        """The factory of the object a module-level name holds, when the name is never
        rebound (`_lock = threading.Lock()`), or the enclosing function's name (a test's
        `opt = torch.optim.SGD(...)` read by the function it compiles)."""
        return self._factory(self._global_value(item))

    def _global_value(self, item: cst.BaseExpression):
        """(value, module, scope) a free name holds: the enclosing function's single assignment,
        or a never-rebound module-level one; None for locals and other names. The code uses
        it as an object (a receiver, a context manager), so it is not None then."""
        if not isinstance(item, cst.Name) or item.value in self.b.own_variables():
            return None  # a local of the same name
        module = self.b.module
        enclosing = self.b.resolver.enclosing_value(item.value, receiver=True)
        if enclosing is not None:
            scope, value = enclosing
            return value, module, scope
        value = module.values.get(item.value)
        return (value, module, None) if value is not None and item.value not in module.reassigned else None

    def _generator_use(self, node: cst.Call, qual: str | None) -> str | None:
        """The GB code of a torch.Generator use Dynamo cannot trace (knowledge:
        generator_factories): making one, calling its methods, passing it as `generator=`."""
        gen = self.k.generator_factories
        if qual in gen:
            return self.k.gb_codes["generator_created"]
        mentions = self.env.node_memo("mentions_generator", self.b.parsed, lambda: "enerator" in self.b.parsed.text)
        if not mentions and PASSED_GENERATOR not in self.b.resolver.arguments.values():
            return None  # nothing here names a generator: skip the lookups on every call
        if isinstance(node.func, cst.Attribute) and self._holds_generator(node.func.value):
            return self.k.gb_codes["generator_method"]
        if any(a.keyword is not None and a.keyword.value == "generator" and self._holds_generator(a.value)
               for a in node.args):
            return self.k.gb_codes["generator_argument"]
        return None

    def passed_iterator(self, expr: cst.BaseExpression) -> bool:
        """A parameter the program passed a Python iterator Dynamo cannot wrap (`zip(a, b)`)."""
        b = self.b
        if not isinstance(expr, cst.Name):
            return False
        if expr.value in b.passed_iterators:  # `it = iter(view)`: still the object passed in
            return True
        return expr.value not in b.rebound and b.resolver.arguments.get(expr.value) == PASSED_ITERATOR

    def _holds_generator(self, expr: cst.BaseExpression) -> bool:
        """A parameter given one, a local, a free name or `self.<attr>` made by torch.Generator()."""
        b = self.b
        if b.resolver.qualify(expr) in self.k.generator_objects:  # `torch.default_generator`
            return True
        if isinstance(expr, cst.Name) and expr.value not in b.rebound \
                and b.resolver.arguments.get(expr.value) == PASSED_GENERATOR:
            return True
        if isinstance(expr, cst.Name) and expr.value in b.built:
            held = (b.built[expr.value], b.module, b.function)
        else:
            held = self._global_value(expr) or self._self_attribute_value(expr)
        return held is not None and makes_generator(held[0], self.k,
                                                    lambda f: self.env.project.qualify(f, held[1], held[2]))

    def _optimizer_method(self, node: cst.Call) -> tuple[str | None, bool]:
        """`opt.step()` / `opt.zero_grad()` on a torch.optim optimizer (knowledge:
        optimizer_methods), also unwrapped (`opt.step.__wrapped__(opt)`) or held by a name
        (`step_fn = opt.step.__wrapped__` in the helper that returns the compiled closure):
        the method's name, and whether it was unwrapped."""
        func, scope = node.func, self.b.function
        values = HeldValues(self.env.project, self.b.resolver.callables, self.b.module)
        if isinstance(func, cst.Name):
            found = values.held(func, scope)
            if len(found) != 1 or found[0][0] is func:
                return None, False
            func, scope = found[0]
        method, receiver, unwrapped = optimizer_method_parts(func, self.k)
        if method is None or receiver is None:
            return None, False
        if scope is self.b.function:
            made_by = self._global_made_by(receiver) or self._self_attribute_made_by(receiver) \
                or self._passed_object_class(receiver)
            if made_by is not None:
                return (method, unwrapped) if is_optimizer_class(made_by) else (None, False)
        classes = values.classes(receiver, scope)
        return (method, unwrapped) if classes and all(map(is_optimizer_class, classes)) else (None, False)

    def _wrap_in_torch_try(self, node: cst.Call, start: int, name: str) -> None:
        """The events emitted since `start` happen inside a try block of a torch function the
        call runs (Dynamo inlines it): one more frame of the chain, which with nested graph
        breaks cannot resume after them (measured 2.13: `opt.step.__wrapped__(opt)` compiles
        its caller partially, then runs it eagerly)."""
        span = self.b.span(node)
        inner = tuple(replace(ev, ctx=(Ctx(BlockKind.TRY, span.line),)) for ev in self.b.events[start:])
        del self.b.events[start:]
        self._call_torch_frame(node, name, name, inner)

    def _passed_object_class(self, expr: cst.BaseExpression) -> str | None:
        """The class of the object the call site passed for a parameter (`step(opt)` with
        `opt = torch.optim.SGD(...)`), when the frame has not rebound it."""
        if not isinstance(expr, cst.Name) or expr.value in self.b.rebound:
            return None
        passed = self.b.resolver.arguments.get(expr.value)
        return passed.value.cls if isinstance(passed, Const) and isinstance(passed.value, Obj) else None

    def _foreign_context_object(self, item: cst.BaseExpression) -> str | None:
        """A project context-manager object this trace did not create: a global, a parameter,
        `self.<attr>` (built in `__init__`), or a local built before a break (the resume
        function is given it). Measured 2.13: Dynamo cannot enter such an object ("Unsupported
        context manager", GB0142) and the frame runs eagerly. Returns the class name."""
        b = self.b
        if isinstance(item, cst.Call):
            return self._built_across_break(item)
        if isinstance(item, cst.Name) and isinstance(b.built.get(item.value), cst.Call):
            found = self._built_across_break(b.built[item.value])  # `ctx = redirect_stdout(f)`; `with ctx:`
            if found is not None:
                return found
        if not isinstance(item, (cst.Name, cst.Attribute)):
            return None
        known = b.values.value(item)
        if known is not None and not isinstance(known.value, Obj):  # `with obj:` given `3`: no __enter__ at all
            return type(known.value).__name__
        cls = b.resolver.class_of(item)
        if cls is None or self.env.project.method(cls, "__enter__") is None:
            return None
        if isinstance(item, cst.Name) and item.value in b.built:  # built here: foreign only past a break
            return cls.name if self._broken_since_built(item.value) else None
        if isinstance(item, cst.Name) and item.value in b.rebound:
            return None  # bound here some other way (`cm = make_cm()`): not known to be foreign
        return cls.name

    def _built_across_break(self, item: cst.Call) -> str | None:
        """A context manager whose making breaks: `contextlib.redirect_stdout(f)` (the call is
        a break), `Timer(x)` of a project class whose `__init__` breaks. Dynamo resumes after
        the call, and the resume function is given the object, which it cannot enter
        (measured 2.13: "Unsupported context manager", GB0142, at the `with`). Returns the
        class or function name."""
        span = self.b.span(item)
        if any(ev.kind == EventKind.BREAK and ev.span == span and ev.break_kind == BreakKind.RESUMABLE
               for ev in self.b.events):
            return self.b.resolver.qualify(item.func) or _source_of(item.func)
        cls = self.b.resolver.instantiated_class(item)
        if cls is None or self.env.project.method(cls, "__enter__") is None:
            return None
        return cls.name if self._resumed_after(item) is not None else None

    def _resumed_after(self, call: cst.Call) -> int | None:
        """Where the resume function after `call` starts, when a break inside the callee
        makes Dynamo run the call eagerly and resume after it; None otherwise."""
        span = self.b.span(call)
        at = next((i for i in range(len(self.b.events) - 1, -1, -1)
                   if self.b.events[i].kind == EventKind.CALL and self.b.events[i].span == span), None)
        made = self.b.events[at] if at is not None else None
        info = self.env.frame(made.target) if made is not None and made.target is not None else None
        resumes = info is not None and any(ev.kind == EventKind.BREAK and ev.break_kind == BreakKind.RESUMABLE
                                           for ev in info.events)
        return at + 1 if resumes and at is not None else None

    def _handed_context_object(self, item: cst.BaseExpression) -> tuple[str, int] | None:
        """A context manager the trace is handed rather than seeing it made: (what it is, the
        event from which it is an input). A parameter the caller passed `torch.no_grad()` is
        an input of any compilation of the frame itself (0); the object a helper that broke
        returned is one of the resume function after that call. Inlined, or resumed inside a
        nested break's chain, the trace made it and enters it (measured 2.13)."""
        b = self.b
        if self._handed_input(item):  # no trace made it: a break wherever it is entered
            return item.value, -1  # type: ignore[attr-defined]  # (a Name)
        if isinstance(item, cst.Name) and item.value not in b.rebound \
                and b.resolver.arguments.get(item.value) == PASSED_CONTEXT_MANAGER:
            return item.value, 0
        call = self._made(item)
        if not isinstance(call, cst.Call) or b.resolver.instantiated_class(call) is not None:
            return None
        target = b.resolver.resolve(call.func)
        if target is None or target.function.is_generator:  # a @contextmanager call runs no body yet
            return None
        at = self._resumed_after(call)
        if at is None or self._enterable_from_input(call, target.function):
            return None
        return _source_of(call.func), at

    def _handed_input(self, expr: cst.BaseExpression) -> bool:
        """A parameter holding a context manager the compiled function was called with."""
        return isinstance(expr, cst.Name) and expr.value not in self.b.rebound \
            and self.b.resolver.arguments.get(expr.value) == PASSED_CONTEXT_MANAGER_INPUT

    def _reorderable(self, node: cst.Call) -> bool:
        """Dynamo reorders a logging call only when each argument is a tensor, a constant or a
        string (DebuggingVariable.can_reorder_logs); a list or an object is GB0296 instead."""
        return all(self.b.scope.is_tensor(a.value) or isinstance(a.value, STRING_NODES)
                   or self.b.values.value(a.value) is not None for a in node.args)

    def _made(self, expr: cst.BaseExpression) -> cst.BaseExpression | None:
        """The call that made the local `expr` names (`ctx = torch.no_grad()`), else `expr`."""
        return self.b.built.get(expr.value) if isinstance(expr, cst.Name) else expr

    def _enterable_from_input(self, call: cst.Call, fn: FunctionInfo) -> bool:
        """Is the object helper `fn` returns one Dynamo can enter when handed it (autocast,
        nullcontext)? Judged from the context managers the call passes and the helper returns."""
        passed = [self._made(a.value) for a in call.args]
        wrappable = self.k.input_context_managers
        if any(isinstance(c, cst.Call) and self.b.resolver.qualify(c.func) in wrappable for c in passed):
            return True
        module = self.env.project.modules[fn.module]
        returned = [r.value for r in find_all(fn.node.body, (cst.Return,), skip=NESTED_SCOPES)]
        # `ctx = torch.autocast("cpu"); return ctx`: what the returned name was bound to
        made = [single_store(fn.node, v.value) if isinstance(v, cst.Name) else v for v in returned]
        return any(isinstance(c, cst.Call) and self.env.project.qualify(c.func, module, fn) in wrappable for c in made)

    def context_manager(self, item: cst.BaseExpression, with_node: cst.With) -> Ctx | None:
        """The block a `with` item opens, or None when entering it is itself a break."""
        b = self.b
        func = item.func if isinstance(item, cst.Call) else item
        qual = b.resolver.qualify(func)
        line = b.line(with_node)
        made_by = self._global_made_by(item)
        if isinstance(item, cst.Name) and item.value in b.built:  # `ctx = torch.device("cpu")`; `with ctx:`
            made_by = b.resolver.qualify(b.built[item.value].func)
        if made_by in self.k.breaking_context_managers:  # `with _lock:`, `_lock = threading.Lock()`
            qual = made_by
        foreign = self._foreign_context_object(item)
        if foreign is None and self._untraced_contextmanager(item):  # made eagerly, by contextlib
            foreign = _source_of(func)
        handed = self._handed_context_object(item) if foreign is None and qual not in self.k.breaking_context_managers else None
        if qual in self.k.breaking_context_managers or foreign is not None or handed is not None:
            rule = self.rule_for_check(CauseCheck.UNSUPPORTED_CONTEXT_MANAGER)
            if rule is not None:
                code = self.k.breaking_context_managers.get(qual or "") or self.k.gb_codes["foreign_context_object"]
                if handed is None:
                    b.emit_break(rule, item, gb_code=code, detail=qual or foreign or "")
                    return None
                # a break only where the object is an input: elsewhere the block is entered
                b.emit_break(rule, item, gb_code=code, detail=handed[0], input_from=handed[1])
        if qual in self.k.error_on_graph_break and isinstance(item, cst.Call):
            return Ctx(BlockKind.STRICT, line, label=qual, strict=_bool_arg(item))
        captured = qual in self.k.captured_context_managers and self._any_flag(self.k.context_manager_capture_flags)
        if (qual in self.k.resumable_context_managers or self._resumable_mode(item)) and not captured:
            return Ctx(BlockKind.RESUMABLE_WITH, line, label=qual)
        return Ctx(BlockKind.WITH, line, label=qual or _source_of(func),
                   catches=self._handles_exceptions(item), unrebuildable=qual in self.k.unrebuildable_context_managers)

    def _resumable_mode(self, item: cst.BaseExpression) -> bool:
        """`with MyMode():` of a project class deriving from a torch function mode."""
        cls = self.b.resolver.class_of(item)
        return cls is not None and bool(self.env.project.external_bases(cls) & self.k.resumable_context_manager_bases)

    def _handles_exceptions(self, item: cst.BaseExpression) -> bool:
        """`with ctx():` on a generator context manager whose `yield` sits in a `try` with an
        `except`: an exception raised in the block is thrown in there and may be handled; one
        that suppresses what the block raises (`contextlib.suppress(E)`, a test's
        `self.assertRaises(E)`, a class whose `__exit__` returns True: Dynamo traces the
        `__exit__`, measured 2.13)."""
        func = item.func if isinstance(item, cst.Call) else None
        if func is not None and (self.b.resolver.qualify(func) in self.k.suppressing_context_managers or
                                 isinstance(func, cst.Attribute) and func.attr.value in self.k.suppressing_test_methods):
            return True
        cls = self.b.resolver.class_of(item)
        exit_method = self.env.project.method(cls, "__exit__") if cls is not None else None
        if exit_method is not None:
            return any(r.value is not None and not is_none_literal(r.value) and not
                       (isinstance(r.value, cst.Name) and r.value.value == "False")
                       for r in find_all(exit_method.node.body, (cst.Return,), skip=NESTED_SCOPES))
        target = self.b.resolver.resolve(item.func) if isinstance(item, cst.Call) else None
        if target is None or not target.function.is_generator:
            return False
        body = target.function.node.body
        return self.env.node_memo("yield_in_try", target.function.node, lambda: any(
            t.handlers and find_all(t.body, (cst.Yield,), skip=NESTED_SCOPES)
            for t in find_all(body, (cst.Try,), skip=NESTED_SCOPES)))


def _class_count_left_to_data(node: cst.Call) -> bool:
    """`one_hot(t)` or `one_hot(t, -1)`: Dynamo's check counts the arguments as spelled."""
    if len(node.args) == 1:
        return not node.args[0].star
    if len(node.args) != 2 or any(a.keyword is not None or a.star for a in node.args):
        return False
    count = node.args[1].value
    return isinstance(count, cst.UnaryOperation) and isinstance(count.operator, cst.Minus) \
        and isinstance(count.expression, cst.Integer) and count.expression.value == "1"


# `pkg.fn = torch.compiler.disable(pkg.fn)`: an attribute assigned a disable(...) call
_PATCHING = re.compile(r"^[ \t]*[\w.]+\.\w+[ \t]*=[ \t]*[\w.]*disable\(", re.MULTILINE)


# the method Python calls for an operator on an instance of a user class
_BINARY_DUNDERS = {cst.Add: "__add__", cst.Subtract: "__sub__", cst.Multiply: "__mul__", cst.Divide: "__truediv__",
                   cst.FloorDivide: "__floordiv__", cst.Modulo: "__mod__", cst.Power: "__pow__",
                   cst.MatrixMultiply: "__matmul__", cst.BitAnd: "__and__", cst.BitOr: "__or__",
                   cst.BitXor: "__xor__", cst.LeftShift: "__lshift__", cst.RightShift: "__rshift__"}
_COMPARE_DUNDERS = {cst.Equal: "__eq__", cst.NotEqual: "__ne__", cst.LessThan: "__lt__",
                    cst.LessThanEqual: "__le__", cst.GreaterThan: "__gt__", cst.GreaterThanEqual: "__ge__"}


_OperatorCall = tuple[cst.BaseExpression, str, "cst.BaseExpression | None"]
# builtins Python runs through a method of the argument's class
_BUILTIN_DUNDERS = {"builtins.len": "__len__", "builtins.abs": "__abs__", "builtins.bool": "__bool__",
                    "builtins.next": "__next__", "builtins.iter": "__iter__"}


def _returns_self(method) -> bool:
    """`def __iter__(self): return self`: the object is its own iterator."""
    returns = find_all(method.node.body, (cst.Return,), skip=NESTED_SCOPES)
    return bool(returns) and all(isinstance(r.value, cst.Name) and r.value.value == "self" for r in returns)


def _operator_calls(node: cst.BaseExpression) -> list[_OperatorCall]:
    """(receiver, method, other operand) of the operator an expression applies."""
    if isinstance(node, cst.BinaryOperation) and type(node.operator) in _BINARY_DUNDERS:
        return [(node.left, _BINARY_DUNDERS[type(node.operator)], node.right)]
    if isinstance(node, cst.Comparison):
        out: list[_OperatorCall] = []
        left = node.left
        for target in node.comparisons:
            name = _COMPARE_DUNDERS.get(type(target.operator))
            if name is not None:
                out.append((left, name, target.comparator))
            elif isinstance(target.operator, (cst.In, cst.NotIn)):  # `k in obj`: obj.__contains__(k)
                out.append((target.comparator, "__contains__", left))
            left = target.comparator
        return out
    if isinstance(node, cst.Subscript):
        return [(node.value, "__getitem__", None)]
    return []


# a break's detail when its operand is a module, not a tensor: run on fake tensors (an
# allow_in_graph / nonstrict_trace function) it works (measured 2.13: deepcopy of a layer)
MODULE_OPERAND = "module"
# an op event's detail when it calls a torch layer the code did not build (see _held_layer),
# and the fake_run knowledge's name for it
HELD_MODULE = "held_module"
OBJECT_OUTPUT = "object_output"  # a fake-run function returning a project object (knowledge: fake_run)


def _returns_none_or_string(fn: FunctionInfo) -> bool:
    """Does every `return` hand back None or a string literal, alone or in a tuple / list
    display (no `return` with a value at all: None)? Dynamo checks the path the call takes, so
    one early `return None` among others is not enough."""
    values = [r.value for r in find_all(fn.node.body, (cst.Return,), skip=NESTED_SCOPES)]
    return all(v is None or _none_or_string(v) or isinstance(v, (cst.Tuple, cst.List))
               and any(_none_or_string(el.value) for el in v.elements) for v in values)


def _none_or_string(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None" \
        or isinstance(expr, STRING_NODES)


def _method_receiver(target: CallTarget, node: cst.Call) -> cst.BaseExpression | None:
    """`recv` of `recv.method(...)` when the call runs that method on it (not a sub-module's
    forward run by `self.sub(x)`, whose `self` is another object)."""
    func = node.func
    if target.skip_first_param and isinstance(func, cst.Attribute) and func.attr.value == target.function.name:
        return func.value
    return None


def _bool_arg(call: cst.Call) -> bool:
    if call.args and isinstance(call.args[0].value, cst.Name):
        return call.args[0].value.value != "False"
    return True


def _unbatched(size: tuple, dim: str | None) -> tuple | None:
    """A tensor's sizes inside vmap: without dimension `dim` ("-": all kept); None if unknown."""
    if dim == "-":
        return size
    if dim is None or not size or not -len(size) <= int(dim) < len(size):
        return None
    at = int(dim) % len(size)
    return size[:at] + size[at + 1:]


def _builtin_exception(qualname: str) -> bool:
    """`builtins.ValueError` and the other exception classes Python defines."""
    module, _, name = qualname.rpartition(".")
    held = getattr(builtins, name, None) if module == "builtins" else None
    return isinstance(held, type) and issubclass(held, BaseException)


def _source_of(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _element_built(container: Obj, position: int | None) -> tuple:
    """What a module container's element at `position` was built with: its own object, or
    what every element shares (the position unknown, or the elements built alike)."""
    own = _element_object(container, position)
    each = container.get(EACH)
    if own is None and each is not None and isinstance(each.value, Obj):
        own = each.value
    return own.attrs if own is not None else ()


def _element_object(container: Obj, index: int | None) -> Obj | None:
    """The object a module list built element by element holds at `index` (negative: from the end)."""
    objs = element_objects(container)
    return objs[index] if index is not None and -len(objs) <= index < len(objs) else None


def _first(pair: tuple) -> str:
    return pair[0]


def _on_self(call: cst.Call) -> bool:
    func = call.func
    return isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"


def _self_writes(node: cst.CSTNode) -> frozenset[str]:
    """Attributes a method sets on its `self` (`self.name = ...`)."""
    names: set[str] = set()
    if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
        names.update(t.attr.value for t in targets if isinstance(t, cst.Attribute)
                     and isinstance(t.value, cst.Name) and t.value.value == "self")
    for child in children(node):
        if not isinstance(child, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            names |= _self_writes(child)
    return frozenset(names)


def _loops_binding(node: cst.CSTNode, name: str) -> list[cst.BaseExpression]:
    """The iterables of the `for name in ...` loops under `node`."""
    found = []
    if isinstance(node, cst.For) and isinstance(node.target, cst.Name) and node.target.value == name:
        found.append(node.iter)
    for child in children(node):
        found += _loops_binding(child, name)
    return found


def _literal_store(small: cst.BaseSmallStatement, name: str) -> tuple[str | None, Const | None]:
    """`name["key"] = <literal>`: the key and the constant."""
    if not isinstance(small, cst.Assign) or len(small.targets) != 1:
        return None, None
    target = small.targets[0].target
    if not (isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and target.value.value == name
            and len(target.slice) == 1 and isinstance(target.slice[0].slice, cst.Index)):
        return None, None
    key = literal(target.slice[0].slice.value)
    if key is None or not isinstance(key.value, str):
        return None, None
    return key.value, literal(small.value)


def _stores_into(node: cst.CSTNode, name: str) -> list[cst.BaseExpression | None]:
    """The keys code under `node` stores into the dict `name` (`name[k] = v`); None for a
    store whose key is not one expression (`name.update(...)`, `name.setdefault(...)`)."""
    found: list[cst.BaseExpression | None] = []
    if isinstance(node, (cst.Assign, cst.AugAssign)):
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
        for t in targets:
            if isinstance(t, cst.Subscript) and isinstance(t.value, cst.Name) and t.value.value == name:
                index = t.slice[0].slice if len(t.slice) == 1 else None
                found.append(index.value if isinstance(index, cst.Index) else None)
    elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
            and node.func.attr.value in ("update", "setdefault", "__setitem__") \
            and isinstance(node.func.value, cst.Name) and node.func.value.value == name:
        found.append(None)
    for child in children(node):
        found += _stores_into(child, name)
    return found


_NOT_CALLABLE = (int, float, bool, str, bytes, type(None), complex)

# the synthetic frame of torch.compile's wrapper in a call chain (`f.<compile_wrapper@12:8>`):
# a break below it nests through no frame, nested_graph_breaks on or off (checks.nested)
COMPILE_WRAPPER_LABEL = "compile_wrapper"


def _defines(methods: tuple[str, ...], name: str) -> bool:
    """Is `name` one of a library class's methods (`assert*` naming a prefix)?"""
    return any(name.startswith(m[:-1]) if m.endswith("*") else name == m for m in methods)


def _names_self(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "self"
