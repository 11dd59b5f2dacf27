"""`[tool.gbreak-lint]` in pyproject.toml, found by walking up from the scanned path."""
from __future__ import annotations

import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on 3.10
    import tomli as tomllib  # type: ignore[import-not-found]

SEVERITY_LEVELS = {"info": 0, "warning": 1, "error": 2}
PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")

# key in pyproject -> (attribute, expected python type)
KNOWN_KEYS = {
    "select": ("select", list),
    "ignore": ("ignore", list),
    "exclude": ("exclude", list),
    "extend-exclude": ("extend_exclude", list),
    "per-file-ignores": ("per_file_ignores", dict),
    "fail-on": ("fail_on", str),
    "torch-version": ("torch_profile", str),
    "extra-rules": ("extra_rules", str),
    "entry-points": ("entry_points", list),
    "baseline": ("baseline", str),
    "assume-compiled": ("assume_compiled", str),
    "disable-advice-min-breaks": ("disable_min_breaks", int),
    "disable-advice-max-ops": ("disable_max_ops", int),
    "cache-dir": ("cache_dir", str),
    "python": ("python", str),
    "follow-installed": ("follow_installed", bool),
    "installed-packages": ("installed_packages", list),
    "show-library-conditions": ("show_library_conditions", bool),
    "dynamo-config": ("dynamo_config", dict),
}


class ConfigError(Exception):
    """A configuration problem the user must fix (exit code 2)."""


@dataclass(frozen=True)
class Config:
    root: Path
    source: Path | None = None
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    extend_exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    fail_on: str = "info"
    torch_profile: str = "2.13"
    extra_rules: Path | None = None
    entry_points: tuple[str, ...] = field(default=())
    baseline: Path | None = None
    assume_compiled: str = "none"  # "modules": every nn.Module.forward is an entry point
    disable_min_breaks: int = 3  # GBL404: this many breaks in one function ...
    disable_max_ops: int = 2  # ... with at most this many tensor ops: suggest torch.compiler.disable
    cache_dir: Path | None = None  # None: the user's cache home (see cache.py)
    warnings: tuple[str, ...] = ()  # settings that were refused; the scan goes on without them
    python: str | None = None  # interpreter whose installed packages imports resolve to (script mode)
    follow_installed: bool = True  # follow calls into installed packages (not torch, not the stdlib)
    installed_packages: tuple[str, ...] = ()  # only these top-level installed packages (empty: all)
    # findings an installed package reaches only behind an `if` on values the source does not
    # tell (`if "dynamic" in self.rope_type:`) are hidden unless asked for
    show_library_conditions: bool = False
    # torch._dynamo.config flags the programs run with before their own assignments
    # (`nested_graph_breaks = true` set by a launcher the scan does not see)
    dynamo_config: tuple[tuple[str, bool], ...] = ()

    def with_overrides(self, **changes) -> "Config":
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


def find_project_root(start: Path) -> Path:
    """The nearest ancestor holding a project marker; the start folder when there is none."""
    start = start.resolve()
    folder = start if start.is_dir() else start.parent
    for candidate in (folder, *folder.parents):
        if any((candidate / marker).exists() for marker in PROJECT_MARKERS):
            return candidate
    return folder


def find_config_file(start: Path) -> Path | None:
    start = start.resolve()
    folder = start if start.is_dir() else start.parent
    for candidate in (folder, *folder.parents):
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file() and _has_tool_table(pyproject):
            return pyproject
        if (candidate / ".git").exists():
            return None  # never read configuration from outside the repository
    return None


def _has_tool_table(pyproject: Path) -> bool:
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    return "gbreak-lint" in data.get("tool", {})


def load_config(start: Path, explicit: Path | None = None) -> Config:
    path = explicit or find_config_file(start)
    if path is None:
        return Config(root=find_project_root(start))
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise ConfigError(f"{path}: cannot read configuration: {err}") from err
    table = data.get("tool", {}).get("gbreak-lint", {})
    return _from_table(table, path)


def _from_table(table: dict, path: Path) -> Config:
    values: dict = {}
    for key, value in table.items():
        if key not in KNOWN_KEYS:
            known = ", ".join(sorted(KNOWN_KEYS))
            raise ConfigError(f"{path}: unknown key '{key}' in [tool.gbreak-lint] (known: {known})")
        attr, kind = KNOWN_KEYS[key]
        if not isinstance(value, kind):
            raise ConfigError(f"{path}: '{key}' must be a {kind.__name__}")
        values[attr] = value
    root = path.parent
    if "fail_on" in values and values["fail_on"] not in SEVERITY_LEVELS:
        raise ConfigError(f"{path}: 'fail-on' must be one of error, warning, info")
    for attr in ("select", "ignore", "exclude", "extend_exclude", "entry_points", "installed_packages"):
        if attr in values:
            values[attr] = tuple(str(v) for v in values[attr])
    if "per_file_ignores" in values:
        values["per_file_ignores"] = tuple(
            (pattern, tuple(codes) if isinstance(codes, list) else (str(codes),))
            for pattern, codes in values["per_file_ignores"].items()
        )
    if "dynamo_config" in values:
        values["dynamo_config"] = dynamo_settings(values["dynamo_config"].items(), str(path))
    if values.get("assume_compiled", "none") not in ("none", "modules"):
        raise ConfigError(f"{path}: 'assume-compiled' must be 'none' or 'modules'")
    warnings: list[str] = []
    for attr, key in (("baseline", "baseline"), ("extra_rules", "extra-rules")):
        if attr in values:
            values[attr] = _inside_repository(path, key, root / values[attr], warnings)
    if "cache_dir" in values:
        values["cache_dir"] = (root / values["cache_dir"]).expanduser().resolve()
    return Config(root=root, source=path, warnings=tuple(warnings), **values)


def dynamo_settings(pairs, where: str) -> tuple[tuple[str, bool], ...]:
    """`{"nested_graph_breaks": true}` / `("nested_graph_breaks", "true")` as sorted
    (flag, value) pairs; which flags the knowledge profile models is checked when it is loaded."""
    out: dict[str, bool] = {}
    for name, value in pairs:
        if isinstance(value, str) and value.lower() in ("true", "false", "1", "0", "on", "off"):
            value = value.lower() in ("true", "1", "on")
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: dynamo config '{name}' must be true or false")
        out[str(name)] = value
    return tuple(sorted(out.items()))


def _inside_repository(config_file: Path, key: str, target: Path, warnings: list[str]) -> Path | None:
    """A path a project's own configuration names must stay inside its repository: a
    checkout under review must not make the linter read files elsewhere on the machine."""
    resolved = target.resolve()
    folder = config_file.resolve().parent
    top = next((c for c in (folder, *folder.parents) if (c / ".git").exists()), folder)
    if resolved.is_relative_to(top):
        return resolved
    warnings.append(f"{config_file}: '{key}' points outside the repository ({resolved}); ignored")
    return None
