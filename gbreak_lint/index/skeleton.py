"""The project's shape without parsing it: every module's import name, what it imports (read
from its text), and the text markers that make a module matter to a run.

A run on a few files (pre-commit, `--entry`, a training script) needs the whole project only to
answer two questions: which modules can hold compile calls or Dynamo settings (and hooks every
task reads), and which modules form one program (connected by imports). Imports and markers
read from the text answer them for a whole library in about a second (and are cached by
content); libcst parses only the modules the work then reaches.

Import lines are found with a regular expression; one inside a triple-quoted string (a
docstring example) is skipped; imports inside functions count, as they do in the index.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from .entries import COMPILE_WORD
from .names import module_name_for, resolve_relative

# `from .a.b import (x, y)` / `import a.b as c, d`, matched at the start of a logical line
IMPORT_STATEMENT = re.compile(
    r"[ \t]*(?:from[ \t]+(?P<base>\.*[\w.]*)[ \t]+import[ \t]+(?P<names>\([^)]*\)|(?:[^\n\\]|\\\n)*)"
    r"|import[ \t]+(?P<modules>(?:[^\n\\;]|\\\n)*))")

len_max = 1 << 62  # sorts after every span starting at the same offset

# markers: text that makes a module part of every task's question
HOOK_MARKER = "register_f"  # register_forward_*hook and register_full_backward_*hook
DISALLOW_MARKER = "disallow_in_graph"
GLOBAL_MARKERS = (HOOK_MARKER, DISALLOW_MARKER)
ENTRIES = "entries"  # may hold compile calls or Dynamo settings (a superset of `might_hold_entries`)
SETTINGS = "settings"  # may switch a Dynamo config flag (a superset of what the index finds)


def sets_config(text: str, knowledge) -> bool:
    """Can this module switch a Dynamo config flag for its program (`torch._dynamo.config.x =
    ...`, `config.patch(...)`, `reorderable_logging_functions`)? A cheap text test, a superset
    of what the index finds."""
    if ".patch(" in text or "patch.object(" in text or "reorderable_logging_functions" in text:
        return True
    return any(re.search(rf"\b{flag}\s*=(?!=)", text) for flag in knowledge.config_flags if flag in text)


def mentions_compile(text: str) -> bool:
    # the literal test first: the pattern has no literal prefix for the regex engine to skip by
    return any(word in text for word in ("compile", "optimize", "explain", "export")) \
        and COMPILE_WORD.search(text) is not None


@dataclass(frozen=True)
class ModuleSummary:
    name: str
    path: str
    is_package: bool
    imports: tuple[str, ...]  # qualified import targets (`pkg.mod.Name`, `pkg.mod`, star bases)
    markers: frozenset[str]  # GLOBAL_MARKERS found in the text


def summarize(path: Path, text: str, name: str, knowledge) -> ModuleSummary:
    is_package = path.stem == "__init__"
    imports: list[str] = []
    for m in _import_statements(text):
        if m.group("modules") is not None:
            imports += _plain_imports(m.group("modules"))
        else:
            imports += _from_imports(name, is_package, m.group("base"), m.group("names"))
    markers = {marker for marker in GLOBAL_MARKERS if marker in text}
    if sets_config(text, knowledge):
        markers |= {ENTRIES, SETTINGS}
    elif mentions_compile(text):
        markers.add(ENTRIES)
    return ModuleSummary(name, str(path), is_package, tuple(dict.fromkeys(imports)), frozenset(markers))


def _import_statements(text: str):
    """The import statements of a module's text, outside triple-quoted strings. Found from the
    word `import` (a literal search, many times faster than a line-anchored pattern tried at
    every offset), each matched from the start of its line."""
    strings: list[tuple[int, int]] | None = None
    last_line = -1
    at = text.find("import")
    while at >= 0:
        line = text.rfind("\n", 0, at) + 1
        m = IMPORT_STATEMENT.match(text, line) if line != last_line else None
        last_line = line
        if m is not None and at < m.end():
            strings = _docstring_spans(text) if strings is None else strings
            if not (strings and _inside(line, strings)):
                yield m
            at = text.find("import", m.end())
        else:
            at = text.find("import", at + 6)


def _docstring_spans(text: str) -> list[tuple[int, int]]:
    """Where triple-quoted strings lie (an import line can only hide in one of those: the
    pattern wants the line to start with `from`/`import`, which no comment or one-line string
    does). Each opening quote is paired with the next of its kind."""
    spans = []
    double, single = text.find('"""'), text.find("'''")  # the next of each kind; -1: no more
    while double >= 0 or single >= 0:
        quote, start = ('"""', double) if single < 0 or 0 <= double < single else ("'''", single)
        end = text.find(quote, start + 3)
        if end < 0:
            spans.append((start, len(text)))
            break
        after = end + 3
        spans.append((start, after))
        if 0 <= double < after:
            double = text.find('"""', after)
        if 0 <= single < after:
            single = text.find("'''", after)
    return spans


def _inside(offset: int, spans: list[tuple[int, int]]) -> bool:
    i = bisect.bisect_right(spans, (offset, len_max)) - 1
    return i >= 0 and spans[i][0] <= offset < spans[i][1]


def _plain_imports(spec: str) -> list[str]:
    out = []
    for part in spec.replace("\\\n", " ").split(","):
        words = part.split()
        if words and re.fullmatch(r"[\w.]+", words[0]):
            out.append(words[0])
    return out


def _from_imports(module: str, is_package: bool, base: str, names: str) -> list[str]:
    level = len(base) - len(base.lstrip("."))
    target = base.lstrip(".") or None
    absolute = resolve_relative(module, is_package, level, target) if level else (target or "")
    names = names.strip().strip("()").replace("\\\n", " ")
    if names.split(";")[0].strip() == "*":
        return [absolute] if absolute else []
    out = []
    for part in names.split(";")[0].split(","):
        words = part.split()
        if words and re.fullmatch(r"\w+", words[0]):
            out.append(f"{absolute}.{words[0]}" if absolute else words[0])
    return out


def module_names(paths: Iterable[Path]) -> dict[str, str]:
    """Path -> import name, as `assemble_project` names them (a second file claiming a name
    gets `name#2`; imports see the first, in path order)."""
    names: dict[str, str] = {}
    taken: set[str] = set()
    next_suffix: dict[str, int] = {}  # per base name: thousands of `main.py` stay linear
    packages: dict[Path, str] = {}
    for path in sorted(paths):
        base = module_name_for(path, packages)
        name, n = base, next_suffix.get(base, 2)
        while name in taken:
            name = f"{base}#{n}"
            n += 1
        next_suffix[base] = n
        taken.add(name)
        names[str(path)] = name
    return names


class Skeleton:
    """Every project module's summary, by import name, and the questions they answer."""

    def __init__(self, summaries: Iterable[ModuleSummary]):
        self.modules: dict[str, ModuleSummary] = {s.name: s for s in summaries}
        self.by_path: dict[str, str] = {s.path: s.name for s in self.modules.values()}
        self._targets: dict[str, tuple[str, ...]] = {}
        self._prefixes: dict[str, str | None] = {}

    def module_of_prefix(self, qualname: str) -> str | None:
        if qualname in self._prefixes:
            return self._prefixes[qualname]
        found = None
        parts = qualname.split(".")
        for i in range(len(parts), 0, -1):
            name = ".".join(parts[:i])
            if name in self.modules:
                found = name
                break
        self._prefixes[qualname] = found
        return found

    def imported(self, name: str) -> tuple[str, ...]:
        """The project modules `name` imports (the longest module prefix of each target)."""
        found = self._targets.get(name)
        if found is None:
            out = dict.fromkeys(other for other in map(self.module_of_prefix, self.modules[name].imports)
                                if other is not None and other != name)
            found = self._targets[name] = tuple(out)
        return found

    def importers(self, words: set[str]) -> list[str]:
        """The modules (by name, sorted) importing something whose last dotted part is one of
        `words`: a class by its name from wherever it is imported (packages re-export), or a
        module. A superset of the modules that can subclass those classes."""
        return sorted(name for name, summary in self.modules.items()
                      if any(target.rsplit(".", 1)[-1] in words for target in summary.imports))

    def components(self) -> dict[str, int]:
        """Modules connected by imports (either way) share a number: one program."""
        parent = {name: name for name in self.modules}

        def find(x: str) -> str:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for name in self.modules:
            for other in self.imported(name):
                parent[find(name)] = find(other)
        roots: dict[str, int] = {}
        return {name: roots.setdefault(find(name), len(roots)) for name in sorted(self.modules)}
