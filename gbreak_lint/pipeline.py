"""The stages over a whole repository, spread over worker processes (`--jobs`).

Three parallel steps, each over independent items, so any number of workers gives the same
result as one: (1) parse + index each file (workers send back the module's symbols, never its
tree); (2) find the compile entry points of each module; (3) simulate each Dynamo task.
Steps 2 and 3 need the whole project index: their workers are forked after it is built and
inherit it. Trees are re-made on demand from the text (`parse.TREES`, bounded), so memory does
not grow with the repository.
"""
from __future__ import annotations

import copyreg
import gc
import multiprocessing
from contextlib import contextmanager
import os
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Iterable

import libcst as cst

from .catalog import Catalog
from .diagnostics import Diagnostic, FileError
from .index import IndexResult, assemble_project, collect_entry_facts, entry_facts, index_file
from .index.entries import might_hold_entries
from .index.installed import InstalledPackages
from .index.lazy import IndexStore, keep_index, stored_index
from .index.names import module_name_for
from .incremental import RunCache
from .index.project import ProjectIndex
from .index.symbols import ModuleIndex
from .knowledge import Knowledge
from .model.frame_store import FrameStore
from .model.predict import Task, TaskResult, run_task
from .parse import TREES, parse_source
from .workers import robust_map

# Below this many files a scan runs in one process: starting workers costs more than it saves.
MIN_FILES_FOR_WORKERS = 64



def _read_only(mapping: dict) -> MappingProxyType:
    return MappingProxyType(mapping)


_WHITESPACE: dict[str, cst.SimpleWhitespace] = {}


def _whitespace(value: str) -> cst.SimpleWhitespace:
    found = _WHITESPACE.get(value)
    if found is None:
        found = _WHITESPACE[value] = cst.SimpleWhitespace(value)
    return found


@contextmanager
def _pickling_hooks():
    """How the index crosses processes, registered only while workers run (never in a process
    that merely imports gbreak-lint, such as flake8's): read-only mappings as such, and one
    whitespace node per distinct text. The index's expressions (parameter defaults, attribute
    and module values) arrive from the workers with a whitespace node per token gap; nodes are
    immutable, so sharing them saves a tenth of the index's memory, in the parent and in every
    worker it forks."""
    hooks = {MappingProxyType: lambda m: (_read_only, (dict(m),)),
             cst.SimpleWhitespace: lambda w: (_whitespace, (w.value,))}
    saved = {kind: copyreg.dispatch_table.get(kind) for kind in hooks}
    copyreg.dispatch_table.update(hooks)
    try:
        yield
    finally:
        for kind, old in saved.items():
            if old is None:
                copyreg.dispatch_table.pop(kind, None)
            else:
                copyreg.dispatch_table[kind] = old

_SHARED: dict = {}  # what forked workers inherit: project index, knowledge, catalog
CHUNKS_PER_WORKER = 16  # runs of neighbouring items (shared imports), short enough to end the workers together
POOL_ROUNDS = 3  # fresh workers this many times per stage: bounds what each one's memory grows to
TASKS_PER_COLLECTION = 32  # tasks between young-generation passes: a safety net for cycles left (see _task_one)
WORKER_TREE_BUDGET = 600_000  # source characters of trees a worker keeps between tasks (~50 bytes each;
# mostly single definitions since traces parse those alone: 1M measured as fast as 2M, 100 MB less;
# 600k with 3 worker rounds: 1,011 MB for the cold scan of transformers, as fast as 750k (1,023 MB))


@dataclass(frozen=True)
class FileOutcome:
    path: str
    module: ModuleIndex | None = None
    diagnostic: Diagnostic | None = None
    error: FileError | None = None


@contextmanager
def paused_gc():
    """No cyclic garbage collection while a scan runs (workers inherit it by forking). Parsing
    makes millions of long-lived objects and each collection walks them all again: it cost
    40% of a scan. Trees and index data hold no reference cycles; the cycles the Dynamo tasks
    make are collected after each task (`_task_one`), the rest when the scan ends."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def scan_jobs(requested: int | None, files: int) -> int:
    """Worker processes for a scan of `files` files: one per CPU unless asked; one process for
    small projects (starting workers costs more than it saves) and where processes cannot be
    forked (Windows, macOS default): workers inherit the index by forking."""
    if files < MIN_FILES_FOR_WORKERS or "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return requested or max(1, os.cpu_count() or 1)


def index_files(paths: list[Path], overlay: dict[str, bytes] | None, jobs: int,
                progress: Callable[[int, int], None] | None = None,
                stored: IndexStore | None = None) -> list[FileOutcome]:
    """Each file parsed and indexed; with `stored`, the index kept by an earlier run for the
    same content instead (and what is parsed is kept)."""
    items = [(path, (overlay or {}).get(str(path)), stored) for path in paths]
    outcomes = []
    failed = lambda item, reason: FileOutcome(str(item[0]), error=FileError(str(item[0]), reason))  # noqa: E731
    for done, outcome in enumerate(_map(_index_one, items, _workers(jobs, len(items)), failed), 1):
        if progress is not None:
            progress(done, len(items))
        outcomes.append(outcome)
    return outcomes


def _index_one(item: tuple[Path, bytes | None, IndexStore | None]) -> FileOutcome:
    path, data, stored = item
    name = module_name_for(path) if stored is not None else ""  # (stat calls a whole scan does not need)
    found = stored_index(stored, name, path, data)
    if isinstance(found, ModuleIndex):
        return FileOutcome(str(path), module=found)
    parsed = parse_source(path, found) if isinstance(found, bytes) else found
    if parsed.parsed is None:
        return FileOutcome(str(path), diagnostic=parsed.diagnostic, error=parsed.error)
    handle = TREES.adopt(parsed.parsed)  # later stages re-make the tree if it was dropped
    with TREES.scope():
        module, error = index_file(handle)
    if isinstance(found, bytes):
        keep_index(stored, name, found, module)
    return FileOutcome(str(path), module=module, error=error)


def build_project(modules: list[ModuleIndex], errors: list[FileError], knowledge: Knowledge,
                  jobs: int, installed: InstalledPackages | None = None,
                  project_files: dict[str, Path] | None = None, overlay: dict[str, bytes] | None = None,
                  candidates: tuple[str, ...] | None = None, cache: RunCache | None = None,
                  marked: dict[str, tuple[str, ...]] | None = None) -> IndexResult:
    """The project index and its compile entry points, found in `candidates` (module names;
    default: every module that might hold some), each from `cache` when what it read is unchanged."""
    project = assemble_project(modules, installed, project_files, overlay, marked, cache.indexes if cache else None)
    if candidates is None:
        candidates = tuple(name for name, mod in list(project.modules.items())
                           if might_hold_entries(project, knowledge, mod))
    facts = {name: cache.entry_facts(name) if cache else None for name in candidates}
    todo = [name for name, hit in facts.items() if hit is None and name in project.modules]  # parses it if need be
    def failed(name: str, reason: str) -> tuple[FileError, frozenset[str]]:
        return FileError(project.modules[name].path, reason), frozenset()

    found = parallel_map(_entries_one, todo, jobs, failed, project=project, knowledge=knowledge)
    for name, (fact, reads) in zip(todo, found):
        facts[name] = fact
        if cache and not isinstance(fact, FileError):
            cache.keep_entry_facts(name, fact, reads)
    return collect_entry_facts(project, [f for f in facts.values() if f is not None], errors)


def _entries_one(name: str):
    project: ProjectIndex = _SHARED["project"]
    with TREES.scope(), project.reads.recording() as reads:
        module = project.modules[name]
        facts = entry_facts(project, _SHARED["knowledge"], module)
    return facts, frozenset(reads)


def run_tasks(project: ProjectIndex, knowledge: Knowledge, catalog: Catalog, tasks: tuple[Task, ...],
              jobs: int, with_trees: Callable[[TaskResult], Any] | None = None,
              cache: RunCache | None = None) -> list[tuple[TaskResult, Any]]:
    """Each task's result, with what `with_trees(result)` computes from it in the same worker
    while the task's trees are still held (later stages would otherwise parse those files again);
    from `cache` when nothing the task read has changed."""
    out: list = [cache.task(task) if cache else None for task in tasks]
    todo = [i for i, hit in enumerate(out) if hit is None]

    def failed(i: int, reason: str):
        entry = tasks[i].entries[0]
        return TaskResult(errors=(FileError(entry.path, f"{entry.function}: {reason}"),)), (), None

    done = parallel_map(_task_one, todo, jobs, failed, project=project, knowledge=knowledge,
                        catalog=catalog, tasks=tasks, with_trees=with_trees)
    for i, (result, after, reads) in zip(todo, done):
        out[i] = (result, after)
        if cache and reads is not None and not result.errors:
            cache.keep_task(tasks[i], result, after or (), reads)
    return out


def _task_one(i: int) -> tuple[TaskResult, object, frozenset[str]]:
    project: ProjectIndex = _SHARED["project"]
    with TREES.scope(), project.reads.recording() as reads:
        # one store per process: a forked worker's tasks reuse the frames its earlier tasks built
        frames = _SHARED.get("frames") or _SHARED.setdefault("frames", FrameStore())
        result = run_task(project, _SHARED["knowledge"], _SHARED["catalog"], _SHARED["tasks"][i], frames)
        after = _SHARED["with_trees"]
        done = result, after(result) if after is not None else None, frozenset(reads)
    # The collector is paused (`paused_gc`). Frame builders break their own reference cycles
    # (`FrameBuilder._release`); the few left (closures of library code) are collected now and
    # then: a young-generation pass costs what was allocated since the last one and still lives
    # (the trees a worker keeps), so after every task it was a twentieth of the task time.
    _SHARED["tasks_since_collection"] = _SHARED.get("tasks_since_collection", 0) + 1
    if _SHARED["tasks_since_collection"] >= TASKS_PER_COLLECTION:
        _SHARED["tasks_since_collection"] = 0
        gc.collect(0)
    return done


def parallel_map(fn, items: list, jobs: int, on_failure: Callable[[Any, str], Any], **shared) -> list:
    """`fn(item)` for each item, in forked workers that see `shared` through `shared_state()`;
    an item whose analysis fails twice (or kills its worker) becomes `on_failure(item, reason)`."""
    _SHARED.clear()
    _SHARED.update(shared)
    return list(_map(fn, items, _workers(jobs, len(items)), on_failure))


def shared_state() -> dict:
    return _SHARED


def _workers(jobs: int, items: int) -> int:
    return 1 if items < 2 else min(jobs, items)


def _map(fn, items: list, jobs: int, on_failure: Callable[[object, str], object]) -> Iterable:
    """`fn` over `items`, in order; in `jobs` worker processes when that is more than one."""
    if jobs <= 1 or len(items) < 2:
        yield from map(fn, items)
        return
    chunk = max(1, len(items) // (jobs * CHUNKS_PER_WORKER))
    pool_chunks = max(jobs, jobs * CHUNKS_PER_WORKER // POOL_ROUNDS)
    with _pickling_hooks():
        yield from robust_map(fn, items, jobs, chunk, _worker_start, on_failure, pool_chunks)


def _worker_start() -> None:
    TREES.budget = WORKER_TREE_BUDGET
    gc.freeze()  # the inherited index is never garbage: no collection looks at it again
