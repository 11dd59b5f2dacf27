"""The README's Layout section names every part of the tree (it is the map newcomers read)."""
import re

from conftest import REPO

PKG = REPO / "gbreak_lint"


def _layout() -> str:
    text = (REPO / "README.md").read_text()
    return re.search(r"^## Layout\n(.*?)(?=^## |\Z)", text, re.S | re.M).group(1)


def test_layout_names_every_module_and_folder():
    layout = _layout()
    modules = [p.name for p in PKG.glob("*.py") if not p.name.startswith("__")]
    packages = [f"{p.name}/" for p in PKG.iterdir() if (p / "__init__.py").is_file() or p.name == "model"]
    folders = [f"{p.name}/" for p in REPO.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))
               and p.name not in ("build", "dist") and not p.name.endswith(".egg-info")]
    missing = [name for name in modules + packages + folders if name not in layout]
    assert not missing, f"README ## Layout does not mention: {missing}"


def test_layout_points_to_the_architecture_doc():
    assert "docs/architecture.md" in _layout() and (REPO / "docs" / "architecture.md").is_file()
