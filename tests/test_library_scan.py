"""Repository-scale scanning: worker processes, lazily re-made trees, the entry pre-filter."""
from pathlib import Path

import libcst as cst
import pytest

from gbreak_lint.api import analyse
from gbreak_lint.config import Config
from gbreak_lint.index import build_index
from gbreak_lint.index.entries import might_hold_entries
from gbreak_lint.knowledge import load_profile
from gbreak_lint.parse import TreeStore, parse_source
from gbreak_lint.pipeline import MIN_FILES_FOR_WORKERS

KNOWLEDGE = load_profile("2.13")

LAYER = '''import torch
from torch import nn
from .util import helper


class Block{n}(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        y = self.lin(x)
        if {n} % 3 == 0:
            print("block {n}")
        for i in range(2):
            y = helper(y)
        y = sum(part * 2 for part in y.chunk(2))
        return y.sum().item() if {n} % 5 == 0 else y


# a module-level patch the model reads from the module's text (not a tree it shares)
nn.functional.gelu = torch.compiler.disable(nn.functional.gelu)
'''
UTIL = '''import torch


def helper(t):
    torch._dynamo.graph_break()
    return t * 2
'''


def make_library(root: Path, layers: int) -> Path:
    pkg = root / "lib"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "util.py").write_text(UTIL)
    for n in range(layers):
        (pkg / f"layer{n}.py").write_text(LAYER.format(n=n))
    return pkg


def scan(root: Path, jobs: int):
    config = Config(root=root, assume_compiled="modules")
    return analyse([root], config, jobs=jobs)


def test_workers_give_the_same_findings_as_one_process(tmp_path):
    make_library(tmp_path, MIN_FILES_FOR_WORKERS + 6)
    one = scan(tmp_path, 1).result
    two = scan(tmp_path, 2).result
    assert one.diagnostics and one == two
    codes = {d.code for d in one.diagnostics}
    assert {"GBL301", "GBL303"} <= codes  # print and .item() in forwards
    # the helper's break is reported once, not once per layer that reaches it
    helper_breaks = [d for d in one.diagnostics if d.path.endswith("util.py") and d.kind == "graph-break"]
    assert len(helper_breaks) == 1


def test_trees_are_remade_on_demand_within_a_budget(tmp_path, monkeypatch):
    """A scan larger than the tree budget still finds everything: trees dropped after indexing
    are parsed again from the text when the model needs them."""
    make_library(tmp_path, 12)
    expected = scan(tmp_path, 1).result
    tiny = TreeStore(budget_chars=1)
    monkeypatch.setattr("gbreak_lint.parse.TREES", tiny)
    monkeypatch.setattr("gbreak_lint.pipeline.TREES", tiny)
    monkeypatch.setattr("gbreak_lint.api.TREES", tiny)
    assert scan(tmp_path, 1).result == expected


def test_node_identity_holds_inside_a_scope():
    store = TreeStore(budget_chars=1)
    a = parse_source(Path("a.py"), b"def f():\n    return 1\n").parsed.drop_tree()
    b = parse_source(Path("b.py"), b"def g():\n    return 2\n").parsed.drop_tree()
    with store.scope():
        first = store.entry(a).module
        store.entry(b)  # evicts a from the recent trees, not from the open scope
        assert store.entry(a).module is first
    assert store.entry(a).module is not first  # re-made once the scope closed and it was evicted



def test_a_definition_held_alone_stays_the_same_node_when_the_module_is_parsed_meanwhile():
    """A frame registers a comprehension from its def parsed alone; something else then parses
    the whole module (a module-wide walk). The def asked for again in the same task must be the
    same node, or the comprehension's positions are not found in it."""
    store = TreeStore(budget_chars=1)
    parsed = parse_source(Path("m.py"), b"x = 1\n\ndef f(a):\n    return sum(v for v in a)\n").parsed.drop_tree()
    with store.scope():
        alone = store.definition(parsed, 0, 3)
        assert alone is not None
        store.entry(parsed)  # the whole module, now held by the scope as well
        assert store.definition(parsed, 0, 3) is alone

def _module(source: str):
    parsed = parse_source(Path("m.py"), source.encode()).parsed
    index = build_index([parsed], KNOWLEDGE)
    return index.project, next(iter(index.project.modules.values()))


@pytest.mark.parametrize("source, expected", [
    ("import re\nP = re.compile('x')\n", False),
    ("x = compile('1', 'f', 'eval')\n", False),
    ("import torch\nf = torch.compile(g)\n", True),
    ("import torch\n@torch.compile\ndef f(x):\n    return x\n", True),
    ("from torch import compile\nf = compile(g)\n", True),
    ("def run(model):\n    model.compile()\n", True),
    ("import torch\ntorch._dynamo.config.nested_graph_breaks = True\n", True),
    ("import torch._dynamo\nopt = torch._dynamo.optimize('eager')(f)\n", True),
    ("import regex as rx\nP = rx.compile('x')\n", False),
])
def test_entry_prefilter(source, expected):
    project, module = _module(source)
    assert might_hold_entries(project, KNOWLEDGE, module) is expected


def test_index_nodes_are_found_by_ordinal_after_a_reparse():
    source = "class A:\n    def f(self):\n        def inner():\n            pass\n\n\ndef g():\n    pass\n"
    parsed = parse_source(Path("m.py"), source.encode()).parsed
    index = build_index([parsed], KNOWLEDGE)
    fns = index.project.modules["m"].functions
    assert {q: f.def_line for q, f in fns.items()} == {"m.A.f": 2, "m.A.f.inner": 3, "m.g": 7}
    lazy = parsed.drop_tree()
    assert isinstance(lazy.definitions()[fns["m.g"].ordinal], cst.FunctionDef)
    assert lazy.definitions()[fns["m.g"].ordinal].name.value == "g"


@pytest.mark.parametrize("source", [
    "def f():\n    '''\ndef g():\n    '''\n    return 1\n",  # a def inside a docstring
    "class A:\r\n    def m(self):\r\n        pass\r\n",
    "@dec\nasync  def f():\n    pass\nif x:\n    class B: pass\n",
    "x = 1\rdef f(): pass\r",
])
def test_definition_lines_agree_with_libcst_positions(source):
    parsed = parse_source(Path("m.py"), source.encode()).parsed
    index = build_index([parsed], KNOWLEDGE)
    module = next(iter(index.project.modules.values()))
    infos = list(module.functions.values()) + list(module.classes.values())
    assert infos
    for info in infos:
        assert info.def_line == parsed.line(info.node.name), info.qualname


def test_definition_lines_on_every_file_of_the_repository():
    repo = Path(__file__).resolve().parent.parent
    checked = 0
    for path in sorted(repo.rglob("*.py")):
        outcome = parse_source(path, path.read_bytes())
        if outcome.parsed is None:
            continue
        module = next(iter(build_index([outcome.parsed], KNOWLEDGE).project.modules.values()))
        for info in [*module.functions.values(), *module.classes.values()]:
            assert info.def_line == outcome.parsed.line(info.node.name), (path, info.qualname)
            checked += 1
    assert checked > 500


INFERRED = '''import torch
from torch import nn


class Loud(nn.Module):
    def forward(self, x):
        print("loud")
        return x


class Quiet(nn.Module):
    def forward(self, x):
        return x * 2


class Chatty(nn.Module):
    def forward(self, x):
        print("chatty")
        return x


def pick():
    return Chatty


class Net(nn.Module):
    def __init__(self, wide, block=Loud):
        super().__init__()
        cls = Loud if wide else Loud
        self.a = cls()
        self.b = block()
        self.c = (Quiet if wide else Loud)()
        made = pick()
        self.d = made()

    def forward(self, x):
        return self.d(self.c(self.b(self.a(x))))
'''


def test_attribute_classes_inferred_by_astroid(tmp_path):
    """Aliases and default-argument classes are followed; a class returned by a helper is
    found by astroid; an ambiguous value (Quiet or Loud) is not guessed."""
    (tmp_path / "net.py").write_text(INFERRED)
    config = Config(root=tmp_path, entry_points=("net:Net.forward",))
    result = analyse([tmp_path], config, jobs=1).result
    prints = [d for d in result.diagnostics if d.code == "GBL303"]
    assert [d.span.line for d in prints] == [7, 18]
    assert {d.entry for d in prints} == {"net.Net.forward"}


def test_compile_mentions_are_the_full_scan_matches():
    """The word-anchored search finds exactly what scanning every position with COMPILE_SYNTAX finds."""
    from gbreak_lint.index.entries import COMPILE_SYNTAX, _compile_mentions

    texts = [p.read_text(encoding="utf-8", errors="replace") for p in Path(__file__).resolve().parent.parent.rglob("*.py")]
    texts += ["x = " + "a . " * 200 + "compile(m)", "torch.compile" + " " * 300 + "(m)\n@torch.compile\ndef f(): pass\n",
              "recompile(x); re.compile('a'); torch . _dynamo . optimize ( 'eager' )", "compile", ""]
    for text in texts:
        expected = [(m.span(), m.groupdict()) for m in COMPILE_SYNTAX.finditer(text)]
        assert [(m.span(), m.groupdict()) for m in _compile_mentions(text)] == expected


@pytest.mark.parametrize("case", sorted(p.name for p in (Path(__file__).resolve().parent.parent / "fixtures" / "fixes").iterdir()))
def test_fix_offers_probed_in_the_tasks_match_trying_each_finding(case, monkeypatch):
    """Fix offers decided in the task workers (trees at hand) equal trying each finding's rewrite
    on its file afterwards."""
    import gbreak_lint.api as api

    root = Path(__file__).resolve().parent.parent / "fixtures" / "fixes" / case
    config = Config(root=root)
    probed = analyse([root], config).result.diagnostics
    monkeypatch.setattr(api, "_fix_probes", lambda result: ())
    tried = analyse([root], config).result.diagnostics
    assert probed == tried
    assert any(d.fix is not None for d in probed)
