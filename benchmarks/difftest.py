"""Differential test of gbreak-lint against real torch on generated programs (issue #15).

    python benchmarks/difftest.py --programs N --seed S --out DIR [--jobs J] [--no-shrink]
    python benchmarks/difftest.py --matrix print --seed 0 --out DIR   # each construct alone

Generates N small programs (constructs x causes x contexts, nested 1-4 deep), labels each
with the oracle (gbreak_lint.oracle's recorder; by default a fork server that imports torch once
and forks a fresh child per program, checked against the per-process oracle on every
--check-every-th program), lints it, scores it with gbreak_lint.verify, shrinks every
disagreement and writes DIR/programs/<id>/, DIR/disagreements/<id>/ and DIR/report.json.
Only the oracle's label is truth; the generator's expectation is in meta.json for reading.
Resumable: a stored label of the same program text is reused.
"""
from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from difftest_lib.labeler import Labeler  # noqa: E402
from difftest_lib.linter import MODE  # noqa: E402
from difftest_lib.pipeline import Settings, process  # noqa: E402
from difftest_lib.report import aggregate, table  # noqa: E402
from difftest_lib.score import primary, signature  # noqa: E402
from difftest_lib.shrink_run import choose, write_disagreement  # noqa: E402


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--programs", type=int, default=0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--jobs", type=int, default=1, help="parallel oracle/linter workers (default 1)")
    ap.add_argument("--no-shrink", action="store_true")
    ap.add_argument("--shrink-steps", type=int, default=40, help="candidates evaluated per disagreement")
    ap.add_argument("--shrink-per-target", type=int, default=0,
                    help="shrink only the first K programs of each kind of disagreement (primary miss + "
                         "context wrapper); the others are written unshrunk, pointing at the first "
                         "(default 0: shrink all)")
    ap.add_argument("--oracle", choices=["batch", "fresh"], default="batch",
                    help="batch: one child interpreter for many programs; fresh: gbreak_lint.oracle.label each")
    ap.add_argument("--check-every", type=int, default=20,
                    help="label every k-th program again with the fresh oracle; a mismatch drops it (0: never)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per program under torch")
    ap.add_argument("--matrix", metavar="CAUSE",
                    help="instead: every construct alone around CAUSE (e.g. print), one verdict line each")
    ap.add_argument("--linter-src", type=Path, default=HERE.parent,
                    help="PYTHONPATH for the linter (default: this checkout)")
    ap.add_argument("--lint", choices=["subprocess", "in-process"], default="subprocess",
                    help="in-process: lint with this checkout inside difftest (fast re-scoring of stored labels)")
    return ap.parse_args(argv)


class Workers:
    """A thread pool whose threads each own a Labeler (one batch oracle child per thread)."""

    def __init__(self, args, st: Settings):
        self.args, self.st, self.local, self.lock = args, st, threading.local(), threading.Lock()
        self.labelers: list[Labeler] = []
        self.done = 0

    def labeler(self) -> Labeler:
        if not hasattr(self.local, "labeler"):
            self.local.labeler = Labeler(self.st.out / "cache" / "labels", self.args.oracle, self.args.timeout,
                                         self.st.out / f"oracle-{len(self.labelers)}.log")
            with self.lock:
                self.labelers.append(self.local.labeler)
        return self.local.labeler

    def map(self, fn, items: list, what: str) -> list:
        def one(item):
            out = fn(item, self.labeler())
            with self.lock:
                self.done += 1
                msg = out if isinstance(out, str) else f"{out['id']} {_status(out)}"
                print(f"[{what} {self.done}/{len(items)}] {msg}", file=sys.stderr, flush=True)
            return out
        self.done = 0
        with ThreadPoolExecutor(max_workers=max(1, self.args.jobs)) as pool:
            return list(pool.map(one, items))

    def close(self) -> None:
        for lab in self.labelers:
            lab.close()


def run_all(args, st: Settings) -> list[dict]:
    workers = Workers(args, st)
    try:
        results = workers.map(lambda i, lab: process(i, st, lab), list(range(args.programs)), "label+lint")
        _shrink_all(workers, results, st, args.shrink_per_target, not args.no_shrink)
    finally:
        workers.close()
    return results


def _status(result: dict) -> str:
    if "dropped" in result:
        return f"dropped ({result['dropped']})"
    return "DISAGREE " + " ".join(map(str, result["score"]["misses"][0])) if result["score"]["misses"] else "ok"


def _shrink_all(workers: Workers, results: list[dict], st: Settings, per_target: int, do_shrink: bool) -> None:
    chosen = choose(results, per_target)
    by_id = {r["id"]: r for r in results}

    def one(pid, lab):
        t0 = time.perf_counter()
        by_id[pid]["shrunk"] = write_disagreement(by_id[pid], st, lab, do_shrink, chosen[pid])
        by_id[pid]["timing"]["shrink_s"] = round(time.perf_counter() - t0, 3)
        return f"{pid} {by_id[pid]['shrunk']['lines']} lines"
    workers.map(one, sorted(chosen), "shrink")


def build_report(args, results: list[dict], elapsed: float) -> dict:
    scored = [r for r in results if "score" in r]
    dropped = Counter(r["dropped"] for r in results if "dropped" in r)
    sigs = Counter(" ".join(map(str, primary(r["score"]["misses"]))) for r in scored if r["score"]["misses"])
    every = Counter(" ".join(map(str, signature(m))) for r in scored for m in r["score"]["misses"])
    timing = {k: _mean([r["timing"].get(k) for r in results]) for k in ("label_s", "lint_s", "shrink_s")}
    return {"programs": len(results), "seed": args.seed, "torch": _torch_version(args.out.resolve(), scored),
            "dropped": sum(dropped.values()), "dropped_reasons": dict(sorted(dropped.items())),
            "scored": len(scored), **aggregate(scored),
            "disagreement_targets": dict(sorted(sigs.items(), key=lambda kv: (-kv[1], kv[0]))),
            "all_disagreements": dict(sorted(every.items(), key=lambda kv: (-kv[1], kv[0]))),
            "timing": {**timing, "wall_s": round(elapsed, 1), "per_program_s": round(elapsed / max(1, len(results)), 3)},
            "dropped_programs": {r["id"]: [r["dropped"], r.get("detail", "")[:300]] for r in results if "dropped" in r}}


def _mean(values) -> float | None:
    values = [v for v in values if v is not None]
    return round(sum(values) / len(values), 3) if values else None


def _torch_version(out: Path, scored: list[dict]) -> str | None:
    """As the oracle recorded it (labels carry the version of the torch that made them)."""
    for r in scored:
        return json.loads((out / "programs" / r["id"] / "label.json").read_text()).get("torch")
    return None


def _matrix(args, st: Settings) -> int:
    from difftest_lib.matrix import run_matrix

    labeler = Labeler(st.out / "cache" / "labels", args.oracle, args.timeout)
    try:
        rows = run_matrix(st.out, args.matrix, labeler, st.linter_src)
    finally:
        labeler.close()
    print("\n".join(rows))
    (st.out / "matrix" / f"{args.matrix}.txt").write_text("\n".join(rows) + "\n")
    return 0


def main(argv=None) -> int:
    args = parse_args(argv)
    MODE["lint"] = args.lint
    if args.programs <= 0 and not args.matrix:
        raise SystemExit("difftest: --programs N (N > 0) or --matrix CAUSE is required")
    out = args.out.resolve()
    (out / "programs").mkdir(parents=True, exist_ok=True)
    st = Settings(out=out, seed=args.seed, linter_src=args.linter_src.resolve(), shrink_steps=args.shrink_steps,
                  check_every=args.check_every, timeout=args.timeout)
    if args.matrix:
        return _matrix(args, st)
    start = time.perf_counter()
    results = run_all(args, st)
    report = build_report(args, results, time.perf_counter() - start)
    (out / "report.json").write_text(json.dumps(report, indent=1) + "\n")
    for section in ("constructs", "causes", "contexts"):
        print(table(report, section) + "\n")
    print(f"{report['scored']} scored, {report['dropped']} dropped {report['dropped_reasons']}; "
          f"{report['overall']['disagreeing']} disagreeing; report: {out / 'report.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
