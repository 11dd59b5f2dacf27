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
- the outcome of each matched frame (skipped vs compiled up to a checkpoint);
- times_traced of each matched site against the label's `compiles_hit`;
- compile errors: `compile-error` diagnostics against breaks that raised (fullgraph=True,
  error_on_graph_break(True)), by line.

`--nested on` scores the labels' nested_graph_breaks=True run (labels made with
`oracle --both`) against a scan with `--dynamo-config nested_graph_breaks=true`.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from gbreak_lint.verify import Comparison, Observed, compare, observed  # noqa: E402


def label_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    return sorted(set(root.rglob("*.expected.json")) | set(root.rglob("label.json")))


NESTED_CONFIG = {"off": "nested_graph_breaks=False", "on": "nested_graph_breaks=True"}


def predictions(folder: Path, nested: str = "off") -> list[dict]:
    cmd = [sys.executable, "-m", "gbreak_lint", "check", str(folder), "--format", "json",
           "--root", str(folder), "--exit-zero"]
    if nested == "on":
        cmd += ["--dynamo-config", "nested_graph_breaks=true"]
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=folder, check=False, env=env)
    if out.returncode != 0:
        raise SystemExit(f"gbreak-lint failed on {folder}:\n{out.stderr}")
    return json.loads(out.stdout)["diagnostics"]  # paths relative to `folder` (the cwd)


def score_folder(folder: Path, files: list[Path], nested: str = "off") -> tuple[dict, list[str]]:
    """Counts and mismatches (paths relative to `folder`) for one scanned folder."""
    diags = predictions(folder, nested)
    cmp = Comparison()
    obs = Observed({}, {})
    errors: set = set()
    for f in files:
        one = observed(json.loads(f.read_text()), f.parent, NESTED_CONFIG[nested])
        for key, value in one.sites.items():
            if key not in obs.sites or value["compiles_hit"] > obs.sites[key]["compiles_hit"]:
                obs.sites[key] = value
        obs.frames.update(one.frames)
        for key, codes in one.site_codes.items():
            merged = obs.site_codes.setdefault(key, {})
            for code, hits in codes.items():
                merged[code] = max(merged.get(code, 0), hits)
        errors |= one.errors
    obs = replace(obs, errors=frozenset(errors))
    compare(obs, diags, folder, cmp)
    return cmp.counts, cmp.misses()


def score(folders: dict[Path, list[Path]], verbose: bool, nested: str = "off") -> dict:
    total = Comparison()
    misses: list[str] = []
    for folder, files in sorted(folders.items()):
        counts, folder_misses = score_folder(folder, files, nested)
        for k, v in counts.items():
            total.counts[k] += v
        misses += [f"{m}  [{folder}]" for m in folder_misses]
    result = {**total.figures(), "counts": total.counts}
    if verbose:
        result["misses"] = misses
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", nargs="+", type=Path)
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--verbose", "-v", action="store_true", help="list every mismatch")
    ap.add_argument("--nested", choices=sorted(NESTED_CONFIG), default="off",
                    help="score the nested_graph_breaks=True runs (labels that have one)")
    args = ap.parse_args(argv)
    for corpus in args.corpus:
        folders: dict[Path, list[Path]] = defaultdict(list)
        for f in label_files(corpus.resolve()):
            if NESTED_CONFIG[args.nested] in json.loads(f.read_text()).get("configs", {}):
                folders[f.parent].append(f)
        if not folders:
            print(f"{corpus}: no labels found", file=sys.stderr)
            return 2
        result = score(folders, args.verbose, args.nested)
        if args.json:
            print(json.dumps({"corpus": str(corpus), **result}, indent=1))
            continue
        print(f"{corpus}: {sum(len(v) for v in folders.values())} labelled programs")
        print(f"  break sites   precision {result['site_precision']:.3f}  recall {result['site_recall']:.3f}")
        print(f"  frames        precision {result['frame_precision']:.3f}  recall {result['frame_recall']:.3f}"
              f"  outcome exact {result['frame_outcome_exact']:.3f}")
        print(f"  times_traced  exact on {result['times_traced_exact']:.3f} of true positives")
        print(f"  GB codes      exact on {result['gb_code_exact']:.3f} of true positives")
        print(f"  compile errors precision {result['error_precision']:.3f}  recall {result['error_recall']:.3f}")
        print(f"  counts        {result['counts']}")
        for line in result.get("misses", []):
            print("   ", line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
