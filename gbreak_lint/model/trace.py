"""Simulate Dynamo over the frames reachable from compile entry points.

One compilation traces a frame (or a resume function: the rest of a frame after a resumed
break) inlining every call, until its first graph break.  The break is then handled by the
frame being compiled: resumed (the breaking call runs as a new top-level frame when the break
is nested), compiled partially up to a checkpoint, or the frame is skipped.  Frames Dynamo
runs eagerly still hand their callees to Dynamo as new top-level frames; a code object is
compiled once (Dynamo's cache).  Measured semantics: ../shared/docs/dynamo-semantics.md.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..diagnostics import ChainLink
from ..vocab import HARD_ERROR, BlockKind, BreakKind, CallMode, CauseCheck, EventKind, Fate, Outcome, StrictReason
from .env import ModelEnv
from .global_state import GRAD_OFF
from .instance_values import reads_instance_values_between, reads_self_attributes, reported_only_attributes
from .resolve import holds_parameters, is_nn_module
from .types import Ctx, Event, FrameInfo, FrameKey
from .values import PASSED_UNKNOWN, Const, Keywords

CHECKPOINT_MIN_OPS = 2  # a partial graph needs >= 2 ops before the try/with block (measured)
MAX_INLINE_DEPTH = 64  # deeper (or recursive) call chains are cut: the break is not predicted
# a run split at a break behind an unknown condition (taken / not taken) is split again inside
# the taken one at most this deep: k such breaks in a row cost O(k) traces, not 2**k
MAX_SPLIT_RUNS = 1
RESUME_RECOMPILES = 2  # compiles of one resume function: its first values, then as symbols
# Calls Dynamo inlines with nested graph breaks allowed (inline_user_function_return with
# allow_nested_graph_breaks=True: user functions, methods, properties, module calls).
NESTING_CALLS = frozenset({CallMode.INLINE, CallMode.COMPREHENSION, CallMode.ATTRIBUTE, CallMode.OPERATOR})
# Breaks met only by a frame compiled on its own, and the reason they give it: inlined, the
# callee's `self` is initialised and what it returns goes to its caller, not through Dynamo's
# output rebuilding.
ALONE_ONLY = {BreakKind.OWN_FRAME: BlockKind.UNINITIALIZED, BreakKind.OUTPUT: BlockKind.OUTPUT}
# Calls whose callee never becomes a top-level frame of its own after a break: checkpointed and
# strict higher-order ops, and the dunders Python calls from a type slot (measured: a break in
# a user `__getattr__` / `__setattr__` is traced once, a property getter's twice).
ATTRIBUTE_CALLS = frozenset({CallMode.ATTRIBUTE, CallMode.ATTRIBUTE_DUNDER})  # code run by reading an attribute
NOT_OWN_FRAME = frozenset({CallMode.CHECKPOINT, CallMode.STRICT_HOP, CallMode.ATTRIBUTE_DUNDER, CallMode.DUNDER})


@dataclass
class SiteRecord:
    rule: str
    gb_code: str | None
    path: str
    event: Event
    frame: FrameInfo
    chain: tuple[ChainLink, ...]
    entry: str
    times_traced: int = 0
    outcomes: set = field(default_factory=set)
    condition: str = ""  # "" once any trace reaches it unconditionally
    conditional_hits: int = 0  # traces of it in runs where an unknown condition holds
    in_split_run: bool = False  # first reached in such a run (its condition assumes that one's)

    @property
    def hits(self) -> int:
        """Traces of it in the run where the unknown conditions do not hold (the usual one),
        or, reached only where one holds, in that run."""
        return self.times_traced or self.conditional_hits


@dataclass(frozen=True)
class FrameOutcome:
    frame: FrameInfo
    outcome: Outcome
    reason: BlockKind
    label: str  # the context manager's name, for "with" / "context_manager"
    break_event: Event  # where in this frame the break surfaced
    site: SiteRecord
    ops_before: int
    block_line: int | None


@dataclass(frozen=True)
class StrictError:
    site: SiteRecord
    entry: str
    reason: StrictReason
    line: int  # line of the strict region (decorator / with) or the compile call


@dataclass(frozen=True)
class _Resume:
    at: int  # the event a resume function starts at
    in_chain: bool  # resumes the chain of a nested graph break (nested_graph_breaks)
    # the break lies behind a condition the source does not decide: where it is not taken, the
    # code after it is traced in the same compilation (compiled, whatever its inputs hold)
    conditional: bool = False


@dataclass(frozen=True)
class _Inlined:
    ops: int
    chain: tuple[tuple[FrameInfo, Event], ...] = ()  # frames below the caller, down to the site
    # for each frame of `chain`, the ops traced (from the inlined call on) by its last
    # checkpoint: before the outermost try/with around its point, else at the point
    checkpoints: tuple[int, ...] = ()

    @property
    def breaks(self) -> bool:
        return bool(self.chain)


REGION_SEP = "\n"  # (qualnames hold "@": `<lambda>@12:4`; never a newline)


def cache_key(key: FrameKey) -> str:
    """Where Dynamo caches a frame's compiled code: on its code object, in the cache of the
    compile call that made it when that one isolates its recompiles (isolate_recompiles=True)."""
    return f"{key.qualname}{REGION_SEP}{key.region}" if key.region else key.qualname


class Tracer:
    def __init__(self, env: ModelEnv, nested_graph_breaks: bool):
        self.env = env
        self.nested = nested_graph_breaks
        self.compiled: dict[str, set[str]] = {}  # code object -> module instances compiled for
        # codes compiled again for a layer input that now needs grad: the new entry serves the rest
        self.regraded: set[str] = set()
        self.replaying: set[FrameKey] = set()  # cached frames whose callees are being run
        self.first_input_grad: dict[str, bool] = {}  # code -> its first compilation's inputs needed grad
        self.regrading = False  # tracing a layer again for an input that needs grad now
        self.worlds: list[str] = []  # the conditions the run being traced assumes
        self.sites: dict[tuple, SiteRecord] = {}
        self.frames: dict[tuple, FrameOutcome] = {}
        self.strict_errors: list[StrictError] = []
        self.relaxations: dict[tuple[str, int], bool] = {}  # error_on_graph_break(False) -> used
        self.reached: set[str] = set()
        self.values_seen: dict[str, set] = {}  # code object -> Python values it was compiled for
        self.dynamic_numbers: set[tuple] = set()  # (code object, values but numbers) recompiled as symbols
        self.observed: dict[str, tuple] = {}  # code object -> values an eager first call recorded
        self.strict_call = False  # the program runs the entry inside error_on_graph_break(True)
        # the compile raised an error Dynamo gives no GB code (a lenient-only break under
        # fullgraph): not reported, but nothing is cached
        self.raised_unreported = False
        self.global_state: tuple[str, ...] = ()  # torch's global state the entry is called under
        # retracing because a tensor argument's size changed: Dynamo guards on a tensor's size
        # only once the trace uses it (inputs are wrapped lazily), so a compilation whose graph
        # before its break is empty is found in the cache instead (measured 2.13)
        self.shapes_only = False
        self.before_reset: set[tuple] = set()  # sites hit before the program's last torch._dynamo.reset()
        self.site_ids: dict[tuple, set[tuple]] = {}  # site -> the compile ids it was met under (_compile_id)
        self.ids_before_reset: dict[tuple, set[tuple]] = {}
        # resume functions inside nested chains compiled so far: (code object, resume point) -> count
        self.chain_resumes: dict[tuple[str, int], int] = {}

    # -- top-level frames ------------------------------------------------------------
    def reset_caches(self, recount: bool = False) -> None:
        """`torch._dynamo.reset()`: every compiled frame is forgotten and compiles again. Dynamo's
        frame counter restarts too, so compiling the same code again repeats the compile ids a
        site was hit under: a site met before the reset is not counted again, unless only
        compiles that raised met it (those count as their own, not under a repeated id).
        `recount`: the compiled code reset the caches itself; the resume function compiled
        after it took the restarted ids, so the next compile of the code is a new one."""
        self.compiled.clear()
        self.values_seen.clear()
        self.observed.clear()
        self.chain_resumes.clear()
        if not recount:
            self.before_reset.update(k for k, site in self.sites.items() if site.outcomes - {HARD_ERROR})
            self.ids_before_reset = {k: set(ids) for k, ids in self.site_ids.items()}

    def compile_entry(self, key: FrameKey, entry: str, fullgraph: bool, strict_call: bool = False) -> None:
        """`strict_call`: the program calls it inside `error_on_graph_break(True)`."""
        self.strict_call = strict_call
        self.global_state = key.global_state  # every frame the call reaches guards on it
        errors = len(self.strict_errors)
        self.raised_unreported = False
        try:
            self.compile_frame(key, (), entry, strict_entry=fullgraph, compiled_function=True)
        finally:
            self.strict_call = False
        if len(self.strict_errors) > errors or self.raised_unreported:  # the compile raised: Dynamo cached nothing
            self.compiled.pop(cache_key(key), None)
            self.values_seen.pop(cache_key(key), None)

    def compile_apart(self, key: FrameKey, entry: str, fullgraph: bool) -> None:
        """`torch._dynamo.export(f)`: a compile of its own backend, so the frames compiled for
        other calls do not serve it (measured 2.13: a break met before is traced again), and
        what it compiles serves no other call; it also drops `f`'s own cache entries before
        and after (eval_frame.export's remove_from_cache): the next call compiles `f` again."""
        compiled = {name: set(seen) for name, seen in self.compiled.items() if name != key.qualname}
        values_seen = {name: set(seen) for name, seen in self.values_seen.items() if name != key.qualname}
        self.compiled.clear()
        self.values_seen.clear()
        try:
            self.compile_entry(key, entry, fullgraph)
        finally:
            self.compiled, self.values_seen = compiled, values_seen

    def observe_entry(self, key: FrameKey) -> None:
        """A call run eagerly under set_stance("eager_then_compile"): Dynamo records its values
        (frame state) without compiling; the first compile makes the numbers that changed since
        symbols (`_first_compile_dynamic`)."""
        self.observed.setdefault(key.qualname, self._guarded_values(key))

    def _first_compile_dynamic(self, key: FrameKey, values: tuple) -> None:
        observed = self.observed.pop(key.qualname, None)
        shape = _without_numbers(values)
        if observed is not None and observed != values and _without_numbers(observed) == shape:
            self.dynamic_numbers.add((key.qualname, shape))

    def compile_frame(self, key: FrameKey, chain: tuple[ChainLink, ...], entry: str,
                      strict_entry: bool = False, compiled_function: bool = False) -> None:
        """`compiled_function`: the function `torch.compile` wrapped, whose code Dynamo always
        compiles (eval_frame's always_optimize_code_objects), tensors or not."""
        code = cache_key(key)  # the code object, in the compile call's own cache when isolated
        seen = self.compiled.get(code)
        values = self._guarded_values(key)
        if seen is None and key.region and self._shared_entry(key, values):
            return  # an isolated compile still finds what plain compiles of the code stored
        if seen is not None and (key.qualname, Outcome.SKIPPED) in self.frames \
                and values not in self.values_seen[code]:
            # a skipped frame's code is marked to run eagerly: other values do not compile it
            self._run_eagerly(key, chain, entry)
            return
        if seen is not None:
            known = any(_same_guards(v, values) for v in self.values_seen[code])
            if key.instance and key.instance not in seen and self._recompiles(key):
                seen.add(key.instance)
                self.values_seen[code].add(values)
                self._regrade(lambda: self._retrace(key, chain, entry, strict_entry, reuse_resumes=known))
            elif known and self.regrading and self._recompiles(key):
                self._retrace(key, chain, entry, strict_entry)  # a sub-module given the layer's input
            elif key.instance and key.instance not in seen and known:
                seen.add(key.instance)  # the frame's code is reused, its resume functions may not be
                self._resumes_for_instance(key, chain, entry, strict_entry)
            elif known:
                self._replay_cached(key, chain, entry)
            elif len(self.values_seen[code]) >= self.env.knowledge.recompile_limit:
                return  # the recompile limit: it runs eagerly from now on, with what it calls
            else:
                # Dynamo guards on the Python values it specialised on: other values recompile
                shapes_only = any(v[:-1] == values[:-1] for v in self.values_seen[code])
                self.values_seen[code].add(values)
                if self._numbers_dynamic(key, values):
                    return
                self.shapes_only = shapes_only
                try:
                    self._retrace(key, chain, entry, strict_entry)
                finally:
                    self.shapes_only = False
            return
        if key.region and any(_without_numbers(v) == _without_numbers(values) for v in self._values_of_code(key.qualname)):
            self.dynamic_numbers.add((key.qualname, _without_numbers(values)))  # sizes that changed: symbols
        self.compiled[code] = {key.instance}
        self.values_seen[code] = {values}
        # the first compilation's input already needs grad: a later layer's does too. The input
        # that changes is the one a layer passes to the next (`x = layer(x, mask)`); what is
        # passed beside it is the same for every layer, and with nothing passed on (`outs.append(
        # head(x))`) no input changes. Only an input known not to need grad (the program's own
        # `torch.randn(...)`) differs from the next layer's; one of unknown origin (an embedding
        # computed upstream, passed through wrappers) most often needs grad already.
        if key.carried is None:  # (no call site told what is passed on: any input needing grad)
            self.first_input_grad[code] = bool(key.tensor_params & key.grad_inputs) \
                or not key.tensor_params & key.plain_inputs
        else:
            changing = key.carried & key.tensor_params
            self.first_input_grad[code] = not changing & key.plain_inputs
        self._first_compile_dynamic(key, values)
        info = self.env.frame(key)
        if info is None:
            return
        if info.is_generator:  # Dynamo does not compile a generator's frame, only its callees
            self._run_eagerly(key, chain, entry)
            return
        if info.eager_only or not (compiled_function or self._has_tensor_inputs(key, info)):
            self._run_eagerly(key, chain, entry)  # not compiled: its callees still reach Dynamo
            return
        self.reached.add(info.qualname)
        self._trace(info, chain, entry, strict_entry)
        if key.instance == "*" and self._recompiles(key):  # a container: a second instance follows
            self._regrade(lambda: self._trace(info, chain, entry, strict_entry, reuse_resumes=True))
        elif key.instance == "*":
            self._resumes_for_instance(key, chain, entry, strict_entry)

    def _regrade(self, retrace) -> None:
        """A layer compiled again for an input that needs grad now: the sub-modules it hands
        that input to, first compiled for one that did not, are compiled again too."""
        outer, self.regrading = self.regrading, True
        try:
            retrace()
        finally:
            self.regrading = outer

    def _replay_cached(self, key: FrameKey, chain, entry: str) -> None:
        """A frame whose code runs from the cache still breaks where its first compilation
        did; the callee holding that break then runs as a frame of its own, which may be new
        code or a closure holding other functions (a wrapper around a wrapper: the inner one's
        cell holds another function, its guards fail)."""
        if self.nested:
            return  # (nested graph breaks resume inside the cached chain: no frame of its own)
        info = self.env.frame(key)
        if info is None or (info.qualname, Outcome.SKIPPED) in self.frames or key in self.replaying:
            return
        for ev in info.events:
            if ev.kind == EventKind.BREAK:
                return
            if ev.kind == EventKind.CALL and ev.target is not None and ev.mode not in NOT_OWN_FRAME \
                    and self._inline(ev, (info.key,)).breaks:
                self.replaying.add(key)
                try:
                    self._compile_callee(ev, chain + (_link(info, ev),), entry)
                finally:
                    self.replaying.discard(key)
                return

    def _values_of_code(self, qualname: str) -> list[tuple]:
        """The values a code object was compiled for, in every cache holding it."""
        return [v for code, seen in self.values_seen.items() if code.partition(REGION_SEP)[0] == qualname for v in seen]

    def _shared_entry(self, key: FrameKey, values: tuple) -> bool:
        """Does a plain (not isolated) compile of the code hold an entry for these values?"""
        seen = self.compiled.get(key.qualname)
        return seen is not None and (not key.instance or key.instance in seen) \
            and any(_same_guards(v, values) for v in self.values_seen[key.qualname])

    def _numbers_dynamic(self, key: FrameKey, values: tuple) -> bool:
        """Automatic dynamic shapes (measured 2.13): a recompile because an int or float
        argument (or a tensor argument's size) changed compiles it as a symbol, which later
        values then reuse; `f(1)`, `f(2)`, `f(3)` compile twice. True when the values differ
        from ones compiled before only in numbers that are already dynamic. A number an `if` decides on (`if n == 0`
        in a recursion) is guarded by value: each value compiles."""
        qualname = key.qualname  # (the sizes seen are the code object's, whichever cache)
        info = self.env.frame(key)
        if info is None or any(name in info.decided_by for name, _ in key.arguments):
            return False
        shape = _without_numbers(values)
        seen = {_without_numbers(v) for v in self._values_of_code(qualname) if v != values}
        if shape not in seen:
            return False
        if (qualname, shape) in self.dynamic_numbers:
            return True
        self.dynamic_numbers.add((qualname, shape))
        return False

    def _guarded_values(self, key: FrameKey) -> tuple:
        """The constants a frame was specialised on (arguments, `self` attributes, mode, the
        closure cells an enclosing call bound, the functions its parameters hold: guarded by
        identity, so `outer(f)` then `outer(disable(f))` compiles `outer` twice)."""
        consts = tuple(kv for kv in key.arguments if isinstance(kv[1], Const))
        fn = self.env.project.function(key.qualname)
        params = {p.name for p in fn.params} if fn is not None else set()
        passed: tuple[tuple[str, object], ...] = tuple(kv for kv in key.bindings if kv[0] in params)
        # a closure cell holding a function is guarded by its code: a wrapper made again around
        # another function (a second `__init_subclass__` wrapping) compiles again
        passed += tuple((name, held.qualname) for name, held in key.bindings if name not in params)
        # the kind of object passed (a context manager, a generator) is guarded by its type
        passed += tuple(kv for kv in key.arguments if isinstance(kv[1], str) and kv[1] != PASSED_UNKNOWN)
        # `self`'s type is guarded where the trace reads off `self`: a base's forward compiled
        # for a subclass compiles again for the base
        runtime = key.self_class or (fn.class_qualname if fn is not None else None) or ""
        runtime = runtime if reads_self_attributes(self.env.project, key.qualname) else ""
        cls = self.env.project.klass(key.self_class or (fn.class_qualname if fn is not None else None)) \
            if key.attributes else None
        unread = reported_only_attributes(self.env.project, cls) if cls is not None else frozenset()
        attributes = tuple(kv for kv in key.attributes if kv[0] not in unread)
        return consts, attributes, key.training, key.cells, passed, self.global_state, runtime, key.shapes

    def _has_tensor_inputs(self, key: FrameKey, info: FrameInfo) -> bool:
        """Dynamo only compiles a frame with tensor-related inputs or a torch module global
        (convert_frame.has_tensor_in_frame); others run eagerly without a trace."""
        if key.tensor_params or info.uses_torch or key.instance or info.closure_tensors:
            return True
        if any(isinstance(v, Const) and isinstance(v.value, Keywords) and v.value.tensors for _, v in key.arguments):
            return True  # `**kwargs` holding a tensor (a dict of tensors counts)
        fn = self.env.project.function(info.qualname)
        owner = key.self_class or (fn.class_qualname if fn is not None else None)
        cls = self.env.project.klass(owner) if owner else None
        # `self` (a comprehension's free variable too) is an nn.Module
        return cls is not None and is_nn_module(self.env.project, self.env.knowledge, cls)

    def _recompiles(self, key: FrameKey) -> bool:
        """A module method compiled for a second instance is compiled again, once per run.

        Measured on 2.13: the first layer of a stack is given a tensor that does not need
        grad (the model's input) and the next ones the output of a layer holding parameters,
        which does: the guard on the input's requires_grad fails once. With grad off, or an
        input that already needs grad, every layer reuses the first compilation.
        """
        code = cache_key(key)
        if code in self.regraded or GRAD_OFF in self.global_state or self.first_input_grad.get(code, False):
            return False
        fn = self.env.project.function(key.qualname)
        owner = key.self_class or (fn.class_qualname if fn else None)
        cls = self.env.project.klass(owner) if fn and owner else None
        handed = fn is not None and owner is None and key.instance == "*"  # a function given each layer
        if not handed and (cls is None or not holds_parameters(self.env.project, self.env.knowledge, cls)):
            return False
        info = self.env.frame(key)
        if info is not None and _breaks_before_reading_inputs(info):
            return False
        self.regraded.add(code)
        return True

    def _retrace(self, key: FrameKey, chain, entry: str, strict_entry: bool, reuse_resumes: bool = False) -> None:
        """A recompilation of a frame seen before (unknown code has no events: nothing to trace)."""
        info = self.env.frame(key)
        if info is not None:
            self._trace(info, chain, entry, strict_entry, reuse_resumes)

    def _trace(self, info: FrameInfo, chain, entry: str, strict_entry: bool, reuse_resumes: bool = False) -> None:
        """`reuse_resumes`: a module's frame compiled again only for another instance holding
        the same values; its resume functions, code objects of their own whose guards do not
        pin the instance, run from the first instance's compilation unless they read a Python
        value of the instance (model.instance_values)."""
        after = self._segment(info, _Resume(0, False), False, chain, entry, strict_entry)
        if reuse_resumes and after is not None:
            after = self._first_recompiled_resume(info, after, inputs_changed=True)
        self._resumes(info, after, chain, entry, strict_entry)

    def _resumes_for_instance(self, key: FrameKey, chain, entry: str, strict_entry: bool) -> None:
        """Another instance runs a module's forward from the code compiled for the first (Dynamo
        no longer specialises on instances): the resume functions after its first break are
        compiled again where they read a Python value of the instance (measured 2.13: layers
        whose sub-module reads `self.sliding` trace the break after it once per value)."""
        info = self.env.frame(key)
        if info is None or (info.qualname, Outcome.SKIPPED) in self.frames:
            return
        first = next((i for i, ev in enumerate(info.events) if ev.kind == EventKind.BREAK), None)
        if first is not None:
            resume = self._first_recompiled_resume(info, _Resume(first + 1, False))
            self._resumes(info, resume, chain, entry, strict_entry)

    def _first_recompiled_resume(self, info: FrameInfo, first: "_Resume",
                                 inputs_changed: bool = False) -> "_Resume | None":
        """For another instance, the first resume function whose guards fail: one whose code up to
        its break reads a Python value of the instance (model.instance_values), or, when the
        frame was compiled again because its input's requires_grad changed (`inputs_changed`),
        one that is given that input; the ones before it, and code after the frame's last break
        (no break to trace again), are reused."""
        resume, start = first, info.events[first.at - 1].line
        for i in range(first.at, len(info.events)):
            ev = info.events[i]
            if ev.kind != EventKind.BREAK:
                continue
            if reads_instance_values_between(self.env.project, info.key, start, ev.line) \
                    or inputs_changed and info.events[resume.at - 1].resume_live_inputs:
                return resume
            resume, start = replace(resume, at=i + 1), ev.line
        return None

    # -- one compilation -------------------------------------------------------------
    @staticmethod
    def _input_here(ev: Event, resume: "_Resume", is_resume: bool) -> bool:
        """Is the value an input-only break needs (`a.unsqueeze_(2)` of a local made earlier,
        a context manager passed in: `input_from` 0) an input of this compilation? Of a resume
        function starting after it was made, or of any compilation of the frame itself when
        the caller passed it; one resuming the chain of a nested break keeps the frame's locals
        as they were traced (measured 2.13, nested_graph_breaks on: no break)."""
        if not is_resume:  # the frame's first compilation: only what it was called with
            return ev.input_from == 0
        return not resume.in_chain and resume.at >= ev.input_from

    def _segment(self, info: FrameInfo, resume: "_Resume", is_resume: bool, chain, entry, strict_entry):
        """Trace events[resume.at:] as one compilation; returns where a resume function starts."""
        ops = 0
        block_ops: dict[tuple, int] = {}
        events = info.events
        start = resume.at
        # Dynamo compiles a resume function only if its inputs hold a tensor (has_tensor_in_frame);
        # one resuming the chain of a nested break is compiled with the frames below it
        if is_resume and not resume.in_chain and not resume.conditional and not events[start - 1].resume_has_tensors:
            self._rest_eagerly(info, start, chain, entry)
            return None
        # past a break behind unknown conditions, in the run where they do not hold: those conditions
        not_taken: tuple[str, ...] = ()
        deferred: list[Event] = []  # reorderable logging calls, made after the graph
        i = start - 1
        while i + 1 < len(events):
            i += 1
            ev = events[i]
            inlined_ops = 0
            checkpoints: tuple[int, ...] = ()
            _enter_blocks(ev, ops, block_ops)
            for c in ev.ctx:
                if c.kind == BlockKind.STRICT and c.strict is False:
                    self.relaxations.setdefault((info.path, c.line), False)
            if ev.kind == EventKind.OP:
                ops += 1
                continue
            if ev.kind == EventKind.CALL and ev.mode == CallMode.EAGER and ev.target is not None:
                self._run_eagerly(ev.target, chain + (_link(info, ev),), entry)
                continue
            if ev.kind == EventKind.CALL and ev.mode == CallMode.WRAPPED:
                self._called_eagerly(info, ev, chain, entry)
                continue
            if ev.kind == EventKind.CALL and ev.mode == CallMode.DEFERRED and ev.target is not None:
                deferred.append(ev)
                continue
            if ev.kind == EventKind.PENDING and not (is_resume and resume.at >= ev.input_from):
                continue  # the callee waits on the stack only in a resume function begun in its arguments
            if is_resume and i == start and events[i - 1].kind == EventKind.PENDING and events[i - 1].span == ev.span:
                continue  # the call that pending break made: done by the time this resume function runs
            if ev.kind == EventKind.BREAK and (self._captured(ev, strict_entry) or ev.inlined_only
                                               or self._empty_graph_skipped(info, ev, ops, strict_entry)
                                               or _behind(ev.condition, not_taken)
                                               or ev.input_from >= 0 and not self._input_here(ev, resume, is_resume)):
                continue
            path: tuple[tuple[FrameInfo, Event], ...] = ((info, ev),)
            if ev.kind == EventKind.CALL:
                inlined = self._inline(ev, (), strict_entry, not_taken)
                inlined_ops = inlined.ops
                checkpoints = tuple(ops + c for c in inlined.checkpoints)
                ops += inlined.ops
                if not inlined.breaks:
                    continue
                path += inlined.chain
            if _caught(path[-1][1], path):  # the exception is handled in the trace: no break
                continue
            if not_taken or len(self.worlds) >= MAX_SPLIT_RUNS or not any(e.condition for _, e in path):
                cached = self.shapes_only and not ops and not _reads_tensors(events, start, path)
                self._deferred_calls(info, deferred, chain, entry, broke=True)
                return self._handle_break(info, i, ev, path, ops - inlined_ops, block_ops, is_resume, chain,
                                          entry, strict_entry, checkpoints, cached=cached)
            # the break lies behind a condition the source does not decide: where it holds, the
            # frame resumes after it (or stops); where it does not, the same compilation goes on.
            # The two are different runs: what one compiled, the other compiles again.
            compiled = self._compiled_state()
            self.worlds.append(_all_of(e.condition for _, e in path))  # what is reached there needs it
            try:
                after = self._handle_break(info, i, ev, path, ops - inlined_ops, block_ops, is_resume, chain,
                                           entry, strict_entry, checkpoints)
                if after is not None:  # compiled like any resume function: if it holds a tensor
                    self._resumes(info, replace(after, conditional=False), chain, entry, strict_entry)
            finally:
                self.worlds.pop()
            self._restore_compiled(compiled)
            not_taken, i, ops = tuple(e.condition for _, e in path if e.condition), i - 1, ops - inlined_ops
        self._deferred_calls(info, deferred, chain, entry, broke=False)
        if not ops and not not_taken and info.only_project_calls and self._strictness(info, (), strict_entry) is None:
            # the return reached with no op traced: Dynamo skips the frame ("No ops traced") and
            # runs its code eagerly, where each call it makes is compiled as a frame of its own
            # (measured 2.13: an exception a callee raises and the frame catches is met there).
            # Only where every call is the project's: a torch call reached some other way
            # (`getattr(torch, name)(x)`, a registry) is an op the count does not see.
            self._rest_eagerly(info, start, chain, entry)
        return None

    def _deferred_calls(self, info: FrameInfo, deferred: list[Event], chain, entry: str, broke: bool) -> None:
        """Reorderable logging calls the compilation made after its graph: each is compiled as a
        frame of its own, but for a compilation that breaks with nested graph breaks on, which
        runs them eagerly (measured 2.13)."""
        for ev in deferred:
            if broke and self.nested:
                self._run_eagerly(ev.target, chain + (_link(info, ev),), entry)  # type: ignore[arg-type]
            else:  # called from the compiled code's epilogue: a frame of its own, not nested
                self.compile_frame(ev.target, chain, entry)  # type: ignore[arg-type]

    def _compiled_state(self) -> tuple:
        return ({k: set(v) for k, v in self.compiled.items()}, {k: set(v) for k, v in self.values_seen.items()},
                set(self.regraded), set(self.dynamic_numbers))

    def _restore_compiled(self, state: tuple) -> None:
        self.compiled, self.values_seen, self.regraded, self.dynamic_numbers = state

    def _nesting_disabled(self, path) -> int:
        """The depth of the chain past which nested graph breaks are off: the first call made
        inside `with disable_nested_graph_breaks():` or into a function it decorates."""
        return next((depth - 1 for depth in range(1, len(path)) if self._enters_nested_off(path[depth - 1][1])),
                    len(path))

    def _enters_nested_off(self, call: Event) -> bool:
        disablers = self.env.knowledge.nested_break_disablers
        if any(c.kind == BlockKind.RESUMABLE_WITH and c.label in disablers for c in call.ctx):
            return True
        fn = self.env.project.function(call.target.qualname) if call.target is not None else None
        return fn is not None and self.env.project.decorated_with(fn.decorators, fn.module, disablers)

    def _compile_callee(self, call: Event, chain, entry: str) -> None:
        """A callee run eagerly after a break, compiled as a frame of its own; called where
        nested graph breaks are disabled, it is compiled with them off (measured 2.13)."""
        nested = self.nested
        self.nested = nested and not self._enters_nested_off(call)
        try:
            self.compile_frame(call.target, chain, entry)  # type: ignore[arg-type]  # a call names its target
        finally:
            self.nested = nested

    def _resume_chain(self, levels, chain, entry: str, strict_entry: bool) -> None:
        """A nested break resumed inside the chain: each inlined frame of it, innermost first,
        goes on after its point in the resume function (measured 2.13: a second break in the
        innermost frame is met in `torch_dynamo_resume_in_<frame>`, resumed); the compiled
        frame's own rest is the caller's next segment."""
        for depth in range(len(levels) - 1, -1, -1):
            frame, point = levels[depth]
            at = frame.events.index(point) + 1
            if at < len(frame.events) and self._new_chain_resume(frame, at):
                self._resumes(frame, _Resume(at, True), chain + tuple(_link(f, e) for f, e in levels[:depth]),
                              entry, strict_entry)

    def _new_chain_resume(self, frame: FrameInfo, at: int) -> bool:
        """A resume function is one code object per frame and point, whatever the constants a
        recursion passes down (`fn(x, lo, mid)`): Dynamo compiles it for the first values, once
        more with them as symbols (automatic dynamic), then reuses it. Without this the model
        would resume every level of a recursive chain again, exponentially."""
        key = (frame.qualname, at)
        self.chain_resumes[key] = self.chain_resumes.get(key, 0) + 1
        return self.chain_resumes[key] <= RESUME_RECOMPILES

    def _chain_eagerly(self, levels, chain, entry: str) -> None:
        """A nested break whose chain holds no tensor after it, in any frame (live locals, values
        waiting on the stack): Dynamo does not compile the chain's resume function
        (has_tensor_in_frame, measured 2.13); every frame's rest runs eagerly."""
        for depth in range(len(levels) - 1, -1, -1):
            frame, point = levels[depth]
            self._rest_eagerly(frame, frame.events.index(point) + 1,
                               chain + tuple(_link(f, e) for f, e in levels[:depth]), entry)

    def _resumes(self, info: FrameInfo, resume: "_Resume | None", chain, entry, strict_entry) -> None:
        while resume is not None:
            in_chain = resume.in_chain
            resume = self._segment(info, resume, True, chain, entry, strict_entry)
            if resume is not None and in_chain:  # a later break of a frame resumed inside the
                resume = replace(resume, in_chain=True)  # chain is nested in the chain too

    def _captured(self, ev: Event, strict_entry: bool) -> bool:
        """A break the config switches remove: fullgraph=True turns some on (e.g.
        capture_scalar_outputs, which captures `.item()`); a break only a switch makes
        (branching on the captured value) is there only with it on."""
        enabled = self.env.knowledge.fullgraph_enables if strict_entry else frozenset()
        if ev.lenient_only and strict_entry:
            self.raised_unreported = True
            return True
        if ev.needs_config:
            return not (self.env.flag(ev.needs_config) or ev.needs_config in enabled)
        rule = self.env.catalog.get(ev.rule) if ev.rule else None
        return rule is not None and rule.unless_config in enabled

    def _inline(self, call: Event, stack: tuple[FrameKey, ...], strict_entry: bool = False,
                not_taken: tuple[str, ...] = ()) -> _Inlined:
        """Inline a call as Dynamo does: the callee's ops, up to its first break.
        `not_taken`: conditions that do not hold in this run; what lies behind them is passed over."""
        if _behind(call.condition, not_taken):
            return _Inlined(0)
        info = self.env.frame(call.target)  # type: ignore[arg-type]  # a call event names its target
        # recursion is cut where a frame calls itself with the same inputs; with other constant
        # arguments (`rec(x, n - 1)`) it is followed, as Dynamo does, down to its base case
        if info is None or info.key in stack or len(stack) > MAX_INLINE_DEPTH:
            return _Inlined(0)
        ops = 0
        block_ops: dict[tuple, int] = {}
        for ev in info.events:
            _enter_blocks(ev, ops, block_ops)
            if ev.kind == EventKind.OP:
                ops += 1
            elif ev.kind == EventKind.BREAK and not self._captured(ev, strict_entry):
                if _caught(ev, ((info, ev),)) or ev.break_kind in ALONE_ONLY or _behind(ev.condition, not_taken) \
                        or ev.input_from >= 0:  # no break before it in this trace: not an input here
                    continue
                return _Inlined(ops, ((info, ev),), (_checkpoint_ops(ev, ops, block_ops),))
            elif ev.kind == EventKind.CALL and ev.mode not in (CallMode.EAGER, CallMode.WRAPPED, CallMode.DEFERRED):
                sub = self._inline(ev, stack + (info.key,), strict_entry, not_taken)
                before, ops = ops, ops + sub.ops
                if sub.breaks and _swallowed(sub.chain[-1][1], ((info, ev),) + sub.chain):
                    continue  # an exception a try on the way handles: the trace goes on after the call
                if sub.breaks:
                    return _Inlined(ops, ((info, ev),) + sub.chain, (_checkpoint_ops(ev, before, block_ops),)
                                    + tuple(before + c for c in sub.checkpoints))
        return _Inlined(ops)

    # -- handling a break ------------------------------------------------------------
    def _handle_break(self, info, i, ev, path, ops, block_ops, is_resume, chain, entry, strict_entry,
                      checkpoints=(), cached: bool = False):
        """`ops`: the ops traced before this frame's break point (a call's own ops not among
        them: a frame that cannot resume at the call is compiled up to the instruction before it);
        `path`: (frame, event) from this frame's break point down to the break site;
        `checkpoints`: the trace's ops at the last checkpoint of each frame of path[1:];
        `cached`: this compilation is a cache hit, its break is not traced again."""
        site_frame, site_event = path[-1]
        site_chain = chain + tuple(_link(f, e) for f, e in path)
        callers = chain + (_link(info, ev),)  # for frames this break hands to Dynamo
        for frame, point in path:  # a break inside error_on_graph_break(False) uses the relaxation
            for c in point.ctx:
                if c.kind == BlockKind.STRICT and c.strict is False:
                    self.relaxations[(frame.path, c.line)] = True
        strict = self._strictness(info, path, strict_entry)
        if site_event.break_kind == BreakKind.ERROR:  # raises whatever the region's strictness
            strict = StrictReason.FAKE_TENSOR
        hard = strict is not None or ev.mode == CallMode.STRICT_HOP
        nested_call = ev.kind == EventKind.CALL
        level = min(_nested_level(path, site_event), self._nesting_disabled(path)) \
            if self.nested and nested_call and not hard else 0
        whole = _checkpoint_depth(path, site_event, level, checkpoints) if self.nested and nested_call \
            and not hard else None
        # an error ends the trace at its first hit, and a resume inside the chain does not meet
        # a while-condition again (measured: the loop's re-test is not traced a second time);
        # a compile that raised leaves no cache entry, so the next attempt has the same compile
        # id: a hard error met again (`outer(f)` then `outer(g)` under fullgraph) counts once
        known = self.sites.get((site_frame.path, site_event.span.line, site_event.gb_code or site_event.rule))
        again = hard and known is not None and HARD_ERROR in known.outcomes
        fate, blame, block_line = self._fate(ev, path[:1], site_event)
        # the loop's re-test is met only by the frame holding the loop, and only when it resumes
        retest = ev is site_event and fate == Fate.RESUMED
        hits = 0 if again or cached else 1 if hard or level or not retest else site_event.hits
        # a checkpoint in a caller of the site's frame: the call its block holds runs eagerly
        # after the partial graph, its callee compiled as a frame of its own, which meets the
        # site once more (measured 2.13: a try, and a user `with`, around the call, the callee's
        # resume function then compiled too; not a break in the block's own `__enter__` or
        # @contextmanager body, which is met once)
        retraced = whole is not None and whole < len(path) - 1 and not cached and not path[whole][1].with_method
        strict_code = self._strict_code(site_event) if hard else None
        site = self._hit(site_frame, site_event, site_chain, entry, hits=hits, new_id=hard, code=strict_code,
                         compile_id=() if is_resume else self._compile_id(info.qualname))
        if hard:
            site.outcomes.add(HARD_ERROR)
            self._outcome_code(site, "strict")
            reason = StrictReason.HIGHER_ORDER_OP if strict is None or ev.mode == CallMode.STRICT_HOP \
                else StrictReason(strict)
            self.strict_errors.append(StrictError(site, entry, reason, ev.line))
            return None
        if level and whole is None:  # resumed inside the chain: frames below that level run eagerly, compiled alone
            site.outcomes.add(Fate.RESUMED)
            point = path[level][1]
            if point.kind == EventKind.CALL and point.mode not in NOT_OWN_FRAME:
                self._compile_callee(point, site_chain[:len(chain) + level + 1], entry)
            # a frame that reached the break by reading an attribute (a property getter) has
            # no resume function at LOAD_ATTR: it and the frames above it finish untraced
            # (measured 2.13: a print, and a call of a breaking function, after it are not met)
            cut = next((d for d in range(level - 1, -1, -1) if path[d][1].kind == EventKind.CALL
                        and path[d][1].mode in ATTRIBUTE_CALLS), None)
            first = 0 if cut is None else cut + 1
            compiled = _compiled_level(path[:level + 1])
            if cut is None and compiled is None:
                self._chain_eagerly(path[:level + 1], chain, entry)
                return None
            if cut is None and compiled:
                self._chain_eagerly(path[:compiled], chain, entry)
                self._resume_chain(path[compiled:level + 1], site_chain[:len(chain) + compiled], entry, strict_entry)
                return None
            # (the getter itself, and the frames it calls, do resume: measured 2.13, a print
            # after the break in the getter is met in its resume function)
            start = 1 if cut is None else first
            self._resume_chain(path[start:level + 1], site_chain[:len(chain) + start], entry, strict_entry)
            return _Resume(i + 1, True) if cut is None else None
        if whole is None and not hard and _unrebuildable(blame, ev):  # the compiled frame itself holds the block
            # nested: every frame down from it is rebuilt and fails; otherwise only this one
            self._reconstruction_failures(path[:-1] if self.nested and nested_call else path[:1], chain, entry)
        if whole is not None:
            # with nested graph breaks, a callee that cannot resume (a try or `with` block,
            # entering an unsupported context manager) restarts the whole trace up to its last
            # checkpoint; the rest of every frame of the chain runs eagerly, and the callee is
            # not compiled again (measured 2.13)
            point = path[whole][1]
            fate, blame, block_line = Fate.UNRESUMABLE, _blocking(point, site_event), None
            if _unrebuildable(blame, point):  # not a break entering the block
                self._reconstruction_failures(path[whole:-1], chain + tuple(_link(f, e) for f, e in path[:whole]), entry)
            if retraced and point.mode not in NOT_OWN_FRAME and point.target is not None:
                self._compile_callee(point, site_chain[:len(chain) + whole + 1], entry)
        # (a @contextmanager object entered by hand: its generator's frame is skipped, yet the
        # break resumes at the call first)
        rebuild = self._rebuild_site(info, ev, callers, entry) if fate == Fate.RESUMED or ev.context_by_hand else None
        if rebuild is not None:  # the resume needs the new object: Dynamo reports it at the call
            site.outcomes.add(Fate.RESUMED)  # the break itself resumes where the method runs as its own frame
            site, (fate, blame, block_line) = rebuild, (Fate.UNRESUMABLE, Ctx(BlockKind.NEW_OBJECT, ev.line),
                                                         _outer_block(ev))
        generator = self._generator_rebuild_site(ev, callers, entry) if fate == Fate.RESUMED else None
        blamed = BlockKind.GENERATOR
        if generator is None and fate == Fate.RESUMED and ev.hands_module_generator:
            generator, blamed = self._module_generator_site(info, ev, callers, entry), BlockKind.NEW_OBJECT
        if generator is not None:  # the generator cannot be rebuilt: the whole frame runs eagerly
            site.outcomes.add(Fate.RESUMED)
            site, (fate, blame, block_line) = generator, (Fate.SKIPPED, Ctx(blamed, ev.line), None)
        if fate == Fate.RESUMED:
            site.outcomes.add(Fate.RESUMED)
            # the callee (or the allow_in_graph function a break names) then runs as its own frame
            if (nested_call or ev.kind == EventKind.BREAK and ev.target is not None) and ev.mode not in NOT_OWN_FRAME:
                self._compile_callee(ev, callers, entry)
            return _Resume(i + 1, False, any(link.condition for link in site_chain))
        before = checkpoints[whole - 1] if whole is not None else \
            block_ops.get(block_line, ops) if block_line is not None else ops
        if fate == Fate.UNRESUMABLE and before >= CHECKPOINT_MIN_OPS:
            fate = Fate.PARTIAL
        else:
            fate = Fate.SKIPPED if fate != Fate.PARTIAL else fate
        outcome = Outcome.of(fate, is_resume)
        site.outcomes.add(outcome)
        if fate == Fate.PARTIAL:
            self._outcome_code(site, "partial")
        if blame.kind == BlockKind.GENERATOR:
            self._generator_not_rebuilt(info, ev, chain, entry, outcome)
        if ev.context_by_hand and fate == Fate.PARTIAL:  # the partial graph cannot rebuild the object either
            self._context_not_rebuilt(info, site, chain, entry)
        seen = self.frames.get((info.qualname, outcome))
        # (Dynamo reports no frame of torch's own code; unconditional outcomes win)
        if not info.torch_frame and (seen is None or (seen.site.condition and not site.condition)):
            self.frames[(info.qualname, outcome)] = FrameOutcome(
                info, outcome, blame.kind, blame.label, ev, site, before, block_line[1] if block_line else None)
        first_eager = 0 if fate == Fate.SKIPPED and not is_resume else i + 1 if whole is not None else i
        because = _all_of(link.condition for link in site_chain)
        self._rest_eagerly(info, first_eager, chain, entry, because)
        return None

    def _reconstruction_failures(self, levels, chain, entry: str) -> None:
        """A nested break under an unsupported `with` of an outer frame: Dynamo first tries
        the nested graph break and cannot rebuild the frames up to the one holding the block,
        "Reconstruction failure" (GB0092) at each one's call (measured 2.13; under a `try`
        it does not try)."""
        rule = self.env.checks.get(CauseCheck.NESTED_RECONSTRUCTION)
        if rule is None:
            return
        for frame, call in levels:
            event = replace(call, kind=EventKind.BREAK, rule=rule.code, gb_code=rule.gb_code,
                            break_kind=BreakKind.RESUMABLE, target=None, mode=CallMode.INLINE, hits=1)
            chain = chain + (_link(frame, call),)
            self._hit(frame, event, chain, entry, hits=1).outcomes.add(Fate.RESUMED)

    def _outcome_code(self, site: SiteRecord, outcome: str) -> None:
        """A break whose Dynamo code depends on how it ends (step_unsupported: "empty
        checkpoint" when the frame is skipped, another code when compiled partially)."""
        rule = self.env.catalog.get(site.rule)
        if rule is not None and outcome in rule.gb_code_when:
            site.gb_code = rule.gb_code_when[outcome]

    def _generator_not_rebuilt(self, info: FrameInfo, call: Event, chain, entry: str, outcome) -> None:
        """A break inside a generator expression: Dynamo tries to rebuild the generator to
        break at its consumer instead, and cannot (measured: GB0091 "Read uninitialized cell"
        when it reads the frame's variables, GB8335 "Generator reconstruction with mutations"
        when not); a generator function is not rebuilt and reports nothing more."""
        rule = self.env.checks.get(CauseCheck.GENERATOR_REBUILD)
        if rule is None or call.target is None or ".<genexpr>@" not in call.target.qualname:
            return
        code = rule.gb_code_when.get("closes_over", rule.gb_code) if call.closes_over else rule.gb_code
        event = replace(call, kind=EventKind.BREAK, rule=rule.code, gb_code=code,
                        break_kind=BreakKind.UNRESUMABLE, target=None, mode=CallMode.INLINE, hits=1)
        self._hit(info, event, chain + (_link(info, event),), entry, event.hits).outcomes.add(outcome)

    def _rest_eagerly(self, info: FrameInfo, start: int, chain, entry: str, because: str = "") -> None:
        """events[start:] run eagerly: each call they make is compiled as a frame of its own."""
        for later in info.events[start:]:
            if later.kind != EventKind.CALL or later.target is None:
                continue
            if later.mode == CallMode.EAGER:  # disable(recursive=False): not compiled, its callees are
                self._run_eagerly(later.target, chain + (_link(info, later),), entry)
            elif later.mode not in NOT_OWN_FRAME:
                self._called_eagerly(info, later, chain, entry, because)

    def _called_eagerly(self, caller: FrameInfo, call: Event, chain, entry: str, because: str = "") -> None:
        """A call made by code running eagerly: Dynamo compiles the callee as a frame of its own.
        A comprehension then gets the real iterator CPython made; Dynamo wraps only tuple and
        range iterators, so over a list or dict it breaks at once (GB4347 "Missing
        tp_iternext") and runs the comprehension eagerly. (A comprehension Dynamo calls when
        it resumes gets an iterator Dynamo rebuilt as a tuple one: no break.)
        `because`: the conditions of the break that made the caller run eagerly."""
        link = _link(caller, call)
        callers = chain + (replace(link, condition=_all_of((because, link.condition))),)
        info = self.env.frame(call.target) if call.mode == CallMode.COMPREHENSION and call.target else None
        rule = self.env.checks.get(CauseCheck.EAGER_COMPREHENSION)
        if info is None or not info.unwrappable_iterator or rule is None \
                or not self._has_tensor_inputs(info.key, info):
            self.compile_frame(call.target, callers, entry)  # type: ignore[arg-type]  # a call names its target
            return
        if info.qualname in self.compiled:  # a skipped code object is not compiled again
            return
        self.compiled[info.qualname] = {info.key.instance}
        self.values_seen[info.qualname] = {self._guarded_values(info.key)}
        event = replace(call, kind=EventKind.BREAK, rule=rule.code, gb_code=rule.gb_code, ctx=(),
                        break_kind=BreakKind.UNRESUMABLE, target=None, mode=CallMode.INLINE, hits=1)
        site = self._hit(info, event, callers, entry, event.hits)
        site.outcomes.add(Outcome.SKIPPED)
        self.frames.setdefault((info.qualname, Outcome.SKIPPED), FrameOutcome(
            info, Outcome.SKIPPED, BlockKind.ITERATOR, "", event, site, 0, None))
        self._run_eagerly(info.key, callers, entry)

    def _rebuild_site(self, info, ev: Event, callers, entry: str) -> SiteRecord | None:
        """Without nested graph breaks, a break inside a method of an object this frame created
        makes Dynamo resume at the call, with the bound method of the new object on the stack;
        a local holding such a method and read after the break is passed to the resume function
        (nested or not). Dynamo cannot rebuild it ("Reconstruction failure"): the frame runs eagerly.
        So too at `ctx.__enter__()` by hand of a @contextmanager object whose generator breaks."""
        handled_here = not self.nested or ev.mode in (CallMode.NO_NESTING, CallMode.COMPILE_WRAPPER)  # no nesting through it
        rule = self.env.checks.get(CauseCheck.NEW_OBJECT_METHOD) if ev.new_receiver and handled_here else None
        if rule is None and ev.rebuilds_local:  # held in a live local: with nested breaks too
            rule = self.env.checks.get(CauseCheck(ev.rebuilds_local))
        if ev.context_by_hand:
            rule = self.env.checks.get(CauseCheck.CONTEXT_BY_HAND)
        if rule is None or self.env.flag(rule.unless_config):
            return None
        event = replace(ev, kind=EventKind.BREAK, rule=rule.code, gb_code=rule.gb_code,
                        break_kind=BreakKind.UNRESUMABLE, target=None, hits=1)
        return self._hit(info, event, callers, entry, event.hits)

    def _context_not_rebuilt(self, info: FrameInfo, site: SiteRecord, chain, entry: str) -> None:
        rule = self.env.catalog.get(site.rule)
        code = rule.gb_code_when.get("partial_rebuild") if rule is not None else None
        if code is None:
            return
        event = replace(site.event, gb_code=code)
        self._hit(info, event, chain + (_link(info, event),), entry, 1).outcomes.add(Outcome.SKIPPED)

    def _module_generator_site(self, info: FrameInfo, ev: Event, callers, entry: str) -> SiteRecord | None:
        """The call breaking at `ev` is handed `model.parameters()`: rebuilding the generator
        for the eager call fails (GB8335), the break does not resume."""
        rule = self.env.checks.get(CauseCheck.MODULE_GENERATOR_HANDED)
        if rule is None or self.env.flag(rule.unless_config):
            return None
        event = replace(ev, kind=EventKind.BREAK, rule=rule.code, gb_code=rule.gb_code, detail=ev.hands_module_generator,
                        break_kind=BreakKind.UNRESUMABLE, target=None, hits=1)
        return self._hit(info, event, callers, entry, event.hits)

    def _generator_rebuild_site(self, ev: Event, callers, entry: str) -> SiteRecord | None:
        """A generator held in a live local is rebuilt for the resume function by tracing the
        rest of its body: the first break there (a write to state made elsewhere, GB8335) stops it."""
        gen = self.env.frame(ev.rebuilds_generator) if ev.rebuilds_generator is not None else None
        found = next((e for e in gen.events if e.kind == EventKind.BREAK), None) if gen is not None else None
        if gen is None or found is None:
            return None
        return self._hit(gen, found, callers, entry, 1)

    def _fate(self, ev: Event, frames, site_event: Event):
        """("resumed" | "skipped" | "unresumable", the block to blame, outermost block) of a
        break handled at this frame's break point `ev` (callees are compiled again on their own).
        """
        if site_event.break_kind == BreakKind.EXCEPTION:  # "Observed exception": no resume point
            return Fate.SKIPPED, Ctx(BlockKind.EXCEPTION, site_event.line, site_event.detail), None
        # A break under a try or an unsupported `with`, or entering an unsupported context
        # manager, never reaches Dynamo's back-edge check (should_compile_partial_graph fails
        # first, or the break is raised outside break_graph_if_unsupported): the frame restarts
        # from its last checkpoint even inside a loop (measured: partial, not skipped).
        for _frame, point in frames:
            blocks = _try_with_blocks(point)
            if blocks:
                return Fate.UNRESUMABLE, blocks[-1], _outer_block(point)
        if site_event.break_kind in ALONE_ONLY and ev is site_event:
            return Fate.UNRESUMABLE, Ctx(ALONE_ONLY[site_event.break_kind], ev.line), _outer_block(ev)
        if site_event.break_kind == BreakKind.UNRESUMABLE and ev is site_event:
            return Fate.UNRESUMABLE, Ctx(BlockKind.CONTEXT_MANAGER, ev.line, site_event.detail), _outer_block(ev)
        if site_event.break_kind == BreakKind.INSTRUCTION and ev is site_event:
            return Fate.UNRESUMABLE, Ctx(BlockKind.INSTRUCTION, ev.line, site_event.detail), _outer_block(ev)
        for _frame, point in frames:
            if any(c.kind == BlockKind.LOOP for c in point.ctx) and not point.loop_escapes:
                return Fate.SKIPPED, Ctx(BlockKind.LOOP, point.line), None
        if site_event.break_kind == BreakKind.SKIP_FRAME and ev is site_event:
            return Fate.SKIPPED, Ctx(BlockKind.SKIP_FRAME, ev.line), None
        if ev.mode == CallMode.GENERATOR:
            return Fate.SKIPPED, Ctx(BlockKind.GENERATOR, ev.line), None
        if ev.mode in ATTRIBUTE_CALLS:  # a break under LOAD_ATTR cannot resume
            return Fate.UNRESUMABLE, Ctx(BlockKind.ATTRIBUTE, ev.line), _outer_block(ev)
        if ev.mode == CallMode.OPERATOR and ev.target is not None:  # nor one under BINARY_OP
            method = ".".join(ev.target.qualname.split(".")[-2:])
            return Fate.UNRESUMABLE, Ctx(BlockKind.OPERATOR, ev.line, method), _outer_block(ev)
        return Fate.RESUMED, None, None

    def _empty_graph_skipped(self, info: FrameInfo, ev: Event, ops: int, strict_entry: bool) -> bool:
        """A frame that reaches its return having traced no op is skipped there (SkipFrame, "No
        ops traced"), before its outputs are rebuilt, unless fullgraph / error_on_graph_break
        is on (symbolic_convert._return): an output it cannot rebuild then is no break."""
        return ev.break_kind == BreakKind.OUTPUT and not ops and self._strictness(info, ((info, ev),), strict_entry) is None

    def _strictness(self, info, path, strict_entry) -> str | None:
        """Why a break here raises instead of breaking, or None."""
        if strict_entry or info.fullgraph_alone:
            return StrictReason.FULLGRAPH
        strict = info.strict if info.strict is not None else self.strict_call
        for frame, point in path:
            if frame is not info and frame.strict is not None:
                strict = frame.strict
            for c in point.ctx:
                if c.kind == BlockKind.STRICT:
                    strict = c.strict
        return StrictReason.ERROR_ON_GRAPH_BREAK if strict else None

    def _run_eagerly(self, key: FrameKey, chain, entry) -> None:
        """A torch.compiler.disable(recursive=False) function: its callees are compiled."""
        info = self.env.frame(key)
        if info is None:
            return
        for ev in info.events:
            if ev.kind == EventKind.CALL and ev.target is not None:
                self._called_eagerly(info, ev, chain, entry)

    def _strict_code(self, ev: Event) -> str | None:
        """The code a break reports when it raises, if its rule has one of its own
        (`step_unsupported`: GB0284 raised, GB4636 when the frame is compiled partially)."""
        rule = self.env.catalog.get(ev.rule) if ev.rule else None
        return rule.gb_code_when.get("strict") if rule is not None else None

    def _compile_id(self, qualname: str) -> tuple[tuple, ...]:
        """How Dynamo numbers the compilation of a frame running now after a reset: the frame
        counter's place of its code object and how many times it was compiled before. The model
        traces one entry's calls at a time, so the place across code objects is not certain:
        both the place seen here and the code object itself stand for it (either matching an
        id a site was met under before the reset is the same id)."""
        if qualname not in self.values_seen:
            return ()
        count = len(self.values_seen[qualname]) - 1
        return ("code", qualname, count), ("frame", list(self.compiled).index(qualname), count)

    def _hit(self, frame: FrameInfo, ev: Event, chain, entry: str, hits: int, new_id: bool = False,
             code: str | None = None, compile_id: tuple[tuple, ...] = ()) -> SiteRecord:
        """`new_id`: a compile that raises is numbered anew even when it repeats one made before
        a reset (measured 2.13: a break resumed, then after the reset an error there, counts 2).
        `compile_id`: the id of the frame's compilation meeting the site, when known: after a
        reset the site counts again under an id it was not met under before (measured 2.13: met
        by a recompilation, then after the reset by the first compilation, it counts 2).
        `code`: the GB code this hit reports, when not the event's own."""
        # Dynamo names a break site by line and break type: two breaks of one kind on one
        # line (`float(a.mean()), float(a.std())`) are one site hit by successive compilations
        # (and a break that raised under another code is another site).
        key = (frame.path, ev.span.line, code or ev.gb_code or ev.rule)
        condition = _all_of([*self.worlds, *(link.condition for link in chain)])
        site = self.sites.get(key)
        if site is None:
            site = self.sites[key] = SiteRecord(ev.rule, ev.gb_code, frame.path, ev, frame, chain, entry,  # type: ignore[arg-type]
                                                condition=condition, in_split_run=bool(self.worlds))
        elif site.condition and (not condition or site.in_split_run and not self.worlds):
            # reached unconditionally as well, or in the usual run where the first reach was in
            # a run assuming a condition (whose own condition may contradict it): by this chain
            site.condition, site.chain, site.entry, site.in_split_run = condition, chain, entry, False
        seen_ids = self.ids_before_reset.get(key, set())
        self.site_ids.setdefault(key, set()).update(compile_id)
        if key in self.before_reset and not new_id and (not compile_id or seen_ids.intersection(compile_id)):
            return site
        if self.worlds:  # counted only if no run without the condition reaches it (see hits)
            site.conditional_hits += hits
        else:
            site.times_traced += hits
        return site


def _behind(condition: str, not_taken: tuple[str, ...]) -> bool:
    """In the run past a break behind unknown conditions where they do not hold (`not_taken`),
    whether an event lies behind an `if` test that run does not take: the usual run takes no
    branch on an unknown value (as `guards_not_taken` assumes of guards), only `else` sides
    (`not (...)`)."""
    return bool(not_taken) and any(not (c.startswith("not (") and c.endswith(")")) for c in _components(condition))


def _components(condition: str) -> list[str]:
    """A chain of conditions split at the ` and ` that joins them (not inside parentheses)."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(condition):
        ch = condition[i]
        depth += ch in "([{"
        depth -= ch in ")]}"
        if depth == 0 and condition.startswith(" and ", i):
            parts.append(condition[start:i])
            start = i = i + 5
            continue
        i += 1
    tail = condition[start:]
    return [p for p in parts + [tail] if p]


def _all_of(conditions) -> str:
    """Conditions joined with `and`, each once (a chain repeats its callers' conditions).
    Whole conditions, not split at " and ": that would cut `not (a and b)` apart."""
    return " and ".join(dict.fromkeys(c for c in conditions if c))


def _reads_tensors(events, start: int, path) -> bool:
    """Did this compilation read a tensor before its break (`f(x)` passing it, `x.shape`, `[x]`)?
    Reading wraps it, which guards its sizes: with other sizes the compilation is not reused
    even with no op traced (measured 2.13; a break before any read is reused)."""
    before = events[start - 1].tensor_reads if start > 0 else 0
    return path[0][1].tensor_reads > before or any(point.tensor_reads for _frame, point in path[1:])


def _nested_level(path, site_event: Event) -> int:
    """With nested graph breaks, the depth of the chain at which Dynamo handles a break.

    Dynamo tries the innermost frame first and moves to its caller while a frame cannot
    resume: a back-edge after its point in it or any frame above it (a loop), a try or an
    unsupported `with` block, or a call that does not allow nested breaks (a constructor's
    `__init__`, a generator; symbolic_convert.break_graph_if_unsupported and
    InliningInstructionTranslator.should_compile_partial_graph).  0 is the compiled frame
    itself, where the break is handled as without nested breaks.  Measured on 2.13: plain and
    decorated functions, methods, properties, `__call__`, partials, lambdas, closures and
    module calls nest; constructors and the calls inside a hooked module's `_call_impl` do not.
    """
    if site_event.break_kind == BreakKind.UNRESUMABLE:
        return 0  # entering an unsupported context manager is not a nested break at any depth
    if any(point.mode == CallMode.COMPILE_WRAPPER for _frame, point in path):
        return 0  # a torch.compile'd function's break nests through no frame of its chain
    level = 0
    for depth in range(1, len(path)):
        call = path[depth - 1][1]
        _frame, point = path[depth]
        if not (_nests(call) and _resumable(call) and _resumable(point)):
            break
        if point is site_event and site_event.break_kind != BreakKind.RESUMABLE:
            break
        level = depth
    return level


def _checkpoint_depth(path, site_event: Event, level: int, checkpoints) -> int | None:
    """With nested graph breaks, the frame of the chain (its depth) whose last checkpoint
    Dynamo compiles up to, or None.

    A frame below `level` that cannot resume because its point is inside a try or `with`
    block (or enters an unsupported context manager) looks for a checkpoint of its own
    (InstructionTranslatorBase.step): one exists when every frame above it could compile a
    partial graph (should_compile_partial_graph: nesting calls, no try/with) and the trace
    held >= 2 ops before its block.  A frame without one passes the break to its caller
    (a loop never checkpoints: its break skips the frame; inline_call_ clears that)."""
    for depth in range(len(path) - 1, level, -1):
        if not all(_nests(call) for _frame, call in path[:depth]):
            continue
        if any(_in_block(point) for _frame, point in path[:depth]):
            continue
        point = path[depth][1]
        # an unsupported context manager, or an instruction Dynamo cannot resume after
        # (step_unsupported; measured 2.13: GB4636, compiled up to the checkpoint)
        unresumable = (BreakKind.UNRESUMABLE, BreakKind.INSTRUCTION)
        blocked = _in_block(point) or point is site_event and site_event.break_kind in unresumable
        raises_here = point is not site_event or site_event.break_kind in (BreakKind.RESUMABLE, *unresumable)
        if blocked and raises_here and checkpoints[depth - 1] >= CHECKPOINT_MIN_OPS:
            return depth
    return None


def _try_with_blocks(point: Event) -> list[Ctx]:
    """The try and (unsupported) `with` blocks around an event, outermost first."""
    return [c for c in point.ctx if c.kind in (BlockKind.TRY, BlockKind.WITH)]


def _in_block(point: Event) -> bool:
    return bool(_try_with_blocks(point))


def _unrebuildable(blame: Ctx | None, point: Event) -> bool:
    """A break under a `with` Dynamo cannot rebuild for the resume function (not one in the
    context manager's own `__enter__`/`__exit__`)."""
    return blame is not None and blame.kind == BlockKind.WITH and blame.unrebuildable and not point.with_method


def _blocking(point: Event, site_event: Event) -> Ctx:
    """The block (or the context manager entered) that stops a frame from resuming."""
    blocks = _try_with_blocks(point)
    return blocks[-1] if blocks else Ctx(BlockKind.CONTEXT_MANAGER, point.line, site_event.detail)


def _enter_blocks(ev: Event, ops: int, block_ops: dict) -> None:
    """Record the ops traced when each try/with block around `ev` was entered."""
    for c in ev.ctx:
        if c.kind != BlockKind.LOOP:
            block_ops.setdefault((c.kind, c.line), ops)


def _checkpoint_ops(ev: Event, ops: int, block_ops: dict) -> int:
    """The ops traced by a frame's last checkpoint before `ev`: before its outermost try/with."""
    outer = _outer_block(ev)
    return ops if outer is None else block_ops.get(outer, ops)


def _caught(site_event: Event, path) -> bool:
    """An exception raised at the site meets a try of a frame on the way up (a handler may
    catch it; Dynamo traces exception handling inside the frames it inlines)."""
    return site_event.break_kind == BreakKind.EXCEPTION and any(
        c.kind == BlockKind.TRY or c.catches for _frame, point in path for c in point.ctx)


def _swallowed(site_event: Event, path) -> bool:
    """An exception raised at the site meets a try whose handler takes it (any exception, or
    its class by name) and lets the code after it run (neither re-raising nor returning)."""
    raised = site_event.detail.rsplit(".", 1)[-1]
    return site_event.break_kind == BreakKind.EXCEPTION and any(
        c.kind == BlockKind.TRY and ("*" in c.swallows or raised in c.swallows) for _frame, point in path for c in point.ctx)


def _nests(call: Event) -> bool:
    if call.mode not in NESTING_CALLS:
        return False
    return call.target is None or not call.target.qualname.endswith((".__init__", ".__new__"))  # constructors do not nest


def _resumable(point: Event) -> bool:
    if point.kind == EventKind.CALL and point.mode == CallMode.GENERATOR:
        return False  # stepping a generator: its frame cannot hold a nested break (measured 2.13)
    for c in point.ctx:
        if c.kind == BlockKind.LOOP and not point.loop_escapes:
            return False
        if c.kind in (BlockKind.TRY, BlockKind.WITH):
            return False
    return True


def _link(frame: FrameInfo, ev: Event) -> ChainLink:
    return ChainLink(frame.path, ev.line, frame.qualname, ev.condition)


def _outer_block(ev: Event) -> tuple[str, int] | None:
    """The outermost try/with around an event: Dynamo's checkpoint must lie before it."""
    outer = next((c for c in ev.ctx if c.kind != BlockKind.LOOP), None)
    return (outer.kind, outer.line) if outer else None


def _same_guards(seen: tuple, values: tuple) -> bool:
    """Guarded values that pass the guards of `seen`: the same, but for tensor sizes known in
    only one of them (a size the source does not tell is not a difference)."""
    if seen[:-1] != values[:-1]:
        return False
    before, now = dict(seen[-1]), dict(values[-1])
    return all(before[name] == now[name] for name in before.keys() & now.keys())


def _without_numbers(values: tuple) -> tuple:
    """Guarded values with int and float arguments and the sizes of tensor arguments blanked
    (bools, ranks and the rest kept): a tensor of another shape recompiles once, with the
    sizes that changed as symbols (automatic dynamic shapes, measured 2.13)."""
    consts, *rest, shapes = values
    return (tuple((name, "<number>") if isinstance(c.value, (int, float)) and not isinstance(c.value, bool)
                  else (name, c) for name, c in consts), *rest, tuple((name, len(s)) for name, s in shapes))


def _compiled_level(levels) -> int | None:
    """The outermost level of a nested break's chain whose resume function Dynamo compiles
    (has_tensor_in_frame): the compiled frame's resume is handed every level's live values, so a
    tensor live anywhere compiles the whole chain; else each level's resume runs eagerly until
    one whose own code names torch is called, compiled from there down (measured 2.13)."""
    if any(p.resume_live_tensors or p.condition for _f, p in levels):
        return 0
    return next((d for d, (_f, p) in enumerate(levels) if p.resume_has_tensors), None)


def _breaks_before_reading_inputs(info: FrameInfo) -> bool:
    """Is the frame's one break its first event, before any statement reading a tensor
    parameter (`print("layer")` first)? Its first graph then guards nothing about the input:
    another instance given an input that needs grad runs the cached code (measured 2.13: an
    A, B, A stack breaks twice in A, not three times). A later break lies in a resume function
    that does read the input, and is compiled again (not modelled apart: such a frame counts
    as recompiled)."""
    breaks = [e for e in info.events if e.kind is EventKind.BREAK]
    first = info.events[0] if info.events else None
    return len(breaks) == 1 and first is breaks[0] and (
        not info.first_input_line or first.span.line < info.first_input_line)
