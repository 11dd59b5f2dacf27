"""Predicted vs observed: compare the linter with what real Dynamo did (labels from the oracle).

Used by `gbreak-lint verify SCRIPT.py` (which runs the script: the one command that executes
code) and by benchmarks/accuracy.py.  Scoring follows ../shared/corpus/README.md:
- break sites: a `graph-break` diagnostic matches a label when the file is the same and the
  label's line lies within line..end_line (labels: graph breaks + library breaks at user lines);
- frames: `frame-skipped` / `frame-partial` by frame path + def line, against frames skipped
  because of a graph break or skip_frame() (not resume functions) and partially compiled ones;
- the outcome (skipped or partial) of each matched frame;
- times_traced of each matched site against the label's `compiles_hit`;
- compile errors: a `compile-error` diagnostic against a break that raised (fullgraph=True,
  error_on_graph_break), by line.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

CONFIG = "nested_graph_breaks=False"


@dataclass(frozen=True)
class Observed:
    sites: dict  # (abs path, line) -> {"compiles_hit": int, "gb_code": str}
    frames: dict  # (abs path, def line) -> {"function": str, "outcome": str}
    site_codes: dict = field(default_factory=dict)  # (abs path, line) -> {GB code: compiles hit}
    errors: frozenset = frozenset()  # (abs path, line) of breaks that raised (fullgraph, error_on_graph_break)


@dataclass
class Comparison:
    counts: dict = field(default_factory=lambda: dict.fromkeys(
        ("site_tp", "site_fp", "site_fn", "frame_tp", "frame_fp", "frame_fn", "frame_outcome_exact",
         "times_exact", "gb_code_exact", "error_tp", "error_fp", "error_fn"), 0))
    rows: list = field(default_factory=list)  # one per site or frame, predicted and/or observed

    def figures(self) -> dict:
        c = self.counts
        return {
            "site_precision": ratio(c["site_tp"], c["site_tp"] + c["site_fp"]),
            "site_recall": ratio(c["site_tp"], c["site_tp"] + c["site_fn"]),
            "frame_precision": ratio(c["frame_tp"], c["frame_tp"] + c["frame_fp"]),
            "frame_recall": ratio(c["frame_tp"], c["frame_tp"] + c["frame_fn"]),
            "frame_outcome_exact": ratio(c["frame_outcome_exact"], c["frame_tp"]),
            "times_traced_exact": ratio(c["times_exact"], c["site_tp"]),
            "gb_code_exact": ratio(c["gb_code_exact"], c["site_tp"]),
            "error_precision": ratio(c["error_tp"], c["error_tp"] + c["error_fp"]),
            "error_recall": ratio(c["error_tp"], c["error_tp"] + c["error_fn"]),
        }

    def misses(self) -> list[str]:
        return [r["miss"] for r in self.rows if r.get("miss")]


def ratio(a: int, b: int) -> float:
    return round(a / b, 3) if b else 1.0


def observed(label: dict, base: Path, config: str = CONFIG) -> Observed:
    cfg = label["configs"][config]
    sites: dict = {}
    codes: dict = {}
    errors = set()
    for g in cfg["graph_breaks"]:
        _observe_site(sites, base / g["file"], g["line"], g["compiles_hit"], g["gb_code"], codes)
        if "hard_error" in g["outcomes"]:
            errors.add((str((base / g["file"]).resolve()), g["line"]))
    installed = {(g["user_file"], g["user_line"], g["gb_code"]) for g in cfg.get("installed_breaks", ())}
    for g in cfg["library_breaks"]:
        if (g["user_file"], g["user_line"], g["gb_code"]) not in installed:  # scored at the library line
            _observe_site(sites, base / g["user_file"], g["user_line"], g["compiles_hit"], g["gb_code"], codes)
    for g in cfg.get("installed_breaks", ()):
        _observe_site(sites, Path(g["file"]), g["line"], g["compiles_hit"], g["gb_code"], codes)
    frames: dict = {}
    for s in cfg["skipped_frames"]:
        if (s["due_to_graph_break"] or s["category"] == "skip_frame_call") and not s["is_resume"]:
            frames[(str((base / s["file"]).resolve()), s["first_line"])] = {
                "function": s["function"], "outcome": "skipped"}
    for c in cfg["compiled_frames"]:
        if c["partial_then_eager_at"]:
            frames[(str((base / c["file"]).resolve()), c["first_line"])] = {
                "function": c["function"], "outcome": "partial"}
    return Observed(sites, frames, codes, frozenset(errors))


def _observe_site(sites: dict, path: Path, line: int, hits: int, gb_code, codes: dict | None = None) -> None:
    key = (str(path.resolve()), line)
    if codes is not None:  # per line: GB code -> compilations that hit it
        per_code = codes.setdefault(key, {})
        per_code[gb_code] = max(per_code.get(gb_code, 0), hits)
    old = sites.get(key)
    if old is None or hits > old["compiles_hit"]:
        sites[key] = {"compiles_hit": hits, "gb_code": gb_code}


def compare(obs: Observed, diagnostics: list[dict], root: Path, into: Comparison | None = None) -> Comparison:
    """`diagnostics`: the JSON report's entries, with paths absolute or relative to `root`."""
    out = into or Comparison()
    c = out.counts
    rel = lambda p: _rel(p, root)  # noqa: E731
    matched: set = set()
    for d in diagnostics:
        if d["kind"] != "graph-break":
            continue
        path = str((root / d["path"]).resolve())
        hits = sorted(k for k in obs.sites if k[0] == path and d["line"] <= k[1] <= d["end_line"])
        row = {"what": "site", "where": f"{rel(path)}:{d['line']}", "code": d["code"],
               "predicted_times": d["times_traced"]}
        if not hits:
            c["site_fp"] += 1
            out.rows.append({**row, "observed": None, "miss": f"FP site {row['where']} {d['code']}"})
            continue
        c["site_tp"] += 1
        matched.update(hits)
        seen = dict(obs.sites[hits[0]])
        per_code = obs.site_codes.get(hits[0], {})
        if d["gb_code"] in per_code:  # several breaks on one line: compare with the same kind
            seen = {"gb_code": d["gb_code"], "compiles_hit": per_code[d["gb_code"]]}
        row.update(observed=seen["gb_code"], observed_times=seen["compiles_hit"])
        if d["gb_code"] in {obs.sites[k]["gb_code"] for k in hits} | set(per_code):
            c["gb_code_exact"] += 1
        if d["times_traced"] == seen["compiles_hit"]:
            c["times_exact"] += 1
        else:
            row["miss"] = (f"times {row['where']} predicted {d['times_traced']}, "
                           f"observed {seen['compiles_hit']}")
        out.rows.append(row)
    for key in sorted(set(obs.sites) - matched):
        c["site_fn"] += 1
        where = f"{rel(key[0])}:{key[1]}"
        out.rows.append({"what": "site", "where": where, "code": None, "observed": obs.sites[key]["gb_code"],
                         "observed_times": obs.sites[key]["compiles_hit"], "miss": f"FN site {where}"})
    _compare_frames(obs, diagnostics, root, out)
    _compare_errors(obs, diagnostics, root, out)
    return out


def _compare_errors(obs: Observed, diagnostics: list[dict], root: Path, out: Comparison) -> None:
    """Compile errors: a `compile-error` diagnostic against a break that raised, by line."""
    c = out.counts
    matched: set = set()
    for d in diagnostics:
        if d["kind"] != "compile-error":
            continue
        path = str((root / d["path"]).resolve())
        hits = {k for k in obs.errors if k[0] == path and d["line"] <= k[1] <= d["end_line"]}
        where = f"{_rel(path, root)}:{d['line']}"
        if hits:
            c["error_tp"] += len(hits - matched)
            matched |= hits
        else:
            c["error_fp"] += 1
            out.rows.append({"what": "error", "where": where, "miss": f"FP error {where} {d['code']}"})
    for key in sorted(obs.errors - matched):
        c["error_fn"] += 1
        where = f"{_rel(key[0], root)}:{key[1]}"
        out.rows.append({"what": "error", "where": where, "miss": f"FN error {where}"})


def _compare_frames(obs: Observed, diagnostics: list[dict], root: Path, out: Comparison) -> None:
    predicted: dict = {}
    for d in diagnostics:
        if d["kind"] in ("frame-skipped", "frame-partial") and d.get("frame"):
            key = (str((root / d["frame"]["path"]).resolve()), d["frame"]["line"])
            predicted[key] = {"function": d["frame"]["function"], "outcome": d["kind"].split("-")[1]}
    c = out.counts
    for key in sorted(set(predicted) | set(obs.frames)):
        where = f"{_rel(key[0], root)}:{key[1]}"
        p, o = predicted.get(key), obs.frames.get(key)
        row = {"what": "frame", "where": where, "function": (p or o or {})["function"],
               "predicted": p and p["outcome"], "observed": o and o["outcome"]}
        if p and o:
            c["frame_tp"] += 1
            if p["outcome"] == o["outcome"]:
                c["frame_outcome_exact"] += 1
            else:  # the right frame, the wrong fate (skipped vs compiled up to a checkpoint)
                row["miss"] = f"OUTCOME frame {where}: predicted {p['outcome']}, observed {o['outcome']}"
        elif p:
            c["frame_fp"] += 1
            row["miss"] = f"FP frame {where}"
        else:
            c["frame_fn"] += 1
            row["miss"] = f"FN frame {where}"
        out.rows.append(row)


def _rel(path: str, root: Path) -> str:
    try:
        return Path(path).relative_to(root.resolve()).as_posix()
    except ValueError:
        return path


def render_table(cmp: Comparison, script: str) -> str:
    lines = [f"gbreak-lint verify {script}: predicted vs observed (torch, backend=eager)", ""]
    for r in cmp.rows:
        if r["what"] == "site":
            pred = f"{r['code']} x{r['predicted_times']}" if r.get("code") else "-"
            seen = f"{r['observed']} x{r['observed_times']}" if r.get("observed") else "-"
            lines.append(f"  break  {r['where']:<28} predicted {pred:<14} observed {seen:<14} "
                         f"{'ok' if not r.get('miss') else 'MISMATCH'}")
        else:
            lines.append(f"  frame  {r['where']:<28} predicted {str(r['predicted'] or '-'):<14} "
                         f"observed {str(r['observed'] or '-'):<14} {'ok' if not r.get('miss') else 'MISMATCH'}"
                         f"  ({r['function']})")
    f = cmp.figures()
    lines += ["", f"break sites: precision {f['site_precision']:.2f}, recall {f['site_recall']:.2f}; "
                  f"frames: precision {f['frame_precision']:.2f}, recall {f['frame_recall']:.2f}; "
                  f"times_traced exact on {f['times_traced_exact']:.2f} and GB code on "
                  f"{f['gb_code_exact']:.2f} of matched sites"]
    return "\n".join(lines) + "\n"
