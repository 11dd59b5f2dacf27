"""An incremental run (caches from earlier runs, edits since) finds exactly what a cold run finds.

A project is edited in the ways real edits go (add a break, remove it, rename a function, move
a class to another module, change an import, add a hook, add a module that a lookup used to
miss, break the syntax) and after each edit three questions are asked incrementally and cold:
the whole tree, the edited file alone (pre-commit) and another file.
"""
import json
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
    ("a helper compiling the function it is given, and a module not yet handing it one", {
        "pkg/runner.py": "import torch\n\n\ndef run(fn, x):\n    return torch.compile(fn)(x)\n",
        "pkg/steps.py": "import torch\n\n\ndef loud(x):\n    print('loud')\n    return x\n\n\nloud(torch.ones(2))\n"}),
    # the helper's module did not change: its stored facts must see the new caller
    ("that module starts handing it one", {
        "pkg/steps.py": "import torch\nfrom pkg.runner import run\n\n\ndef loud(x):\n    print('loud')\n    return x\n\n\n"
                        "run(loud, torch.ones(2))\n"}),
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
    # a frame skipped (a break in a loop): the stored result holds every kind of value a task has
    _write(project, {"other.py": "import torch\n\n\n@torch.compile\ndef f(x):\n    for i in range(2):\n"
                                 "        print(i)\n    return x + 1\n"})
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


def test_a_pre_commit_run_after_an_edit_parses_only_the_edited_file(project: Path, monkeypatch) -> None:
    """The modules the edited file's work reaches come back from the index store (by content),
    and what is found is what a run without any store finds."""
    from gbreak_lint import pipeline
    from gbreak_lint.index import lazy

    _findings(project, [project / "pkg/model.py"], use_cache=True)  # stores what the work reached
    parsed: list[str] = []
    real = lazy.parse_source
    for stage in (lazy, pipeline):
        monkeypatch.setattr(stage, "parse_source", lambda path, data: parsed.append(Path(path).name) or real(path, data))
    _write(project, {"pkg/helpers.py": EDITS[0][1]["pkg/helpers.py"]})
    incremental = _findings(project, [project / "pkg/helpers.py"], use_cache=True)
    assert parsed == ["helpers.py"], "only the edited file is parsed again"
    assert incremental == _findings(project, [project / "pkg/helpers.py"], use_cache=False)
    assert incremental["diagnostics"], "the print added to helpers.py is found"


FIXTURE_FILES = sorted((Path(__file__).resolve().parent.parent / "fixtures").rglob("*.py"))


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: str(p.parent.name + "/" + p.name))
def test_a_stored_index_reads_back_as_the_index(path: Path) -> None:
    from gbreak_lint.index.stored import module_from_plain, module_to_plain
    from gbreak_lint.index.symbols import index_module
    from gbreak_lint.parse import parse_file

    parsed = parse_file(path).parsed
    assert parsed is not None
    module = index_module(parsed, "m")
    plain = json.loads(json.dumps(module_to_plain(module)))
    again = module_from_plain(plain, parsed.drop_tree(), "m")
    assert again is not None and module_to_plain(again) == module_to_plain(module)
    for fn, back in zip(module.functions.values(), again.functions.values()):
        assert [type(p.default) for p in fn.params] == [type(p.default) for p in back.params]
        assert [type(d.decorator) for d in fn.decorators] == [type(d.decorator) for d in back.decorators]
    assert [type(v) for v in module.values.values()] == [type(v) for v in again.values.values()]


def _every_part_spoiled(value, path=()):
    """(where, the document with that one part replaced by a wrong value)."""
    if isinstance(value, dict):
        for key in value:
            for where, bad in _every_part_spoiled(value[key], path + (key,)):
                yield where, bad
        yield path, ["not", "an", "object"]
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _every_part_spoiled(item, path + (i,))
        yield path, {"not": "a list"}
    elif isinstance(value, str):
        yield path, 7
    else:
        yield path, "1 +"


def test_a_stored_index_of_the_wrong_shape_is_not_used() -> None:
    """Each part of a stored index replaced by a value of another type (or code that does not
    parse): decoding refuses the document (the file is parsed instead), it never crashes."""
    import copy

    from gbreak_lint.index.stored import module_from_plain, module_to_plain
    from gbreak_lint.index.symbols import index_module
    from gbreak_lint.parse import parse_source

    source = b"import torch\nX = 1\n\n\n@dec(2)\nclass A(torch.nn.Module):\n    def __init__(self, k=3):\n" \
             b"        self.w = k\n        y = 2\n\n    def forward(self, *a, x: int = 1, **kw):\n        return a\n"
    parsed = parse_source(Path("m.py"), source).parsed
    assert parsed is not None
    plain = module_to_plain(index_module(parsed, "m"))
    assert module_from_plain(plain, parsed, "m") is not None
    assert module_from_plain(plain, parsed, "other") is None
    refused = 0
    for where, bad in _every_part_spoiled(plain):
        spoiled = copy.deepcopy(plain)
        target = spoiled
        for key in where[:-1]:
            target = target[key]
        if not where:
            spoiled = bad
        else:
            target[where[-1]] = bad
        found = module_from_plain(spoiled, parsed, "m")
        refused += found is None
        if found is not None:  # a value the index may hold either way (an optional one): still an index
            assert module_to_plain(found)["name"] == "m"
    assert refused > 40


INHERITED = {
    "pkg/__init__.py": "",
    "pkg/base.py": """\
import torch.nn as nn


class Base(nn.Module):
    def helper(self, x):
        return x + 1

    def forward(self, x):
        for _ in range(2):
            x = self.helper(x)
        return x
""",
    "pkg/loud.py": """\
from pkg.base import Base


class Loud(Base):
    def helper(self, x):
        print("helper")
        return x + 1
""",
    "pkg/louder.py": "from pkg.loud import Loud\n\n\nclass Louder(Loud):\n    pass\n",
}


def test_a_file_checked_alone_finds_what_the_whole_tree_finds_in_it(tmp_path: Path, monkeypatch) -> None:
    """`--assume-compiled modules`: a subclass in another file that keeps this file's forward
    is compiled with its own methods (here `Loud.helper` prints inside the loop of
    `Base.forward`: the frame is skipped). Each class is its own program: `Base` compiled
    first does not hide what `Loud` does."""
    monkeypatch.setenv("GBREAK_LINT_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text('[tool.gbreak-lint]\nassume-compiled = "modules"\n')
    _write(root, INHERITED)
    base = root / "pkg/base.py"
    whole = [d for d in _findings(root, [root], use_cache=False)["diagnostics"] if d["path"].endswith("pkg/base.py")]
    alone = _findings(root, [base], use_cache=False)["diagnostics"]
    assert any(d["kind"] == "frame-skipped" for d in whole), whole
    assert alone == whole


def test_a_file_whose_index_comes_from_the_store_finds_what_a_cold_run_finds(project: Path) -> None:
    """A second run on the same file under other settings reads the file's index from the
    store (its content did not change) but finds its compile calls again: the walk over the
    re-parsed tree must meet the same definitions the stored index names (a decorated entry,
    a local def, a method)."""
    _write(project, {"steps.py": """\
import torch


@torch.compile(backend="eager")
def step(x):
    print("step")
    return x + 1


class Runner:
    def run(self, x):
        def inner(y):
            return y.sum().item()
        return torch.compile(inner)(x)
"""})
    steps = project / "steps.py"
    first = _findings(project, [steps], use_cache=True)
    assert len(first["diagnostics"]) >= 2, first
    (project / "pyproject.toml").write_text("[tool.gbreak-lint]\ndynamo-config = {nested_graph_breaks = true}\n")
    again = _findings(project, [steps], use_cache=True)
    assert again == _findings(project, [steps], use_cache=False)
    assert again["diagnostics"], "the stored index still yields the compile calls"
