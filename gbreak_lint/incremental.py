"""Results kept between runs by what they read: a run after an edit redoes only the work whose
inputs changed.

Each Dynamo task and each module's entry-point facts is stored with the import names of the
modules it asked for (`ProjectIndex.reads`, found or not) and the content digest each had. A
later run reuses it when every one of those names still has that digest (a module that did not
exist and still does not counts too), under the same run fingerprint (tool, settings, rules)
and the same digest of the modules every task reads (hooks, `disallow_in_graph`). Anything else
is computed again, and stored. Plain signed JSON only (see cache.py): nothing from the scanned
tree is ever deserialised into code.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from functools import cached_property
from pathlib import Path
from typing import Callable

import libcst as cst

from .cache import ProjectStore, SignedStore, tool_fingerprint
from .diagnostics import Span
from .index.entries import EntryFacts
from .index.installed import InstalledPackages
from .index.lazy import LazyModules
from .index.project import TEXT_READ
from .index.skeleton import GLOBAL_MARKERS, ModuleSummary, summarize
from .index.stored import code_of, module_from_plain, module_to_plain
from .index.symbols import ModuleIndex
from .model.predict import Task, TaskResult
from .parse import ParsedModule
from .plain import PlainDataError, from_plain, to_plain

ABSENT = "-"  # the digest of an import name no project file has
SHARED_READERS = 3  # a module read by this many tasks of a whole scan has its index stored


class Snapshot:
    """The project's files as this run sees them: content digests and import names; and the
    installed packages' files it follows (by size and times: they are not read up front).

    A stored result may also depend on which modules hold a text (`ProjectIndex.mentioning`:
    the callers of a function, found by its name): such a read is kept as the tree (every
    module's digest) it was made on, and holds while no module changed since then holds the
    text now. (A module that held it then was read, so its own digest guards that side.)"""

    def __init__(self, digests: dict[str, str], names: dict[str, str],
                 installed: InstalledPackages | None = None, trees: SignedStore | None = None,
                 texts: Callable[[str], str | None] | None = None):
        self.digests = digests  # path -> content digest
        self.names = names  # path -> import name
        self._by_name = {name: path for path, name in names.items()}
        self._installed = installed
        self._signatures: dict[str, str] = {}  # installed module name -> its file's signature
        self.installed_reads: dict[str, str] = {}  # what the run's reused and stored work read there
        self._trees = trees  # earlier runs' trees, by id
        self._texts = texts  # path -> the file's text now
        self._changed: dict[str, list[str] | None] = {}  # tree id -> the paths changed since (None: unknown)
        self._text_now: dict[str, str | None] = {}
        self._tree_kept = False

    @cached_property
    def tree(self) -> str:
        return _digest(json.dumps(sorted(self.digests.items())))

    def digest_of(self, name: str) -> str:
        path = self._by_name.get(name)
        return self.digests.get(path, ABSENT) if path is not None else ABSENT

    def read_set(self, names) -> dict[str, str]:
        found = {name: self.tree if name.startswith(TEXT_READ) else self.signature_of(name) for name in sorted(names)}
        self._note_installed(found)
        if self._trees is not None and not self._tree_kept and any(n.startswith(TEXT_READ) for n in found):
            self._trees.write(f"{self.tree[:40]}.json", {"tree": self.tree, "digests": self.digests})
            self._tree_kept = True
        return found

    def still(self, reads: object) -> bool:
        if not isinstance(reads, dict) or not all(self._text_still(n[len(TEXT_READ):], d) if n.startswith(TEXT_READ)
                                                  else self.signature_of(n) == d for n, d in reads.items()):
            return False
        self._note_installed(reads)
        return True

    def signature_of(self, name: str) -> str:
        """A project module's content digest; an installed module's file signature."""
        if name in self._by_name or self._installed is None:
            return self.digest_of(name)
        if name not in self._signatures:
            self._signatures[name] = self._installed.signature(name) or ABSENT
        return self._signatures[name]

    def _text_still(self, text: str, tree: object) -> bool:
        """Does no module changed since `tree` hold `text` now?"""
        if tree == self.tree:
            return True
        changed = self._changed_since(tree) if isinstance(tree, str) else None
        return changed is not None and not any(text in (self._now(path) or "") for path in changed)

    def _changed_since(self, tree: str) -> list[str] | None:
        if tree not in self._changed:
            body = self._trees.read(f"{tree[:40]}.json") if self._trees is not None else None
            then = body.get("digests") if body is not None and body.get("tree") == tree else None
            self._changed[tree] = [path for path, digest in self.digests.items() if then.get(path) != digest] \
                if isinstance(then, dict) else None
        return self._changed[tree]

    def _now(self, path: str) -> str | None:
        if path not in self._text_now:
            self._text_now[path] = self._texts(path) if self._texts is not None else None
        return self._text_now[path]

    def _note_installed(self, reads: dict) -> None:
        self.installed_reads.update((n, d) for n, d in reads.items()
                                    if n not in self._by_name and d != ABSENT and not n.startswith(TEXT_READ))


class RunCache:
    """What one run reuses and stores, under its fingerprint."""

    def __init__(self, store: ProjectStore | None, fingerprint: str, snapshot: Snapshot,
                 summaries: dict[str, ModuleSummary]):
        self.store = store
        self.fingerprint = fingerprint
        self.snapshot = snapshot
        self.reused = 0  # tasks answered from the store in this run
        self.indexes = IndexStore(store.modules) if store is not None else None
        self.readers: dict[str, int] = {}  # module name -> tasks run in this run that read it
        # every task reads the hook and disallow_in_graph modules (which ones there are, too)
        marked = sorted(s.path for s in summaries.values() if s.markers & set(GLOBAL_MARKERS))
        self.shared = _digest(json.dumps([(p, snapshot.digests.get(p)) for p in marked]))

    # -- tasks ------------------------------------------------------------------------------
    def task(self, task: Task) -> tuple[TaskResult, tuple] | None:
        body = self._read(self.store.tasks if self.store else None, self._task_key(task))
        if body is None:
            return None
        try:
            found = from_plain(TaskResult, body["result"]), _probes_from_plain(body["probes"])
        except (KeyError, PlainDataError, TypeError, ValueError):
            return None
        self.reused += 1
        return found

    def keep_task(self, task: Task, result: TaskResult, probes: tuple, reads: set[str]) -> None:
        for name in reads:
            self.readers[name] = self.readers.get(name, 0) + 1
        if self.store is not None:
            self._write(self.store.tasks, self._task_key(task), reads,
                        {"result": to_plain(result), "probes": _probes_to_plain(probes)})

    def _task_key(self, task: Task) -> str:
        return _digest(self.fingerprint + self.shared + json.dumps(_plain_with_code(task), sort_keys=True))

    def keep_shared_indexes(self, modules: LazyModules) -> int:
        """After a whole-tree scan, store the indexes of the modules several of its tasks read
        (the shared base classes and utilities): a later run on a few files reaches them too,
        and would otherwise parse them. Writing every module's index cost about 1.5% of a cold
        transformers scan; these (390 there) under 1%. Returns how many were written."""
        if self.indexes is None:
            return 0
        shared = [name for name, count in self.readers.items() if count >= SHARED_READERS]
        written = 0
        for name in shared:
            digest = self.snapshot.digest_of(name)
            if digest != ABSENT and modules.loaded(name):  # a project file (not an installed one)
                self.indexes.keep(name, digest, modules[name], if_absent=True)
                written += 1
        return written

    # -- entry points of a module -----------------------------------------------------------
    def entry_facts(self, name: str) -> EntryFacts | None:
        body = self._read(self.store.entries if self.store else None, self._entries_key(name))
        if body is None:
            return None
        try:
            facts = from_plain(EntryFacts, body["facts"])
            built = [cst.parse_expression(code) if code is not None else None for code in body["constructions"]]
        except (KeyError, PlainDataError, TypeError, ValueError, cst.ParserSyntaxError):
            return None
        if len(built) != len(facts.entries) or any(b is not None and not isinstance(b, cst.Call) for b in built):
            return None
        return replace(facts, entries=tuple(replace(e, construction=b) for e, b in zip(facts.entries, built)))

    def keep_entry_facts(self, name: str, facts: EntryFacts, reads: set[str]) -> None:
        if self.store is None:
            return
        codes = [code_of(e.construction) if e.construction is not None else None for e in facts.entries]
        plain = to_plain(replace(facts, entries=tuple(replace(e, construction=None) for e in facts.entries)))
        self._write(self.store.entries, self._entries_key(name), reads, {"facts": plain, "constructions": codes})

    def _entries_key(self, name: str) -> str:
        """A module's facts: by its name and content (what it reads elsewhere is checked)."""
        return _digest(self.fingerprint + name + self.snapshot.digest_of(name))

    # -- storage ------------------------------------------------------------------------------
    def _read(self, store: SignedStore | None, key: str) -> dict | None:
        body = store.read(f"{key[:40]}.json") if store is not None else None
        if body is None or body.get("key") != key or not self.snapshot.still(body.get("reads")):
            return None
        return body

    def _write(self, store: SignedStore, key: str, reads: set[str], body: dict) -> None:
        store.write(f"{key[:40]}.json", {"key": key, "reads": self.snapshot.read_set(reads), **body})


class IndexStore:
    """Module indexes by file content (see index/stored.py): a run after an edit parses the
    edited file, not the modules its work reaches. Kept under the tool's fingerprint, not the
    run's: an index depends on nothing else (the settings, rules and knowledge come later)."""

    def __init__(self, store: SignedStore):
        self.store = store

    def load(self, name: str, path: Path, data: bytes) -> ModuleIndex | None:
        key = _index_key(name, path, hashlib.sha1(data).hexdigest())
        body = self.store.read(f"{key[:40]}.json")
        if body is None or body.get("key") != key or not isinstance(body.get("encoding"), str):
            return None
        try:
            text = data.decode(body["encoding"], errors="replace")
        except LookupError:
            return None
        return module_from_plain(body.get("index"), ParsedModule(path, None, text, body["encoding"]), name)

    def keep(self, name: str, digest: str, module: ModuleIndex, if_absent: bool = False) -> None:
        """`digest`: the SHA-1 of the file's bytes (as `Snapshot` has them)."""
        key = _index_key(name, Path(module.path), digest)
        if if_absent and self.store.has(f"{key[:40]}.json"):
            return
        self.store.write(f"{key[:40]}.json", {"key": key, "encoding": module.parsed.encoding,
                                              "index": module_to_plain(module)})


def _index_key(name: str, path: Path, digest: str) -> str:
    return _digest("\0".join((tool_fingerprint(), name, str(path), digest)))


def load_summaries(store: ProjectStore | None, snapshot: Snapshot, knowledge, texts) -> dict[str, ModuleSummary]:
    """Every project module's summary (import name -> summary): from the store where the
    file's content (and the tool) is the same, else read from the text (`texts(path)`)."""
    body = (store.summaries.read("summaries.json") or {}) if store else {}
    tool = tool_fingerprint()
    cached = body.get("modules", {}) if body.get("tool") == tool and isinstance(body.get("modules"), dict) else {}
    out: dict[str, ModuleSummary] = {}
    fresh = False
    for path, name in snapshot.names.items():
        summary = _cached_summary(cached.get(path), snapshot.digests.get(path), name)
        if summary is None:
            text = texts(path)
            if text is None:
                continue
            summary, fresh = summarize(Path(path), text, name, knowledge), True
        out[name] = summary
    if store is not None and (fresh or len(cached) != len(out)):
        modules = {s.path: {"digest": snapshot.digests.get(s.path), "summary": to_plain(s)} for s in out.values()}
        store.summaries.write("summaries.json", {"tool": tool, "modules": modules})
    return out


def _cached_summary(entry, digest: str | None, name: str) -> ModuleSummary | None:
    """The stored summary if it is of this content and name and of the right shape. (Decoded
    field by field here rather than by `from_plain`: a run reads thousands of them.)"""
    if not isinstance(entry, dict) or entry.get("digest") != digest:
        return None
    data = entry.get("summary")
    if not isinstance(data, dict) or data.get("name") != name:
        return None
    path, package = data.get("path"), data.get("is_package")
    imports, markers = _strings(data.get("imports")), _strings(data.get("markers"))
    if not (isinstance(path, str) and isinstance(package, bool)) or imports is None or markers is None:
        return None
    return ModuleSummary(name, path, package, tuple(imports), frozenset(markers))


def _strings(value) -> list[str] | None:
    return value if isinstance(value, list) and all(isinstance(item, str) for item in value) else None


def _plain_with_code(value):
    """A task as plain data, the construction expressions of its entries as their code."""
    if isinstance(value, cst.CSTNode):
        return code_of(value)
    if hasattr(value, "__dataclass_fields__"):
        return {name: _plain_with_code(getattr(value, name)) for name in value.__dataclass_fields__}
    if isinstance(value, (tuple, list)):
        return [_plain_with_code(v) for v in value]
    if isinstance(value, frozenset):
        return sorted(_plain_with_code(v) for v in value)
    return value


def _probes_to_plain(probes: tuple) -> list:
    return [[path, to_plain(span), code, ok] for (path, span, code), ok in probes]


def _probes_from_plain(data) -> tuple:
    return tuple(((from_plain(str, p), from_plain(Span, s), from_plain(str, c)), from_plain(bool, ok))
                 for p, s, c, ok in data)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
