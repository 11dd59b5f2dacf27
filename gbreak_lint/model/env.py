"""Shared state of one model run: project, knowledge, cause indexes and the frame cache."""
from __future__ import annotations

from collections import defaultdict

from ..catalog import Catalog
from ..index.project import ProjectIndex
from ..knowledge import Knowledge
from ..vocab import EventKind
from .compiling import CompileTimeValues
from .types import FrameInfo, FrameKey

TRIGGER_INDEXES = {
    "call": "calls",
    "call_with_tensor_arg": "tensor_arg_calls",
    "call_with_tensor_or_module_arg": "tensor_or_module_arg_calls",
    "tensor_method": "tensor_methods",
    "logger_method": "logger_methods",
    "tensor_attribute_assign": "attribute_assigns",
}


class ModelEnv:
    def __init__(self, project: ProjectIndex, knowledge: Knowledge, catalog: Catalog,
                 flags: frozenset[str] = frozenset()):
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
        self.compile_time = CompileTimeValues(project, knowledge.compiling_predicates)
        # the dtype of a floating tensor nothing else tells (None: the program changes dtypes)
        self.default_dtype: str | None = knowledge.default_float_dtype
        self._frames: dict[FrameKey, FrameInfo | None] = {}
        self._expression_frames: dict[FrameKey, tuple] = {}
        self._node_memo: dict[tuple, tuple] = {}

    @property
    def hooks(self):
        """Forward hooks registered in the project (found once per project, when first asked)."""
        from .attributes import HookRegistry
        from .callables import Callables

        return self.project.derived("hooks", lambda: HookRegistry(self.project, Callables(self.project, self.knowledge)))

    @property
    def disallowed(self) -> frozenset[str]:
        """Functions the project passes to `torch._dynamo.disallow_in_graph` (module level)."""
        from .attributes import disallowed_functions

        return self.project.derived("disallowed", lambda: disallowed_functions(self.project, self.knowledge))

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

    def register_synthetic(self, info: FrameInfo) -> None:
        self._frames.setdefault(info.key, info)

    def frame_if_built(self, key: FrameKey) -> FrameInfo | None:
        return self._frames.get(key)

    def frame(self, key: FrameKey) -> FrameInfo | None:
        """Events of a frame, built once; None for unknown code or while it is being built."""
        if key in self._frames:
            return self._frames[key]
        from .events import FrameBuilder  # events imports this module's users, not the reverse

        self._frames[key] = None  # recursion guard: a frame being built calls itself
        if key in self._expression_frames:
            source, module = self._expression_frames[key]
            info = FrameBuilder(self, key, source, module, inherited=key.tensor_params).build()
        else:
            fn = self.project.function(key.qualname)
            if fn is None:
                return None
            info = FrameBuilder(self, key, fn, self.project.modules[fn.module]).build()
        self._frames[key] = info
        return info
