"""benchmarks/difftest.py: the generator, the shrinker, the scoring/report math (no torch), and
that the labels difftest stores are the oracle's (torch)."""
import json
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import requires_torch

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))

from difftest_lib import shrink_run  # noqa: E402
from difftest_lib.causes import CAUSES  # noqa: E402
from difftest_lib.generate import all_construct_names, generate  # noqa: E402
from difftest_lib.pipeline import Settings  # noqa: E402
from difftest_lib.report import aggregate  # noqa: E402
from difftest_lib.score import score_program, signature  # noqa: E402
from difftest_lib.shrink import shrink, undefined_names  # noqa: E402

CONFIG = "nested_graph_breaks=False"


# -- generation ------------------------------------------------------------------------------
def test_generation_is_deterministic_for_a_seed():
    first = [generate(7, i).text for i in range(15)]
    assert first == [generate(7, i).text for i in range(15)]
    assert first != [generate(8, i).text for i in range(15)]
    assert generate(7, 3).pid == "s7-00003"


def test_programs_parse_are_small_and_self_contained():
    allowed = {"torch", "torch.nn", "functools", "contextlib", "warnings", "logging", "copy", "time", "random"}
    for i in range(150):
        text = generate(11, i).text
        compile(text, f"program{i}", "exec")
        assert 10 <= text.count("\n") <= 60, text
        imports = {ln.split()[1] for ln in text.splitlines() if ln.startswith("import ")}
        assert imports <= allowed
        assert not undefined_names(text), text


def test_grammar_has_35_constructs_and_every_construct_and_cause_is_produced():
    names = all_construct_names()
    assert len(names) >= 35
    n = max(len(names), len(CAUSES))
    metas = [generate(5, i).meta for i in range(n)]
    assert {c["construct"] for m in metas for c in m["constructs"]} == set(names)
    assert {m["cause"] for m in metas} == set(CAUSES)
    assert {len(m["constructs"]) for m in (generate(5, i).meta for i in range(120))} == {1, 2, 3, 4}


# -- scoring and report math -------------------------------------------------------------------
def site(line, gb, hits=1, outcome="resumed"):
    return {"file": "main.py", "line": line, "function": "f", "gb_code": gb, "gb_type": "",
            "outcomes": {outcome: 1}, "user_stack": [], "compiles_hit": hits}


def label(sites=(), skipped=(), exit_ok=True):
    frames = [{"file": "main.py", "function": fn, "first_line": ln, "category": "graph_break_in_loop",
               "due_to_graph_break": True, "break_line": None, "is_resume": False} for fn, ln in skipped]
    return {"case": "main.py", "configs": {CONFIG: {
        "effective_nested_graph_breaks": [False], "graph_breaks": list(sites), "library_breaks": [],
        "skipped_frames": frames, "compiled_frames": [], "exit_ok": exit_ok}}}


def diag(line, code="GBL303", gb="GB0059", times=1, kind="graph-break", frame=None):
    return {"code": code, "kind": kind, "path": "main.py", "line": line, "end_line": line,
            "gb_code": gb, "times_traced": times, "frame": frame}


def test_score_program_counts_sites_frames_times_codes_and_compile_errors(tmp_path):
    lab = label([site(5, "GB0059", hits=2), site(9, "GB0124"), site(12, "GB0059", outcome="hard_error")],
                skipped=[("entry", 3)])
    diags = [diag(5, times=1), diag(7), diag(9, "GBL307", "GB0007"), diag(12), diag(12, "GBL501", None, kind="compile-error"),
             diag(20, "GBL101", None, kind="frame-skipped", frame={"path": "main.py", "function": "g", "line": 18})]
    s = score_program(lab, diags, tmp_path)
    c = s["counts"]
    assert (c["site_tp"], c["site_fp"], c["site_fn"]) == (3, 1, 0)
    assert (c["frame_tp"], c["frame_fp"], c["frame_fn"]) == (0, 1, 1)
    assert (c["times_exact"], c["gb_code_exact"]) == (2, 2)
    assert (c["ce_tp"], c["ce_fp"], c["ce_fn"]) == (1, 0, 0)
    kinds = Counter(m[0] for m in s["misses"])
    assert kinds == {"site_fp": 1, "frame_fp": 1, "frame_fn": 1, "times_under": 1, "gb_code": 1}
    assert signature(["site_fn", "GB0059", "@main.py:5"]) == ("site_fn", "GB0059")
    assert s["positive"]


def test_aggregate_math_on_hand_made_scores():
    def result(construct, counts, misses=(), positive=True):
        base = dict.fromkeys(["site_tp", "site_fp", "site_fn", "frame_tp", "frame_fp", "frame_fn", "times_exact",
                              "gb_code_exact", "ce_tp", "ce_fp", "ce_fn", "frame_outcome_mismatch"], 0)
        meta = {"cause": "print", "constructs": [{"construct": construct, "variant": ""}] * 2,
                "context": {"entry": "deco_bare", "wrapper": "none", "nested_graph_breaks": False,
                            "placement": "in_main"}}
        return {"meta": meta, "score": {"counts": {**base, **counts}, "misses": list(misses), "positive": positive}}

    rep = aggregate([
        result("loop_range", {"site_tp": 3, "site_fp": 1, "times_exact": 2, "gb_code_exact": 3, "ce_tp": 1}),
        result("loop_range", {"site_fn": 1, "frame_tp": 1, "frame_fn": 1, "ce_fn": 1}, misses=[["site_fn"]]),
        result("method", {}, positive=False),
    ])
    loop = rep["constructs"]["loop_range"]
    assert (loop["programs"], loop["positives"], loop["negatives"], loop["disagreeing"]) == (2, 2, 0, 1)
    assert (loop["site_p"], loop["site_r"]) == (0.75, 0.75)
    assert (loop["frame_p"], loop["frame_r"]) == (1.0, 0.5)
    assert (loop["times_exact"], loop["gb_exact"], loop["compile_error_r"]) == (0.667, 1.0, 0.5)
    assert loop["f1"] == round(2 * 5 / (2 * 5 + 1 + 1 + 1 + 1), 3)
    assert rep["constructs"]["method"]["negatives"] == 1 and rep["constructs"]["method"]["f1"] == 1.0
    assert rep["overall"]["programs"] == 3 and rep["contexts"]["entry:deco_bare"]["programs"] == 3


# -- shrinking ---------------------------------------------------------------------------------
PROGRAM = '''import torch


def helper(x):
    x = x + 1
    print("a")
    return x


def noisy(x):
    for i in range(2):
        x = x * 2
    print("b")
    return helper(x)


@torch.compile
def entry(x):
    x = x - 1
    return noisy(x)


x = torch.randn(4, 4)
out = entry(x)
'''


def fake_label(text: str) -> dict:
    """A stand-in oracle: every print() line is a GB0059 break site."""
    lines = text.split("\n")
    if "def entry" not in text or "entry(x)" not in text:
        return label(exit_ok=False)
    return label([site(i + 1, "GB0059") for i, ln in enumerate(lines) if "print(" in ln])


def fake_lint(text: str) -> dict:
    """A stand-in linter that never sees print("b")."""
    return {"diagnostics": [diag(i + 1) for i, ln in enumerate(text.split("\n")) if 'print("a")' in ln]}


def test_shrink_keeps_the_target_and_respects_the_step_bound():
    target = ("site_fn", "GB0059")
    calls = []

    def evaluate(text):
        calls.append(text)
        lab = fake_label(text)
        if not lab["configs"][CONFIG]["exit_ok"]:
            return None
        return {signature(m) for m in score_program(lab, fake_lint(text)["diagnostics"], Path("/x"))["misses"]}

    assert target in evaluate(PROGRAM)
    small, steps = shrink(PROGRAM, target, evaluate, max_steps=60)
    assert target in evaluate(small) and 'print("b")' in small
    assert small.count("\n") < PROGRAM.count("\n") - 5
    assert steps <= 60 and len(calls) == steps + 2
    _, steps = shrink(PROGRAM, target, evaluate, max_steps=5)
    assert steps == 5


class FakeLabeler:
    def label(self, program: Path, text: str, fresh: bool = False) -> dict:
        return fake_label(text)


def test_write_disagreement_with_a_fake_oracle_and_linter(tmp_path, monkeypatch):
    monkeypatch.setattr(shrink_run, "lint", lambda folder, src: fake_lint((folder / "main.py").read_text()))
    st = Settings(out=tmp_path, seed=0, linter_src=REPO, shrink_steps=40)
    (tmp_path / "programs" / "p1").mkdir(parents=True)
    (tmp_path / "programs" / "p1" / "main.py").write_text(PROGRAM)
    score = score_program(fake_label(PROGRAM), fake_lint(PROGRAM)["diagnostics"], tmp_path / "programs" / "p1")
    out = shrink_run.write_disagreement({"id": "p1", "score": score}, st, FakeLabeler(), True, None)
    dest = tmp_path / "disagreements" / "p1"
    assert out["kept"] and out["target"] == ["site_fn", "GB0059"]
    assert {p.name for p in dest.iterdir()} == {"main.py", "label.json", "lint.json", "diff.txt"}
    shrunk = (dest / "main.py").read_text()
    assert 'print("b")' in shrunk and len(shrunk) < len(PROGRAM)
    assert "kept disagreement: site_fn GB0059" in (dest / "diff.txt").read_text()
    assert not (tmp_path / "scratch").exists() or not any((tmp_path / "scratch").iterdir())


def test_choose_shrinks_the_first_k_of_each_target():
    def r(pid, miss):
        return {"id": pid, "score": {"misses": [miss] if miss else []}}
    results = [r("a", ["site_fn", "GB1", "@1"]), r("b", ["site_fn", "GB1", "@2"]), r("c", None),
               r("d", ["site_fp", "GBL303", "@3"])]
    assert shrink_run.choose(results, 1) == {"a": None, "b": "a", "d": None}
    assert shrink_run.choose(results, 0) == {"a": None, "b": None, "d": None}


# -- the stored labels are the oracle's ------------------------------------------------------------
@pytest.mark.torch
@requires_torch
def test_stored_labels_are_the_oracles(tmp_path):
    """difftest labels in a fork server; relabel a sample with gbreak_lint.oracle.label directly."""
    from difftest_lib.labeler import Labeler
    from difftest_lib.pipeline import process
    from gbreak_lint.oracle import label as oracle_label

    st = Settings(out=tmp_path, seed=2, linter_src=REPO, check_every=0)
    labeler = Labeler(tmp_path / "cache", "batch", 60)
    try:
        results = [process(i, st, labeler) for i in (0, 1, 2)]
    finally:
        labeler.close()
    folders = [tmp_path / "programs" / r["id"] for r in results]
    with ThreadPoolExecutor(3) as pool:  # each label is a child interpreter: run them side by side
        fresh = list(pool.map(lambda f: oracle_label(f / "main.py", f, [None], 120), folders))
    for folder, again in zip(folders, fresh):
        stored = json.loads((folder / "label.json").read_text())
        assert stored["configs"] == again["configs"], folder.name
