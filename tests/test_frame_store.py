"""Frames reused across the tasks of one process never change what a task finds.

A library scan runs one Dynamo task per file; the frame store lets a task reuse what earlier
tasks built (shared helpers, comprehensions, lambdas, recursive helpers). The findings must be
those of fresh tasks, whatever order the tasks run in.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from gbreak_lint import api, pipeline
from gbreak_lint.config import load_config
from gbreak_lint.model import env as env_module
from gbreak_lint.model.frame_store import FrameStore
from gbreak_lint.plain import to_plain

SHARED = """\
import logging
import torch

log = logging.getLogger(__name__)
scale = lambda x: x * 2


def norm(x):
    parts = [p * 2 for p in x.unbind(0)]
    return torch.stack(parts)


def ping(x, n):
    if n > 0:
        return pong(x, n - 1)
    return x * 2


def pong(x, n):
    # built from ping, this call is to a frame under construction (recursion): such builds
    # depend on the task's call stack and are not reused
    return ping(x, n)


def noisy(x):
    log.warning("noisy")
    return x.sum().item()


def helper(x, flag=None):
    if flag is not None:
        print("flagged")
    return scale(norm(x))
"""

MODULE = """\
import torch.nn as nn
from pkg.shared import helper, noisy, ping, pong


class {name}(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        y = helper(self.lin(x){extra})
        {body}
        if pong(y, 1) > 0:
            y = y + noisy(y)
        return y
"""

FILES = {
    "pkg/__init__.py": "",
    "pkg/shared.py": SHARED,
    "pkg/a.py": MODULE.format(name="A", extra="", body="y = ping(y, 2)"),
    "pkg/b.py": MODULE.format(name="B", extra=", flag=1", body="y = noisy(y) + y"),
    "pkg/c.py": MODULE.format(name="C", extra="", body="y = helper(y) + ping(y, 1)"),
    "pkg/d.py": MODULE.format(name="D", extra="", body="pass"),
}


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("GBREAK_LINT_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "proj"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "pyproject.toml").write_text('[tool.gbreak-lint]\nassume-compiled = "modules"\n')
    return root


def _findings(root: Path) -> list:
    result = api.lint_paths([root], load_config(root), use_cache=False, jobs=1)
    plain = to_plain(result)
    for d in plain["diagnostics"]:
        d.pop("fingerprint", None)
    return sorted(plain["diagnostics"], key=repr)


def test_reused_frames_find_what_fresh_tasks_find(project: Path, monkeypatch) -> None:
    replayed = []
    real_replay = env_module.ModelEnv._replay

    def counting(self, key, stored):
        done = real_replay(self, key, stored)
        replayed.append(done)
        return done

    monkeypatch.setattr(env_module.ModelEnv, "_replay", counting)
    shared = _findings(project)
    assert any(replayed), "later tasks do reuse frames (the comparison is not of two fresh runs)"

    monkeypatch.setattr(pipeline, "FrameStore", lambda: FrameStore(limit=0))
    fresh = _findings(project)
    assert shared == fresh
    assert len(fresh) > 5

    monkeypatch.setattr(pipeline, "FrameStore", FrameStore)
    real_run = api.run_tasks

    def reversed_order(project_index, knowledge, catalog, tasks, jobs, **kw):
        return real_run(project_index, knowledge, catalog, tasks[::-1], jobs, **kw)[::-1]

    monkeypatch.setattr(api, "run_tasks", reversed_order)
    assert _findings(project) == fresh
