"""Data flows one way: no stage imports a later one (read from the source, not executed)."""
import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "gbreak_lint"
# stage -> the stages it must not import
ORDER = ["files", "diagnostics", "vocab", "config", "discover", "positions", "walk", "parse", "knowledge", "catalog", "registry", "index",
         "model", "incremental", "pipeline", "checks", "report", "fix", "api", "autofix", "baseline", "verify", "cli"]


def stage_of(module: str) -> str | None:
    head = module.split(".")[0]
    return head if head in ORDER else None


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found = set()
    package = path.relative_to(PKG.parent).with_suffix("").parts
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = list(package[: len(package) - node.level])
            found.add(".".join(base[1:] + ([node.module] if node.module else [])))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("gbreak_lint."):
            found.add(node.module.removeprefix("gbreak_lint."))
    return found


FILES = [p for p in PKG.rglob("*.py") if stage_of(p.relative_to(PKG).parts[0].removesuffix(".py"))]


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(PKG)) for p in FILES])
def test_no_stage_imports_a_later_one(path):
    rel = path.relative_to(PKG)
    own = stage_of(rel.parts[0].removesuffix(".py"))
    for imported in imports_of(path):
        other = stage_of(imported) if imported else None
        if other is None:
            continue
        assert ORDER.index(other) <= ORDER.index(own), f"{path.name} ({own}) imports {imported}"


def test_linter_never_imports_the_oracle():
    # cli.py reaches the oracle only inside `gbreak-lint verify`, the command that runs code
    for path in FILES:
        if path.name != "cli.py":
            assert "oracle" not in imports_of(path), path


def test_a_scan_imports_neither_torch_nor_the_oracle(tmp_path):
    import subprocess
    import sys

    (tmp_path / "m.py").write_text("import torch\n\n@torch.compile\ndef f(x):\n    print(x)\n")
    code = ("import sys\nfrom gbreak_lint.cli import main\nmain(['check', sys.argv[1], '--exit-zero'])\n"
            "assert 'torch' not in sys.modules and 'gbreak_lint.oracle' not in sys.modules\n")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_every_subpackage_is_packaged():
    """A wheel without a subpackage fails only once installed (pre-commit's venv): check here."""
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    listed = set(tomllib.loads((PKG.parent / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    actual = {".".join(p.parent.relative_to(PKG.parent).parts) for p in PKG.rglob("__init__.py")}
    assert actual <= listed, sorted(actual - listed)


def test_modules_are_imported_by_name_only_by_the_registry():
    """Checks and rewrites are found by listing their package (registry.py); no other module
    imports a module whose name it computed (a name read from a rule file, say)."""
    dynamic = [p.relative_to(PKG).as_posix() for p in PKG.rglob("*.py")
               if "import_module(" in p.read_text() or "__import__(" in p.read_text()]
    assert dynamic == ["registry.py"]
