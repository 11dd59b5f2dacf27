"""Speed of gbreak-lint on a large corpus, measured side by side in one run.

    python benchmarks/speed.py CORPUS_DIR [--assume-compiled modules] [--file REL/PATH.py]

(a) floor: plain `libcst.parse_module` of every .py file, in one process;
(b) cold scan: `gbreak-lint check CORPUS` with the result cache removed;
(c) warm re-run with nothing changed (the result cache);
(d) one-file run, pre-commit style, inside the corpus (wall time including interpreter start-up);
and the peak memory of the scans. Prints the ratios the targets are stated in.
Corpora: transformers (`pip download --no-deps transformers==5.23.0`, unzip) and timm.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from gbreak_lint.discover import iter_python_files  # noqa: E402


def parse_floor(files: list[Path]) -> float:
    code = ("import sys, time, libcst\nfiles = sys.argv[1:]\nt = time.perf_counter()\n"
            "for f in files:\n    try:\n        libcst.parse_module(open(f, 'rb').read())\n"
            "    except Exception:\n        pass\nprint(time.perf_counter() - t)\n")
    out = subprocess.run([sys.executable, "-c", code, *map(str, files)], capture_output=True, text=True,
                         check=True)
    return float(out.stdout.strip())


REPO = Path(__file__).resolve().parent.parent


def timed(cmd: list[str], cwd: Path) -> tuple[float, int]:
    env = dict(os.environ, PYTHONPATH=str(REPO))  # measure this checkout, whatever is installed
    start = time.perf_counter()
    out = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    if out.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stderr[-2000:]}")
    return elapsed, out.stdout.count('"code"')


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--assume-compiled", default="modules", choices=["none", "modules"])
    ap.add_argument("--file", help="file for the one-file run (default: the largest module)")
    args = ap.parse_args(argv)
    corpus = args.corpus.resolve()
    files = iter_python_files([corpus], corpus, ())
    size = sum(f.stat().st_size for f in files)
    print(f"corpus {corpus}: {len(files)} files, {size / 1e6:.1f} MB")
    base = [sys.executable, "-m", "gbreak_lint", "check", "--root", str(corpus), "--format", "json",
            "--exit-zero", "--assume-compiled", args.assume_compiled]
    shutil.rmtree(corpus / ".gbreak_cache", ignore_errors=True)

    floor = parse_floor(files)
    cold, findings = timed(base + [str(corpus)], corpus)
    warm, _ = timed(base + [str(corpus)], corpus)
    one = Path(args.file) if args.file else max(files, key=lambda f: f.stat().st_size)
    single, _ = timed(base + [str(one)], corpus)
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024

    print(f"(a) parse floor, 1 process : {floor:8.2f} s")
    print(f"(b) cold scan              : {cold:8.2f} s   ratio to floor {cold / floor:5.2f}  (target <= 2.0)"
          f"   findings {findings}")
    print(f"(c) warm re-run            : {warm:8.2f} s   ratio to cold  {warm / cold:5.3f}  (target <= 0.05)")
    print(f"(d) one-file run           : {single:8.2f} s   {one.relative_to(corpus)}  (target <= 1.0 s, warm cache)")
    print(f"peak memory (largest child): {peak_mb:8.0f} MB  (target <= 1024)")
    print(f"workers: 1 (cpus {os.cpu_count()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
