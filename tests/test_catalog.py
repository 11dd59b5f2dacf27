"""The rule catalog: well-formed, unique, and every rule's examples behave as documented."""
from pathlib import Path

import pytest
import yaml

from gbreak_lint.catalog import CatalogError, load_catalog
from gbreak_lint.registry import CHECKS, REWRITES, bind_catalog
from gbreak_lint.knowledge import load_profile

from conftest import run, run_json

CATALOG = load_catalog()
RULES = CATALOG.rules


def test_each_rule_file_is_named_after_its_code():
    # (uniqueness itself is enforced by load_catalog, tested just below)
    assert [Path(r.source).name for r in RULES] == [f"{r.code}.yaml" for r in RULES]


@pytest.mark.parametrize("kept", ["code", "name"])
def test_duplicate_in_extra_folder_fails(tmp_path, kept):
    source = Path(CATALOG.by_code("GBL301").source)
    data = yaml.safe_load(source.read_text())
    if kept == "code":
        data["name"] = "another-name"
    else:
        data["code"] = "GBL999"
    (tmp_path / "dup.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(CatalogError, match=f"share the {kept}"):
        load_catalog(tmp_path)


def test_checks_and_rewrites_match_the_rules_that_name_them():
    bind_catalog(CATALOG)  # raises CatalogError on a mismatch either way
    assert CHECKS.get("loop").codes == ("GBL101",) and REWRITES.get("split_block").codes == ("GBL102", "GBL103")


def test_a_rule_cannot_borrow_another_rules_check(tmp_path):
    folder = _user_rule(tmp_path, trigger=None, check="loop")
    with pytest.raises(CatalogError, match="serves GBL101, not GBL901"):
        bind_catalog(load_catalog(folder))


def test_a_check_registered_for_a_rule_without_it_fails():
    from dataclasses import replace

    rules = tuple(replace(r, check=None) if r.code == "GBL101" else r for r in RULES)
    with pytest.raises(CatalogError, match="registered for GBL101"):
        CHECKS.bind(type(CATALOG)(rules))


def test_user_rule_folder_adds_a_break_cause(project, capsys, tmp_path):
    rules = tmp_path / "myrules"
    rules.mkdir()
    (rules / "metrics.yaml").write_text(yaml.safe_dump({
        "code": "GBL901", "name": "log-metrics-call", "kind": "graph-break", "severity": "warning",
        "summary": "our log_metrics() always breaks", "message": "log_metrics() breaks the graph",
        "why": "it writes to a file", "example": "log_metrics(x)", "use_instead": "pass",
        "break": "resumable", "trigger": {"call": ["metrics.log_metrics"]}}))
    project("metrics.py", "def log_metrics(x):\n    pass\n")
    project("main.py", "import torch\nfrom metrics import log_metrics\n\n\n@torch.compile\n"
                       "def f(x):\n    log_metrics(x)\n    return x + 1\n")
    (project.root / "pyproject.toml").write_text(f"[tool.gbreak-lint]\nextra-rules = '{rules}'\n")
    codes = [d["code"] for d in run_json(capsys, project.root)["diagnostics"]]
    assert codes == ["GBL901"]


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_rule_is_documented(rule):
    assert rule.summary and rule.why and rule.example and rule.use_instead
    assert rule.torch.startswith(">=2.13")
    for gb in rule.gb_codes:
        assert gb.startswith("GB") and len(gb) == 6


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_example_is_flagged_and_use_instead_is_not(rule, tmp_path, capsys):
    for name, text, flagged in (("bad", rule.example, True), ("good", rule.use_instead, False)):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "main.py").write_text(text)
        codes = {d["code"] for d in run_json(capsys, folder, "--root", folder)["diagnostics"]}
        assert (rule.code in codes) is flagged, f"{name} example: {sorted(codes)}"


def test_knowledge_profile_names_python_version():
    k = load_profile("2.13")
    assert k.python == "3.11" and k.comprehension_frames
    assert "torch.no_grad" in k.resumable_context_managers


@pytest.mark.parametrize("rule", [r for r in RULES if r.evidence == "python"], ids=lambda r: r.code)
def test_python_evidence_examples(rule):
    with pytest.raises(SyntaxError):
        compile(rule.example, "example.py", "exec")
    compile(rule.use_instead, "use_instead.py", "exec")


def test_every_emitted_code_has_a_rule(capsys):
    from gbreak_lint.parse import SYNTAX_ERROR_CODE

    assert CATALOG.get(SYNTAX_ERROR_CODE).name == "syntax-error"


def _user_rule(tmp_path, **changes):
    data = {"code": "GBL901", "name": "log-metrics-call", "kind": "graph-break", "severity": "warning",
            "summary": "s", "message": "m", "why": "w", "example": "e", "use_instead": "u",
            "break": "resumable", "trigger": {"call": ["metrics.log_metrics"]}}
    data.update(changes)
    folder = tmp_path / "rules"
    folder.mkdir(exist_ok=True)
    (folder / "mine.yaml").write_text(yaml.safe_dump(data))
    return folder


@pytest.mark.parametrize("changes,named", [
    ({"trigger": {"check": "data_dependant_branch"}}, "data_dependant_branch"),
    ({"trigger": {"calls": ["x.y"]}}, "calls"),
    ({"trigger": {"call": "x.y"}}, "call"),
    ({"check": "lopo"}, "lopo"),
    ({"fix": {"safety": "safe", "rewrite": "unroll_lop"}}, "unroll_lop"),
    ({"fix": {"safty": "safe"}}, "fix.safty"),
    ({"gb_code": ["GB0059"]}, "gb_code"),
    ({"gb_codes": ["0059"]}, "gb_codes"),
    ({"message": "`{fucntion}()` breaks the graph"}, "fucntion"),
    ({"message": "a dict {literal} breaks"}, "literal"),
    ({"torch_shows": "skiped:graph_break_in_loop"}, "torch_shows"),
])
def test_rule_typos_fail_at_load_time(tmp_path, changes, named):
    folder = _user_rule(tmp_path, **changes)
    with pytest.raises(CatalogError, match=named) as info:
        load_catalog(folder)
    assert "mine.yaml" in str(info.value)


def test_rule_typo_is_a_usage_error_on_the_command_line(project, capsys, tmp_path):
    folder = _user_rule(tmp_path, trigger={"check": "nope"})
    project("main.py", "x = 1\n")
    (project.root / "pyproject.toml").write_text(f"[tool.gbreak-lint]\nextra-rules = '{folder}'\n")
    code, _, err = run(capsys, "check", project.root)
    assert code == 2 and "mine.yaml" in err and "nope" in err and "internal error" not in err
