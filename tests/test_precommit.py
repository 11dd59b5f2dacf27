"""The pre-commit hook for real: `pre-commit try-repo` against this checkout in a scratch repo."""
import os
import shutil
import subprocess

import pytest

from conftest import REPO

pytestmark = pytest.mark.skipif(shutil.which("pre-commit") is None and
                                subprocess.run(["python", "-m", "pre_commit", "--version"],
                                               capture_output=True).returncode != 0,
                                reason="pre-commit not installed")

BREAKING = "import torch\n\n\n@torch.compile\ndef f(x):\n    print(x)\n    return x + 1\n"
CLEAN = "import torch\n\n\n@torch.compile\ndef f(x):\n    return x + 1\n"


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory):
    return tmp_path_factory.mktemp("pre-commit-home")


def git(repo, *args):
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e"})


def try_repo(repo, home, *files):
    cmd = ["python", "-m", "pre_commit", "try-repo", str(REPO), "gbreak-lint"]
    cmd += ["--files", *files] if files else ["--all-files"]
    return subprocess.run(cmd, cwd=repo, capture_output=True, text=True,
                          env={**os.environ, "PRE_COMMIT_HOME": str(home)}, timeout=900)


@pytest.fixture
def scratch_repo(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    return repo


def test_hook_fails_on_a_graph_break(scratch_repo, pre_commit_home):
    (scratch_repo / "model.py").write_text(BREAKING)
    (scratch_repo / "clean.py").write_text(CLEAN)
    git(scratch_repo, "add", ".")
    out = try_repo(scratch_repo, pre_commit_home)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "model.py:6:5: GBL303" in out.stdout
    out = try_repo(scratch_repo, pre_commit_home, "clean.py")
    assert out.returncode == 0, out.stdout + out.stderr


def test_hook_with_zero_python_files(scratch_repo, pre_commit_home):
    (scratch_repo / "README.txt").write_text("no python here\n")
    git(scratch_repo, "add", ".")
    out = try_repo(scratch_repo, pre_commit_home)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "no files to check" in out.stdout.lower() or "skipped" in out.stdout.lower()
