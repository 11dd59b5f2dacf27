"""Run the linter the way benchmarks/accuracy.py does (a subprocess on the program folder), or
in this process (`--lint in-process`: the checkout difftest runs from; ~5x faster, for
re-scoring stored labels after a change to the model)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

MODE = {"lint": "subprocess"}
_LOCK = threading.Lock()  # the scan's process-wide state (tree store, worker state) is not shared


class LintFailed(Exception):
    pass


def lint(folder: Path, linter_src: Path, timeout: float = 120) -> dict:
    """The JSON report of `gbreak-lint check FOLDER --root FOLDER` (paths relative to FOLDER).
    --no-cache: thousands of one-off folders must not fill a result cache; --jobs 1: the
    parallelism is difftest's own."""
    if MODE["lint"] == "in-process":
        return _lint_here(folder)
    cmd = [sys.executable, "-m", "gbreak_lint", "check", str(folder), "--format", "json",
           "--root", str(folder), "--exit-zero", "--no-cache", "--jobs", "1"]
    env = dict(os.environ, PYTHONPATH=str(linter_src))
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, cwd=folder, check=False, env=env,
                             timeout=timeout)
    except subprocess.TimeoutExpired as err:
        raise LintFailed("timeout") from err
    if out.returncode != 0:
        raise LintFailed(out.stderr.strip()[-500:])
    return json.loads(out.stdout)


def _lint_here(folder: Path) -> dict:
    from gbreak_lint.api import analyse
    from gbreak_lint.config import load_config
    from gbreak_lint.report.json_report import diagnostic_dict

    with _LOCK:
        try:
            config = load_config(folder).with_overrides(root=folder.resolve())
            result = analyse([folder], config, jobs=1).result
        except Exception as err:  # noqa: BLE001 - a crash of the linter is data here
            raise LintFailed(f"{type(err).__name__}: {err}") from err
    return {"diagnostics": [_relative(diagnostic_dict(d), d, folder) for d in result.diagnostics],
            "errors": [{"path": os.path.relpath(e.path, folder), "message": e.message} for e in result.errors]}


def _relative(doc: dict, d, folder: Path) -> dict:
    """Paths as the CLI prints them when run in the program's folder."""
    doc["path"] = os.path.relpath(d.path, folder)
    if d.frame is not None:
        doc["frame"]["path"] = os.path.relpath(d.frame.path, folder)
    doc["chain"] = [dict(c, path=os.path.relpath(link.path, folder)) for c, link in zip(doc["chain"], d.chain)]
    return doc
