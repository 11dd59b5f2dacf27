import json
import shutil
from pathlib import Path

import pytest

from gbreak_lint.cli import main

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
CORPUS = REPO.parent / "shared" / "corpus"


def pytest_addoption(parser):
    parser.addoption("--update-goldens", action="store_true",
                     help="rewrite fixtures/**/expected.json from the linter's output (review the diff!)")


_CACHE_HOME = None


def cache_home() -> Path:
    """The result-cache home of this test session (never the developer's own)."""
    return _CACHE_HOME


@pytest.fixture(autouse=True)
def isolated_cache_home(tmp_path_factory, monkeypatch):
    global _CACHE_HOME
    if _CACHE_HOME is None:
        _CACHE_HOME = tmp_path_factory.mktemp("gbreak-cache-home")
    monkeypatch.setenv("GBREAK_LINT_CACHE_DIR", str(_CACHE_HOME))


@pytest.fixture
def update_goldens(request):
    return request.config.getoption("--update-goldens")


def run(capsys, *args):
    """Run the CLI in-process; returns (exit code, stdout, stderr)."""
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def run_json(capsys, *args):
    code, out, err = run(capsys, "check", *args, "--format", "json")
    assert code in (0, 1), err
    return json.loads(out)


def torch_available() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


requires_torch = pytest.mark.skipif(not torch_available(), reason="torch 2.13 not installed")


@pytest.fixture
def project(tmp_path):
    """A scratch project folder (with a pyproject.toml marker) to write programs into."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'scratch'\n")

    def write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    write.root = tmp_path
    return write


def copy_fixture(name: str, dest: Path) -> Path:
    shutil.copytree(FIXTURES / name, dest / name)
    return dest / name
