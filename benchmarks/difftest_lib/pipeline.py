"""One program end to end: write it, label it (or reuse the stored label), lint, score it."""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from .generate import generate
from .labeler import Labeler, LabelFailed
from .linter import LintFailed, lint
from .score import score_program, usable


@dataclass
class Settings:
    out: Path
    seed: int
    linter_src: Path
    shrink_steps: int = 40
    check_every: int = 20  # every k-th program is labelled again in a fresh interpreter
    timeout: float = 60.0


def write_if_changed(path: Path, text: str) -> bool:
    if path.exists() and path.read_text() == text:
        return False
    path.write_text(text)
    return True


def dump(path: Path, data) -> None:
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


def process(index: int, st: Settings, labeler: Labeler) -> dict:
    prog = generate(st.seed, index)
    folder = st.out / "programs" / prog.pid
    folder.mkdir(parents=True, exist_ok=True)
    changed = write_if_changed(folder / "main.py", prog.text)
    dump(folder / "meta.json", prog.meta)
    result = {"id": prog.pid, "meta": prog.meta, "timing": {}}
    t0 = time.perf_counter()
    try:
        label = _label(folder, prog.text, changed, labeler)
    except LabelFailed as err:
        return {**result, "dropped": "oracle_failed", "detail": str(err)}
    result["timing"]["label_s"] = round(time.perf_counter() - t0, 3)
    reason = usable(label) or _relabel_check(index, st, labeler, folder, prog.text, label)
    if reason:
        return {**result, "dropped": reason}
    return _lint_and_score(result, folder, label, prog.text, st, labeler)


def _label(folder: Path, text: str, changed: bool, labeler: Labeler) -> dict:
    """Resumable: a stored label of the very same text is never recomputed."""
    path = folder / "label.json"
    if path.exists() and not changed:
        return json.loads(path.read_text())
    label = labeler.label(folder / "main.py", text)
    dump(path, label)
    return label


def _relabel_check(index: int, st: Settings, labeler: Labeler, folder: Path, text: str, label: dict) -> str | None:
    """A sample is labelled again by the reference oracle: a different answer means the
    program is nondeterministic (or the batch oracle is wrong); either way it is not scored."""
    if st.check_every <= 0 or index % st.check_every:
        return None
    try:
        again = labeler.label(folder / "main.py", text, fresh=True)
    except LabelFailed:
        return "relabel_failed"
    return None if again["configs"] == label["configs"] else "relabel_mismatch"


def _lint_and_score(result: dict, folder: Path, label: dict, text: str, st: Settings, labeler: Labeler) -> dict:
    t0 = time.perf_counter()
    try:
        report = lint(folder, st.linter_src)
    except LintFailed as err:
        return {**result, "dropped": "linter_failed", "detail": str(err)}
    result["timing"]["lint_s"] = round(time.perf_counter() - t0, 3)
    dump(folder / "lint.json", report)
    result["score"] = score_program(label, report["diagnostics"], folder)
    dump(folder / "result.json", {k: v for k, v in result.items() if k != "meta"})
    return result
