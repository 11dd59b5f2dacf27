"""--matrix: every construct alone (depth 1, each variant) around one cause, in the plainest
context (@torch.compile, module level).  Random programs mix several root causes; this
isolates which construct by itself hides or invents a break."""
from __future__ import annotations

import json
import random
from pathlib import Path

from .causes import make_cause
from .constructs_call import REGISTRY
from .frag import Names
from .generate import render
from .labeler import Labeler
from .linter import lint
from .score import score_program, usable

PLAIN = {"entry": "deco_bare", "entry_args": "", "wrapper": "none", "nested_graph_breaks": False,
         "placement": "module_level"}


def variants(name: str, cause: str) -> dict[str, str]:
    """variant -> program text; eight draws find every variant of the constructs here."""
    out = {}
    for draw in range(8):
        names = Names()
        frag, variant = REGISTRY[name](make_cause(cause, names), random.Random(f"{name}:{draw}"), names)
        out.setdefault(variant or "-", render(frag, PLAIN, random.Random(0)))
    return out


def run_matrix(out: Path, cause: str, labeler: Labeler, linter_src: Path) -> list[str]:
    rows = []
    for name in sorted(REGISTRY):
        for variant, text in sorted(variants(name, cause).items()):
            folder = out / "matrix" / cause / f"{name}-{variant}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "main.py").write_text(text)
            label = labeler.label(folder / "main.py", text)
            (folder / "label.json").write_text(json.dumps(label, indent=1, sort_keys=True) + "\n")
            rows.append(f"{name:<22} {variant:<14} " + _verdict(folder, label, linter_src))
    return rows


def _verdict(folder: Path, label: dict, linter_src: Path) -> str:
    if usable(label):
        return "dropped (program failed under torch)"
    report = lint(folder, linter_src)
    (folder / "lint.json").write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
    misses = score_program(label, report["diagnostics"], folder)["misses"]
    return "ok" if not misses else "MISS " + "; ".join(" ".join(map(str, m)) for m in misses)
