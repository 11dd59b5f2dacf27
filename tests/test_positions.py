"""gbreak_lint.positions must give exactly libcst's PositionProvider ranges (it is only faster)."""
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from gbreak_lint.positions import TRIVIA, compute_positions

REPO = Path(__file__).resolve().parent.parent

ODD_SOURCES = [
    "x = 1\r\ny = (1,\r\n     2)\r\n",
    "x = 1\ry = 2\r",
    "def f(a,\n      b):\n    return a + \\\n        b\n",
    's = """a\nb\nc"""\nt = f"{s!r:>{10}}"\n',
    "@dec(1)\n# comment\nclass A(B, metaclass=M):\n\tdef m(self): pass\n",
    "if a:\n    pass\nelif b:\n    pass\nelse:\n    pass\n",
    "",
    "\n\n# only a comment",
    "x = [i for i in range(3) if i]\nlambda: (yield)\n",
    "with a as b, c as d:\n    try:\n        pass\n    except* E:\n        pass\n",
]


def _same_as_libcst(module: cst.Module) -> None:
    ours = compute_positions(module)
    theirs = {node: rng for node, rng in MetadataWrapper(module, unsafe_skip_copy=True)
              .resolve(PositionProvider).items() if type(node) not in TRIVIA}
    assert set(ours) == set(theirs)
    for node, rng in theirs.items():
        assert ours[node] == rng, type(node).__name__


@pytest.mark.parametrize("source", ODD_SOURCES)
def test_odd_sources(source):
    _same_as_libcst(cst.parse_module(source))


def test_every_python_file_of_the_repository():
    files = [p for p in REPO.rglob("*.py") if ".gbreak_cache" not in p.parts]
    assert len(files) > 50
    for path in files:
        try:
            module = cst.parse_module(path.read_bytes())
        except cst.ParserSyntaxError:
            continue  # the syntax-error fixtures
        _same_as_libcst(module)


def _definitions_same_as_module(module: cst.Module, text: str) -> int:
    from gbreak_lint.parse import definition_nodes
    from gbreak_lint.positions import compute_definition_positions

    whole = compute_positions(module)
    lines = text.split("\n")
    checked = 0
    for definition in definition_nodes(module):
        local = compute_definition_positions(module, definition, whole.start_line(definition.name), lines)
        assert local is not None, definition.name.value
        for node in local:
            assert local[node] == whole[node], (definition.name.value, type(node).__name__)
        checked += 1
    return checked


@pytest.mark.parametrize("source", ODD_SOURCES)
def test_definition_positions_odd_sources(source):
    module = cst.parse_module(source)
    if "\r" not in source:
        _definitions_same_as_module(module, source)


def test_definition_positions_every_file_of_the_repository():
    """A definition's positions computed alone are the module's positions of its nodes."""
    checked = 0
    for path in [p for p in REPO.rglob("*.py") if ".gbreak_cache" not in p.parts]:
        try:
            module = cst.parse_module(path.read_bytes())
        except cst.ParserSyntaxError:
            continue
        checked += _definitions_same_as_module(module, path.read_text(encoding="utf-8", errors="replace"))
    assert checked > 500


def test_definition_positions_refuse_a_wrong_anchor():
    from gbreak_lint.positions import compute_definition_positions

    text = "x = 1\n\n\ndef f(a):\n    return a\n"
    module = cst.parse_module(text)
    fn = module.body[1]
    assert compute_definition_positions(module, fn, 4, text.split("\n")).start_line(fn.name) == 4
    assert compute_definition_positions(module, fn, 2, text.split("\n")) is None  # the name is not there


def _alone_same_as_module(path: Path, text: str) -> int:
    """Each definition parsed from its own lines (a lazy module, the way a repository scan's
    traces read functions) has the code and, node by node, the positions of the module's."""
    from gbreak_lint.parse import TREES, ParsedModule

    whole = ParsedModule(path, cst.parse_module(text), text)
    lazy = ParsedModule(path, None, text)
    checked = 0
    with TREES.scope():
        lines = whole.definition_lines()
        for ordinal, node in enumerate(whole.definitions()):
            alone = lazy.definition(ordinal, lines[ordinal])
            assert alone.name.value == node.name.value
            code = cst.Module([]).code_for_node  # comments and blank lines above it are the module's
            assert code(alone.with_changes(leading_lines=[])) == code(node.with_changes(leading_lines=[]))
            if TREES.holding(alone) is None:
                continue  # the module's own tree was used (its lines cannot stand alone)
            anchor_whole, anchor_alone = (node, lines[ordinal]), (alone, lines[ordinal])
            kept = [n for n in _walk_nodes(alone) if type(n) not in TRIVIA]
            theirs_kept = [n for n in _walk_nodes(node) if type(n) not in TRIVIA]
            assert len(kept) == len(theirs_kept)
            for mine, theirs in zip(kept, theirs_kept):
                assert lazy.span(mine, anchor_alone) == whole.span(theirs, anchor_whole), (path, node.name.value)
            checked += 1
    return checked


def _walk_nodes(node):
    out = [node]
    for child in node.children:
        out += _walk_nodes(child)
    return out


@pytest.mark.parametrize("source", [s for s in ODD_SOURCES if "\r" not in s])
def test_definitions_parsed_alone_odd_sources(source):
    _alone_same_as_module(Path("odd.py"), source)


def test_definitions_parsed_alone_every_file_of_the_repository():
    checked = 0
    for path in [p for p in REPO.rglob("*.py") if ".gbreak_cache" not in p.parts]:
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            cst.parse_module(text)
        except cst.ParserSyntaxError:
            continue
        if "\r" not in text:
            checked += _alone_same_as_module(path, text)
    assert checked > 500
