"""Run the linter the way benchmarks/accuracy.py does (a subprocess on the program folder)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


class LintFailed(Exception):
    pass


def lint(folder: Path, linter_src: Path, timeout: float = 120) -> dict:
    """The JSON report of `gbreak-lint check FOLDER --root FOLDER` (paths relative to FOLDER).
    --no-cache: thousands of one-off folders must not fill a result cache; --jobs 1: the
    parallelism is difftest's own."""
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
