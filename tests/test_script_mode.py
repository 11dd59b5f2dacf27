"""Script mode: a program's calls are followed into installed packages, read as source."""
import sys
from pathlib import Path

import pytest

from gbreak_lint.index import lazy

from conftest import run, run_json

NET = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, debug=False):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.debug = debug

    def forward(self, x):
        x = self.lin(x)
        if self.debug:
            print("debug")
        return x.sum().item()
"""
TRAIN = """\
import torch
from fakelib import Net

model = Net({args})


@torch.compile
def step(x):
    return model(x)


step(torch.randn(2, 4))
"""


@pytest.fixture
def installed(tmp_path_factory, monkeypatch):
    """A package installed on the search path of the interpreter named by --python."""
    site = tmp_path_factory.mktemp("site")
    (site / "fakelib" / "models").mkdir(parents=True)
    (site / "fakelib" / "__init__.py").write_text("from .models.net import Net\n")
    (site / "fakelib" / "models" / "__init__.py").write_text("")
    (site / "fakelib" / "models" / "net.py").write_text(NET)
    (site / "fakelib" / "unused.py").write_text("import torch\nprint(\n")  # never reached
    monkeypatch.setenv("PYTHONPATH", str(site))
    return site


def scan(capsys, project, *extra):
    return run_json(capsys, project.root / "train.py", "--root", project.root, "--python", sys.executable,
                    *extra)


def test_break_inside_an_installed_package_is_reported_with_the_users_line(project, installed, capsys):
    project("train.py", TRAIN.format(args=""))
    doc = scan(capsys, project)
    (item,) = [d for d in doc["diagnostics"] if d["code"] == "GBL307"]
    assert Path(item["path"]).resolve() == (installed / "fakelib" / "models" / "net.py").resolve()
    assert item["line"] == 15 and item["times_traced"] == 2 and item["fix"] is None
    assert item["chain"][0]["function"].endswith("step")
    assert item["via"]["line"] == 9 and item["via"]["path"].endswith("train.py")
    assert not any(d["code"] == "GBL303" for d in doc["diagnostics"])  # debug=False: never traced
    code, out, _ = run(capsys, "check", project.root / "train.py", "--root", project.root,
                       "--python", sys.executable)
    assert code == 1 and out.splitlines()[0].startswith("via ") and "train.py:9: " in out.splitlines()[0]


def test_the_scripts_values_reach_the_library(project, installed, capsys):
    project("train.py", TRAIN.format(args="debug=True"))
    codes = {d["code"] for d in scan(capsys, project)["diagnostics"]}
    assert "GBL303" in codes


def test_only_what_the_calls_reach_is_parsed(project, installed, capsys, monkeypatch):
    parsed = []
    real = lazy._index
    monkeypatch.setattr(lazy, "_index", lambda path, name: parsed.append(name) or real(path, name))
    project("train.py", TRAIN.format(args=""))
    scan(capsys, project, "--no-cache")
    assert "fakelib.models.net" in parsed and "fakelib.unused" not in parsed


def test_turned_off_and_limited(project, installed, capsys):
    project("train.py", TRAIN.format(args=""))
    assert scan(capsys, project, "--no-follow-installed")["diagnostics"] == []
    (project.root / "pyproject.toml").write_text("[tool.gbreak-lint]\ninstalled-packages = ['otherlib']\n")
    assert scan(capsys, project)["diagnostics"] == []
    (project.root / "pyproject.toml").write_text("[tool.gbreak-lint]\nfollow-installed = false\n")
    assert scan(capsys, project)["diagnostics"] == []


def test_select_ignore_and_baselines_apply(project, installed, capsys, tmp_path):
    project("train.py", TRAIN.format(args=""))
    assert {d["code"] for d in scan(capsys, project, "--select", "GBL307")["diagnostics"]} == {"GBL307"}
    assert not any(d["code"] == "GBL307" for d in scan(capsys, project, "--ignore", "GBL307")["diagnostics"])
    baseline = tmp_path / "baseline.json"
    run(capsys, "check", project.root / "train.py", "--root", project.root, "--python", sys.executable,
        "--write-baseline", baseline)
    assert scan(capsys, project, "--baseline", baseline)["diagnostics"] == []


def test_a_missing_interpreter_is_a_usage_error(project, capsys):
    project("train.py", TRAIN.format(args=""))
    code, _, err = run(capsys, "check", project.root, "--python", "/nonexistent/python")
    assert code == 2 and "/nonexistent/python" in err


def test_the_search_path_follows_the_environment(tmp_path, monkeypatch):
    """One process asking twice with another PYTHONPATH gets the new answer (a remembered one
    made script mode read packages from an earlier search path)."""
    from gbreak_lint.index.installed import search_path

    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    monkeypatch.setenv("PYTHONPATH", str(first))
    assert str(first) in search_path(sys.executable) and str(second) not in search_path(sys.executable)
    monkeypatch.setenv("PYTHONPATH", str(second))
    assert str(second) in search_path(sys.executable) and str(first) not in search_path(sys.executable)


def test_the_projects_own_folders_do_not_key_the_cache(tmp_path, monkeypatch):
    """A project on its interpreter's search path (an editable install, PYTHONPATH=.): adding
    or renaming a file changes its folder's time; that must not make every cached result stale
    (its files are the project's, digested one by one). Folders outside it still count."""
    from gbreak_lint.index.installed import for_config

    project, outside = tmp_path / "project", tmp_path / "site"
    (project / "src").mkdir(parents=True)
    outside.mkdir()
    monkeypatch.setattr(sys, "path", [str(project / "src"), str(project), str(outside)])
    before = for_config(None, (), project).fingerprint()
    (project / "src" / "new_module.py").write_text("x = 1\n")
    (project / "renamed.txt").write_text("")
    assert for_config(None, (), project).fingerprint() == before
    assert str(outside) in before and str(project) not in before


COMPILED_MODEL = """\
import torch
from fakelib import Net

model = Net({args})
compiled = torch.compile(model)
compiled(torch.randn(2, 4))
"""


def test_a_compiled_library_module_leads_with_the_compile_line(project, installed, capsys):
    project("train.py", COMPILED_MODEL.format(args=""))
    doc = scan(capsys, project)
    (item,) = [d for d in doc["diagnostics"] if d["code"] == "GBL307"]
    assert item["via"]["path"].endswith("train.py") and item["via"]["line"] == 5
    assert item["chain"][0]["function"].endswith("Net.forward")


GATED = """\
import torch.nn as nn


class Gated(nn.Module):
    def __init__(self, kind):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.kind = kind

    def forward(self, x):
        x = self.lin(x)
        if "dynamic" in self.kind:
            x = x[x.nonzero()]
        return x.sum().item()
"""


def test_library_findings_behind_undecided_conditions_are_hidden_unless_asked(project, installed, capsys):
    (installed / "fakelib" / "gated.py").write_text(GATED)
    project("train.py", COMPILED_MODEL.replace("from fakelib import Net", "from fakelib.gated import Gated")
            .replace("Net({args})", "Gated(__import__('os').environ.get('KIND', 'plain'))"))
    hidden = scan(capsys, project)
    assert not any(d["code"] == "GBL311" for d in hidden["diagnostics"])
    assert any(d["code"] == "GBL307" for d in hidden["diagnostics"])  # unconditional: still shown
    shown = scan(capsys, project, "--show-library-conditions")
    (item,) = [d for d in shown["diagnostics"] if d["code"] == "GBL311"]
    assert item["condition"] == '"dynamic" in self.kind'
    code, out, _ = run(capsys, "check", project.root / "train.py", "--root", project.root,
                       "--python", sys.executable)
    assert "1 more through installed packages, behind conditions" in out


RAISING_BEHIND_CONFIG = """\
import torch.nn as nn


def _blocks(mask):
    return mask.shape[0]


class Stack(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.local = config.get("local")

    def forward(self, x, mask=None):
        if self.local:
            return x * _blocks(mask)
        return x
"""


def test_a_user_frame_skipped_only_behind_a_library_condition_is_hidden_unless_asked(project, installed, capsys):
    """The skip is what the library's cause does to the user's frame: it is as undecided as
    the cause, which the library reaches only behind its own configuration."""
    (installed / "fakelib" / "stack.py").write_text(RAISING_BEHIND_CONFIG)
    project("train.py", TRAIN.replace("from fakelib import Net", "from fakelib.stack import Stack")
            .replace("Net({args})", "Stack(__import__('json').loads('{}'))"))
    hidden = scan(capsys, project)
    assert not any(d["code"] == "GBL108" for d in hidden["diagnostics"])
    shown = scan(capsys, project, "--show-library-conditions")
    (item,) = [d for d in shown["diagnostics"] if d["code"] == "GBL108" and d["path"].endswith("train.py")]
    assert item["condition"] == "self.local"


def test_an_installed_file_edited_in_place_is_read_again(project, installed, capsys, tmp_path):
    """An editable install changes a library file without touching any search-path folder:
    neither the stored result nor the stored Dynamo task may answer for the old text."""
    net = installed / "fakelib" / "models" / "net.py"
    project("train.py", TRAIN.format(args=""))
    cache_dir = str(tmp_path / "cache")

    def codes(*extra):
        return {d["code"] for d in scan(capsys, project, "--cache-dir", cache_dir, *extra)["diagnostics"]}

    assert "GBL307" in codes()
    net.write_text(NET.replace("return x.sum().item()", "return x.sum()"))
    assert "GBL307" not in codes()  # the whole-run result is stale
    net.write_text(NET)
    for stored in Path(cache_dir).rglob("result-*.json"):
        stored.unlink()
    assert "GBL307" in codes()  # only the stored task could answer: it is stale too


OPTIONAL_IMPORTS = """\
import torch


@torch.compile
def step(x):
    try:
        import {module}
    except ImportError:
        pass
    return x + 1


step(torch.randn(2))
"""


@pytest.mark.parametrize("module, found", [
    ("fakelib.models", True),  # on the search path --python names
    ("localmod", True),  # the project's own
    ("json", True),  # the standard library
    ("edpkg", True),  # an editable install: its finder on the search path maps the name elsewhere
    ("assets", True),  # a folder beside the script (a namespace package)
    ("not_installed_anywhere", False),
    ("triton_not_here", False),
])
def test_an_import_in_compiled_code_is_looked_up_where_the_program_would(project, installed, capsys, module, found):
    (installed / "__editable___edpkg_0_1_finder.py").write_text("MAPPING = {'edpkg': '/elsewhere/edpkg'}\n")
    project("localmod.py", "X = 1\n")
    project("assets/readme.txt", "data\n")
    project("train.py", OPTIONAL_IMPORTS.format(module=module))
    codes = [d["code"] for d in scan(capsys, project)["diagnostics"]]
    assert ("GBL613" in codes) is not found
    # without looking at installed packages nothing tells a missing module from one elsewhere
    quiet = scan(capsys, project, "--no-follow-installed")["diagnostics"]
    assert not any(d["code"] == "GBL613" for d in quiet)
