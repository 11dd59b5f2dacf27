"""Ground truth is real Dynamo: re-run fixtures and rule examples under torch 2.13.

Skipped cleanly where torch is not installed; CI installs torch==2.13.0 and runs them.
"""
import json
import os

import pytest

from gbreak_lint.catalog import load_catalog
from gbreak_lint.oracle import label

from conftest import FIXTURES, requires_torch

pytestmark = [pytest.mark.torch, requires_torch]
CONFIG = "nested_graph_breaks=False"
# fixtures/fixes/ holds before/after pairs for the rewrites (tests/test_fixes.py)
FIXTURE_DIRS = sorted(p.parent for p in FIXTURES.rglob("main.py")
                      if "fixes" not in p.relative_to(FIXTURES).parts)
RULES = load_catalog().rules


def summary(doc: dict) -> dict:
    cfg = doc["configs"][CONFIG]
    return {
        "sites": sorted((g["file"], g["line"], g["gb_code"], g["compiles_hit"]) for g in cfg["graph_breaks"]),
        "library": sorted((g["user_file"], g["user_line"], g["gb_code"]) for g in cfg["library_breaks"]),
        # frames of the program only: the generator frames of sympy that compiled autograd's
        # symbolic shapes run under Dynamo's callback are skipped in a run-dependent number
        "skipped": sorted((s["file"], s["function"], s["first_line"], s["category"])
                          for s in cfg["skipped_frames"] if not os.path.isabs(s["file"])),
        "partial": sorted((c["file"], c["function"], c["first_line"]) for c in cfg["compiled_frames"]
                          if c["partial_then_eager_at"]),
    }


def run_program(folder, text=None):
    if text is not None:
        (folder / "main.py").write_text(text)
    return label(folder / "main.py", folder, [None], timeout=600)


@pytest.mark.parametrize("folder", FIXTURE_DIRS, ids=[p.relative_to(FIXTURES).as_posix() for p in FIXTURE_DIRS])
def test_fixture_label_is_reproduced_by_torch(folder):
    recorded = json.loads((folder / "label.json").read_text())
    assert summary(run_program(folder)) == summary(recorded)


def _gb_codes(doc: dict) -> set[str]:
    cfg = doc["configs"][CONFIG]
    return {g["gb_code"] for g in cfg["graph_breaks"] + cfg["library_breaks"]}


def _observed(rule, doc: dict) -> bool:
    """Did torch show what the rule says the example does (its YAML's `torch_shows`)?"""
    cfg = doc["configs"][CONFIG]
    skipped = {s["category"] for s in cfg["skipped_frames"] if not s["is_resume"]}
    partial = any(c["partial_then_eager_at"] for c in cfg["compiled_frames"])
    outcomes = {o for g in cfg["graph_breaks"] for o in g["outcomes"]}
    shows, _, category = rule.torch_shows.partition(":")
    observed = {
        "gb_code": lambda: bool(_gb_codes(doc) & set(rule.gb_codes)),
        "skipped": lambda: category in skipped,
        "skipped_or_resume": lambda: category in {s["category"] for s in cfg["skipped_frames"]},
        "unresumable": lambda: "unresumable_graph_break" in skipped or partial,
        "retraced": lambda: any(g["compiles_hit"] > 1 for g in cfg["graph_breaks"]),
        "hard_error": lambda: "hard_error" in outcomes,
        "no_break": lambda: not outcomes,  # (GBL406: the example's region holds no break)
    }
    return observed[shows]()


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_rule_examples_under_torch(rule, tmp_path):
    if rule.evidence != "torch":
        pytest.skip(f"evidence is {rule.evidence}, not a Dynamo behaviour to observe")
    bad = tmp_path / "bad"
    good = tmp_path / "good"
    bad.mkdir()
    good.mkdir()
    assert _observed(rule, run_program(bad, rule.example)), "example does not show the problem"
    assert not _observed(rule, run_program(good, rule.use_instead)), "use_instead still shows it"


CORPUS_SAMPLE = ["c02_nested_depth1", "c08_try_except", "c10_custom_ctx", "c18_disable_nonrecursive",
                 "c21_loop_calls_breaking_callee", "c23_logging", "c26_generator", "c27_listcomp",
                 "c28_skip_frame", "c37_more_ctx"]


@pytest.mark.parametrize("case", CORPUS_SAMPLE)
def test_oracle_agrees_with_shared_corpus(case, tmp_path):
    """Our labelling helper records what the corpus' own oracle recorded."""
    from conftest import corpus_or_skip

    corpus = corpus_or_skip()
    program = tmp_path / f"{case}.py"
    program.write_text((corpus / f"{case}.py").read_text())
    ours = label(program, tmp_path, [None], timeout=600)
    theirs = json.loads((corpus / f"{case}.expected.json").read_text())
    ours, theirs = summary(ours), summary(theirs)
    assert ours["sites"] == theirs["sites"]
    assert ours["partial"] == theirs["partial"]
    assert [s for s in ours["skipped"] if s[3] != "no_ops_traced"] == \
        [s for s in theirs["skipped"] if s[3] not in ("no_ops_traced", "recompile_limit")]


FULLGRAPH_THEN_RESET = """\
import torch


def fn(x):
    print("break")
    return x + 1


try:
    torch.compile(fn, backend="eager", fullgraph=True)(torch.ones(2))
except Exception:
    pass
torch._dynamo.reset()
torch.compile(fn, backend="eager")(torch.ones(2))
"""


def test_oracle_keeps_a_fullgraph_error_when_the_same_code_compiles_again(tmp_path):
    # the second compile (no fullgraph) of the same code once erased the first one's error
    site = run_program(tmp_path, FULLGRAPH_THEN_RESET)["configs"][CONFIG]["graph_breaks"][0]
    assert site["line"] == 5 and site["outcomes"].get("hard_error") == 1 and site["outcomes"].get("resumed") == 1
