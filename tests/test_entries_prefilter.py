"""The text pre-filter for entry points never drops a module the full entry finder accepts."""
import itertools
from pathlib import Path

import pytest

from gbreak_lint.index import assemble_project
from gbreak_lint.index.entries import might_hold_entries, walk_entries
from gbreak_lint.index.symbols import index_module
from gbreak_lint.knowledge import load_profile
from gbreak_lint.parse import parse_source

from conftest import CORPUS, FIXTURES

KNOWLEDGE = load_profile("2.13")
IMPORTS = {
    "torch": ("import torch", "torch.compile", "torch._dynamo.optimize", "torch._dynamo.config"),
    "alias": ("import torch as T", "T.compile", "T._dynamo.optimize", "T._dynamo.config"),
    "from": ("from torch import compile", "compile", None, None),
    "from-as": ("from torch import compile as tc", "tc", None, None),
    "dynamo": ("import torch._dynamo as dyn\nimport torch", "torch.compile", "dyn.optimize", "dyn.config"),
    "opt-as": ("from torch._dynamo import optimize as opt\nimport torch", "torch.compile", "opt", None),
    "cfg-as": ("from torch._dynamo import config as cfg\nimport torch", "torch.compile", None, "cfg"),
}
FORMS = [
    "@{c}\ndef f(x):\n    return x\n",
    "@{c}()\ndef f(x):\n    return x\n",
    "@{c}(fullgraph=True)\ndef f(x):\n    return x\n",
    "def f(x):\n    return x\n\ng = {c}(f)\n",
    "def f(x):\n    return x\n\ng = {c} (\n    f,\n    backend='eager')\n",
    "def f(x):\n    return x\n\ny = {c}(backend='eager')(f)(1)\n",
    "def main():\n    def f(x):\n        return x\n    return {c}(f)\n",
    "import torch.nn as nn\nclass M(nn.Module):\n    def forward(self, x):\n        return x\n\n"
    "m = M()\nm.compile()\n",
    "import torch.nn as nn\nclass M(nn.Module):\n    def forward(self, x):\n        return x\n\n"
    "cm = {c}(M())\n",
]
OPT_FORMS = ["def f(x):\n    return x\n\ng = {o}('eager')(f)\n", "@{o}('eager')\ndef f(x):\n    return x\n"]
CFG_FORMS = ["{g}.nested_graph_breaks = True\n", "{g}.capture_scalar_outputs = True\n",
             "{g}.reorderable_logging_functions.add(print)\n",
             "with {g}.patch(capture_scalar_outputs=True):\n    pass\n",
             "@{g}.patch(capture_scalar_outputs=True)\ndef f(x):\n    return x\n"]


def generated_programs():
    for name, (imp, c, o, g) in IMPORTS.items():
        for i, form in enumerate(FORMS):
            yield f"{name}-compile-{i}", f"{imp}\n{form.format(c=c)}"
        for i, form in enumerate(OPT_FORMS if o else ()):
            yield f"{name}-optimize-{i}", f"{imp}\n{form.format(o=o)}"
        for i, form in enumerate(CFG_FORMS if g else ()):
            yield f"{name}-config-{i}", f"{imp}\n{form.format(g=g)}"


def repository_programs():
    for root in (FIXTURES, CORPUS):
        if root.is_dir():
            for path in sorted(root.rglob("*.py")):
                yield path.relative_to(root.parent).as_posix(), path.read_text()


def _module(text: str):
    parsed = parse_source(Path("/virtual/prog.py"), text.encode()).parsed
    assert parsed is not None
    mod = index_module(parsed)
    return assemble_project([mod]), mod


@pytest.mark.parametrize("name,text", list(itertools.chain(generated_programs(), repository_programs())))
def test_prefilter_keeps_every_module_with_entries(name, text):
    project, mod = _module(text)
    facts = walk_entries(project, KNOWLEDGE, project.modules[mod.name])
    if facts.entries or facts.configs or facts.wrapped:
        assert might_hold_entries(project, KNOWLEDGE, project.modules[mod.name]), name


def test_generated_forms_are_entries():
    """The generated variants really are entry forms (else the test above proves nothing)."""
    found = 0
    for _name, text in generated_programs():
        project, mod = _module(text)
        facts = walk_entries(project, KNOWLEDGE, project.modules[mod.name])
        found += bool(facts.entries or facts.configs)
    assert found >= 0.9 * len(list(generated_programs()))
