"""Demand-driven runs: `--entry` parses only the modules its calls reach, and finds what a run
over the whole index finds."""
from dataclasses import replace
from pathlib import Path

import pytest

from gbreak_lint import api
from gbreak_lint.config import load_config
from gbreak_lint.index import lazy
from gbreak_lint.knowledge import load_profile
from gbreak_lint.index.skeleton import ENTRIES, HOOK_MARKER, SETTINGS, Skeleton, module_names, summarize

FILES = {
    "pkg/__init__.py": "from .model import Net\n",
    "pkg/model.py": """\
import torch.nn as nn
from pkg.util import report
from . import layers


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = layers.Block()

    def forward(self, x):
        x = self.block(x)
        report(x)
        return x
""",
    "pkg/layers.py": """\
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return self.lin(x).sum().item()
""",
    "pkg/util.py": "import pkg.settings\n\n\ndef report(x):\n    print('value', x)\n",
    "pkg/settings.py": "import torch\n\ntorch._dynamo.config.capture_scalar_outputs = True\n",
    "pkg/hooks.py": """\
import torch
from pkg.model import Net


def hook(module, args, out):
    print("hooked")


net = Net()
net.block.register_forward_hook(hook)
""",
    "pkg/unrelated.py": "import torch\n\ndef f(x):\n    return x.item()\n",
    "pkg/broken.py": "def f(:\n",
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def _analyse(root: Path, demand: bool, monkeypatch) -> api.Analysis:
    config = replace(load_config(root), entry_points=("pkg.model:Net.forward",))
    monkeypatch.setattr(api, "_mode", lambda *args: "entries" if demand else "whole")
    return api.analyse([root], config, jobs=1)


def _found(analysis: api.Analysis) -> list:
    return [(Path(d.path).name, d.span.line, d.code) for d in analysis.result.diagnostics]


def test_entry_run_parses_only_what_it_reaches(project: Path, monkeypatch) -> None:
    parsed: list[str] = []
    real = lazy.parse_source
    monkeypatch.setattr(lazy, "parse_source", lambda path, data: parsed.append(Path(path).name) or real(path, data))
    demand = _analyse(project, True, monkeypatch)
    assert {"model.py", "util.py", "layers.py"} <= set(parsed)
    assert "unrelated.py" not in parsed and "broken.py" not in parsed
    assert demand.result.diagnostics, "the entry's breaks (print, .item(), the hook) are found"


def test_entry_run_finds_what_the_whole_index_finds(project: Path, monkeypatch) -> None:
    whole = _found(_analyse(project, False, monkeypatch))
    demand = _found(_analyse(project, True, monkeypatch))
    # the whole-index run also reports files it parsed on the way (the syntax error)
    assert demand == [f for f in whole if f[0] != "broken.py"]
    assert any(name == "hooks.py" for name, _, _ in demand), "hook modules are found when a task asks for hooks"


def test_skeleton_reads_imports_from_text_not_docstrings(tmp_path: Path) -> None:
    files = {"a/__init__.py": "", "a/b.py": 'import a.c\n"""\nfrom a import d\n"""\nfrom . import (e,\n  f)\n',
             "a/c.py": "", "a/d.py": "", "a/e.py": "", "a/f.py": ""}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    paths = sorted(tmp_path.rglob("*.py"))
    names = module_names(paths)
    skeleton = Skeleton(summarize(p, p.read_text(), names[str(p)], load_profile()) for p in paths)
    assert set(skeleton.imported("a.b")) == {"a.c", "a.e", "a.f"}


@pytest.mark.parametrize("text, imported", [
    ("'''\nimport a.c\n'''\nimport a.d\n", {"a.d"}),  # the other quote kind
    ('x = """ \'\'\' """\nimport a.c\ny = """\nimport a.d\n"""\n', {"a.c"}),  # a quote of the other kind inside
    ('"""never closed\nimport a.c\n', set()),  # an unclosed string runs to the end
    ("x = 1  # import a.c\nimport_thing = 2\nfrom a import (c,\n  import_d)\nimport a.e; import a.f\n",
     {"a", "a.c", "a.e"}),  # the word `import` outside import statements; one statement per line
    ("def f():\n    from a import e\n", {"a.e"}),  # imports inside functions count
])
def test_skeleton_import_statements_found_from_the_word(tmp_path: Path, text: str, imported: set) -> None:
    (tmp_path / "a").mkdir()
    for rel in ("a/__init__.py", "a/c.py", "a/d.py", "a/e.py", "a/f.py"):
        (tmp_path / rel).write_text("")
    (tmp_path / "a/b.py").write_text(text)
    paths = sorted(tmp_path.rglob("*.py"))
    names = module_names(paths)
    skeleton = Skeleton(summarize(p, p.read_text(), names[str(p)], load_profile()) for p in paths)
    assert set(skeleton.imported("a.b")) == imported


def test_hook_modules_are_not_config_modules() -> None:
    """A forward hook makes a module read by every task, not a place of Dynamo settings: an
    `--entry` run walks it for config switches only if its text can hold one."""
    hook = summarize(Path("h.py"), "def f(m):\n    m.register_forward_hook(g)\n", "h", load_profile())
    config = summarize(Path("c.py"), "import torch\ntorch._dynamo.config.suppress_errors = True\n", "c",
                       load_profile())
    assert HOOK_MARKER in hook.markers and SETTINGS not in hook.markers and ENTRIES not in hook.markers
    backward = summarize(Path("b.py"), "def f(m):\n    m.register_full_backward_hook(g)\n", "b", load_profile())
    assert HOOK_MARKER in backward.markers  # a backward hook changes what calling the module does too
    assert SETTINGS in config.markers and ENTRIES in config.markers


def test_hook_modules_are_parsed_only_when_a_task_runs(project: Path, monkeypatch, tmp_path_factory) -> None:
    """Every task reads the forward hooks, so the modules marked as registering some are
    parsed when a task is simulated; a pre-commit run whose tasks all come from the cache
    does not parse them."""
    monkeypatch.setenv("GBREAK_LINT_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    config = replace(load_config(project), entry_points=("pkg.model:Net.forward",),
                     assume_compiled="none")
    parsed: list[str] = []
    real = lazy.parse_source
    monkeypatch.setattr(lazy, "parse_source", lambda path, data: parsed.append(Path(path).name) or real(path, data))
    first = api.lint_paths([project / "pkg/model.py"], config, jobs=1)
    assert "hooks.py" in parsed, "the task asked for hooks: the marked module was parsed"
    parsed.clear()
    again = api.lint_paths([project / "pkg/model.py", project / "pkg/util.py"], config, jobs=1)
    assert "hooks.py" not in parsed
    assert [d for d in again.diagnostics if d.path.endswith("model.py")] == list(first.diagnostics)


def test_config_switches_from_cached_facts_still_apply(project: Path, monkeypatch, tmp_path_factory) -> None:
    """A module's entry-point facts come from the cache without parsing it; the Dynamo config
    switch it holds (capture_scalar_outputs in settings.py) must still apply to its program
    (it once applied to none: the module had no path->name entry until parsed)."""
    config = replace(load_config(project), entry_points=("pkg.model:Net.forward",), assume_compiled="none")
    files = [project / "pkg/model.py", project / "pkg/layers.py"]
    cold = api.lint_paths(files, config, use_cache=False, jobs=1)
    monkeypatch.setenv("GBREAK_LINT_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    api.lint_paths([project / "pkg/model.py"], config, jobs=1)
    warm = api.lint_paths(files, config, jobs=1)
    assert warm.diagnostics == cold.diagnostics
    assert not any(d.path.endswith("layers.py") and d.code == "GBL307" for d in warm.diagnostics)
