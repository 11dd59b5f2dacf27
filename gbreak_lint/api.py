"""lint_paths(): runs the stages in order.  The one module that knows them all."""
from __future__ import annotations

import fnmatch
import hashlib
import os
import re
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from . import cache
from .catalog import Catalog, load_catalog
from .checks import Thresholds, run_checks
from .config import Config, ConfigError
from .diagnostics import ChainLink, Diagnostic, LintResult
from .discover import discover
from .fix import rewrite_applies
from .index import IndexResult
from .files import read_regular
from .index.installed import InstalledPackages, for_config
from .index.lazy import LazyModules
from .incremental import RunCache, Snapshot, load_summaries
from .index.skeleton import ENTRIES, GLOBAL_MARKERS, SETTINGS, Skeleton, module_names
from .parse import MAX_FILE_BYTES
from .index.entries import inherited_forward_entries, module_forward_entries, named_entries
from .knowledge import load_profile
from .model.predict import Prediction, merge_results, plan_tasks
from .parse import TREES
from .pipeline import build_project, index_files, parallel_map, paused_gc, run_tasks, scan_jobs, shared_state
from .registry import bind_catalog

NOQA_RE = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
IGNORE_RE = re.compile(r"#\s*gbreak-lint:\s*ignore(?:\[(?P<codes>[^\]]*)\])?")


class Stopwatch:
    """Stage times on stderr when GBREAK_LINT_TIMINGS is set (for benchmarks and bug reports)."""

    def __init__(self):
        self.enabled = bool(os.environ.get("GBREAK_LINT_TIMINGS"))
        self.last = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        if self.enabled:
            print(f"gbreak-lint: {stage}: {now - self.last:.2f} s{_resident_mb()}", file=sys.stderr)
        self.last = now


def _resident_mb() -> str:
    try:  # Linux; elsewhere the times alone
        pages = int(open("/proc/self/statm").read().split()[1])
    except (OSError, ValueError, IndexError):
        return ""
    return f" (this process: {pages * os.sysconf('SC_PAGE_SIZE') // 2**20} MB resident)"


@dataclass(frozen=True)
class Selection:
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    def wants(self, code: str) -> bool:
        if self.select and not any(code.startswith(p) for p in self.select):
            return False
        return not any(code.startswith(p) for p in self.ignore)


@dataclass(frozen=True)
class Analysis:
    """Everything a run computed: what reports and `explain` read."""

    result: LintResult
    prediction: Prediction | None
    catalog: Catalog
    installed_reads: Mapping[str, str] = field(default_factory=dict)  # installed module -> file signature


def lint_paths(paths: list[Path], config: Config, selection: Selection | None = None,
               use_cache: bool = True, progress=None, jobs: int | None = None) -> LintResult:
    """The findings for `paths`, from the project's caches: a re-run with nothing changed
    reads one result; after an edit, only the Dynamo tasks and entry-point facts that read an
    edited module are computed again, and a run on a few files (pre-commit) parses only those
    files and what the recomputed work reaches."""
    selection = selection or Selection(config.select, config.ignore)
    reported, indexed, skipped = _files(paths, config)
    store = cache.ProjectStore(config.root, config.cache_dir) if use_cache else None
    fingerprint = _run_fingerprint(config, selection)
    known = store.file_stats() if store else {}
    digests = cache.content_digests(indexed, known=known) if store else {}  # no cache: nothing is keyed by them
    if store:
        store.keep_file_stats(digests, known)
    key = cache.cache_key(fingerprint, digests, reported) if store and fingerprint else None
    installed = Snapshot({}, {}, _installed(config))  # the installed files a stored result read, as now
    full = store.load_result(key, installed.still) if store and key else None
    if full is None:
        analysis = analyse(paths, config, selection, progress=progress, jobs=jobs,
                           store=store if fingerprint else None, digests=digests,
                           files=(reported, indexed, skipped))
        full = analysis.result
        if store and key:
            store.store_result(key, full, dict(analysis.installed_reads))
    wanted = {str(p) for p in reported} | {e.path for e in skipped}
    if _installed(config) is not None:  # findings inside installed packages, reached from these files
        wanted |= {d.path for d in full.diagnostics
                   if d.chain and d.chain[0].path in wanted or d.via is not None and d.via.path in wanted}
    return LintResult(len(reported), tuple(d for d in full.diagnostics if d.path in wanted),
                      tuple(e for e in full.errors if e.path in wanted), full.hidden_library_conditional)


def _run_fingerprint(config: Config, selection: Selection) -> str | None:
    installed = _installed(config)
    settings = repr((config, selection, installed.fingerprint() if installed else None))
    return cache.run_fingerprint(settings, config.extra_rules)


def _in_library(d: Diagnostic, library: set[str], compiled_at: dict[str, ChainLink]) -> Diagnostic:
    """A finding inside an installed package: no fix (it is not the user's file to edit), and
    the user's line that reaches it: the last link of the call chain in the project, or where
    the project compiles the library's code (`torch.compile(model)` on a library model)."""
    via = next((link for link in reversed(d.chain) if link.path not in library), None)
    return replace(d, fix=None, via=via or compiled_at.get(d.entry or ""))


def _shown_in_library(d: Diagnostic, library: set[str], config: Config) -> bool:
    """A finding reached through an installed package is shown unless the package itself
    reaches it only behind a condition on values the source does not tell (its own
    configuration, internal state): the user can neither see nor act on those, and most are
    not taken. That holds for what such a cause does to the user's own frame too (a compiled
    `train_step` skipped by an exception the library raises only on an untaken branch)."""
    return config.show_library_conditions or not any(link.condition and link.path in library for link in d.chain)


def _compile_sites(entries, library: set[str]) -> dict[str, ChainLink]:
    """Entry function -> the project line that compiles it, for entries defined in a library."""
    return {e.function: ChainLink(e.path, e.line, e.how) for e in reversed(entries)
            if e.path not in library}


def _installed(config: Config) -> InstalledPackages | None:
    """Where imports the project does not define are looked up (script mode), if anywhere."""
    return for_config(config.python, config.installed_packages, config.root) if config.follow_installed else None


def _files(paths: list[Path], config: Config) -> tuple[list[Path], list[Path], list]:
    """What is reported, what is indexed (the whole root too), and the files passed over
    among those reported (with the reason)."""
    excludes = config.exclude + config.extend_exclude
    named = discover(paths, config.root, excludes)
    everything = discover([config.root], config.root, excludes)
    return list(named.files), sorted(set(everything.files) | set(named.files)), list(named.skipped)


def analyse(paths: list[Path], config: Config, selection: Selection | None = None,
            overlay: dict[str, bytes] | None = None, progress=None, jobs: int | None = None,
            program: Path | None = None, store: cache.ProjectStore | None = None,
            digests: dict[str, str] | None = None, files: tuple | None = None) -> Analysis:
    """Run every stage. `overlay`: file contents to use instead of what is on disk (--diff);
    `progress(done, total)`: called while files are parsed (the CLI draws a bar on a TTY);
    `jobs`: worker processes (default: one per CPU); the result does not depend on it;
    `program`: predict only for what running this script compiles (`verify`), not for every
    compile call of the project; `store`: reuse (and keep) task results and entry-point facts
    whose inputs did not change; `digests`, `files`: the files' content digests and
    `_files(paths, config)`, if already found."""
    with paused_gc():
        return _analyse(paths, config, selection or Selection(config.select, config.ignore), overlay,
                        progress, jobs, program, store, digests, files)


def _analyse(paths, config, selection, overlay, progress, jobs, program, store, digests, files) -> Analysis:
    knowledge = load_profile(config.torch_profile)
    catalog = bind_catalog(load_catalog(config.extra_rules))
    reported, indexed, skipped = files if files is not None else _files(paths, config)
    wanted = {str(p) for p in reported}
    clock = Stopwatch()
    if store is None:  # nothing is stored or reused: the digests would key nothing
        digests = {}
    elif digests is None or overlay:
        digests = cache.content_digests(indexed, overlay)
    texts = lambda path: _text(Path(path), overlay)  # noqa: E731
    snapshot = Snapshot(digests, module_names(indexed), _installed(config), store.trees if store else None, texts)
    summaries = load_summaries(store, snapshot, knowledge, texts)
    runs = RunCache(store, _run_fingerprint(config, selection) or "", snapshot, summaries)
    mode = _mode(config, program, reported, indexed)
    project_files = _project_files(snapshot)
    if mode == "whole":
        loaded, jobs = indexed, scan_jobs(jobs, len(indexed))
    else:  # modules are parsed as the work reaches them: workers would each parse them again
        loaded, jobs = (reported if mode == "files" else []), 1
    modules, diagnostics, errors = [], [], list(skipped)
    # a few files (pre-commit): unchanged ones come from the index store, as what they reach does
    stored = runs.indexes if mode == "files" else None
    for outcome in index_files(loaded, overlay, jobs, progress, stored):
        if outcome.module is not None:
            modules.append(outcome.module)
        elif outcome.path in wanted:
            diagnostics += [outcome.diagnostic] if outcome.diagnostic is not None else []
            errors += [outcome.error] if outcome.error is not None else []
    clock.lap("parse + index files")
    wanted_marker = SETTINGS if mode == "entries" else ENTRIES  # `--entry`: the project's config switches only
    skeleton = Skeleton(summaries.values())
    components = skeleton.components()
    candidates = tuple(n for n, s in sorted(summaries.items()) if wanted_marker in s.markers)
    if mode == "files":  # only programs the reported files are part of can reach them
        candidates = _same_programs(candidates, components, [snapshot.names.get(str(p)) for p in reported])
    marked = {text: tuple(n for n, s in sorted(summaries.items()) if text in s.markers) for text in GLOBAL_MARKERS}
    index = build_project(modules, [], knowledge, jobs, _installed(config), project_files, overlay, candidates, runs,
                          marked)
    if program is not None:
        index = _program_only(index, str(program.resolve()))
    clock.lap("entry points")
    entries = (() if mode == "entries" else index.entries) + named_entries(index.project, config.entry_points)
    if config.assume_compiled == "modules":
        entries += module_forward_entries(index.project, knowledge, wanted)
        if mode == "files":  # as a whole-tree scan: subclasses elsewhere that compile these files' forward
            entries += inherited_forward_entries(index.project, knowledge, wanted, skeleton.importers)
    tasks = plan_tasks(index.project, entries, index.configs, components, _dynamo_defaults(config, knowledge))
    done = run_tasks(index.project, knowledge, catalog, tasks, jobs, with_trees=_fix_probes, cache=runs)
    results = [result for result, _ in done]
    fix_probes = {key: applies for _, probes in done for key, applies in probes}
    clock.lap(f"{len(tasks)} Dynamo tasks ({runs.reused} reused)")
    if mode == "whole" and isinstance(index.project.modules, LazyModules):
        clock.lap(f"{runs.keep_shared_indexes(index.project.modules)} shared module indexes stored")
    prediction = merge_results(index.project, entries, index.configs, index.wrapped, results)
    thresholds = Thresholds(config.disable_min_breaks, config.disable_max_ops)
    library: set[str] = getattr(index.project.modules, "library_paths", set())
    compiled_at = _compile_sites(entries, library)
    found = [d for d in run_checks(catalog, prediction, thresholds) if d.path in wanted or d.path in library]
    shown = [d for d in found if _shown_in_library(d, library, config)]
    diagnostics += [d if d.path not in library else _in_library(d, library, compiled_at) for d in shown]
    diagnostics += [d for path, d, _ in _load_failures(index) if d is not None and path in wanted]
    errors += [e for path, _, e in _load_failures(index) if e is not None and path in wanted]
    errors += [e for e in index.errors + prediction.errors if e.path in wanted]
    parsed = {m.path: m.parsed for m in _loaded(index) if m.path not in library}
    sources = {path: p.text for path, p in parsed.items()}
    diagnostics = list(dict.fromkeys(diagnostics))  # a file that failed to parse up front may fail again when reached
    kept = fingerprinted(_filter(diagnostics, selection, config, sources), sources, config.root)
    kept = _offer_fixes(kept, parsed, catalog, jobs, fix_probes)
    result = LintResult(len(reported), tuple(sorted(set(kept), key=Diagnostic.sort_key)),
                        tuple(sorted(dict.fromkeys(errors), key=lambda e: e.path)),
                        len(set(found) - set(shown)))
    clock.lap("rules + report")
    return Analysis(result, prediction, catalog, dict(snapshot.installed_reads))


def _same_programs(candidates: tuple[str, ...], components: dict[str, int], reported) -> tuple[str, ...]:
    """The candidate modules connected by imports to a reported module: a compile call in an
    unrelated program (another script in the same folder tree) cannot reach the reported files."""
    programs = {components.get(name) for name in reported if name is not None}
    return tuple(name for name in candidates if components.get(name) in programs)


def _mode(config: Config, program: Path | None, reported: list[Path], indexed: list[Path]) -> str:
    """"entries": the run names what is compiled (`--entry`, not `--assume-compiled modules`):
    only those entries, parsing what they reach; "files": a few files of the project
    (pre-commit, a training script): the project's compile calls and those files' modules,
    parsing those files and what the work reaches; "whole": the whole tree, parsed up front."""
    if program is not None:
        return "whole"
    if config.entry_points and config.assume_compiled != "modules":
        return "entries"
    return "files" if len(reported) < len(indexed) else "whole"


def _text(path: Path, overlay) -> str | None:
    data = (overlay or {}).get(str(path))
    try:
        data = data if data is not None else read_regular(path, MAX_FILE_BYTES)
    except OSError:
        return None
    return data.decode("utf-8", "replace")


def _project_files(snapshot: Snapshot) -> dict[str, Path]:
    return {name: Path(path) for path, name in snapshot.names.items()}


def _loaded(index: IndexResult) -> list:
    loaded = getattr(index.project.modules, "loaded_values", None)
    return loaded() if loaded is not None else list(index.project.modules.values())


def _load_failures(index: IndexResult) -> list:
    return list(getattr(index.project.modules, "failures", ()))


def _program_only(index: IndexResult, program: str) -> IndexResult:
    """The compile calls and config switches of one script and the modules it imports."""
    name = index.project.by_path.get(program)
    reach = index.project.import_closure(name) if name is not None else frozenset()
    mine = lambda path: index.project.by_path.get(path) in reach  # noqa: E731
    return replace(index, entries=tuple(e for e in index.entries if mine(e.path)),
                   configs=tuple(c for c in index.configs if mine(c.path)),
                   wrapped=tuple(w for w in index.wrapped if mine(w.path)))


def _filter(diagnostics, selection: Selection, config: Config, sources) -> list[Diagnostic]:
    lines_cache: dict[str, list[str]] = {}
    kept = []
    for d in diagnostics:
        if not selection.wants(d.code) or _per_file_ignored(d, config):
            continue
        if d.path in sources:
            lines = lines_cache.setdefault(d.path, sources[d.path].splitlines())
            if _suppressed(d, lines):
                continue
        kept.append(d)
    return kept


def _offer_fixes(diagnostics, parsed: dict, catalog: Catalog, jobs: int, probes: dict) -> list[Diagnostic]:
    """A rule's fix is offered only where its rewrite applies to this finding: known from the
    tasks' probes for break sites, else tried per file, in the workers (each try needs the
    file's tree)."""
    out = list(diagnostics)
    by_path: dict[str, list[int]] = {}
    for i, d in enumerate(diagnostics):
        rule = catalog.get(d.code)
        if d.fix is None or rule is None or not rule.fix_rewrite:
            continue
        probed = probes.get((d.path, d.span, d.code))
        if probed is None:
            by_path.setdefault(d.path, []).append(i)
        elif not probed:
            out[i] = replace(d, fix=None)
    paths = sorted(by_path)
    work = [[diagnostics[i] for i in by_path[path]] for path in paths]
    verdicts = parallel_map(_fixes_apply, work, jobs, lambda diags, _: [False] * len(diags),
                            parsed=parsed, catalog=catalog)
    for path, applies in zip(paths, verdicts):
        for i, ok in zip(by_path[path], applies):
            if not ok:
                out[i] = replace(out[i], fix=None)
    return out


def _fix_probes(result) -> tuple:
    """Whether each rule's rewrite applies at each break site of a task, decided in the task's
    worker while its trees are held (deciding it for the findings later parses them again)."""
    state = shared_state()
    project, catalog = state["project"], state["catalog"]
    rewrites = [(rule.code, rule.fix_rewrite) for rule in catalog.rules if rule.fix_rewrite]
    places = {(s.path, s.span) for s in result.sites} | {(f.path, f.break_span) for f in result.frames}
    out = []
    for path, span in places:
        module = project.modules.get(project.by_path.get(path, ""))
        if module is None:
            continue
        for code, rewrite in rewrites:
            probe = Diagnostic(code=code, name="", severity="", kind="", path=path, span=span, message="")
            out.append(((path, span, code), rewrite_applies(module.parsed, probe, rewrite)))
    return tuple(out)


def _fixes_apply(diagnostics: list[Diagnostic]) -> list[bool]:
    state = shared_state()
    module = state["parsed"].get(diagnostics[0].path)
    with TREES.scope():
        return [module is not None
                and rewrite_applies(module, d, state["catalog"].get(d.code).fix_rewrite)
                for d in diagnostics]


def _dynamo_defaults(config: Config, knowledge) -> tuple[tuple[str, bool], ...]:
    """The configured Dynamo flags, each one the knowledge profile models."""
    unknown = sorted(name for name, _ in config.dynamo_config if name not in knowledge.config_flags)
    if unknown:
        raise ConfigError(f"dynamo config: {', '.join(unknown)} not modelled by torch profile "
                          f"{knowledge.profile} (known: {', '.join(sorted(knowledge.config_flags))})")
    on_by_default = tuple((name, True) for name in sorted(knowledge.config_flags_on_by_default))
    return on_by_default + config.dynamo_config


def fingerprinted(diagnostics, sources, root: Path) -> list[Diagnostic]:
    """Key each finding by what it is, not where: rule, file, function and the flagged source
    text (whitespace-folded), plus an occurrence number among identical keys. Moving code up
    or down, or editing other functions, keeps the key."""
    counts: dict[str, int] = {}
    out = []
    for d in sorted(diagnostics, key=Diagnostic.sort_key):
        lines = sources.get(d.path, "").splitlines()
        text = " ".join(lines[d.span.line - 1].split()) if 0 < d.span.line <= len(lines) else ""
        try:
            rel = Path(d.path).resolve().relative_to(root).as_posix()
        except ValueError:
            rel = Path(d.path).name
        base = hashlib.sha1(f"{d.code}|{rel}|{d.function}|{text}".encode()).hexdigest()[:16]
        n = counts[base] = counts.get(base, 0) + 1
        out.append(replace(d, fingerprint=f"{base}:{n}"))
    return out


def _per_file_ignored(d: Diagnostic, config: Config) -> bool:
    try:
        rel = Path(d.path).relative_to(config.root).as_posix()
    except ValueError:
        rel = d.path
    for pattern, codes in config.per_file_ignores:
        if fnmatch.fnmatchcase(rel, pattern) and any(d.code.startswith(c) for c in codes):
            return True
    return False


def _suppressed(d: Diagnostic, lines: list[str]) -> bool:
    """`# noqa`, `# noqa: GBL101`, `# gbreak-lint: ignore[GBL101]` on the reported line(s)."""
    for number in {d.span.line, d.span.end_line}:
        if not 0 < number <= len(lines):
            continue
        text = lines[number - 1]
        for regex in (NOQA_RE, IGNORE_RE):
            m = regex.search(text)
            if m is None:
                continue
            codes = m.group("codes")
            if not codes or any(d.code.startswith(c.strip()) for c in re.split(r"[\s,]+", codes) if c.strip()):
                return True
    return False
