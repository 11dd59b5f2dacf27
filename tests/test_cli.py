"""The command line as a user meets it: exit codes, formats, configuration, bad input."""
import json
import subprocess
import sys

import jsonschema

from conftest import cache_home, REPO, run, run_json

BREAKING = """\
import torch


@torch.compile
def f(x):
    x = x.sin()
    torch._dynamo.graph_break()
    return x.cos()
"""

LOOPING = """\
import torch


@torch.compile
def f(x):
    for i in range(3):
        x = x + i
        print(i)
    return x
"""

CLEAN = """\
import torch


@torch.compile
def f(x):
    return x.sin() + 1
"""

DIAGNOSTIC_SCHEMA = {
    "type": "object",
    "required": ["code", "name", "severity", "kind", "path", "line", "column", "end_line",
                 "end_column", "function", "message", "gb_code", "times_traced", "chain", "entry",
                 "frame", "suggestion", "fix", "via"],
    "additionalProperties": False,
    "properties": {
        "code": {"type": "string", "pattern": "^GBL[0-9]{3}$"},
        "name": {"type": "string"},
        "severity": {"enum": ["error", "warning", "info"]},
        "kind": {"enum": ["graph-break", "frame-skipped", "frame-partial", "compile-error",
                          "advice", "syntax-error"]},
        "path": {"type": "string"},
        "line": {"type": "integer", "minimum": 1},
        "column": {"type": "integer", "minimum": 1},
        "end_line": {"type": "integer", "minimum": 1},
        "end_column": {"type": "integer", "minimum": 1},
        "function": {"type": ["string", "null"]},
        "message": {"type": "string"},
        "gb_code": {"type": ["string", "null"], "pattern": "^GB[0-9]{4}$"},
        "times_traced": {"type": ["integer", "null"]},
        "chain": {"type": "array", "items": {
            "type": "object", "required": ["path", "line", "function"], "additionalProperties": False,
            "properties": {"path": {"type": "string"}, "line": {"type": "integer"},
                           "function": {"type": "string"}}}},
        "entry": {"type": ["string", "null"]},
        "frame": {"oneOf": [{"type": "null"}, {
            "type": "object", "required": ["path", "function", "line"], "additionalProperties": False,
            "properties": {"path": {"type": "string"}, "function": {"type": "string"},
                           "line": {"type": "integer"}}}]},
        "suggestion": {"type": ["string", "null"]},
        "fix": {"oneOf": [{"type": "null"}, {
            "type": "object", "required": ["safety", "description"], "additionalProperties": False,
            "properties": {"safety": {"enum": ["safe", "unsafe"]}, "description": {"type": "string"}}}]},
        "via": {"oneOf": [{"type": "null"}, {
            "type": "object", "required": ["path", "line", "function"], "additionalProperties": False,
            "properties": {"path": {"type": "string"}, "line": {"type": "integer"},
                           "function": {"type": "string"}}}]},
        "condition": {"type": ["string", "null"]},
    },
}

REPORT_SCHEMA = {
    "type": "object",
    "required": ["version", "tool", "torch_profile", "files_scanned", "diagnostics", "errors"],
    "additionalProperties": False,
    "properties": {
        "version": {"const": 1},
        "tool": {"type": "object", "required": ["name", "version"],
                 "properties": {"name": {"const": "gbreak-lint"}, "version": {"type": "string"}}},
        "torch_profile": {"const": "2.13"},
        "files_scanned": {"type": "integer", "minimum": 0},
        "diagnostics": {"type": "array", "items": DIAGNOSTIC_SCHEMA},
        "errors": {"type": "array"},
    },
}


def test_exit_codes(project, capsys):
    project("bad.py", BREAKING)
    assert run(capsys, "check", project.root)[0] == 1
    assert run(capsys, "check", project.root, "--exit-zero")[0] == 0
    (project.root / "bad.py").unlink()
    project("good.py", CLEAN)
    code, out, _ = run(capsys, "check", project.root)
    assert code == 0
    assert "All checks passed" in out


def test_usage_error_is_exit_2_without_traceback(project, capsys):
    code, _, err = run(capsys, "check", project.root / "missing.py")
    assert code == 2
    assert "no such file" in err and "Traceback" not in err
    assert run(capsys, "check", "--format", "xml", project.root)[0] == 2


def test_text_output_has_location_code_and_chain(project, capsys, monkeypatch):
    project("m.py", BREAKING.replace("    torch._dynamo.graph_break()\n", "    x = helper(x)\n")
            + "\n\ndef helper(x):\n    torch._dynamo.graph_break()\n    return x\n")
    monkeypatch.chdir(project.root)
    code, out, _ = run(capsys, "check", ".")
    assert code == 1
    assert "m.py:12:5: GBL301" in out
    assert "call chain: f (m.py:7) -> helper (m.py:12)" in out
    assert out.strip().splitlines()[-1].startswith("Found ")


def test_json_matches_schema(project, capsys, monkeypatch):
    project("a.py", BREAKING)
    project("b.py", LOOPING)
    project("broken.py", "def f(:\n")
    monkeypatch.chdir(project.root)
    doc = run_json(capsys, ".")
    jsonschema.validate(doc, REPORT_SCHEMA)
    assert doc["files_scanned"] == 3
    codes = {(d["path"], d["code"]) for d in doc["diagnostics"]}
    assert ("a.py", "GBL301") in codes and ("b.py", "GBL101") in codes and ("b.py", "GBL303") in codes
    assert ("broken.py", "GBL001") in codes
    loop = next(d for d in doc["diagnostics"] if d["code"] == "GBL101")
    assert loop["kind"] == "frame-skipped"
    assert loop["frame"] == {"path": "b.py", "function": "f", "line": 5}


def test_examples_project_matches_schema(capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    doc = run_json(capsys, "examples")
    jsonschema.validate(doc, REPORT_SCHEMA)
    assert doc["diagnostics"]


def test_select_ignore_and_fail_on(project, capsys):
    project("b.py", LOOPING)
    codes = lambda *a: {d["code"] for d in run_json(capsys, project.root, *a)["diagnostics"]}  # noqa: E731
    assert codes() == {"GBL101", "GBL303"}
    assert codes("--select", "GBL1") == {"GBL101"}
    assert codes("--ignore", "GBL101,GBL2") == {"GBL303"}
    assert run(capsys, "check", project.root, "--select", "GBL303", "--fail-on", "error")[0] == 0
    assert run(capsys, "check", project.root, "--select", "GBL303", "--fail-on", "warning")[0] == 1


def test_noqa_and_ignore_comments(project, capsys):
    project("a.py", BREAKING.replace("graph_break()", "graph_break()  # noqa: GBL301"))
    assert run_json(capsys, project.root)["diagnostics"] == []
    project("a.py", BREAKING.replace("graph_break()", "graph_break()  # gbreak-lint: ignore[GBL301]"))
    assert run_json(capsys, project.root)["diagnostics"] == []
    project("a.py", BREAKING.replace("graph_break()", "graph_break()  # noqa"))
    assert run_json(capsys, project.root)["diagnostics"] == []
    project("a.py", BREAKING.replace("graph_break()", "graph_break()  # noqa: GBL101"))
    assert [d["code"] for d in run_json(capsys, project.root)["diagnostics"]] == ["GBL301"]


def test_config_in_pyproject(project, capsys):
    project("pkg/a.py", LOOPING)
    project("gen/b.py", BREAKING)
    (project.root / "pyproject.toml").write_text(
        "[tool.gbreak-lint]\nignore = ['GBL303']\nexclude = ['gen']\n"
        "per-file-ignores = {'pkg/*' = ['GBL101']}\n")
    doc = run_json(capsys, project.root)
    assert doc["files_scanned"] == 1
    assert doc["diagnostics"] == []


def test_unknown_config_key_is_named(project, capsys):
    project("a.py", CLEAN)
    (project.root / "pyproject.toml").write_text("[tool.gbreak-lint]\nselekt = ['GBL1']\n")
    code, _, err = run(capsys, "check", project.root)
    assert code == 2
    assert "unknown key 'selekt'" in err


def test_bad_inputs_are_reported_and_scan_goes_on(project, capsys):
    project("ok.py", BREAKING)
    project("syntax.py", "def f(:\n    pass\n")
    (project.root / "latin1.py").write_bytes(b"# -*- coding: utf-8 -*-\nx = '\xe9\xff'\n")
    (project.root / "binary.py").write_bytes(b"\x00\x01\x02garbage")
    project("empty.py", "")
    doc = run_json(capsys, project.root)
    assert doc["files_scanned"] == 5
    error_paths = {e["path"].rsplit("/", 1)[-1] for e in doc["errors"]}
    assert error_paths == {"latin1.py", "binary.py"}
    kinds = {(d["path"].rsplit("/", 1)[-1], d["kind"]) for d in doc["diagnostics"]}
    assert ("syntax.py", "syntax-error") in kinds
    assert ("ok.py", "graph-break") in kinds


def test_linter_never_imports_scanned_code(project, capsys):
    marker = project.root / "imported.marker"
    project("evil.py", f"open({str(marker)!r}, 'w').write('x')\nimport torch\n\n"
                       "@torch.compile\ndef f(x):\n    print(x)\n    return x\n")
    run(capsys, "check", project.root)
    assert not marker.exists()


def test_module_entry_point_and_console_script(project):
    project("a.py", BREAKING)
    out = subprocess.run([sys.executable, "-m", "gbreak_lint", "check", str(project.root),
                          "--format", "json"], capture_output=True, text=True)
    assert out.returncode == 1
    assert json.loads(out.stdout)["diagnostics"][0]["code"] == "GBL301"


def test_rules_and_rule_commands(capsys):
    code, out, _ = run(capsys, "rules")
    assert code == 0 and "GBL101" in out and "graph-break-in-loop" in out
    code, out, _ = run(capsys, "rule", "gbl101")
    assert code == 0
    for heading in ("## What it does", "## Why is this bad", "## Example", "## Use instead"):
        assert heading in out
    assert run(capsys, "rule", "GBL999")[0] == 2


def test_named_entry_points(project, capsys):
    project("lib/__init__.py", "")
    project("lib/layers.py", "import torch.nn as nn\n\n\nclass Layer(nn.Module):\n"
                             "    def forward(self, x):\n        print('hi')\n        return x\n")
    assert run_json(capsys, project.root)["diagnostics"] == []
    doc = run_json(capsys, project.root, "--entry", "lib.layers:Layer.forward")
    assert [(d["code"], d["entry"]) for d in doc["diagnostics"]] == [("GBL303", "lib.layers.Layer.forward")]
    code, _, err = run(capsys, "check", project.root, "--entry", "lib.layers:Nope")
    assert code == 2 and "does not name a function" in err


def test_result_cache_is_reused_and_invalidated(project, capsys):
    project("a.py", BREAKING)
    project("b.py", CLEAN)
    cold = run_json(capsys, project.root)
    assert list(cache_home().rglob("result-*.json"))
    assert not (project.root / ".gbreak_cache").exists()  # nothing written into the scanned tree
    assert run_json(capsys, project.root) == cold
    only_b = run_json(capsys, project.root / "b.py")  # pre-commit style, served from the cache
    assert only_b["files_scanned"] == 1 and only_b["diagnostics"] == []
    project("b.py", BREAKING.replace("def f", "def g"))  # an edit invalidates the cache
    assert [d["code"] for d in run_json(capsys, project.root / "b.py")["diagnostics"]] == ["GBL301"]
    assert run_json(capsys, project.root, "--no-cache")["files_scanned"] == 2


def test_a_finding_behind_an_undecided_condition_carries_it(project, capsys):
    path = project("cond.py", """\
import sys

import torch


@torch.compile
def f(x, verbose=None):
    if verbose and x.dim() > 0:
        print("shape", x.shape)
    else:
        print("quiet")
    return x + 1


f(torch.randn(3), verbose=len(sys.argv) > 1)
""")
    doc = run_json(capsys, path)
    conditions = {d["line"]: d["condition"] for d in doc["diagnostics"] if d["code"] == "GBL303"}
    assert conditions == {9: "verbose and x.dim() > 0", 11: "not (verbose and x.dim() > 0)"}
    _, out, _ = run(capsys, "check", path)
    assert "(if verbose and x.dim() > 0)" in out
