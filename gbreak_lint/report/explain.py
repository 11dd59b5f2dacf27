"""`gbreak-lint explain`: per compile entry point, the call tree with predicted breaks and frames."""
from __future__ import annotations

import json

from ..diagnostics import short_name
from ..model.predict import Prediction
from . import relpath

FATE = {"skipped": "frame skipped (runs eagerly)", "partial": "compiled up to a checkpoint, rest eager",
        "resume-skipped": "resume function skipped", "resume-partial": "resume function partial"}
REASON = {"loop": "graph break in a loop", "try": "break in a try block", "with": "break in a with block",
          "context_manager": "unsupported context manager", "generator": "break in a consumed generator",
          "skip_frame": "torch._dynamo.skip_frame()"}


def build(prediction: Prediction, only: str | None = None) -> list[dict]:
    """One tree per entry point: nodes are functions on call chains, leaves are break sites."""
    frames: dict[str, list] = {}
    for f in prediction.frames:
        frames.setdefault(f.qualname, []).append(
            {"outcome": f.outcome, "reason": f.reason, "line": f.break_line})
    trees = []
    for entry in prediction.entries:
        if only and only not in (entry.function, short_name(entry.function), entry.function.rsplit(".", 1)[-1]):
            continue
        root = _node(entry.function, None, frames)
        sites = [s for s in prediction.sites if s.entry == entry.function]
        for site in sites:
            node = root
            for link in site.chain[1:]:
                node = _child(node, link.function, link.path, frames)
            node["breaks"].append({"code": site.rule, "gb_code": site.gb_code, "path": relpath(site.path),
                                   "line": site.span.line, "times_traced": site.times_traced,
                                   "outcomes": sorted(site.outcomes)})
        trees.append({
            "entry": entry.function, "path": relpath(entry.path), "line": entry.line, "how": entry.how,
            "nested_graph_breaks": prediction.nested_graph_breaks.get(entry.function, False),
            "tree": root,
            "cost": {"break_sites": len(sites), "traces": sum(s.times_traced for s in sites),
                     "frames_on_chains": len({link.function for s in sites for link in s.chain})},
        })
    return trees


def _node(function: str, path: str | None, frames: dict) -> dict:
    return {"function": function, "path": relpath(path) if path else None,
            "frames": frames.get(function, []), "breaks": [], "calls": []}


def _child(node: dict, function: str, path: str, frames: dict) -> dict:
    for child in node["calls"]:
        if child["function"] == function:
            return child
    child = _node(function, path, frames)
    node["calls"].append(child)
    return child


def render_json(trees: list[dict]) -> str:
    return json.dumps({"entries": trees}, indent=2) + "\n"


def render_text(trees: list[dict], color: bool = False) -> str:
    if not trees:
        return "No compile entry points found (torch.compile / .compile() / --entry).\n"
    lines: list[str] = []
    for tree in trees:
        lines.append(_style(f"entry {short_name(tree['entry'])}", "bold", color)
                     + f"  ({tree['path']}:{tree['line']}, {tree['how']})")
        _render_node(tree["tree"], "", True, lines, color, top=True)
        c = tree["cost"]
        nested = "on" if tree["nested_graph_breaks"] else "off"
        lines.append(f"  cost: {c['break_sites']} break site(s) traced {c['traces']} time(s) in all, over "
                     f"{c['frames_on_chains']} frame(s) on call chains (nested_graph_breaks {nested})")
        lines.append("")
    return "\n".join(lines)


def _render_node(node: dict, prefix: str, last: bool, lines: list[str], color: bool, top: bool = False) -> None:
    branch = "" if top else ("└─ " if last else "├─ ")
    label = short_name(node["function"])
    notes = [f"{FATE.get(f['outcome'], f['outcome'])}: {REASON.get(f['reason'], f['reason'])} at line {f['line']}"
             for f in node["frames"]]
    text = label + (_style("  [" + "; ".join(notes) + "]", "red", color) if notes else "")
    lines.append(f"  {prefix}{branch}{text}")
    child_prefix = prefix + ("" if top else ("   " if last else "│  "))
    items = [("break", b) for b in node["breaks"]] + [("call", c) for c in node["calls"]]
    for i, (kind, item) in enumerate(items):
        is_last = i == len(items) - 1
        if kind == "call":
            _render_node(item, child_prefix, is_last, lines, color)
            continue
        mark = "└─ " if is_last else "├─ "
        times = f", traced {item['times_traced']}x" if item["times_traced"] > 1 else ""
        gb = f" {item['gb_code']}" if item["gb_code"] else ""
        lines.append(f"  {child_prefix}{mark}" + _style(f"✗ {item['code']}{gb}", "yellow", color)
                     + f" at {item['path']}:{item['line']}{times}")


def _style(text: str, how: str, color: bool) -> str:
    if not color:
        return text
    import click

    return click.style(text, bold=how == "bold", fg=None if how == "bold" else how)
