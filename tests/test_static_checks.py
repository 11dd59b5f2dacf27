"""`ruff check .` and `mypy gbreak_lint` stay clean (their configuration is in pyproject.toml).

Run as a test so that `.ci/run`, which runs the README's test command verbatim, runs them too.
"""
import subprocess
import sys

import pytest

from conftest import REPO


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=REPO, capture_output=True, text=True, check=False)


@pytest.mark.parametrize("command", [("ruff", "check", "."), ("mypy", "gbreak_lint")], ids=["ruff", "mypy"])
def test_static_check_is_clean(command):
    out = _run(*command)
    assert out.returncode == 0, f"{' '.join(command)} failed:\n{out.stdout}\n{out.stderr}"
