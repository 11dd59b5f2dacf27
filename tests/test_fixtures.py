"""Every fixture: the linter's goldens, and agreement with what real torch 2.13 did (label.json).

label.json is written by `python -m gbreak_lint.oracle --all fixtures/` (a real torch run);
known_misses.txt lists, honestly, where the prediction and the run still disagree.
"""
import json
import sys

import pytest

from conftest import FIXTURES, REPO, corpus_or_skip, run_json

sys.path.insert(0, str(REPO / "benchmarks"))
import accuracy  # noqa: E402

# fixtures/fixes/ holds before/after pairs for the rewrites (tests/test_fixes.py)
FIXTURE_DIRS = sorted(p.parent for p in FIXTURES.rglob("main.py")
                      if "fixes" not in p.relative_to(FIXTURES).parts)
IDS = [p.relative_to(FIXTURES).as_posix() for p in FIXTURE_DIRS]


def simplified(doc: dict) -> list[dict]:
    return [{"code": d["code"], "kind": d["kind"], "path": d["path"], "line": d["line"],
             "times_traced": d["times_traced"],
             "frame": f"{d['frame']['function']}@{d['frame']['line']}" if d["frame"] else None}
            for d in doc["diagnostics"]]


@pytest.mark.parametrize("folder", FIXTURE_DIRS, ids=IDS)
def test_golden(folder, capsys, monkeypatch, update_goldens):
    monkeypatch.chdir(folder)
    got = simplified(run_json(capsys, ".", "--root", "."))
    golden = folder / "expected.json"
    if update_goldens:
        golden.write_text(json.dumps(got, indent=1) + "\n")
    assert golden.exists(), f"{folder} has no expected.json: review the output, then run with --update-goldens"
    assert got == json.loads(golden.read_text())


@pytest.mark.parametrize("folder", FIXTURE_DIRS, ids=IDS)
def test_agrees_with_real_torch(folder):
    label = folder / "label.json"
    assert label.exists(), f"{folder} has no label.json: run python -m gbreak_lint.oracle --all {folder}"
    _, misses = accuracy.score_folder(folder, [label])
    known_file = folder / "known_misses.txt"
    known = [line for line in known_file.read_text().splitlines()
             if line.strip() and not line.startswith("#")] if known_file.exists() else []
    assert sorted(misses) == sorted(known)


NESTED_DIRS = [p for p in FIXTURE_DIRS if (p / "label.json").exists()
               and accuracy.NESTED_CONFIG["on"] in json.loads((p / "label.json").read_text())["configs"]]


@pytest.mark.parametrize("folder", NESTED_DIRS, ids=[p.relative_to(FIXTURES).as_posix() for p in NESTED_DIRS])
def test_agrees_with_real_torch_nested(folder):
    """The same with nested_graph_breaks on (`--dynamo-config nested_graph_breaks=true`
    against the label's nested run); known_misses_nested.txt lists the disagreements."""
    _, misses = accuracy.score_folder(folder, [folder / "label.json"], "on")
    known_file = folder / "known_misses_nested.txt"
    known = [line for line in known_file.read_text().splitlines()
             if line.strip() and not line.startswith("#")] if known_file.exists() else []
    assert sorted(misses) == sorted(known)


def test_corpus_accuracy_targets():
    """The shared corpus (labelled by the CEO's oracle) meets the issue's targets."""
    corpus = corpus_or_skip()
    folders = {corpus: sorted(corpus.glob("*.expected.json"))}
    result = accuracy.score(folders, verbose=False)
    assert result["site_precision"] >= 0.95 and result["site_recall"] >= 0.90
    assert result["frame_precision"] >= 0.90 and result["frame_recall"] >= 0.90
    assert result["times_traced_exact"] >= 0.90
    assert result["gb_code_exact"] >= 0.95
