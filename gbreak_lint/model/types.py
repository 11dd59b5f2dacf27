"""Frozen data of the Dynamo model: events in a frame, frames, and what tracing predicts."""
from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ..diagnostics import Span
from ..index.symbols import FunctionInfo
from ..vocab import EventKind, BlockKind, CallMode, BreakKind
from ..walk import all_params


@dataclass(frozen=True)
class Ctx:
    """A block enclosing an event, innermost last."""

    kind: BlockKind
    line: int
    label: str = ""  # e.g. the context manager's name
    strict: bool | None = None  # for BlockKind.STRICT: error_on_graph_break(True/False)
    catches: bool = False  # a `with` whose context manager handles exceptions (a try around its yield)
    # a `try`'s handlers that neither raise nor return (the code after the `try` runs): the
    # exception names they take, "*" for any (bare, Exception, BaseException)
    swallows: tuple[str, ...] = ()
    unrebuildable: bool = False  # a `with` Dynamo enters but cannot rebuild to resume (GB0092)


@dataclass(frozen=True)
class FnValue:
    """A function value: a project function, the functions its free variables hold (a closure's
    cells, e.g. a decorator's wrapper holding the decorated function) and how many leading
    positional parameters are bound already (functools.partial)."""

    qualname: str
    captured: tuple[tuple[str, "FnValue"], ...] = ()
    skip: int = 0
    # cells holding Python constants: a decorator factory's arguments (`@scaled("attn_kwargs")`)
    constants: tuple[tuple[str, object], ...] = ()
    # `torch.compiler.disable(fn)` / `(fn, recursive=False)`: "recursive" / "nonrecursive"
    disabled: str = ""
    # `torch.vmap(f)` / `torch.func.grad(f)`: f runs on per-sample or transformed tensors (one
    # of the TRANSFORMED_* sizes below; "": not transformed)
    transformed: str = ""
    # `f = torch._dynamo.nonstrict_trace(g)` / `allow_in_graph(g)` called as a function: the
    # decorator applied (its qualname), so calling f runs g the way the decorator does
    opaque: str = ""


@dataclass(frozen=True)
class FrameKey:
    """A frame Dynamo may compile: a function (or comprehension) plus what we know of its inputs."""

    qualname: str
    tensor_params: frozenset[str] = frozenset()
    bindings: tuple[tuple[str, FnValue], ...] = ()  # parameter or free variable -> function it holds
    instance: str = ""  # which module instance `self` is ("self.a"; "*": many, from a container)
    self_class: str = ""  # the runtime class of `self` (a subclass may override what self.m() calls)
    # Python values the call site passes: parameter -> values.Const, or values.PASSED_UNKNOWN
    arguments: tuple[tuple[str, object], ...] = ()
    unbound_passed: bool = False  # `*args`/`**kwargs` at the call site: no parameter takes its default
    training: bool | None = None  # `self.training` of the module instance (None: unknown)
    attributes: tuple[tuple[str, object], ...] = ()  # `self.<attr>` -> values.Const, from its construction
    shapes: tuple[tuple[str, tuple[int, ...]], ...] = ()  # tensor parameter -> its (static) shape
    # tensor parameter -> its elements, flattened, when every call passes one made from the
    # same constants (model.tensor_contents): tells which side a data-dependent branch takes
    contents: tuple[tuple[str, tuple], ...] = ()
    # tensor parameters known to need grad (made with requires_grad=True, an nn.Parameter):
    # `requires_grad_()` on what the frame computes from them changes nothing (GBL610)
    grad_inputs: frozenset[str] = frozenset()
    # tensor parameters known NOT to need grad (a tensor the program made without it, what is
    # computed from one): a layer stack given one compiles again when the next layer's needs grad
    plain_inputs: frozenset[str] = frozenset()
    # parameters given the value the call's own statement rebinds (`x = layer(x, pos)`): what a
    # stack of layers passes from one layer to the next; None where no call site told (torch's
    # own nn.Sequential loop, an entry)
    carried: frozenset[str] | None = None
    # `self.<attr>` holding a tensor: an object built in compiled code from tensors (`C(x).get()`)
    tensor_attributes: frozenset[str] = frozenset()
    # free variables the enclosing function's call bound (`def test(Ctx)` called as `test(A)`):
    # name -> the function or class; Dynamo guards on the cells' contents
    cells: tuple[tuple[str, str], ...] = ()
    # a tensor hook Dynamo traces when compiled code registers it: inlined at the registration
    # only (never a frame of its own), and a write to state outside it breaks (GB0067)
    traced_hook: bool = False
    # the function `checkpoint` / `wrap` runs in compiled code: Dynamo traces it as a
    # higher-order op's body, where a write to state outside it breaks (GB0067)
    hop_body: bool = False
    # that body's own function (a `wrap(f)`'s `f`): the names it and the functions nested in
    # it bind are the body's own, written by an inner function's `nonlocal` too
    hop_root: str = ""
    # a generator the compiled frame lets escape (returns it): Dynamo rebuilds it by tracing
    # what is left of its body (after `skip_yields` yields the frame consumed), and a write to
    # state made elsewhere there stops the frame (GB8335)
    reconstructing: bool = False
    skip_yields: int = 0
    # a generator held in a local runs only up to the yield each `next(gen)` takes: this many
    # yields after `skip_yields` (None: to its end; 0: nothing, its creation)
    take_yields: int | None = None
    # compiled with dynamic=True: tensor sizes and int arguments are symbols (the callees it
    # inlines share them)
    dynamic: bool = False
    # compiled with isolate_recompiles=True: the compile call's own code cache ("path:line"),
    # so another compile of the same function traces it again (callees compiled under it too)
    region: str = ""
    # torch's global state the call runs under (model.global_state): another one recompiles
    global_state: tuple[str, ...] = ()
    # a frame of torch's own code built for one call (functorch's `wrapped`, a module's
    # `_call_impl`): the caller's frame, whose variant made the events it holds
    caller: "FrameKey | None" = None


@dataclass(frozen=True)
class Event:
    kind: EventKind
    span: Span
    ctx: tuple[Ctx, ...]
    # break
    rule: str | None = None
    break_kind: BreakKind = BreakKind.RESUMABLE
    gb_code: str | None = None
    detail: str = ""
    hits: int = 1  # Dynamo meets this break this many times per trace (while-conditions: 2)
    # a break only this config switch makes (a branch on a `.item()` value it captures)
    needs_config: str = ""
    # a break on a value the caller passed (a captured number): a frame compiled alone is
    # given the real value instead, so only inlined traces meet it
    inlined_only: bool = False
    # a break Dynamo makes only when it may break: under fullgraph it raises when it compiles
    # the graph instead, with no GB code (`requires_grad_()` of an intermediate returned)
    lenient_only: bool = False
    loop_escapes: bool = False  # a `return` ends Dynamo's back-edge scan before the loop's end
    # call
    target: FrameKey | None = None
    mode: CallMode = CallMode.INLINE
    ops_before_block: int = 0
    new_receiver: bool = False  # a method of a (non-module) object this frame created: `Helper().run(x)`
    # a live local holds what the resume function cannot get rebuilt: the check saying what
    # (a bound method of an object this frame made, a @contextmanager object it made)
    rebuilds_local: str = ""
    # a live local holds a generator this frame made: Dynamo rebuilds it for the resume
    # function by tracing the rest of its body (this key), where a break stops the frame
    rebuilds_generator: FrameKey | None = None
    # a breaking call handed a module's `parameters()` / `modules()` generator (its name): Dynamo
    # cannot rebuild it for the eager call, so the break does not resume
    hands_module_generator: str = ""
    # `ctx.__enter__()` / `ctx.__exit__()` by hand of a @contextmanager object this frame made:
    # a break in the generator resumes at the call, where Dynamo cannot rebuild the object
    context_by_hand: bool = False
    # the `__enter__` / `__exit__` (or @contextmanager body) of the `with` block it is in: a
    # break there is not under the block
    with_method: bool = False
    condition: str = ""  # the unknown `if` conditions the event lies behind in its frame
    # a resume function after this point gets a tensor, a module or torch (Dynamo compiles it)
    resume_has_tensors: bool = True
    # ... a live tensor (or module) itself, torch's name aside: what a frame below the compiled one
    # passes to the resume function of a nested break's chain
    resume_live_tensors: bool = True
    # a tensor the frame was called with, not rebound before this point, is live after it: a
    # resume function here is guarded on that input's requires_grad
    resume_live_inputs: bool = False
    closes_over: bool = False  # a generator expression reading the frame's own variables (cells)
    # a break only where a local is a graph input: in a resume function starting at or after
    # this event index, where the local was made (`a.unsqueeze_(2)` after a break); -1: always
    input_from: int = -1
    # tensor-valued names the frame has read so far, this event's own expression included: a
    # read wraps the tensor, so Dynamo guards on its sizes (see Tracer._reads_tensors)
    tensor_reads: int = 0

    @property
    def line(self) -> int:
        return self.span.line


@dataclass(frozen=True)
class FrameInfo:
    """Static facts about one frame (function or comprehension)."""

    key: FrameKey
    name: str  # function name as Dynamo prints it (`forward`, `<listcomp>`)
    qualname: str
    path: str
    def_line: int
    events: tuple[Event, ...]
    is_generator: bool = False
    strict: bool | None = None  # error_on_graph_break decorator on the function
    # `@torch.compile(fullgraph=True)` on it: compiled on its own (called through its wrapper
    # after a caller broke) every break raises; inlined into a caller, the caller's rules hold
    fullgraph_alone: bool = False
    returns_tensor: bool = False
    yields_tensor: bool = False  # a generator yielding a tensor (what `ctx.__enter__()` of its object gives)
    returns_elements: tuple[bool, ...] = ()  # tensor-ness of a returned tuple's items
    # a higher-order op's body that mutates ("mutation") or hands back ("aliasing") an input
    hop_input_faults: tuple[str, ...] = ()
    eager_only: bool = False  # torch's own code (nn.Sequential): inlined, never compiled alone
    uses_torch: bool = False  # reads a global torch module (Dynamo then compiles it even without tensors)
    # a comprehension whose iterator is not a tuple or range iterator: called from code running
    # eagerly, Dynamo cannot wrap the real iterator it is passed and breaks at its first step
    unwrappable_iterator: bool = False
    returns_object: bool = False  # every return is an instance of a plain project class (a model output)
    # a return hands back a value a frame compiled alone cannot rebuild (a CauseCheck: a bound
    # method or a @contextmanager object the frame made, a type union); its caller then does
    returns_unrebuildable: str = ""
    returns_data_scalar: bool = False  # a return is a number read out of a tensor (`.item() > 0`)
    never_returns: bool = False  # every path raises: `x = raiser(x)` leaves `x` as it was
    # every call it makes is to a project function (so its op count leaves nothing unknown out)
    only_project_calls: bool = False
    closure_tensors: bool = False  # reads a closure cell the enclosing function fills with a tensor
    decided_by: frozenset[str] = frozenset()  # names read by `if` tests the Python values decided
    # a higher-order op's body setting an attribute of an object it did not make to a value that
    # is not a tensor: Dynamo checks when the body ends that it was put back (GB4413, at the op)
    leaves_attribute_set: bool = False
    # the line of the first statement reading a tensor parameter (0: none): a break before it
    # leaves a first graph guarding nothing about the input
    first_input_line: int = 0
    # torch's own code compiled directly (`torch.compile(nn.Sequential(...))`): Dynamo reports
    # no skipped frame of it
    torch_frame: bool = False
    changes_outer_dict: bool = False  # changes a dict a global or a closure cell holds (model.mapping_proxies)


@dataclass(frozen=True)
class LambdaBody:
    """A lambda's frame: the expression it returns, its parameters bound at the call."""

    node: cst.Lambda
    parent: FunctionInfo  # the calling function (same module): names resolve from there
    line: int

    @property
    def parameters(self) -> frozenset[str]:
        return frozenset(p.name.value for p in all_params(self.node.params))

    @property
    def tensor_parameters(self) -> frozenset[str]:
        """Positional parameters that may hold tensors: those without a default (`k=2`)."""
        params = self.node.params
        return frozenset(p.name.value for p in (*params.posonly_params, *params.params) if p.default is None)


def batch_levels(transformed: str) -> list[list[str]] | None:
    """The in_dims of each vmap level a TRANSFORMED_PER_SAMPLE value names; None for another."""
    kind, _, levels = transformed.partition(":")
    if kind != TRANSFORMED_PER_SAMPLE:
        return None
    return [level.split(",") for level in levels.split("|")] if levels else [["0"]]


# How a torch.func transform hands the caller's tensors to the function it runs (FnValue.transformed)
TRANSFORMED_SAME_SIZES = "same_sizes"  # `grad(f)(x)`: f gets tensors of x's sizes
# `vmap(f)(x)`: f gets x without its leading (batch) dimension; "per_sample:<levels>" names the
# dimension each level of vmap takes off, outermost first, "|"-separated: one number for every
# tensor (`in_dims=1`) or one per positional argument ("0,-": `in_dims=(0, None)`, "-" keeps it)
TRANSFORMED_PER_SAMPLE = "per_sample"
TRANSFORMED_UNKNOWN_SIZES = "unknown_sizes"  # `vmap(f, in_dims=<not a literal>)`: sizes not followed
