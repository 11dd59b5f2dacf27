"""The Dynamo model's output: break sites, frame fates and strict-region errors per program."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Mapping

import libcst as cst

from ..catalog import Catalog
from ..diagnostics import ChainLink, FileError, Span
from ..index import internal_error
from ..index.entries import EXPORT_HOW, SEQUENTIAL, ConfigSet, EntryPoint, WrappedCompile, entry_function
from ..index.project import ProjectIndex
from ..index.symbols import FunctionInfo
from ..knowledge import Knowledge
from ..vocab import ASSUMED_ENTRY, NAMED_ENTRY, BlockKind, Outcome, StrictReason
from .env import ModelEnv
from .frame_store import FrameStore
from .placement import PlacementIssue, placement_issues
from .compiled_lambda import compiled_lambda
from .compiled_sequential import sequential_frame
from .entry_values import entry_variants, first_input_plain
from .trace import FrameOutcome, SiteRecord, Tracer
from .types import FrameKey

# Annotations of values that are never tensors: a parameter annotated with one of these (or a
# union / Optional / subscript of them: `dict[str, Any] | None`) is not a tensor input.
NON_TENSOR_TYPES = frozenset({
    "int", "float", "bool", "str", "bytes", "list", "dict", "tuple", "set", "frozenset", "None",
    "List", "Dict", "Tuple", "Set", "Sequence", "Mapping", "Iterable", "Callable", "Optional",
    "torch.dtype", "torch.device", "dtype", "device",
})


@dataclass(frozen=True)
class Site:
    rule: str
    gb_code: str | None
    path: str
    span: Span
    function: str  # qualname of the function holding the site
    frame_name: str
    times_traced: int
    chain: tuple[ChainLink, ...]
    entry: str
    outcomes: frozenset[str]
    detail: str = ""
    condition: str = ""  # the unknown conditions it lies behind ("" when every trace reaches it)


@dataclass(frozen=True)
class Frame:
    path: str
    qualname: str
    name: str
    def_line: int
    outcome: Outcome
    reason: BlockKind
    label: str
    break_line: int
    break_span: Span
    block_line: int | None
    ops_before: int
    site: Site


@dataclass(frozen=True)
class StrictFailure:
    site: Site
    entry: str
    reason: StrictReason
    line: int


@dataclass(frozen=True)
class FrameRefData:
    path: str
    qualname: str
    name: str
    def_line: int
    entry_line: int


@dataclass(frozen=True)
class FunctionStat:
    qualname: str
    path: str
    def_line: int
    breaks: int  # distinct break sites in the function itself
    ops: int  # tensor ops Dynamo would trace in it
    is_entry: bool


@dataclass(frozen=True)
class Prediction:
    entries: tuple[EntryPoint, ...]
    sites: tuple[Site, ...]
    frames: tuple[Frame, ...]
    strict_failures: tuple[StrictFailure, ...]
    nested_graph_breaks: Mapping[str, bool]  # entry function -> effective setting
    reached: frozenset[str]  # qualnames of functions compiled as frames
    errors: tuple[FileError, ...] = ()
    generator_entries: tuple[FrameRefData, ...] = ()  # compiled generator functions (never compiled)
    configs: tuple[ConfigSet, ...] = ()  # torch._dynamo.config switches the code sets
    wrapped: tuple[WrappedCompile, ...] = ()  # torch.compile(DDP(...)) and friends
    placement: tuple[PlacementIssue, ...] = ()  # loops / data loading / file I/O in compiled code
    unused_relaxations: tuple[tuple[str, int], ...] = ()  # error_on_graph_break(False) with no break
    function_stats: tuple[FunctionStat, ...] = ()  # breaks and ops per compiled function


LIBRARY_ENTRY_KINDS = frozenset({ASSUMED_ENTRY, NAMED_ENTRY})


@dataclass(frozen=True)
class Task:
    """Entries simulated together in one Dynamo process (one code cache, one set of flags).

    A program's own compile calls share one task per program (modules connected by imports).
    Entries the user names or assumes compiled (library code) are each file's own task: a user
    compiles one model, not all of them, and tasks run independently (in parallel)."""

    entries: tuple[EntryPoint, ...]
    flags: frozenset[str]
    library: bool


@dataclass(frozen=True)
class TaskResult:
    sites: tuple[Site, ...] = ()
    frames: tuple[Frame, ...] = ()
    strict_failures: tuple[StrictFailure, ...] = ()
    nested: tuple[tuple[str, bool], ...] = ()
    reached: frozenset[str] = frozenset()
    errors: tuple[FileError, ...] = ()
    relaxations: tuple[tuple[tuple[str, int], bool], ...] = ()
    op_counts: tuple[tuple[str, int], ...] = ()
    places: tuple[tuple[str, str, int], ...] = ()  # (function, file, def line) of each reached function
    generators: tuple[FrameRefData, ...] = ()
    placement: tuple[PlacementIssue, ...] = ()
    library: bool = False


def predict(project: ProjectIndex, knowledge: Knowledge, catalog: Catalog,
            entries: tuple[EntryPoint, ...], configs: tuple[ConfigSet, ...],
            wrapped: tuple[WrappedCompile, ...] = ()) -> Prediction:
    """Every task in turn, in this process (`run_task` is what parallel workers call)."""
    frames = FrameStore()
    results = [run_task(project, knowledge, catalog, task, frames) for task in plan_tasks(project, entries, configs)]
    return merge_results(project, entries, configs, wrapped, results)


def plan_tasks(project: ProjectIndex, entries: tuple[EntryPoint, ...],
               configs: tuple[ConfigSet, ...], component: dict[str, int] | None = None,
               defaults: tuple[tuple[str, bool], ...] = ()) -> tuple[Task, ...]:
    """`component`: module -> program number, when the caller knows it (else found from the
    loaded modules' imports); `defaults`: the config flags every program starts with."""
    component = component if component is not None else _import_components(project)
    start = frozenset(name for name, on in defaults if on)
    flags = _flags_by_component(project, configs, component, start)
    scoped = tuple(cfg for cfg in configs if cfg.scope is not None)
    groups: dict[tuple, list[EntryPoint]] = {}
    for entry in entries:
        fn = entry_function(project, entry)
        if fn is None:
            continue
        program = component.get(fn.module, -1)
        library = entry.how in LIBRARY_ENTRY_KINDS
        under = tuple((cfg.flag, cfg.value) for cfg in scoped
                      if component.get(project.by_path.get(cfg.path, ""), -2) == program and _runs_under(entry, fn, cfg))
        later = _ordered(entry, configs)
        base = flags.get(program, start) if later is None else \
            _flags_by_component(project, tuple(c for c in configs if c not in later), component, start).get(program, start)
        groups.setdefault((library, program, fn.path if library else "", under, base), []).append(entry)
    return tuple(Task(tuple(sorted(group, key=_entry_order)), _with_settings(base, under), library)
                 for (library, program, _, under, base), group in sorted(groups.items(), key=_group_order))


def _ordered(entry: EntryPoint, configs: tuple[ConfigSet, ...]) -> tuple[ConfigSet, ...] | None:
    """The module-level settings of the entry's own file made after the last line that runs
    it (`run(); config.flag = False`), which do not hold for it; None when there are none or
    the lines that run it are not known."""
    if not entry.run_lines:
        return None
    last = max(entry.run_lines)
    after = tuple(cfg for cfg in configs if cfg.top_level and cfg.scope is None and cfg.path == entry.path
                  and cfg.line > last)
    return after or None


def _group_order(item) -> tuple:
    (library, program, path, under, base), _ = item
    return library, program, path, under, tuple(sorted(base))


def _runs_under(entry: EntryPoint, fn: FunctionInfo, cfg: ConfigSet) -> bool:
    """Is the compiled code traced while a scoped config patch holds: compiled or called
    inside its lines (a `with` block, a decorated function), or itself the function the patch
    decorates? A compiled function whose calls are not known counts as under it, as a
    program-wide setting does."""
    first, last = cfg.scope or (0, 0)
    if not entry.call_lines:
        return True
    lines = (entry.line, *entry.call_lines) if cfg.path == entry.path else ()
    return any(first <= line <= last for line in lines) or cfg.path == fn.path and first <= fn.def_line <= last


def _with_settings(flags: frozenset, settings: tuple[tuple[str, bool], ...]) -> frozenset:
    current = set(flags)
    for flag, on in settings:
        (current.add if on else current.discard)(flag)
    return frozenset(current)


def _entry_order(entry: EntryPoint) -> tuple:
    """A total order: a task is the same (and its stored result reused) however its entries
    were found (one forward compiled as several subclasses shares path and line)."""
    return entry.path, entry.line, entry.function, entry.self_class or "", entry.how


def run_task(project: ProjectIndex, knowledge: Knowledge, catalog: Catalog, task: Task,
             frames: FrameStore | None = None) -> TaskResult:
    """`frames`: what earlier tasks of this process built (reused only where it cannot change
    this task's result)."""
    env = ModelEnv(project, knowledge, catalog, task.flags, frames)
    if not task.library and _changes_dtypes(project, task):
        env.default_dtype = None
    nested_on = "nested_graph_breaks" in task.flags
    errors: list[FileError] = []
    # A program's entries share Dynamo's caches: a code object compiled again only recompiles
    # when its guards fail. A library task's entries are separate programs (each class
    # compiled alone: a subclass keeping its base's forward runs its own methods and values).
    groups = _separate_programs(project, task.entries) if task.library else [task.entries]
    tracers = [_simulate(project, knowledge, env, nested_on, group, errors) for group in groups]
    # a site or frame several programs reach: the first one's, as merge_results does
    sites: dict[tuple, Site] = {}
    outcomes: dict[tuple, Frame] = {}
    failures: list[StrictFailure] = []
    relaxations: dict[tuple[str, int], bool] = {}
    for tracer in tracers:
        frozen = {id(r): _freeze(r) for r in tracer.sites.values()}
        for i, site in enumerate(frozen.values()):
            sites.setdefault((site.rule, site.path, site.span, site.detail) if task.library else (i,), site)
        for i, o in enumerate(tracer.frames.values()):
            frame = _frame(o, frozen[id(o.site)])
            outcomes.setdefault((frame.path, frame.qualname, frame.outcome, frame.break_span) if task.library else (i,),
                                frame)
        failures += [StrictFailure(frozen[id(e.site)], e.entry, e.reason, e.line) for e in tracer.strict_errors]
        for key, used in tracer.relaxations.items():
            relaxations[key] = relaxations.get(key, False) or used
    reached = frozenset().union(*(t.reached for t in tracers))
    ops, places = env.op_counts(), env.function_places()
    functions = [(e, project.function(e.function)) for e in task.entries if e.lambda_host is None]
    return TaskResult(
        sites=tuple(sites.values()), frames=tuple(outcomes.values()), strict_failures=tuple(failures),
        nested=tuple((e.function, nested_on) for e in task.entries),
        reached=reached, errors=tuple(errors), relaxations=tuple(relaxations.items()),
        op_counts=tuple((name, ops.get(name, 0)) for name in sorted(reached)),
        places=tuple((name, *places[name]) for name in sorted(reached) if name in places),
        generators=tuple(FrameRefData(fn.path, fn.qualname, fn.name, fn.def_line, e.line)
                         for e, fn in functions if fn is not None and fn.is_generator),
        placement=tuple(issue for e, fn in functions if fn is not None and e.how != NAMED_ENTRY
                        for issue in placement_issues(project, fn)),
        library=task.library)


def merge_results(project: ProjectIndex, entries: tuple[EntryPoint, ...], configs: tuple[ConfigSet, ...],
                  wrapped: tuple[WrappedCompile, ...], results: list[TaskResult]) -> Prediction:
    """One prediction from the tasks' results. A site or frame that library tasks reach again
    is reported once, with the first entry (in task order) that reaches it."""
    sites: list[Site] = []
    frames: list[Frame] = []
    failures: list[StrictFailure] = []
    nested: dict[str, bool] = {}
    reached: set[str] = set()
    errors: list[FileError] = []
    relaxations: dict[tuple[str, int], bool] = {}
    op_counts: dict[str, int] = {}
    places: dict[str, tuple[str, int]] = {}
    seen_sites: set[tuple] = set()
    seen_frames: set[tuple] = set()
    for result in results:
        for site in result.sites:
            site_key = (site.rule, site.path, site.span, site.detail)
            if not (result.library and site_key in seen_sites):
                sites.append(site)
            seen_sites.add(site_key)
        for frame in result.frames:
            frame_key = (frame.path, frame.qualname, frame.outcome, frame.break_span)
            if not (result.library and frame_key in seen_frames):
                frames.append(frame)
            seen_frames.add(frame_key)
        failures += result.strict_failures
        nested.update(result.nested)
        reached |= result.reached
        errors += result.errors
        for key, used in result.relaxations:
            relaxations[key] = relaxations.get(key, False) or used
        for name, ops in result.op_counts:
            op_counts[name] = max(ops, op_counts.get(name, 0))
        places.update({name: (path, line) for name, path, line in result.places})
    generators = tuple(g for r in results for g in r.generators)
    placement = tuple(dict.fromkeys(p for r in results for p in r.placement))
    return Prediction(
        entries=entries, sites=tuple(sites), frames=tuple(frames), strict_failures=tuple(failures),
        nested_graph_breaks=nested, reached=frozenset(reached), errors=tuple(errors),
        generator_entries=generators, configs=configs, wrapped=wrapped, placement=placement,
        unused_relaxations=tuple(sorted(k for k, used in relaxations.items() if not used)),
        function_stats=_function_stats(entries, sites, op_counts, places))


def _function_stats(entries, sites, op_counts, places) -> tuple[FunctionStat, ...]:
    """Breaks and ops per analysed function, placed where the tasks found it (looking the
    functions up again would parse their modules in a run whose tasks all came from the cache)."""
    entry_names = {e.function for e in entries}
    breaks: dict[str, set] = {}
    for site in sites:
        breaks.setdefault(site.function, set()).add((site.path, site.span))
    stats = []
    for name, ops in sorted(op_counts.items()):
        if name in places:
            path, line = places[name]
            stats.append(FunctionStat(name, path, line, len(breaks.get(name, ())), ops, name in entry_names))
    return tuple(stats)


def _entry_key(project: ProjectIndex, entry: EntryPoint) -> FrameKey:
    """Entry parameters hold tensors unless their default or annotation says otherwise."""
    fn = project.function(entry.function)
    assert fn is not None, entry.function  # entry points are project functions
    params = list(fn.params)
    if fn.class_qualname is not None and params and params[0].kind == "positional":
        params = params[1:]
    aliases = project.modules[fn.module].values
    tensors = frozenset(p.name for p in params if _may_be_tensor(p, aliases))
    return FrameKey(fn.qualname, tensors, self_class=entry.self_class or "",
                    training=_entry_training(project, entry), dynamic=entry.dynamic,
                    region=f"{entry.path}:{entry.line}" if entry.isolated else "")


# (`autocast` as a word: `torch.is_autocast_enabled()` only asks)
HALF_PRECISION = re.compile(r"\btorch\.(?:b?float16|half)\b|\bfloat16\b|\.half\(|\.bfloat16\(|\.to\(\s*dtype"
                            r"|\bautocast\b|set_default_dtype")
# what comes right before a dtype that is only compared with: `x.dtype == torch.float16`,
# `dtype is not torch.half`, `dtype in (torch.float16, torch.bfloat16)`
COMPARED_WITH = re.compile(r"(?:[=!]=|\bis(?:\s+not)?|\bin)\s*[(\[{]?\s*(?:torch\.\w+\s*,\s*)*$")


def _changes_dtypes(project: ProjectIndex, task: Task) -> bool:
    """Does a program run its compiled code in another dtype than the default (`.half()`,
    autocast, a half dtype it passes or sets)? Its dtype comparisons are then not constants we
    can tell. A half dtype the program only compares with makes nothing half."""
    paths = {e.path for e in task.entries}
    return any(_makes_half(project.modules[project.by_path[p]].parsed.text) for p in paths if p in project.by_path)


def _makes_half(text: str) -> bool:
    for m in HALF_PRECISION.finditer(text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        if "#" in text[line_start:m.start()]:
            continue  # a comment
        if not (m.group(0).startswith("torch.") and COMPARED_WITH.search(text, line_start, m.start())):
            return True
    return False


def _entry_training(project: ProjectIndex, entry: EntryPoint) -> bool | None:
    """`self.training` of a compiled module: eval for entries named or assumed without a
    program (what users compile for inference, and `--assume-compiled` of a library); for a
    program's own module it is what the program sets (`.eval()` anywhere in the compiling
    module, else nn.Module's default, training)."""
    if entry.how in LIBRARY_ENTRY_KINDS:
        return False
    if entry.self_class is None and "module" not in entry.how:
        return None
    if entry.training is not None:  # how the program builds and switches this instance
        return entry.training
    module = project.modules.get(project.by_path.get(entry.path, ""))
    if module is None:
        return None
    return ".eval()" not in module.parsed.text


def _may_be_tensor(param, aliases) -> bool:
    if param.kind in ("star", "double_star"):
        return False
    if param.annotation is not None:
        return not _non_tensor_annotation(_expand_alias(param.annotation, aliases))
    return param.default is None  # `mask=None`, `scale=1.0`, `mode="x"`: not known to be tensors


def _expand_alias(text: str, aliases) -> str:
    """`Size_` of a module saying `Size_ = Tuple[int, int]`: the annotation it stands for."""
    value = aliases.get(text.strip().strip("\"'"))
    if isinstance(value, (cst.Subscript, cst.Name, cst.Attribute, cst.BinaryOperation)):
        return cst.Module([]).code_for_node(value)
    return text


def _non_tensor_annotation(text: str) -> bool:
    """`int`, `dict[str, Any] | None`, `Optional[List[int]]`: every alternative is a type that
    is never a tensor (one naming a tensor, or a class we do not know, may be)."""
    text = text.replace(" ", "").strip("\"'")
    if "ensor" in text:
        return False
    if text.startswith("Optional[") and text.endswith("]"):
        text = text[len("Optional["):-1]
    parts = [p for p in text.split("|") if p != "None"]
    return bool(parts) and all(p.split("[", 1)[0] in NON_TENSOR_TYPES for p in parts)


def _flags_by_component(project: ProjectIndex, configs: tuple[ConfigSet, ...],
                        component: dict[str, int], start: frozenset = frozenset()) -> dict[int, frozenset]:
    """A config flag set in a module applies to every module connected to it by imports
    (over the flags every program starts with)."""
    flags: dict[int, set[str]] = {}
    for cfg in configs:
        name = project.by_path.get(cfg.path)
        if name is None or cfg.scope is not None:  # scoped ones: per entry (_runs_under)
            continue
        if name not in component:
            continue
        current = flags.setdefault(component[name], set(start))
        (current.add if cfg.value else current.discard)(cfg.flag)
    return {c: frozenset(v) for c, v in flags.items()}


def _import_components(project: ProjectIndex) -> dict[str, int]:
    parent = {name: name for name in list(project.modules)}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for name, module in list(project.modules.items()):
        targets = list(module.imports.values()) + list(module.star_imports)
        for target in targets:
            other = project.module_of_prefix(target, load=False)
            if other is not None:
                parent[find(name)] = find(other)
    roots: dict[str, int] = {}
    return {name: roots.setdefault(find(name), len(roots)) for name in project.modules}


# The tracer's records are mutable while it runs (a site's times_traced grows with each frame
# that traces it) and hold the model's own objects (events, frame infos); the Prediction holds
# frozen, plain snapshots of them, which is what crosses processes and what checks read.
def _separate_programs(project: ProjectIndex, entries: tuple[EntryPoint, ...]) -> list[tuple[EntryPoint, ...]]:
    """A library task's entries, one program each, less those the model would run exactly as
    an earlier one: the same function on a class that adds nothing to the one it derives from
    (`class GemmaRMSNorm(LlamaRMSNorm): pass`, common in generated model code)."""
    programs: list[tuple[EntryPoint, ...]] = []
    seen: set[tuple] = set()
    for entry in entries:
        cls = project.klass(entry.self_class) if entry.self_class else None
        same = (entry.function, _behaves_as(project, cls), entry.fullgraph, entry.how) \
            if cls is not None and entry.construction is None and not entry.called_as else None
        if same is None or same not in seen:
            programs.append((entry,))
        if same is not None:
            seen.add(same)
    return programs


def _behaves_as(project: ProjectIndex, cls) -> str:
    """The class whose instances the model cannot tell from `cls`'s: up a chain of classes
    with one (project) base that define nothing (no methods, attributes or decorators)."""
    for _ in range(64):
        mro = project.mro(cls)
        if cls.methods or cls.attributes or cls.init_locals or cls.decorators or len(cls.bases) != 1 or len(mro) < 2:
            break
        cls = mro[1]
    return cls.qualname


def _simulate(project: ProjectIndex, knowledge: Knowledge, env: ModelEnv, nested_on: bool,
              entries: tuple[EntryPoint, ...], errors: list[FileError]) -> Tracer:
    """One program's compiled entries, run in order through one model of Dynamo's caches."""
    tracer = Tracer(env, nested_on)
    for entry in entries:
        try:
            if entry.how.endswith(f"({SEQUENTIAL})"):
                _compile_sequential(project, env, tracer, entry)
                continue
            if entry.lambda_host is not None:
                _compile_lambda(project, env, tracer, entry)
                continue
            for variant in entry_variants(project, knowledge, entry, _entry_key(project, entry)):
                if variant.fresh:
                    tracer.reset_caches(recount=variant.reset_by_itself)
                if variant.observe_only:
                    tracer.observe_entry(variant.key)
                    continue
                if entry.how.startswith(EXPORT_HOW):
                    tracer.compile_apart(variant.key, entry.function, entry.fullgraph)
                else:
                    tracer.compile_entry(variant.key, entry.function, entry.fullgraph,
                                         variant.strict or entry.error_on_graph_break)
        except RecursionError:
            errors.append(FileError(entry.path, f"{entry.function}: code or call chain too deeply nested to analyse"))
        except Exception as err:  # noqa: BLE001
            if os.environ.get("GBREAK_LINT_DEBUG"):
                raise
            errors.append(internal_error(entry.path, f"modelling {entry.function}", err))
    return tracer


def _compile_sequential(project: ProjectIndex, env: ModelEnv, tracer: Tracer, entry: EntryPoint) -> None:
    info = sequential_frame(project, entry, _entry_training(project, entry),
                            first_input_plain(project, env.knowledge, entry))
    if info is not None:
        env.register_synthetic(info)
        tracer.compile_entry(info.key, entry.function, entry.fullgraph)


def _compile_lambda(project: ProjectIndex, env: ModelEnv, tracer: Tracer, entry: EntryPoint) -> None:
    """`torch.compile(lambda x: ...)`: the lambda's own frame, its parameters tensors."""
    body = compiled_lambda(project, entry)
    if body is None:
        return
    key = FrameKey(entry.function, body.tensor_parameters)
    env.register_expression_frame(key, body, project.modules[body.parent.module])
    tracer.compile_entry(key, entry.function, entry.fullgraph)


def _freeze(r: SiteRecord) -> Site:
    return Site(rule=r.rule, gb_code=r.gb_code, path=r.path, span=r.event.span, function=r.frame.qualname,
                frame_name=r.frame.name, times_traced=r.hits, chain=r.chain, entry=r.entry,
                outcomes=frozenset(r.outcomes), detail=r.event.detail, condition=r.condition)


def _frame(o: FrameOutcome, site: Site) -> Frame:
    f = o.frame
    return Frame(path=f.path, qualname=f.qualname, name=f.name, def_line=f.def_line, outcome=o.outcome,
                 reason=o.reason, label=o.label, break_line=o.break_event.line, break_span=o.break_event.span,
                 block_line=o.block_line, ops_before=o.ops_before, site=site)
