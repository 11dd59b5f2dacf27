"""Rewrites (--diff / --fix): golden before/after files, convergence, safe file handling, and
proof under real torch that the rewrite keeps outputs and removes what Dynamo did wrong."""
import json
import os
import shutil
import stat

import pytest

from conftest import FIXTURES, requires_torch, run, run_json

FIX_DIRS = sorted(p.parent for p in (FIXTURES / "fixes").rglob("main.fixed.py"))
IDS = [p.name for p in FIX_DIRS]
# fixture -> (rule the rewrite addresses, what real Dynamo must show afterwards)
PROOF = {"unroll_loop": ("GBL101", "no-skipped-frame"), "split_with": ("GBL103", "no-skipped-frame"),
         "split_try": ("GBL102", "no-skipped-frame"), "disable_helper": ("GBL201", "fewer-traces"),
         "module_compile": ("GBL401", "still-compiled")}


def copy(folder, tmp_path):
    dest = tmp_path / folder.name
    shutil.copytree(folder, dest, ignore=shutil.ignore_patterns("*.fixed.py"))
    (dest / "pyproject.toml").write_text("[project]\nname = 'fixture'\n")
    return dest


@pytest.mark.parametrize("folder", FIX_DIRS, ids=IDS)
def test_fix_matches_golden_and_converges(folder, tmp_path, capsys):
    work = copy(folder, tmp_path)
    rule, _ = PROOF[folder.name]
    found = {(d["code"], d["function"]) for d in run_json(capsys, work)["diagnostics"] if d["code"] == rule}
    assert found
    code, _, err = run(capsys, "fix", work, "--unsafe-fixes")
    assert code == 1 and "Fixed" in err
    assert (work / "main.py").read_text() == (folder / "main.fixed.py").read_text()
    after = {(d["code"], d["function"]) for d in run_json(capsys, work)["diagnostics"]}
    assert not found & after  # (c) the linter no longer reports what was fixed
    before = (work / "main.py").read_bytes()
    code, _, _ = run(capsys, "fix", work, "--unsafe-fixes")
    assert (work / "main.py").read_bytes() == before  # idempotent: a second run changes nothing


def test_diff_changes_nothing_and_unsafe_needs_opt_in(tmp_path, capsys):
    work = copy(FIXTURES / "fixes" / "unroll_loop", tmp_path)
    original = (work / "main.py").read_bytes()
    code, out, _ = run(capsys, "check", work, "--diff")
    assert code == 0 and out == ""  # the unroll is unsafe: nothing without --unsafe-fixes
    code, out, _ = run(capsys, "check", work, "--diff", "--unsafe-fixes")
    assert code == 1 and "+    x = _accumulate_loop_body_7(0, w, x)" in out
    assert (work / "main.py").read_bytes() == original


def test_safe_fix_keeps_crlf_comments_permissions(tmp_path, capsys):
    work = copy(FIXTURES / "fixes" / "module_compile", tmp_path)
    path = work / "main.py"
    text = path.read_text().replace("model = Net()\n", "model = Net()  # the model\n")
    path.write_bytes(text.replace("\n", "\r\n").encode())
    os.chmod(path, 0o640)
    code, _, _ = run(capsys, "fix", work)
    assert code == 1
    data = path.read_bytes()
    assert b"model.compile(dynamic=False)\r\n" in data and b"\n" not in data.replace(b"\r\n", b"")
    assert b"# the model" in data
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert not [p for p in work.iterdir() if p.name.endswith(".gbreak-tmp")]


def test_files_without_findings_are_untouched(tmp_path, capsys):
    work = copy(FIXTURES / "fixes" / "split_try", tmp_path)
    clean = work / "clean.py"
    clean.write_text("import torch\n\n\n@torch.compile\ndef f(x):\n    return x + 1\n")
    mtime = clean.stat().st_mtime_ns
    run(capsys, "fix", work, "--unsafe-fixes")
    assert clean.stat().st_mtime_ns == mtime


@requires_torch
@pytest.mark.torch
@pytest.mark.parametrize("folder", FIX_DIRS, ids=IDS)
def test_fix_is_proven_under_torch(folder, tmp_path):
    from gbreak_lint.oracle import label

    before_dir, after_dir = tmp_path / "before", tmp_path / "after"
    before_dir.mkdir()
    after_dir.mkdir()
    shutil.copy(folder / "main.py", before_dir / "main.py")
    shutil.copy(folder / "main.fixed.py", after_dir / "main.py")
    before = label(before_dir / "main.py", before_dir, [None], 600)
    after = label(after_dir / "main.py", after_dir, [None], 600)
    assert after["stdout"] == before["stdout"] and after["stdout"].strip()  # (a) same outputs
    b, a = (doc["configs"]["nested_graph_breaks=False"] for doc in (before, after))
    _, proof = PROOF[folder.name]
    if proof == "no-skipped-frame":  # (b) Dynamo no longer skips or half-compiles the frame
        assert _bad_frames(b) and not _bad_frames(a), json.dumps(a, indent=1)
    elif proof == "fewer-traces":
        assert _traces(a) < _traces(b)
    else:
        assert a["exit_ok"] and not a["graph_breaks"] and not a["skipped_frames"]


def _bad_frames(cfg) -> list:
    skipped = [s for s in cfg["skipped_frames"] if s["due_to_graph_break"] and not s["is_resume"]]
    return skipped + [c for c in cfg["compiled_frames"] if c["partial_then_eager_at"]]


def _traces(cfg) -> int:
    return sum(g["compiles_hit"] for g in cfg["graph_breaks"] + cfg["library_breaks"])


SAFE_FIXABLE = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def forward(self, x):
        return x.relu()


model = Net()
model = torch.compile(model)
"""


def test_interrupted_fix_leaves_old_or_new_never_partial(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    old = SAFE_FIXABLE.encode()
    new = SAFE_FIXABLE.replace("model = torch.compile(model)", "model.compile()").encode()
    for delay in (0.3, 0.6, 0.9, 1.2, 1.5):
        for i in range(12):
            (tmp_path / f"m{i}.py").write_bytes(old)
        proc = subprocess.Popen([sys.executable, "-m", "gbreak_lint", "fix", str(tmp_path)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        states = [(tmp_path / f"m{i}.py").read_bytes() for i in range(12)]
        assert all(state in (old, new) for state in states)
    subprocess.run([sys.executable, "-m", "gbreak_lint", "fix", str(tmp_path)], capture_output=True)
    assert all((tmp_path / f"m{i}.py").read_bytes() == new for i in range(12))


def test_fix_never_writes_outside_the_given_paths(project, capsys):
    project("scanned/a.py", SAFE_FIXABLE)
    outside = project("other/b.py", SAFE_FIXABLE)
    run(capsys, "fix", project.root / "scanned")
    assert outside.read_text() == SAFE_FIXABLE
    assert "model.compile()" in (project.root / "scanned" / "a.py").read_text()
