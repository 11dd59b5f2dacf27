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


def score(folders: dict[Path, list[Path]], verbose: bool) -> dict:
    tp = fp = fn = ftp = ffp = ffn = exact = 0
    misses: list[str] = []
    for folder, files in sorted(folders.items()):
        sites, frames = load_labels(files)
        diags = predictions(folder)
        breaks = [d for d in diags if d["kind"] == "graph-break"]
        matched: set = set()
        for d in breaks:
            hits = [k for k in sites if k[0] == d["path"] and d["line"] <= k[1] <= d["end_line"]]
            if hits:
                tp += 1
                matched.update(hits)
                if d["times_traced"] == sites[hits[0]]:
                    exact += 1
                else:
                    misses.append(f"times {d['path']}:{d['line']} predicted {d['times_traced']}, "
                                  f"observed {sites[hits[0]]}")
            else:
                fp += 1
                misses.append(f"FP site {d['path']}:{d['line']} {d['code']}")
        for k in sites:
            if k not in matched:
                fn += 1
                misses.append(f"FN site {k[0]}:{k[1]}")
        predicted_frames = {(d["frame"]["path"], d["frame"]["line"]) for d in diags
                            if d["kind"] in ("frame-skipped", "frame-partial") and d.get("frame")}
        ftp += len(predicted_frames & frames)
        ffp += len(predicted_frames - frames)
        ffn += len(frames - predicted_frames)
        misses += [f"FP frame {p}:{l}" for p, l in sorted(predicted_frames - frames)]
        misses += [f"FN frame {p}:{l}" for p, l in sorted(frames - predicted_frames)]
    result = {
        "site_precision": _ratio(tp, tp + fp), "site_recall": _ratio(tp, tp + fn),
        "frame_precision": _ratio(ftp, ftp + ffp), "frame_recall": _ratio(ftp, ftp + ffn),
        "times_traced_exact": _ratio(exact, tp),
        "counts": {"site_tp": tp, "site_fp": fp, "site_fn": fn, "frame_tp": ftp,
                   "frame_fp": ffp, "frame_fn": ffn, "times_exact": exact},
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
