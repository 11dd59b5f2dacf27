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
import threading
import time
from dataclasses import dataclass
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


def _tree_memory_kb(root: int) -> int:
    """Memory of a process and all its descendants (workers): the sum of their proportional set
    sizes (pages shared by forked workers counted once), from /proc."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            fields = stat[stat.rindex(")") + 2:].split()
            parents[int(entry)] = int(fields[1])
            rss[int(entry)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE") // 1024
        except (OSError, ValueError, IndexError):
            continue
    total = 0
    for pid in rss:
        p = pid
        while p > 1 and p != root:
            p = parents.get(p, 0)
        if p == root:
            total += _pss_kb(pid, rss[pid])
    return total


def _pss_kb(pid: int, fallback: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return fallback


@dataclass
class Run:
    seconds: float
    findings: int
    peak_kb: int  # all processes of the scan together (PSS), sampled every 0.2 s


def timed(cmd: list[str], cwd: Path, extra_env: dict | None = None) -> Run:
    env = dict(os.environ, PYTHONPATH=str(REPO), **(extra_env or {}))  # measure this checkout
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    peak = [0]

    def sample() -> None:
        while proc.poll() is None:
            peak[0] = max(peak[0], _tree_memory_kb(proc.pid))
            time.sleep(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stdout, stderr = proc.communicate()
    elapsed = time.perf_counter() - start
    sampler.join()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{stderr[-2000:]}")
    if stderr.strip():
        print(stderr.rstrip())
    return Run(elapsed, stdout.count('"code"'), peak[0])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--assume-compiled", default="modules", choices=["none", "modules"])
    ap.add_argument("--file", help="file for the one-file run (default: the largest module)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="workers (default: CPU count)")
    args = ap.parse_args(argv)
    corpus = args.corpus.resolve()
    files = iter_python_files([corpus], corpus, ())
    size = sum(f.stat().st_size for f in files)
    print(f"corpus {corpus}: {len(files)} files, {size / 1e6:.1f} MB")
    base = [sys.executable, "-m", "gbreak_lint", "check", "--root", str(corpus), "--format", "json",
            "--exit-zero", "--assume-compiled", args.assume_compiled, "--jobs", str(args.jobs)]
    shutil.rmtree(corpus / ".gbreak_cache", ignore_errors=True)

    floor = parse_floor(files)
    cold = timed(base + [str(corpus)], corpus, {"GBREAK_LINT_TIMINGS": "1"})
    warm = timed(base + [str(corpus)], corpus)
    one = Path(args.file) if args.file else max(files, key=lambda f: f.stat().st_size)
    single = timed(base + [str(one)], corpus)
    largest_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024

    print(f"(a) parse floor, 1 process : {floor:8.2f} s")
    print(f"(b) cold scan              : {cold.seconds:8.2f} s   ratio to floor {cold.seconds / floor:5.2f}"
          f"  (target <= 2.0)   findings {cold.findings}")
    print(f"(c) warm re-run            : {warm.seconds:8.2f} s   ratio to cold  {warm.seconds / cold.seconds:5.3f}"
          "  (target <= 0.05)")
    print(f"(d) one-file run           : {single.seconds:8.2f} s   {one.relative_to(corpus)}"
          "  (target <= 1.0 s, warm cache)")
    print(f"peak memory, cold scan     : {cold.peak_kb / 1024:8.0f} MB all processes together,"
          f" (PSS), {largest_mb:.0f} MB the largest one (RSS)  (target <= 1024)")
    print(f"workers: {args.jobs} (cpus {os.cpu_count()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
