"""An incremental run (caches from earlier runs, edits since) finds exactly what a cold run finds.

A project is edited in the ways real edits go (add a break, remove it, rename a function, move
a class to another module, change an import, add a hook, add a module that a lookup used to
miss, break the syntax) and after each edit three questions are asked incrementally and cold:
the whole tree, the edited file alone (pre-commit) and another file.
"""
from pathlib import Path

import pytest

from gbreak_lint import api
from gbreak_lint.config import load_config
from gbreak_lint.plain import to_plain

BASE = {
    "pkg/__init__.py": "",
    "pkg/helpers.py": "def scale(x):\n    return x * 2\n\n\ndef shift(x):\n    return x + 1\n",
    "pkg/layers.py": "import torch.nn as nn\n",
    "pkg/model.py": """\
import torch.nn as nn
from pkg.helpers import scale, shift


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return shift(self.lin(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()

    def forward(self, x):
        return scale(self.block(x))
""",
    "train.py": """\
import torch
from pkg.model import Net

model = torch.compile(Net())


def step(x):
    return model(x)
""",
}

# (description, {path: new text or None to delete})
EDITS = [
    ("add a break", {"pkg/helpers.py": "def scale(x):\n    print('scaling')\n    return x * 2\n\n\ndef shift(x):\n    return x + 1\n"}),
    ("remove it again", {"pkg/helpers.py": BASE["pkg/helpers.py"]}),
    ("rename a function (and its caller)", {
        "pkg/helpers.py": "def double(x):\n    return x.sum().item()\n\n\ndef shift(x):\n    return x + 1\n",
        "pkg/model.py": BASE["pkg/model.py"].replace("scale", "double")}),
    ("move a class to another module", {
        "pkg/layers.py": "import torch.nn as nn\nfrom pkg.helpers import shift\n\n\n" + BASE["pkg/model.py"].split("\n\n\n")[1] + "\n",
        "pkg/model.py": "import torch.nn as nn\nfrom pkg.helpers import double\nfrom pkg.layers import Block\n\n\n"
                        + BASE["pkg/model.py"].split("\n\n\n")[2].replace("scale", "double")}),
    ("change what the moved class calls (only layers.py and helpers.py change)", {
        "pkg/helpers.py": "import logging\nlog = logging.getLogger(__name__)\n\n\ndef double(x):\n    return x.sum().item()\n\n\n"
                          "def shift(x):\n    log.warning('shift')\n    return x + 1\n"}),
    ("change an import to a module that does not exist yet", {
        "pkg/layers.py": "import torch.nn as nn\nfrom pkg.extra import shift\n\n\n" + BASE["pkg/model.py"].split("\n\n\n")[1] + "\n"}),
    ("add that module", {"pkg/extra.py": "def shift(x):\n    return x.tolist()\n"}),
    ("register a forward hook in a new module", {
        "pkg/hooks.py": "from pkg.model import Net\n\n\ndef hook(m, a, out):\n    print('hook')\n\n\n"
                        "net = Net()\nnet.block.register_forward_hook(hook)\n"}),
    ("break a file's syntax", {"pkg/extra.py": "def shift(x:\n"}),
    ("delete the hook module", {"pkg/hooks.py": None}),
]


def _write(root: Path, files: dict) -> None:
    for rel, text in files.items():
        path = root / rel
        if text is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _findings(root: Path, paths: list[Path], use_cache: bool) -> dict:
    config = load_config(root)
    result = api.lint_paths(paths, config, use_cache=use_cache, jobs=1)
    plain = to_plain(result)
    for d in plain["diagnostics"]:
        d.pop("fingerprint", None)
    return plain


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("GBREAK_LINT_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text("[tool.gbreak-lint]\n")
    _write(root, BASE)
    return root


def test_incremental_runs_find_what_cold_runs_find(project: Path) -> None:
    questions = lambda edited: [[project], [project / edited], [project / "train.py"]]  # noqa: E731
    for paths in questions("pkg/model.py"):
        _findings(project, paths, use_cache=True)  # fill the caches
    seen_breaks = 0
    for what, files in EDITS:
        _write(project, files)
        edited = next(iter(files))
        for paths in questions(edited):
            if not all(p.exists() for p in paths):
                continue
            incremental = _findings(project, paths, use_cache=True)
            cold = _findings(project, paths, use_cache=False)
            assert incremental == cold, f"after '{what}', checking {[p.name for p in paths]}"
            seen_breaks += len(cold["diagnostics"])
    assert seen_breaks > 10, "the edits do produce findings (the comparison is not of empty results)"


def test_an_edit_reruns_only_the_tasks_that_read_it(project: Path, monkeypatch) -> None:
    _write(project, {"other.py": "import torch\n\n\n@torch.compile\ndef f(x):\n    return x + 1\n"})
    _findings(project, [project], use_cache=True)
    ran: list[str] = []
    real = api.run_tasks

    def counting(project_index, knowledge, catalog, tasks, jobs, with_trees=None, cache=None):
        done = real(project_index, knowledge, catalog, tasks, jobs, with_trees, cache)
        ran.extend(t.entries[0].path for t in tasks)
        ran.append(f"reused {cache.reused}")
        return done

    monkeypatch.setattr(api, "run_tasks", counting)
    _write(project, {"pkg/helpers.py": BASE["pkg/helpers.py"] + "\n\ndef unused():\n    pass\n"})
    _findings(project, [project], use_cache=True)
    assert "reused 1" in ran, ran  # other.py's task did not read pkg/helpers.py: reused
