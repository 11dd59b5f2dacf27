"""Shrink a disagreeing program: delete or unwrap statements while the disagreement stays.

`evaluate(text)` returns the set of miss signatures of a candidate, or None when the
candidate cannot be scored (does not parse, fails under torch); each call costs an oracle
run (cached by text) and a linter run, so the number of evaluated candidates is bounded.
"""
from __future__ import annotations

import ast
import builtins
from typing import Callable, Iterator

BLOCKS = (ast.If, ast.For, ast.While, ast.With, ast.Try)


def shrink(text: str, target: tuple, evaluate: Callable[[str], set | None], max_steps: int = 40) -> tuple[str, int]:
    """Greedy: take the first candidate that keeps `target`, restart from it; stop after
    max_steps evaluations or when no candidate keeps it."""
    current, steps, tried = text, 0, {text}
    improved = True
    while improved and steps < max_steps:
        improved = False
        for cand in candidates(current):
            if cand in tried:
                continue
            tried.add(cand)
            steps += 1
            sigs = evaluate(cand)
            if sigs is not None and target in sigs:
                current, improved = cand, True
                break
            if steps >= max_steps:
                break
    return current, steps


def candidates(text: str) -> Iterator[str]:
    """Smaller programs, most promising first: unwrap blocks, drop simple statements, drop
    whole definitions.  Only texts that still compile are yielded."""
    lines = text.split("\n")
    stmts = _statements(ast.parse(text))
    seen = set()
    for kind in ("unwrap", "simple", "def"):
        for node in stmts:
            for cand in _edits(kind, node, lines):
                if cand not in seen and _compiles(cand) and not undefined_names(cand):
                    seen.add(cand)
                    yield cand


def _statements(tree: ast.Module) -> list[ast.stmt]:
    out = [n for n in ast.walk(tree) if isinstance(n, ast.stmt) and not isinstance(n, (ast.Import, ast.ImportFrom))]
    return sorted(out, key=lambda n: (n.lineno, -n.end_lineno))


def _start(node: ast.stmt) -> int:
    decos = getattr(node, "decorator_list", [])
    return min([node.lineno] + [d.lineno for d in decos])


def _edits(kind: str, node: ast.stmt, lines: list[str]) -> Iterator[str]:
    first, last = _start(node) - 1, node.end_lineno  # 0-based slice [first, last)
    indent = lines[node.lineno - 1][: len(lines[node.lineno - 1]) - len(lines[node.lineno - 1].lstrip())]
    if kind == "unwrap" and isinstance(node, BLOCKS) and node.body:
        body = lines[node.body[0].lineno - 1: node.body[-1].end_lineno]
        inner = body[0][: len(body[0]) - len(body[0].lstrip())]
        yield "\n".join(lines[:first] + [indent + b[len(inner):] if b.strip() else b for b in body] + lines[last:])
    if kind == "def" and isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        yield "\n".join(lines[:first] + lines[last:])
        for d in node.decorator_list:  # a decorator alone
            yield "\n".join(lines[: d.lineno - 1] + lines[d.end_lineno:])
    if kind == "simple" and not isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        deleted = "\n".join(lines[:first] + lines[last:])
        yield deleted if _compiles(deleted) else "\n".join(lines[:first] + [indent + "pass"] + lines[last:])


def _compiles(text: str) -> bool:
    try:
        compile(text, "<candidate>", "exec")
    except SyntaxError:
        return False
    return True


def undefined_names(text: str) -> set[str]:
    """Names read but bound nowhere (any scope): such a candidate would only die of a
    NameError under torch, so it is rejected without spending an oracle run on it."""
    tree = ast.parse(text)
    bound = set(dir(builtins)) | {"__file__", "__name__"}
    loaded = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            (loaded if isinstance(n.ctx, ast.Load) else bound).add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(n.name)
        elif isinstance(n, ast.arg):
            bound.add(n.arg)
        elif isinstance(n, ast.alias):
            bound.add((n.asname or n.name).split(".")[0])
        elif isinstance(n, ast.ExceptHandler) and n.name:
            bound.add(n.name)
    return loaded - bound
