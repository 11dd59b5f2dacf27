"""Score gbreak-lint's predictions against programs labelled by running real torch.

    python benchmarks/accuracy.py ../shared/corpus [fixtures ...] [--json] [--verbose]

A label file is either `NAME.expected.json` beside `NAME.py` (the shared corpus) or
`label.json` in a fixture project folder (written by `python -m gbreak_lint.oracle`).  Each
folder holding labels is scanned once with `gbreak-lint check DIR --format json --root DIR`
and scored as the corpus README describes:
- break sites: a `graph-break` diagnostic matches a label when the file is the same and the
  label's line lies within the diagnostic's line..end_line (labels: graph_breaks plus
  library_breaks at their user line);
- frames: `frame-skipped` / `frame-partial` diagnostics by frame path + def line against
  skipped frames due to a graph break or skip_frame() (not resume functions) and compiled
  frames with `partial_then_eager_at`;
- times_traced of each matched site against the label's `compiles_hit`.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

CONFIG = "nested_graph_breaks=False"


def label_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    return sorted(set(root.rglob("*.expected.json")) | set(root.rglob("label.json")))


def load_labels(files: list[Path]) -> tuple[dict, set]:
    """(file, line) -> compiles_hit for break sites; {(file, def_line)} for frames."""
    sites: dict[tuple[str, int], int] = {}
    frames: set[tuple[str, int]] = set()
    for f in files:
        cfg = json.loads(f.read_text())["configs"][CONFIG]
        base = f.parent
        for g in cfg["graph_breaks"]:
            key = (_norm(base, g["file"]), g["line"])
            sites[key] = max(sites.get(key, 0), g["compiles_hit"])
        for g in cfg["library_breaks"]:
            key = (_norm(base, g["user_file"]), g["user_line"])
            sites[key] = max(sites.get(key, 0), g["compiles_hit"])
        for s in cfg["skipped_frames"]:
            if (s["due_to_graph_break"] or s["category"] == "skip_frame_call") and not s["is_resume"]:
                frames.add((_norm(base, s["file"]), s["first_line"]))
        for c in cfg["compiled_frames"]:
            if c["partial_then_eager_at"]:
                frames.add((_norm(base, c["file"]), c["first_line"]))
    return sites, frames


def _norm(base: Path, rel: str) -> str:
    return str((base / rel).resolve())


def predictions(folder: Path) -> list[dict]:
    cmd = [sys.executable, "-m", "gbreak_lint", "check", str(folder), "--format", "json",
           "--root", str(folder), "--exit-zero"]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=folder, check=False)
    if out.returncode != 0:
        raise SystemExit(f"gbreak-lint failed on {folder}:\n{out.stderr}")
    doc = json.loads(out.stdout)
    for d in doc["diagnostics"]:
        d["path"] = str((folder / d["path"]).resolve())
        if d.get("frame"):
            d["frame"]["path"] = str((folder / d["frame"]["path"]).resolve())
    return doc["diagnostics"]


def score_folder(folder: Path, files: list[Path]) -> tuple[dict, list[str]]:
    """Counts and mismatches (paths relative to `folder`) for one scanned folder."""
    sites, frames = load_labels(files)
    diags = predictions(folder)
    c = dict.fromkeys(("site_tp", "site_fp", "site_fn", "frame_tp", "frame_fp", "frame_fn",
                       "times_exact"), 0)
    misses: list[str] = []
    rel = lambda p: Path(p).relative_to(folder).as_posix()  # noqa: E731
    matched: set = set()
    for d in (d for d in diags if d["kind"] == "graph-break"):
        hits = [k for k in sites if k[0] == d["path"] and d["line"] <= k[1] <= d["end_line"]]
        if not hits:
            c["site_fp"] += 1
            misses.append(f"FP site {rel(d['path'])}:{d['line']} {d['code']}")
            continue
        c["site_tp"] += 1
        matched.update(hits)
        if d["times_traced"] == sites[hits[0]]:
            c["times_exact"] += 1
        else:
            misses.append(f"times {rel(d['path'])}:{d['line']} predicted {d['times_traced']}, "
                          f"observed {sites[hits[0]]}")
    for k in sorted(set(sites) - matched):
        c["site_fn"] += 1
        misses.append(f"FN site {rel(k[0])}:{k[1]}")
    predicted = {(d["frame"]["path"], d["frame"]["line"]) for d in diags
                 if d["kind"] in ("frame-skipped", "frame-partial") and d.get("frame")}
    c["frame_tp"] = len(predicted & frames)
    c["frame_fp"] = len(predicted - frames)
    c["frame_fn"] = len(frames - predicted)
    misses += [f"FP frame {rel(p)}:{line}" for p, line in sorted(predicted - frames)]
    misses += [f"FN frame {rel(p)}:{line}" for p, line in sorted(frames - predicted)]
    return c, misses


def score(folders: dict[Path, list[Path]], verbose: bool) -> dict:
    totals: dict[str, int] = {}
    misses: list[str] = []
    for folder, files in sorted(folders.items()):
        counts, folder_misses = score_folder(folder, files)
        for k, v in counts.items():
            totals[k] = totals.get(k, 0) + v
        misses += [f"{m}  [{folder}]" for m in folder_misses]
    t = totals
    result = {
        "site_precision": _ratio(t["site_tp"], t["site_tp"] + t["site_fp"]),
        "site_recall": _ratio(t["site_tp"], t["site_tp"] + t["site_fn"]),
        "frame_precision": _ratio(t["frame_tp"], t["frame_tp"] + t["frame_fp"]),
        "frame_recall": _ratio(t["frame_tp"], t["frame_tp"] + t["frame_fn"]),
        "times_traced_exact": _ratio(t["times_exact"], t["site_tp"]),
        "counts": totals,
    }
    if verbose:
        result["misses"] = misses
    return result


def _ratio(a: int, b: int) -> float:
    return round(a / b, 3) if b else 1.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", nargs="+", type=Path)
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--verbose", "-v", action="store_true", help="list every mismatch")
    args = ap.parse_args(argv)
    for corpus in args.corpus:
        folders: dict[Path, list[Path]] = defaultdict(list)
        for f in label_files(corpus.resolve()):
            folders[f.parent].append(f)
        if not folders:
            print(f"{corpus}: no labels found", file=sys.stderr)
            return 2
        result = score(folders, args.verbose)
        if args.json:
            print(json.dumps({"corpus": str(corpus), **result}, indent=1))
            continue
        print(f"{corpus}: {sum(len(v) for v in folders.values())} labelled programs")
        print(f"  break sites   precision {result['site_precision']:.3f}  recall {result['site_recall']:.3f}")
        print(f"  frames        precision {result['frame_precision']:.3f}  recall {result['frame_recall']:.3f}")
        print(f"  times_traced  exact on {result['times_traced_exact']:.3f} of true positives")
        print(f"  counts        {result['counts']}")
        for line in result.get("misses", []):
            print("   ", line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
