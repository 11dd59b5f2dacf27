"""`gbreak-lint verify`: runs a program under torch and compares with the prediction."""
import importlib.util
import json

import pytest

from conftest import requires_torch, run

PROGRAM = """\
import sys
import torch


def helper(x):
    print("in helper")
    return x * 2


@torch.compile
def f(x):
    x = x + 1
    return helper(x)


f(torch.randn(3))
if sys.argv[1:2] == ["--mark"]:  # proves the arguments after -- reach the program
    open(sys.argv[2], "w").write("ran")
"""


def test_verify_without_torch_says_so(project, capsys, monkeypatch):
    script = project("main.py", PROGRAM)
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "torch" else real_find_spec(name, *a))
    code, _, err = run(capsys, "verify", script)
    assert code == 2 and "needs torch" in err


@requires_torch
@pytest.mark.torch
def test_verify_agrees_and_passes_arguments(project, capsys):
    script = project("main.py", PROGRAM)
    code, out, err = run(capsys, "verify", script, "--format", "json")
    assert "executes" in err
    doc = json.loads(out)
    assert code == 0, doc
    assert doc["figures"]["site_recall"] == 1.0 and doc["figures"]["site_precision"] == 1.0
    assert doc["counts"]["site_tp"] == 1 and doc["figures"]["times_traced_exact"] == 1.0
    marker = project.root / "marker.txt"
    code, out, _ = run(capsys, "verify", script, "--", "--mark", marker)
    assert code == 0 and marker.read_text() == "ran"
    assert "main.py:6" in out and "ok" in out


@requires_torch
@pytest.mark.torch
def test_verify_predicts_only_for_the_script_it_runs(project, capsys):
    """A script inside a larger repository: other files' compiled code is not what it runs."""
    project("tools/other.py", "import torch\n\n\n@torch.compile\ndef g(x):\n    print('never run')\n"
                              "    return x.sum().item()\n")
    project("tools/helpers.py", "def helper(x):\n    print('in helper')\n    return x * 2\n")
    script = project("tools/main.py", PROGRAM.replace("def helper(x):\n    print(\"in helper\")\n"
                                                      "    return x * 2\n", "from helpers import helper\n"))
    code, out, _ = run(capsys, "verify", script, "--format", "json")
    doc = json.loads(out)
    assert doc["counts"]["site_fp"] == 0, doc["rows"]
    assert doc["counts"]["site_tp"] == 1, doc["rows"]


def _label(outcomes):
    site = {"file": "main.py", "function": "f", "line": 5, "compiles_hit": 1, "gb_code": "GB0059",
            "outcomes": outcomes}
    config = {"graph_breaks": [site], "library_breaks": [], "skipped_frames": [], "compiled_frames": []}
    return {"configs": {"nested_graph_breaks=False": config}}


def _diagnostic(kind, code, line=5):
    return {"kind": kind, "code": code, "path": "main.py", "line": line, "end_line": line, "times_traced": 1,
            "gb_code": "GB0059"}


def test_compile_errors_are_scored_against_breaks_that_raised(tmp_path):
    from gbreak_lint.verify import compare, observed

    raised = observed(_label({"hard_error": 1}), tmp_path)
    resumed = observed(_label({"resumed": 1}), tmp_path)
    error = [_diagnostic("graph-break", "GBL303"), _diagnostic("compile-error", "GBL501")]
    assert compare(raised, error, tmp_path).counts["error_tp"] == 1
    assert compare(raised, error[:1], tmp_path).counts["error_fn"] == 1
    counts = compare(resumed, error, tmp_path).counts
    assert (counts["error_fp"], counts["error_tp"], counts["site_tp"]) == (1, 0, 1)
    assert compare(raised, [_diagnostic("compile-error", "GBL501", line=9)], tmp_path).counts["error_fp"] == 1
