"""The closed vocabularies stages exchange: what an event is, which block encloses it, how a
call is made, what happens to a frame and why.

Each is an enum so a misspelt word is an AttributeError (and a mypy error), not a comparison
that is silently never true. Members are `str`s equal to their value: JSON output, the
result cache and messages see exactly the text they saw before.
"""
from __future__ import annotations

from enum import Enum


class Vocab(str, Enum):
    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:  # f"{x}" prints the word on every Python version
        return format(self.value, spec)


class EventKind(Vocab):
    """What a frame does, in order (model.types.Event)."""

    OP = "op"  # a traced tensor op
    BREAK = "break"  # a graph break site
    CALL = "call"  # a call Dynamo inlines (or runs eagerly, see CallMode)
    # a call whose callee waited on the stack through a break point in its arguments: a break
    # only in a resume function starting among them (model.trace)
    PENDING = "pending"


class BlockKind(Vocab):
    """A block enclosing an event (model.types.Ctx), and the reason a frame is skipped or
    compiled partially (the block to blame, or what stood in for one)."""

    LOOP = "loop"
    TRY = "try"
    WITH = "with"  # a context manager Dynamo cannot resume after a break
    RESUMABLE_WITH = "resumable_with"  # no_grad, autocast, ...: the break resumes inside
    STRICT = "strict"  # error_on_graph_break(True/False)
    # reasons only: no block encloses the break, something else makes the frame unresumable
    SKIP_FRAME = "skip_frame"  # torch._dynamo.skip_frame()
    GENERATOR = "generator"  # a break inside a generator the frame consumes
    ATTRIBUTE = "attribute"  # a break under attribute access (a property, __getattr__)
    CONTEXT_MANAGER = "context_manager"  # the break is entering an unsupported context manager
    NEW_OBJECT = "new_object"  # the break is inside a method of an object the frame created
    EXCEPTION = "exception"  # an exception raised while tracing leaves the frame uncaught
    ITERATOR = "iterator"  # a comprehension run from eager code: its real iterator cannot be wrapped
    UNINITIALIZED = "uninitialized"  # a module constructor compiled alone meets `self` not yet initialized
    INSTRUCTION = "instruction"  # a break at an instruction Dynamo cannot resume after (not a call)
    OPERATOR = "operator"  # a break inside a user object's operator method (`a + b`)
    OUTPUT = "output"  # what the frame returns or leaves behind cannot be rebuilt at its return


class BreakKind(Vocab):
    """How Dynamo handles a break cause (a rule's `break:`)."""

    RESUMABLE = "resumable"
    SKIP_FRAME = "skip_frame"
    UNRESUMABLE = "unresumable"
    EXCEPTION = "exception"  # an exception leaving the compiled frame: it is skipped, unless caught
    ERROR = "error"  # compilation raises even without fullgraph (the program stops)
    # only when the frame is compiled on its own, not inlined into a caller (then unresumable):
    # `super().__init__()` of a module whose constructor Dynamo compiles as a frame
    OWN_FRAME = "own_frame"
    # a break at an instruction Dynamo cannot resume after (only calls and jumps are resume
    # points): `del` of a global or a cell (no handler), GET_ITER of an object it cannot wrap
    INSTRUCTION = "instruction"
    # only when the frame is compiled on its own, at its `return`: Dynamo rebuilds what the
    # frame returns or leaves behind (globals, attributes) there and cannot; inlined, the
    # value just goes to the caller. Unresumable: compiled up to a checkpoint, or skipped.
    OUTPUT = "output"
    NONE = "none"  # not a break cause


class CallMode(Vocab):
    """How a call event reaches its callee."""

    INLINE = "inline"
    GENERATOR = "generator"  # a generator function, or a generator expression's frame
    EAGER = "eager"  # run eagerly (torch.compiler.disable and friends): its callees compile alone
    CHECKPOINT = "checkpoint"  # torch.utils.checkpoint: a higher-order op
    STRICT_HOP = "strict_hop"  # a higher-order op whose body must not break (cond, map, ...)
    COMPREHENSION = "comprehension"  # a list/set/dict comprehension's own frame
    ATTRIBUTE = "attribute"  # a property getter
    ATTRIBUTE_DUNDER = "attribute_dunder"  # __getattr__
    DUNDER = "dunder"  # __setattr__
    # `a + b` on a user object: its method runs under BINARY_OP, an instruction Dynamo cannot
    # resume after (only calls, comparisons and subscripts can)
    OPERATOR = "operator"
    # run by a wrapper Dynamo broke in (a context decorator it cannot enter): the callee is
    # compiled as a frame of its own
    WRAPPED = "wrapped"
    # a reorderable logging function (config reorderable_logging_functions): Dynamo does not
    # trace it but calls it after the graph, where it is compiled as a frame of its own (run
    # eagerly instead when nested graph breaks are on and the compilation breaks later)
    DEFERRED = "deferred"
    # a call Dynamo inlines but never nests a graph break through (measured 2.13, nested graph
    # breaks on): into a torch.func transform's own frame (functorch's `wrapped`), and
    # autograd.Function.apply into its forward
    NO_NESTING = "no_nesting"
    # a function torch.compile wrapped, called in compiled code: traced in place, but a break
    # in it nests through no frame of the chain (measured 2.13: traced twice, nested graph
    # breaks on or off; three times with an error_on_graph_break wrapper around it)
    COMPILE_WRAPPER = "compile_wrapper"


class CauseCheck(Vocab):
    """Break causes the model finds by analysis rather than by name (a rule's
    `trigger: {check: ...}`); model/causes.py and model/events.py look their rules up by these."""

    DATA_DEPENDENT_BRANCH = "data_dependent_branch"
    DISABLED_CALL = "disabled_call"
    DISALLOWED_CALL = "disallowed_call"
    DYNAMIC_SHAPE_INDEX = "dynamic_shape_index"
    UNSUPPORTED_CONTEXT_MANAGER = "unsupported_context_manager"
    NEW_OBJECT_METHOD = "new_object_method"  # a break inside a method of an object the frame made
    LIVE_NEW_OBJECT_METHOD = "live_new_object_method"  # a bound method of such an object live across a break
    LIVE_CONTEXT_OBJECT = "live_context_object"  # a @contextmanager object the frame made, live across a break
    SYMBOLIC_ASSERT = "symbolic_assert"  # an assert on sizes or ints that fails under dynamic=True
    OUTPUT_NEW_OBJECT_METHOD = "output_new_object_method"  # ... returned, or stored in a global or attribute
    OUTPUT_CONTEXT_OBJECT = "output_context_object"  # a @contextmanager object made here, returned or stored
    OUTPUT_TYPE_UNION = "output_type_union"  # `int | None` (types.UnionType) returned or stored
    UNCAUGHT_RAISE = "uncaught_raise"  # a `raise` every trace of the frame reaches
    OPAQUE_OBJECT_METHOD = "opaque_object_method"  # a method of an object Dynamo cannot trace (a file)
    EAGER_COMPREHENSION = "eager_comprehension"  # a comprehension compiled alone over a real iterator
    FAKE_RUN_BREAK = "fake_run_break"  # an allow_in_graph / nonstrict_trace function fake tensors cannot pass
    OPAQUE_OBJECT_ARGUMENT = "opaque_object_argument"  # an allow_in_graph / nonstrict_trace function given an object
    FAKE_RUN_ERROR = "fake_run_error"  # an allow_in_graph function runs an op fake tensors cannot run at all
    UNINITIALIZED_MODULE = "uninitialized_module"  # nn.Module.__init__ in a constructor compiled alone
    BUFFER_REASSIGN = "buffer_reassign"  # `self.buf = self.buf.to(...)` on an nn.Buffer attribute
    # a generator expression with a break inside, which Dynamo cannot rebuild to break at its consumer
    GENERATOR_REBUILD = "generator_rebuild"
    CLASS_DEFINITION = "class_definition"  # a `class` statement (Dynamo cannot trace __build_class__)
    CLASS_BODY = "class_body"  # the body of a class defined in compiled code, compiled alone
    OPTIMIZER_METHOD = "optimizer_method"  # `opt.step()` / `opt.zero_grad()` on a torch.optim optimizer
    REQUIRES_GRAD_FACTORY = "requires_grad_factory"  # `torch.ones(3, requires_grad=True)`
    SEQUENCE_INDEXED_BY_TENSOR = "sequence_indexed_by_tensor"  # `xs[i]` of a list with `i` a tensor
    TENSOR_SLICE_BOUND = "tensor_slice_bound"  # `x[:n]` / `slice(a, b)` with a tensor bound
    SCALAR_TENSOR_INDEX = "scalar_tensor_index"  # `y[b.argmax()]`: a 0-d integer tensor of data as the index
    GENERIC_CLASS_SUBSCRIPT = "generic_class_subscript"  # `C[int]` of a class deriving typing.Generic (GB0116)
    INVALID_BUILTIN_CALL = "invalid_builtin_call"  # a builtin called with arguments its signature refuses (GB0193)
    HOP_OPERATOR_ARGUMENTS = "hop_operator_arguments"  # a higher-order operator object given arguments it refuses
    DATA_POINTER_ARGUMENT = "data_pointer_argument"  # `torch.add(a, a.data_ptr())`: no graph argument (GB0055)
    REQUIRES_GRAD_INTERMEDIATE_RETURNED = "requires_grad_intermediate_returned"  # y.requires_grad_(); return y * 3
    DUPLICATE_APPLY_INPUT = "duplicate_apply_input"  # `Fn.apply(y, y)` with y needing grad (GB6297)
    NON_CALLABLE_CALL = "non_callable_call"  # `n()` of a number or iterator passed in (GB0147)
    EMPTY_MODULE_USE = "empty_module_use"  # a module whose __init__ leaves its __dict__ empty, used (GB0119)
    OUT_TENSOR_RESIZED = "out_tensor_resized"  # an `out=` tensor whose known size is not the result's (GB0247)
    SYMBOLIC_CHECK = "symbolic_check"  # `torch._check(cond)` failing on symbolic sizes or ints (GB4315)
    SHALLOW_COPY = "shallow_copy"  # `copy.copy` of a list/dict/set, defaultdict, tensor or module
    TENSOR_NUMBER_ARGUMENT = "tensor_number_argument"  # a tensor where a torch op takes a number (`torch.zeros(n)`)
    LIBRARY_OP_WITHOUT_FAKE = "library_op_without_fake"  # a torch.library.Library op with no fake-capable kernel
    CUSTOM_OP_WITHOUT_FAKE = "custom_op_without_fake"  # a torch.library.custom_op with no fake registered
    CUSTOM_OP_FAKE_NOT_IMPLEMENTED = "custom_op_fake_not_implemented"  # its fake raises NotImplementedError (GB0087)
    BROADCAST_MISMATCH = "broadcast_mismatch"  # an elementwise op on tensors whose known sizes do not broadcast
    HOOK_SIDE_EFFECT = "hook_side_effect"  # a tensor hook traced at registration writes outside itself
    TORCH_GENERATOR = "torch_generator"  # a torch.Generator made, called or passed in compiled code
    PASSED_ITERATOR = "passed_iterator"  # iterating a Python iterator the program passed in (zip, map, a generator)
    GENERATOR_MUTATION = "generator_mutation"  # a write to outside state in a generator Dynamo rebuilds
    # a breaking call handed `module.parameters()`: the generator cannot be rebuilt (GB8335)
    MODULE_GENERATOR_HANDED = "module_generator_handed"
    PENDING_TENSOR_METHOD = "pending_tensor_method"  # `x.mul(h(x))` resumed inside the arguments (GB0007)
    CAPTURED_MANY_ELEMENTS = "captured_many_elements"  # bool(t) of a multi-element tensor under capture (GB4315)
    MISSING_IMPORT = "missing_import"  # importing a module the search path does not hold (GB0069)
    DELETED_CELL = "deleted_cell"  # `del` of a global or a cell: no DELETE_GLOBAL/DELETE_DEREF handler
    DELETED_LOCAL_READ = "deleted_local_read"  # reading a local after `del` of it (GB0011)
    CLASS_REASSIGN = "class_reassign"  # `obj.__class__ = C` on a user-defined object (GB4271)
    UNSIZED_ONE_HOT = "unsized_one_hot"  # `F.one_hot(t)` without a class count (GB0246)
    NEW_GLOBAL_READ = "new_global_read"  # reading a global the frame itself created (GB0354)
    UNDEFINED_NAME_READ = "undefined_name_read"  # reading a name no scope binds (GB0354, NameError)
    HOP_SIDE_EFFECT = "hop_side_effect"  # a higher-order op's body writing outside itself (GB0067)
    HOP_NEW_ATTRIBUTE = "hop_new_attribute"  # a higher-order op's body adding a non-tensor attribute outside (GB0088)
    # a higher-order op's body leaving an outside object's attribute set (GB4413, at the op)
    HOP_ATTRIBUTE_LEFT_SET = "hop_attribute_left_set"
    HOP_INPUT_FAULT = "hop_input_fault"  # a strict higher-order op's body mutating or returning an input
    TENSOR_CONTAINS = "tensor_contains"  # `v in t` on a tensor: Tensor.__contains__ calls .item() (GB0124)
    SORT_NON_CONSTANT_KEYS = "sort_non_constant_keys"  # sorted()/list.sort() with tensor or object keys (GB0207)
    NONSTRICT_TRACE_IN_REGION = "nonstrict_trace_in_region"  # nonstrict_trace applied to a function the region defines (GB0078)
    CUSTOM_DERIVATIVE = "custom_derivative"  # Fn.apply of an autograd.Function defining vjp / jvp (GB0145/GB0144)
    CHECK_MESSAGE = "check_message"  # torch._check(cond, msg) with a message Dynamo cannot convert (GB9158/GB9840)
    DATA_OF_NEW_TENSOR = "data_of_new_tensor"  # `t.data = v` on a tensor the compiled code made (GB0056)
    SCRIPTED_MODULE_CALL = "scripted_module_call"  # calling a torch.jit.script-ed module (GB4695)
    TRACED_MODULE_CALL = "traced_module_call"  # calling a torch.jit.trace-d module (GB0008 in torch)
    RECURRENT_MODULE_CALL = "recurrent_module_call"  # calling an nn.RNN / nn.GRU / nn.LSTM held by name (GB0014)
    PROFILER_OBJECT_METHOD = "profiler_object_method"  # a method of a `with torch.profiler.profile() as p` object (GB0212)
    PASSED_TENSOR_SET = "passed_tensor_set"  # first use of a set of tensors passed in (GB0222)
    DYNAMIC_SHAPE_NO_META = "dynamic_shape_no_meta"  # a dynamic-output-shape op with no meta kernel (GB0036/GB0037)
    SUBCLASS_OVERRIDDEN_ATTRIBUTE = "subclass_overridden_attribute"  # `x.ndim` a tensor subclass sets to a value (GB0164)
    MODULE_BACKWARD_HOOK = "module_backward_hook"  # calling a sub-module with full backward hooks (GB0083)
    CLASSMETHOD_AUTOGRAD_FUNCTION = "classmethod_autograd_function"  # Fn.apply of a classmethod forward/backward (GB7312)
    OPTIMIZER_CONSTRUCTION = "optimizer_construction"  # building a torch.optim optimizer in compiled code (GB0467)
    UNSUPPORTED_SETATTR = "unsupported_setattr"  # `p.x = v` on a functools.partial or a global function (GB0467)
    NESTED_RECONSTRUCTION = "nested_reconstruction"  # a nested break under an outer unsupported `with` (GB0092)
    GLOBAL_HOOK_HANDLE = "global_hook_handle"  # `global h; h = x.register_hook(fn)` (GB0100)
    SPARSE_TENSOR_USE = "sparse_tensor_use"  # first use of a sparse tensor made before a break (GB0015)
    # a reorderable logging function given an argument it cannot reorder (a list, an object: GB0296)
    UNREORDERABLE_LOGGING_CALL = "unreorderable_logging_call"
    CONTEXT_DECORATED_CALL = "context_decorated_call"  # calling a function a config patch decorates (GB0142)
    # making a @contextmanager object with enable_trace_contextlib off (GB0263)
    UNTRACED_CONTEXTMANAGER = "untraced_contextmanager"
    EXCEPT_STAR_MATCH = "except_star_match"  # an exception reaching `except*` (GB0082)
    # a user exception's `__init__` calling the builtin exception's (GB0006, GB0156)
    EXCEPTION_BASE_INIT = "exception_base_init"
    STOP_ITERATION_VALUE = "stop_iteration_value"  # computing with a caught StopIteration's `value` (GB4841)
    DATA_POINTER_COMPARISON = "data_pointer_comparison"  # `a.data_ptr() == b.data_ptr()` (GB5976)
    DATA_POINTER_ARITHMETIC = "data_pointer_arithmetic"  # `a.data_ptr() + n`: Dynamo raises (GB0088)
    CONTEXT_BY_HAND = "context_by_hand"  # a break in a @contextmanager object entered or left by hand (GB0092)
    SEND_INTO_YIELD_FROM = "send_into_yield_from"  # `gen.send(v)`, v not None, while gen is in `yield from` (GB0120)
    # an existing mapping proxy read after the compiled code changed a dict it did not make (GB0198)
    MAPPING_PROXY_AFTER_DICT_CHANGE = "mapping_proxy_after_dict_change"


class Fate(Vocab):
    """What a break does to the frame holding it, before checkpoint arithmetic (model.trace)."""

    RESUMED = "resumed"
    SKIPPED = "skipped"
    UNRESUMABLE = "unresumable"
    PARTIAL = "partial"  # unresumable, but enough ops before the block for a checkpoint


class Outcome(Vocab):
    """What happens to a frame (or to the resume function after its earlier break)."""

    SKIPPED = "skipped"
    PARTIAL = "partial"
    RESUME_SKIPPED = "resume-skipped"
    RESUME_PARTIAL = "resume-partial"

    @classmethod
    def of(cls, fate: Fate, in_resume: bool) -> Outcome:
        return cls(("resume-" if in_resume else "") + fate.value)


class StrictReason(Vocab):
    """Why a break is a compile error."""

    FULLGRAPH = "fullgraph"
    ERROR_ON_GRAPH_BREAK = "error_on_graph_break"
    HIGHER_ORDER_OP = "higher_order_op"
    FAKE_TENSOR = "fake_tensor"  # a call that fails to compile wherever it is (fake-tensor run, refused call)


# A break site's outcome when the break raises instead (a strict region); its other outcomes
# are Fate.RESUMED and the Outcome of each frame it skips.
HARD_ERROR = "hard_error"

# How an entry point was found, for the two ways that are not in the scanned source (an
# EntryPoint's `how` is otherwise display text built from the compile call: "decorator",
# "torch.compile(fn)", ...).
NAMED_ENTRY = "named entry point"  # --entry / entry-points in the configuration
ASSUMED_ENTRY = "assumed compiled (nn.Module)"  # --assume-compiled modules
