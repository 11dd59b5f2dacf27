import json
import os
import shutil
from pathlib import Path

import pytest

from gbreak_lint.cli import main

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
# The shared labelled corpus sits next to the checkout (../shared/corpus), or where
# GBREAK_LINT_CORPUS says. CI sets GBREAK_LINT_REQUIRE_CORPUS=1: there a missing corpus fails
# the corpus tests instead of skipping them, so they cannot pass by not running.
CORPUS = Path(os.environ.get("GBREAK_LINT_CORPUS") or REPO.parent / "shared" / "corpus")


def corpus_or_skip() -> Path:
    if not CORPUS.is_dir():
        message = f"the shared corpus is not at {CORPUS} (set GBREAK_LINT_CORPUS)"
        if os.environ.get("GBREAK_LINT_REQUIRE_CORPUS"):
            pytest.fail(message)
        pytest.skip(message)
    return CORPUS


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
