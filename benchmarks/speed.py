"""Speed of gbreak-lint on a large corpus, measured side by side in one run.

    python benchmarks/speed.py CORPUS_DIR [--assume-compiled modules] [--file REL/PATH.py]

(a) floor: plain `libcst.parse_module` of every .py file, in one process;
(b) cold scan: `gbreak-lint check CORPUS` with the result cache removed;
(c) warm re-run with nothing changed (the result cache);
(d) one-file run, pre-commit style, inside the corpus (wall time including interpreter start-up);
(e) edit one file (a comment appended, then taken back), then check that file, as pre-commit does;
(f) one `--entry` (`--entry-point MODULE:Class.forward`), cache off: parses only what it reaches;
(g) script mode (`--script train.py --python VENV/bin/python`): a training script that imports the
    corpus as an installed package, cache off;
and the peak memory of the scans. Prints the ratios the targets are stated in (to the floor,
measured in the same run). The cache lives in a fresh folder for each benchmark run.
Corpora: transformers (`pip download --no-deps transformers==5.23.0`, unzip) and timm.
"""
from __future__ import annotations

import argparse
import compileall
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import gbreak_lint  # noqa: E402
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


# Reading a process's PSS makes the kernel walk its page tables: five times a second, for the
# scan and its workers, it took CPU from the scan it measures (2 cores). Memory grows slowly.
MEMORY_SAMPLE_SECONDS = 1.0


@dataclass
class Run:
    seconds: float
    findings: int
    peak_kb: int  # all processes of the scan together (PSS), sampled every MEMORY_SAMPLE_SECONDS


def timed(cmd: list[str], cwd: Path, extra_env: dict | None = None) -> Run:
    env = dict(os.environ, PYTHONPATH=str(REPO), **(extra_env or {}))  # measure this checkout
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    peak = [0]

    def sample() -> None:
        while proc.poll() is None:
            peak[0] = max(peak[0], _tree_memory_kb(proc.pid))
            time.sleep(MEMORY_SAMPLE_SECONDS)

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
    ap.add_argument("--entry-point", help="MODULE:Class.method for the --entry run (f)")
    ap.add_argument("--script", type=Path, help="a training script for the script-mode run (g)")
    ap.add_argument("--python", help="the interpreter whose packages the script imports (g)")
    args = ap.parse_args(argv)
    os.environ["GBREAK_LINT_CACHE_DIR"] = tempfile.mkdtemp(prefix="gbreak-bench-cache-")
    # The tool's bytecode, as `pip install` leaves it: without it (an editable install under
    # PYTHONDONTWRITEBYTECODE) every run compiles the tool again, a tenth of a one-file run.
    compileall.compile_dir(Path(gbreak_lint.__file__).parent, quiet=1)
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
    one = corpus / args.file if args.file else max(files, key=lambda f: f.stat().st_size)
    single = timed(base + [str(one)], corpus)
    edited = _edit_then_check(base, corpus, one)
    entry = timed(_entry_command(base, corpus, args.entry_point), corpus) if args.entry_point else None
    script = _script_run(args.script, args.python) if args.script else None
    largest_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024

    print(f"(a) parse floor, 1 process : {floor:8.2f} s")
    print(f"(b) cold scan              : {cold.seconds:8.2f} s   ratio to floor {cold.seconds / floor:5.2f}"
          f"  (target <= 2.0)   findings {cold.findings}")
    print(f"(c) warm re-run            : {warm.seconds:8.2f} s   ratio to cold  {warm.seconds / cold.seconds:5.3f}"
          "  (target <= 0.05)")
    print(f"(d) one-file run           : {single.seconds:8.2f} s   {one.relative_to(corpus)}"
          "  (target <= 1.0 s, warm cache)")
    print(f"(e) edit one file, check it: {edited.seconds:8.2f} s   ratio to floor {edited.seconds / floor:6.3f}"
          "  (target <= 0.03)")
    if entry is not None:
        print(f"(f) one --entry, no cache  : {entry.seconds:8.2f} s   ratio to floor {entry.seconds / floor:6.3f}"
              f"  (target <= 0.05)   findings {entry.findings}")
    if script is not None:
        print(f"(g) script mode, no cache  : {script.seconds:8.2f} s   ratio to floor {script.seconds / floor:6.3f}"
              f"  (target <= 0.05)   findings {script.findings}")
    print(f"peak memory, cold scan     : {cold.peak_kb / 1024:8.0f} MB all processes together,"
          f" (PSS), {largest_mb:.0f} MB the largest one (RSS)  (target <= 1024)")
    print(f"workers: {args.jobs} (cpus {os.cpu_count()})")
    return 0


def _edit_then_check(base: list[str], corpus: Path, one: Path) -> Run:
    """Pre-commit after an edit: one file's content changes (a comment line), then that file
    is checked. The file is restored afterwards, whatever happens."""
    original = one.read_bytes()
    try:
        one.write_bytes(original + b"\n# edited by benchmarks/speed.py\n")
        return timed(base + [str(one)], corpus)
    finally:
        one.write_bytes(original)


def _entry_command(base: list[str], corpus: Path, entry: str) -> list[str]:
    cmd = [c for c in base if c not in ("--assume-compiled", "modules", "none")]
    return cmd + ["--no-cache", "--entry", entry, str(corpus)]


def _script_run(script: Path, python: str | None) -> Run:
    cmd = [sys.executable, "-m", "gbreak_lint", "check", "--format", "json", "--exit-zero", "--no-cache",
           str(script.resolve())] + (["--python", python] if python else [])
    return timed(cmd, script.resolve().parent)


if __name__ == "__main__":
    sys.exit(main())
