"""Stored labels: one small JSON per library version (benchmarks/zoo/<lib>-<version>.json).

    {"library", "version", "torch", "python", "generator",
     "models":   {name: {"params": {...}} | {"failed": reason, "errors": [...]}},
     "programs": {"<name>.<mode>": {"model": name, "mode": mode, "params_hash": h,
                                    "label": COMPACT} | {..., "failed": reason}}}

COMPACT is the oracle label's `nested_graph_breaks=False` config with the keys
gbreak_lint.verify.observed reads; paths inside installed packages are stored relative to
their site-packages folder as "$site/<package>/..." so a re-score works on any machine with
the same library versions (expand() maps them onto the scoring interpreter's site folders).
"""
from __future__ import annotations

import json
import os
import threading
from pathlib import Path

SITE = "$site/"
GENERATOR = 1
KEEP_SITE = ("file", "line", "function", "gb_code", "gb_type", "outcomes", "compiles_hit")


def site_relative(path: str) -> str:
    if isinstance(path, str) and os.path.isabs(path) and "site-packages/" in path:
        return SITE + path.rsplit("site-packages/", 1)[1]
    return path


def compact(label: dict) -> dict:
    cfg = label["configs"]["nested_graph_breaks=False"]
    out = {"exit_ok": cfg["exit_ok"]}
    out["graph_breaks"] = [{k: g[k] for k in KEEP_SITE if k in g} for g in cfg["graph_breaks"]]
    out["library_breaks"] = [{"file": site_relative(g["file"]), "line": g["line"], "gb_code": g["gb_code"],
                              "user_file": g["user_file"], "user_line": g["user_line"],
                              "outcomes": g["outcomes"], "compiles_hit": g["compiles_hit"]}
                             for g in cfg["library_breaks"]]
    out["installed_breaks"] = [{"file": site_relative(g["file"]), "line": g["line"], "function": g["function"],
                                "gb_code": g["gb_code"], "user_file": g["user_file"], "user_line": g["user_line"],
                                "outcomes": g["outcomes"], "compiles_hit": g["compiles_hit"]}
                               for g in cfg.get("installed_breaks", ())]
    out["skipped_frames"] = [dict(s, file=site_relative(s["file"])) for s in cfg["skipped_frames"]]
    out["compiled_frames"] = [dict(c, file=site_relative(c["file"])) for c in cfg["compiled_frames"]
                              if c["partial_then_eager_at"]]
    if label.get("errors"):
        out["errors"] = label["errors"][:3]
    return out


def expand(compact_label: dict, site_dirs: list[str]) -> dict:
    """An oracle label (as verify.observed reads it) from a stored one."""
    def where(path):
        if not (isinstance(path, str) and path.startswith(SITE)):
            return path
        rel = path[len(SITE):]
        for d in site_dirs:
            if os.path.exists(os.path.join(d, rel)):
                return os.path.join(d, rel)
        return os.path.join(site_dirs[0], rel) if site_dirs else rel

    cfg = {"effective_nested_graph_breaks": [False], "exit_ok": compact_label["exit_ok"]}
    cfg["graph_breaks"] = [dict(g, user_stack=[]) for g in compact_label["graph_breaks"]]
    cfg["library_breaks"] = [dict(g, file=where(g["file"])) for g in compact_label["library_breaks"]]
    cfg["installed_breaks"] = [dict(g, file=where(g["file"])) for g in compact_label["installed_breaks"]]
    cfg["skipped_frames"] = [dict(s, file=where(s["file"])) for s in compact_label["skipped_frames"]]
    cfg["compiled_frames"] = [dict(c, file=where(c["file"])) for c in compact_label["compiled_frames"]]
    return {"configs": {"nested_graph_breaks=False": cfg}}


class Store:
    """One library version's labels; thread-safe updates, written after every change."""

    def __init__(self, path: Path, library: str, version: str):
        self.path, self._lock = path, threading.Lock()
        if path.exists():
            self.data = json.loads(path.read_text())
        else:
            self.data = {"library": library, "version": version, "torch": None, "python": None,
                         "generator": GENERATOR, "models": {}, "programs": {}}

    # -- queries ---------------------------------------------------------------------
    def model(self, name: str) -> dict | None:
        return self.data["models"].get(name)

    def program(self, pid: str) -> dict | None:
        return self.data["programs"].get(pid)

    def labelled(self, pid: str, params_hash: str) -> bool:
        """Done already (labelled, or failed under torch) for these very parameters."""
        entry = self.program(pid)
        return entry is not None and entry.get("params_hash") == params_hash

    # -- updates ---------------------------------------------------------------------
    def set_model(self, name: str, entry: dict) -> None:
        with self._lock:
            self.data["models"][name] = entry
            self._save()

    def set_program(self, pid: str, entry: dict, torch_version: str | None = None,
                    python: str | None = None) -> None:
        with self._lock:
            self.data["programs"][pid] = entry
            if torch_version:
                self.data["torch"] = torch_version
            if python:
                self.data["python"] = python
            self._save()

    def _save(self) -> None:
        """Compact but diffable: one model or program per line."""
        d = self.data
        head = {k: v for k, v in d.items() if k not in ("models", "programs")}
        lines = ["{"] + [f" {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
        for key in ("models", "programs"):
            items = sorted(d[key].items())
            lines.append(f' "{key}": {{')
            lines += [f"  {json.dumps(k)}: {json.dumps(v, separators=(',', ':'), sort_keys=True)}"
                      + ("," if i < len(items) - 1 else "") for i, (k, v) in enumerate(items)]
            lines.append(" }," if key == "models" else " }")
        lines.append("}")
        tmp = self.path.with_suffix(".tmp")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text("\n".join(lines) + "\n")
        os.replace(tmp, self.path)
