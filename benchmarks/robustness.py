"""Never crash, never lose code: figures from a long fuzz run and whole-ecosystem scans.

    python benchmarks/robustness.py [--fuzz N] [--corpus DIR ...] [--no-site-packages] [--fix-copy]

1. fuzz: N generated programs (the grammar of tests/test_robustness.py: compiled code mixing
   every break cause, loops, try/with blocks, comprehensions, generators, recursion, strict
   regions) and N mutated fixtures (truncated, random bytes, CRLF, tabs, odd encodings);
2. scans: the CPython standard library, every installed site-packages package (torch
   included), and any --corpus (transformers, timm sources), each also with
   `--assume-compiled modules`: files scanned, crashes (must be 0), files reported as not
   analysable, time;
3. --fix-copy: `--fix --unsafe-fixes` on a copy of each corpus: every changed file still parses,
   a second run changes nothing, files without findings are byte-identical.
"""
from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ENV = dict(os.environ, PYTHONPATH=str(REPO))


def run_fuzz(examples: int) -> None:
    env = dict(ENV, GBREAK_FUZZ_EXAMPLES=str(examples))
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          str(REPO / "tests" / "test_robustness.py"), "-k", "never_crash"],
                         cwd=REPO, env=env, capture_output=True, text=True)
    status = "0 crashes" if out.returncode == 0 else "CRASHES (see below)"
    print(f"fuzz: {examples} generated programs + 40 mutated fixtures: {status} "
          f"({time.perf_counter() - start:.0f} s)")
    if out.returncode != 0:
        print(out.stdout[-4000:])


def scan(folder: Path, assume: str) -> dict:
    cmd = [sys.executable, "-m", "gbreak_lint", "check", str(folder), "--root", str(folder),
           "--format", "json", "--exit-zero", "--no-cache", "--assume-compiled", assume]
    start = time.perf_counter()
    # not cwd=folder: `python -m` would put the scanned package first on sys.path and let its
    # modules (flask/json, torch/signal) shadow the standard library's
    out = subprocess.run(cmd, cwd=REPO, env=ENV, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if out.returncode != 0:
        return {"crashed": True, "stderr": out.stderr[-1500:], "seconds": elapsed}
    doc = json.loads(out.stdout)
    internal = [e for e in doc["errors"] if "internal error" in e["message"]]
    return {"crashed": bool(internal), "files": doc["files_scanned"], "findings": len(doc["diagnostics"]),
            "not_analysed": len(doc["errors"]), "internal_errors": internal[:3], "seconds": elapsed}


def report_scan(name: str, folder: Path) -> bool:
    ok = True
    for assume in ("none", "modules"):
        r = scan(folder, assume)
        ok &= not r["crashed"]
        if "files" in r:
            print(f"scan {name:<28} assume-compiled={assume:<7} files {r['files']:>6}  findings "
                  f"{r['findings']:>5}  not analysable {r['not_analysed']:>3}  crashes "
                  f"{len(r['internal_errors'])}  {r['seconds']:7.1f} s")
        else:
            print(f"scan {name:<28} assume-compiled={assume:<7} CRASHED after {r['seconds']:.1f} s:\n{r['stderr']}")
    return ok


def digests(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha1(p.read_bytes()).hexdigest()
            for p in folder.rglob("*.py") if p.is_file()}


def fix_copy(name: str, folder: Path) -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / folder.name
        shutil.copytree(folder, copy, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
        before = digests(copy)
        cmd = [sys.executable, "-m", "gbreak_lint", "check", str(copy), "--root", str(copy),
               "--fix", "--unsafe-fixes", "--no-cache", "-q", "--assume-compiled", "modules"]
        subprocess.run(cmd, cwd=REPO, env=ENV, capture_output=True, text=True)
        after = digests(copy)
        changed = [p for p in after if after[p] != before.get(p)]
        broken = [p for p in changed if not _parses(copy / p)]
        subprocess.run(cmd, cwd=REPO, env=ENV, capture_output=True, text=True)
        again = digests(copy)
        unstable = [p for p in again if again[p] != after[p]]
        print(f"fix  {name:<28} changed {len(changed):>4} files, broken {len(broken)}, "
              f"changed again by a second run {len(unstable)}")
        return not broken and not unstable


def _parses(path: Path) -> bool:
    try:
        ast.parse(path.read_bytes())
        return True
    except (SyntaxError, ValueError):
        return False


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fuzz", type=int, default=500)
    ap.add_argument("--corpus", type=Path, action="append", default=[])
    ap.add_argument("--no-site-packages", action="store_true")
    ap.add_argument("--only", action="append", default=[], help="scan only these site-packages names")
    ap.add_argument("--fix-copy", action="store_true")
    args = ap.parse_args(argv)
    ok = True
    if args.fuzz:
        run_fuzz(args.fuzz)
    targets = [] if args.only else [("stdlib", Path(sysconfig.get_paths()["stdlib"]))]
    if not args.no_site_packages:
        site = Path(sysconfig.get_paths()["purelib"])
        targets += [(f"site-packages/{p.name}", p) for p in sorted(site.iterdir())
                    if p.is_dir() and not p.name.endswith((".dist-info", ".egg-info", "__pycache__"))
                    and any(p.rglob("*.py")) and (not args.only or p.name in args.only)]
    targets += [(c.name, c.resolve()) for c in args.corpus]
    for name, folder in targets:
        ok &= report_scan(name, folder)
    if args.fix_copy:
        for name, folder in [(c.name, c.resolve()) for c in args.corpus]:
            ok &= fix_copy(name, folder)
    print("result:", "no crashes" if ok else "FAILURES")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
