"""Shrink phase: after every program is scored, shrink the chosen disagreements and write
DIR/disagreements/<id>/ (main.py, label.json, lint.json, diff.txt)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from .labeler import Labeler, LabelFailed, text_hash
from .linter import LintFailed, lint
from .pipeline import Settings, dump
from .score import primary, score_program, signature, usable
from .shrink import shrink

LABEL_FIRST = ("site_fn", "frame_fn", "compile_error_fn", "times_over", "times_under", "gb_code",
               "frame_outcome")


def choose(results: list[dict], per_target: int) -> dict[str, str | None]:
    """id -> None (shrink it) or the id of an earlier program of the same kind (whose shrunk
    form stands for it).  A kind is the primary miss plus the context wrapper (disable,
    allow_in_graph, ...), which decides most root causes.  Depends on program order only,
    not on --jobs."""
    chosen, seen = {}, {}
    for r in results:
        if "score" not in r or not r["score"]["misses"]:
            continue
        kind = primary(r["score"]["misses"]) + (r.get("meta", {}).get("context", {}).get("wrapper"),)
        first = seen.setdefault(kind, [])
        chosen[r["id"]] = None if per_target <= 0 or len(first) < per_target else first[0]
        first.append(r["id"])
    return chosen


def write_disagreement(result: dict, st: Settings, labeler: Labeler, do_shrink: bool, same_as: str | None) -> dict:
    folder = st.out / "programs" / result["id"]
    text = (folder / "main.py").read_text()
    target = primary(result["score"]["misses"])
    dest = st.out / "disagreements" / result["id"]
    small, steps = text, 0
    if do_shrink and same_as is None:
        small, steps = shrink(text, target, lambda c: Evaluator(st, labeler, target)(c), st.shrink_steps)
    sigs, misses = Evaluator(st, labeler, target)(small, keep=dest, full=True)
    note = f"not shrunk: same disagreement as ../{same_as}/\n" if same_as else ""
    (dest / "diff.txt").write_text(note + diff_text(result["id"], target, steps, text, small,
                                                      result["score"]["misses"], misses))
    return {"target": list(target), "steps": steps, "lines": small.count("\n"),
            "kept": target in (sigs or set()), "same_as": same_as}


class Evaluator:
    """Signatures of a candidate, or None.  The cheaper side goes first and a candidate that
    cannot show the target (the GB code gone from the label, the linter code gone from the
    report) is rejected before the other side runs."""

    def __init__(self, st: Settings, labeler: Labeler, target: tuple):
        self.st, self.labeler, self.target = st, labeler, target

    def __call__(self, text: str, keep: Path | None = None, full: bool = False):
        folder = keep or self.st.out / "scratch" / text_hash(text)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "main.py").write_text(text)
        try:
            label, report = self._run(folder, text, full)
        except (LabelFailed, LintFailed):
            label = report = None
        misses = score_program(label, report["diagnostics"], folder)["misses"] if label and report else []
        if keep is None:
            shutil.rmtree(folder, ignore_errors=True)
        else:
            for name, data in (("label.json", label), ("lint.json", report)):
                if data is not None:
                    dump(folder / name, data)
        sigs = {signature(m) for m in misses} if label and report else None
        return (sigs, misses) if full else sigs

    def _run(self, folder: Path, text: str, full: bool):
        if self.target[0] in LABEL_FIRST:
            label = self.labeler.label(folder / "main.py", text)
            if usable(label) or (not full and not _label_shows(label, self.target)):
                return label, None
            return label, lint(folder, self.st.linter_src)
        report = lint(folder, self.st.linter_src)
        if not full and not _report_shows(report, self.target):
            return None, report
        label = self.labeler.label(folder / "main.py", text)
        return label, (None if usable(label) else report)


def _label_shows(label: dict, target: tuple) -> bool:
    """Necessary for the target: the label still holds its GB code(s) / frame function."""
    kind, fields = target[0], target[1:]
    needed = {"site_fn": fields[:1], "compile_error_fn": fields[:1], "frame_fn": fields[1:2],
              "gb_code": tuple("/".join(map(str, fields[2:3])).split("/")), "frame_outcome": fields[2:3]}.get(kind, ())
    text = json.dumps(label)
    return all(f'"{n}"' in text for n in needed)


def _report_shows(report: dict, target: tuple) -> bool:
    """Necessary for the target: the report still holds the rule code / frame function."""
    kind, fields = target[0], target[1:]
    needed = {"site_fp": fields[:1], "compile_error_fp": fields[:1]}.get(kind, ())
    text = json.dumps(report["diagnostics"])
    if kind == "frame_fp":
        return any(d.get("frame") and d["frame"]["function"] == fields[1]
                   for d in report["diagnostics"])
    return all(f'"{n}"' in text for n in needed)


def diff_text(pid, target, steps, text, small, before, after) -> str:
    fmt = lambda ms: "\n".join("  " + " ".join(map(str, m)) for m in ms) or "  (none)"  # noqa: E731
    return (f"program {pid}: shrunk {text.count(chr(10))} -> {small.count(chr(10))} lines in {steps} steps\n"
            f"kept disagreement: {' '.join(map(str, target))}\n"
            f"disagreements of main.py here (the shrunk program):\n{fmt(after)}\n"
            f"disagreements of the original (../../programs/{pid}/main.py):\n{fmt(before)}\n")
