"""Shared state of one model run: project, knowledge, cause indexes and the frame cache."""
from __future__ import annotations

from collections import defaultdict

from ..catalog import Catalog
from ..index.project import ProjectIndex
from ..knowledge import Knowledge
from ..vocab import EventKind
from .compiling import CompileTimeValues
from .frame_store import Build, FrameStore, StoredFrame
from .types import FrameInfo, FrameKey

TRIGGER_INDEXES = {
    "call": "calls",
    "call_with_tensor_arg": "tensor_arg_calls",
    "call_with_tensor_or_module_arg": "tensor_or_module_arg_calls",
    "tensor_method": "tensor_methods",
    "input_tensor_method": "input_tensor_methods",  # on a tensor the frame was given (a graph input)
    "logger_method": "logger_methods",
    "tensor_attribute_assign": "attribute_assigns",
}


class ModelEnv:
    def __init__(self, project: ProjectIndex, knowledge: Knowledge, catalog: Catalog,
                 flags: frozenset[str] = frozenset(), store: FrameStore | None = None):
        self.project = project
        self.knowledge = knowledge
        self.catalog = catalog
        self.flags = flags  # torch._dynamo.config flags the program turns on
        for attr in TRIGGER_INDEXES.values():
            setattr(self, attr, defaultdict(list))
        self.checks: dict = {}
        for rule in catalog.causes():
            for key, value in rule.trigger.items():
                if key == "check":
                    self.checks[value] = rule
                    continue
                index = getattr(self, TRIGGER_INDEXES[key])
                for name in value:  # type: ignore[attr-defined]  # catalog validated: a list of names
                    index[name].append(rule)
        self.compile_time = CompileTimeValues(project, knowledge.compiling_predicates, knowledge.constant_calls)
        # the dtype of a floating tensor nothing else tells (None: the program changes dtypes)
        self.default_dtype: str | None = knowledge.default_float_dtype
        self._frames: dict[FrameKey, FrameInfo | None] = {}
        self._expression_frames: dict[FrameKey, tuple] = {}
        self._node_memo: dict[tuple, tuple] = {}
        self._store = store if store is not None else FrameStore(limit=0)
        self._building: list[Build] = []  # frames under construction, innermost last
        self._unshared: set[FrameKey] = set()  # under construction, or built from such a frame

    @property
    def hooks(self):
        """Forward hooks registered in the project (found once per project, when first asked)."""
        from .attributes import HookRegistry
        from .callables import Callables

        return self.project.derived("hooks", lambda: HookRegistry(self.project, Callables(self.project, self.knowledge)))

    @property
    def disallowed(self) -> frozenset[str]:
        """Functions the project passes to `torch._dynamo.disallow_in_graph`, and those torch skips."""
        from .attributes import disallowed_functions

        return self.project.derived("disallowed", lambda: disallowed_functions(self.project, self.knowledge)
                                    | self.knowledge.skipped_functions)

    def skips(self, qual: str | None) -> bool:
        """A call Dynamo does not trace: disallowed by the project, or a function torch skips
        (named, or in one of its skipped modules)."""
        if qual is None:
            return False
        module = qual.rpartition(".")[0]
        if qual in self.disallowed or module in self.knowledge.skipped_modules \
                and qual not in self.knowledge.traced_in_skipped_modules:
            return True
        package = module.partition(".")[0]
        unless = self.knowledge.skipped_packages.get(package)
        return unless is not None and not self.flag(unless)

    @property
    def custom_ops(self):
        """Operators the project defines with torch.library.custom_op, and which have a fake."""
        from .custom_ops import custom_ops

        return self.project.derived("custom_ops", lambda: custom_ops(self.project, self.knowledge))

    def node_memo(self, kind: str, node, compute):
        """`compute()` once per node and kind in this run: a function is walked for every
        variant of its frame (tensor arguments, bindings), its facts stay the same. The node
        is kept with the result so a reused id() never answers for another node."""
        key = (kind, id(node))
        hit = self._node_memo.get(key)
        if hit is None or hit[0] is not node:
            hit = self._node_memo[key] = (node, compute())
        return hit[1]

    def function_places(self) -> dict[str, tuple[str, int]]:
        """Where each analysed function is defined (file, line of its def); comprehensions and
        other frames that are not functions of their own (`<listcomp>`) are left out."""
        return {key.qualname: (info.path, info.def_line) for key, info in self._frames.items()
                if info is not None and not info.name.startswith("<")}

    def op_counts(self) -> dict[str, int]:
        """Tensor ops in each analysed function's own body (the most of any analysed variant)."""
        counts: dict[str, int] = {}
        for key, info in self._frames.items():
            if info is not None:
                ops = sum(1 for e in info.events if e.kind == EventKind.OP)
                counts[key.qualname] = max(ops, counts.get(key.qualname, 0))
        return counts

    def flag(self, name: str | None) -> bool:
        return name is not None and name in self.flags

    def register_expression_frame(self, key: FrameKey, source, module) -> None:
        """A frame with no def of its own (a comprehension, a lambda), built on demand."""
        self._expression_frames.setdefault(key, (source, module))
        if self._building:
            self._building[-1].expressions.append(key)

    def register_synthetic(self, info: FrameInfo) -> None:
        self._frames.setdefault(info.key, info)
        if self._building:
            self._building[-1].synthetic.append(info)

    def frame_if_built(self, key: FrameKey) -> FrameInfo | None:
        info = self._frames.get(key)
        if self._building:
            build = self._building[-1]
            build.observed.append((len(build.touched), key, info is not None))
            if info is not None and key in self._unshared:
                self._taint()
        return info

    def building_depth(self) -> int:
        """How many frame builds are under way (one inside another)."""
        return len(self._building)

    def frame(self, key: FrameKey) -> FrameInfo | None:
        """Events of a frame, built once; None for unknown code or while it is being built."""
        if self._building:
            self._building[-1].touched.append(key)
        return self._frame(key)

    def _frame(self, key: FrameKey) -> FrameInfo | None:
        if key in self._frames:
            if key in self._unshared:
                self._taint()
            return self._frames[key]
        stored = self._store.get(self._stored_key(key))
        if stored is not None and self._replay(key, stored):
            return stored.info
        return self._build(key)

    def _stored_key(self, key: FrameKey) -> tuple:
        return key, self.flags, self.default_dtype

    def _taint(self) -> None:
        for build in self._building:
            build.tainted = True

    def _build(self, key: FrameKey) -> FrameInfo | None:
        self._frames[key] = None  # recursion guard: a frame being built calls itself
        self._unshared.add(key)
        build = Build()
        self._building.append(build)
        try:
            with self.project.reads.recording() as reads:
                info = self._built(key)
                # comprehensions and lambdas it registered are built now, while their nodes
                # are this task's: a later task reusing this frame finds them stored too
                for expression in build.expressions:
                    self.frame(expression)
        finally:
            self._building.pop()
        self._frames[key] = info
        if build.tainted:
            self._taint()  # a caller built from this frame depends on the same stack
        else:
            self._unshared.discard(key)
            if info is not None:
                self._store.put(self._stored_key(key), build.stored(info, frozenset(reads)))
        return info

    def _built(self, key: FrameKey) -> FrameInfo | None:
        from .events import FrameBuilder  # events imports this module's users, not the reverse

        if key in self._expression_frames:
            source, module = self._expression_frames[key]
            return FrameBuilder(self, key, source, module, inherited=key.tensor_params).build()
        fn = self.project.function(key.qualname)
        if fn is None:
            return None
        return FrameBuilder(self, key, fn, self.project.modules[fn.module]).build()

    def _replay(self, key: FrameKey, stored: StoredFrame) -> bool:
        """Make a stored frame this task's, as building it would: the frames its build asked
        for become visible in the same order, and what it peeked at must answer as then.
        False (the caller builds it) when the current task would see something else."""
        self._frames[key] = stored.info
        self.project.reads.note_all(stored.reads)
        for info in stored.synthetic:
            self._frames.setdefault(info.key, info)
        for position, child in enumerate(stored.touched):
            if not self._peeks_agree(stored, position):
                return self._forget(key)
            if child in stored.expressions and child not in self._frames and self._stored_key(child) not in self._store:
                return self._forget(key)  # evicted, and its syntax node belongs to an old task
            self._frame(child)  # not a frame the caller asked for: its own touched list says so
            if child in self._unshared:
                return self._forget(key)
        return self._peeks_agree(stored, len(stored.touched)) or self._forget(key)

    def _peeks_agree(self, stored: StoredFrame, position: int) -> bool:
        """Do the frames the build peeked at after `position` frames it asked for answer now
        as they did then?"""
        return all((self._frames.get(peeked) is not None) == was_built and peeked not in self._unshared
                   for at, peeked, was_built in stored.observed if at == position)

    def _forget(self, key: FrameKey) -> bool:
        del self._frames[key]
        return False
