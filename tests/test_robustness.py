"""Never crash, never hang: pathological inputs and generated programs (a short fuzz run)."""
import json
import os
import signal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gbreak_lint.api import analyse
from gbreak_lint.config import Config
from gbreak_lint.report import explain
from gbreak_lint.report.json_report import render

from conftest import run, run_json

SIMPLE = ["x = x + 1", "x = x.sin()", "torch._dynamo.graph_break()", "print(x)", "s = x.sum().item()",
          "x = helper{n}(x)", "y = [helper{n}(v) for v in (x, x)]", "x = x[x > 0]", "logger.warning('w')",
          "x = recursive(x)", "torch._dynamo.skip_frame()", "g = (v for v in x)", "x = sum(gen(x))",
          "return x", "pass", "x = disabled(x)", "x = f{n}(x)", "x = apply(helper{n}, x)",
          "x = Net()(x)", "if x.sum() > 0: print('guard')"]
HEADERS = ["for i in range(3):", "while x.sum() > 0:", "if x.sum() > 0:", "if x.shape[0] > 1:",
           "with torch.no_grad():", "with Ctx():", "try:", "with torch.device('cpu'):",
           "with torch._dynamo.error_on_graph_break(True):", "def inner(x):", "async def co(x):"]
PRELUDE = """\
import logging
import torch
import torch.nn as nn
logger = logging.getLogger(__name__)
class Ctx:
    def __enter__(self): return self
    def __exit__(self, *a): return False
class Net(nn.Module):
    def forward(self, x):
        return helper0(x)
@torch.compiler.disable
def disabled(x):
    return x
def gen(x):
    for v in x:
        yield v
def apply(fn, x):
    return fn(x)
def recursive(x):
    return recursive(helper1(x))
"""


@st.composite
def block(draw, depth=0):
    lines = []
    for _ in range(draw(st.integers(1, 4))):
        if depth < 3 and draw(st.booleans()):
            header = draw(st.sampled_from(HEADERS))
            lines.append(header)
            lines += ["    " + line for line in draw(block(depth + 1))]
            if header == "try:":
                lines += ["except ValueError:", "    pass"]
        else:
            lines.append(draw(st.sampled_from(SIMPLE)).format(n=draw(st.integers(0, 3))))
    return lines


@st.composite
def program(draw):
    parts = [PRELUDE]
    for n in range(4):
        deco = draw(st.sampled_from(["", "@torch.compile\n", "@torch.compile(fullgraph=True)\n"]))
        body = "\n".join("    " + line for line in draw(block()))
        parts.append(f"{deco}def helper{n}(x):\n{body}\n    return x")
        parts.append(f"def f{n}(x):\n    return helper{(n + 1) % 4}(x)")
    body = "\n".join("    " + line for line in draw(block()))
    parts.append(f"@torch.compile\ndef entry(x):\n{body}\n    return x")
    return "\n\n".join(parts) + "\n"


def analyse_text(tmp_path: Path, text: str):
    (tmp_path / "m.py").write_text(text)
    analysis = analyse([tmp_path], Config(root=tmp_path))
    json.loads(render(analysis.result, "2.13"))  # the JSON report stays valid
    explain.render_text(explain.build(analysis.prediction))
    return analysis


@settings(max_examples=int(os.environ.get("GBREAK_FUZZ_EXAMPLES", "60")), deadline=None,
          suppress_health_check=list(HealthCheck))
@given(text=program())
def test_generated_programs_never_crash(tmp_path_factory, text):
    analysis = analyse_text(tmp_path_factory.mktemp("fuzz"), text)
    assert not [e for e in analysis.result.errors if "internal error" in e.message]


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_mutated_fixtures_never_crash(tmp_path_factory, data):
    from conftest import FIXTURES

    sources = sorted(FIXTURES.rglob("main.py"))
    text = data.draw(st.sampled_from(sources)).read_bytes()
    cut = data.draw(st.integers(0, len(text)))
    junk = data.draw(st.binary(max_size=20))
    mutated = data.draw(st.sampled_from([
        text[:cut], text[:cut] + junk + text[cut:], text.replace(b"\n", b"\r\n"),
        text.replace(b"    ", b"\t"), b"# -*- coding: latin-1 -*-\n" + text + b"\n# \xe9\n"]))
    folder = tmp_path_factory.mktemp("mut")
    (folder / "main.py").write_bytes(mutated)
    analysis = analyse([folder], Config(root=folder))
    json.loads(render(analysis.result, "2.13"))
    assert not [e for e in analysis.result.errors if "internal error" in e.message]


@pytest.mark.parametrize("text", [
    "import torch\n@torch.compile\ndef f(x):\n    return " + "(" * 3000 + "x" + ")" * 3000 + "\n",
    "import torch\n@torch.compile\ndef f(x):\n    return " + " + ".join(["x"] * 10000) + "\n",
    "import torch\n@torch.compile\ndef f(x):\n    y = " + " + ".join(["x"] * 2000) + "\n    return y\n",
], ids=["3000-parentheses", "10000-operands", "2000-operands"])
def test_pathological_nesting_is_reported_not_fatal(project, capsys, text):
    project("deep.py", text)
    project("fine.py", "import torch\n@torch.compile\ndef g(x):\n    print(x)\n    return x\n")
    doc = run_json(capsys, project.root)
    assert any(d["code"] == "GBL303" and d["path"].endswith("fine.py") for d in doc["diagnostics"])
    deep = [e for e in doc["errors"] if e["path"].endswith("deep.py")] + \
           [d for d in doc["diagnostics"] if d["path"].endswith("deep.py") and d["kind"] == "syntax-error"]
    assert deep


def test_huge_file_is_reported(project, capsys):
    big = project.root / "big.py"
    with open(big, "w") as fh:
        fh.write("x = 1\n" * (21 * 1024 * 1024 // 6 + 1))
    doc = run_json(capsys, project.root)
    assert any("too large" in e["message"] for e in doc["errors"])


def test_symlink_loop_does_not_hang(project, capsys):
    project("pkg/a.py", "import torch\n@torch.compile\ndef f(x):\n    print(x)\n")
    os.symlink(project.root / "pkg", project.root / "pkg" / "loop")
    doc = run_json(capsys, project.root)
    assert doc["files_scanned"] == 1


def test_call_graph_cycles_terminate(project, capsys):
    project("m.py", "import torch\n\ndef a(x):\n    return b(x)\n\ndef b(x):\n    print(x)\n    return a(x)\n\n"
                    "@torch.compile\ndef f(x):\n    return a(x)\n")
    doc = run_json(capsys, project.root)
    assert [d["code"] for d in doc["diagnostics"] if d["kind"] == "graph-break"] == ["GBL303"]


def test_yaml_rules_are_loaded_safely(project, capsys, tmp_path):
    rules = tmp_path / "evil"
    rules.mkdir()
    marker = tmp_path / "pwned"
    (rules / "x.yaml").write_text(f"!!python/object/apply:os.system ['touch {marker}']\n")
    (project.root / "pyproject.toml").write_text(f"[tool.gbreak-lint]\nextra-rules = '{rules}'\n")
    project("m.py", "x = 1\n")
    code, _, err = run(capsys, "check", project.root)
    assert code == 2 and "cannot load rule" in err and not marker.exists()


def test_chains_of_unknown_conditions_terminate(project, capsys):
    """Each `if <unknown>: print()` splits the run in two (taken / not taken); forty of them in a
    chain of calls must stay linear, not 2**40 traces."""
    parts = ["import os", "import torch", ""]
    for i in range(40):
        nxt = f"f{i + 1}(x)" if i < 39 else "x.sum().item()"
        parts += [f"def f{i}(x):", f"    if os.environ.get('A{i}'):", f"        print('a{i}')",
                  f"    y = {nxt}", "    return x", ""]
    parts += ["@torch.compile", "def entry(x):", "    return f0(x)", ""]
    project("m.py", "\n".join(parts))
    doc = run_json(capsys, project.root)
    codes = [d["code"] for d in doc["diagnostics"] if d["kind"] == "graph-break"]
    assert "GBL307" in codes and codes.count("GBL303") == 40


def test_many_files_with_one_name_are_named_linearly():
    """Thousands of `main.py` (generated programs, notebooks exported per folder) get distinct
    import names without a quadratic search for a free suffix."""
    from gbreak_lint.index.skeleton import module_names

    paths = [Path(f"/p/case{i:05d}/main.py") for i in range(20000)]
    signal.signal(signal.SIGALRM, _too_slow)
    signal.alarm(30)  # linear: well under a second; the quadratic search took minutes
    try:
        names = module_names(paths)
    finally:
        signal.alarm(0)
    assert len(set(names.values())) == 20000
    assert names[str(paths[0])] == "main" and names[str(paths[2])] == "main#3"


def _too_slow(signum, frame):
    raise TimeoutError("module naming is not linear in the number of files")


def test_hostile_constants_are_not_computed(project, capsys):
    """A scanned file's constants are evaluated as Dynamo would, but never at any cost: a
    backtracking regular expression, a billion-fold string repetition and an f-string of it
    stay unknown (the scan answers at once, the branch they decide is explored both ways)."""
    project("m.py", "import re\nimport torch\n\n\n@torch.compile\ndef f(x):\n    name = 'a' * 40 + '!'\n"
                    "    if re.findall('(a+)+$', name):\n        print('match')\n    big = 'ab' * 1000000000\n"
                    "    if f'{big}' == 'x':\n        print('big')\n"
                    "    if re.findall('(a|a)' * 40 + 'c', 'a' * 60):\n        print('alternations')\n"
                    "    if re.findall('(' * 2000 + ')' * 2000, 'a'):\n        print('nested')\n    return x\n")
    doc = run_json(capsys, project.root)
    assert not doc["errors"]
    assert sorted(d["line"] for d in doc["diagnostics"] if d["code"] == "GBL303") == [9, 12, 14, 16]
