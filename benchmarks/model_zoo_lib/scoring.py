"""Score gbreak-lint's script-mode predictions on the zoo's programs against stored labels.

No torch run: each stored program is rendered again from its parameters, linted with
`gbreak-lint check PROGRAM --python ZOO_PY --format json` (cached by program text + the
linter's source in WORK/lint/), and compared with gbreak_lint.verify.observed / compare.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from model_zoo_lib.render import render
from model_zoo_lib.runner import LOCK, REPO, program_path, wait_for_lock
from model_zoo_lib.store import expand, site_relative

from gbreak_lint.verify import Comparison, compare, observed, ratio

BACKWARD = "GB0123"


def linter_fingerprint(repo: Path = REPO) -> str:
    h = hashlib.sha256()
    for folder in ("gbreak_lint", "rules"):
        for p in sorted((repo / folder).rglob("*")):
            if p.is_file() and p.suffix in (".py", ".yaml", ".yml", ".json", ".toml") and "__pycache__" not in p.parts:
                h.update(str(p.relative_to(repo)).encode())
                h.update(p.read_bytes())
    return h.hexdigest()[:16]


def site_dirs(python: str) -> list[str]:
    """The scoring interpreter's site-packages folders (where the libraries live)."""
    code = "import site, json; print(json.dumps(site.getsitepackages()))"
    try:
        out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True, timeout=60).stdout
        return json.loads(out)
    except (OSError, subprocess.SubprocessError, ValueError):
        return []


class Linter:
    def __init__(self, python: str, work: Path, timeout: float, lock: Path = LOCK, src: Path = REPO):
        self.python, self.work, self.timeout, self.lock, self.src = python, work, timeout, lock, src
        self.fingerprint = linter_fingerprint(src)
        (work / "lint").mkdir(parents=True, exist_ok=True)

    def lint(self, path: Path, text: str) -> dict:
        key = hashlib.sha256((self.fingerprint + self.python + text).encode()).hexdigest()[:24]
        cache = self.work / "lint" / f"{key}.json"
        if cache.exists():
            return json.loads(cache.read_text())
        wait_for_lock(self.lock)
        cmd = ["nice", "-n", "19", sys.executable, "-m", "gbreak_lint", "check", path.name, "--format", "json",
               "--python", self.python, "--root", str(path.parent), "--exit-zero", "--no-cache", "--jobs", "1"]
        t0 = time.time()
        try:
            done = subprocess.run(cmd, cwd=path.parent, capture_output=True, text=True, timeout=self.timeout,
                                  env=dict(os.environ, PYTHONPATH=str(self.src)))
        except subprocess.TimeoutExpired:
            result = {"error": "lint timeout"}
        else:
            if done.returncode != 0:
                result = {"error": done.stderr.strip()[-500:]}
            else:
                result = json.loads(done.stdout)
        result["seconds"] = round(time.time() - t0, 1)
        if result.get("error") != "lint timeout":  # a busy machine's timeout is no result: try again next run
            cache.write_text(json.dumps(result))
        return result


def _in_program(key_path: str, program: Path) -> bool:
    return Path(key_path) == program.resolve()


def score_program(label: dict, diags: list[dict], program: Path) -> dict:
    """Figures for one program: verify's counts, model-level verdicts, per-cause rows."""
    root = program.parent
    obs = observed(label, root)
    cmp = compare(obs, diags, root, Comparison())
    prog = str(program.resolve())
    # model-level: does the model break (the train step's own backward() is not the model)
    obs_break = any(not (k[0] == prog and v["gb_code"] == BACKWARD) for k, v in obs.sites.items()) or bool(obs.frames)
    pred_break = any(d["kind"] in ("frame-skipped", "frame-partial") or
                     (d["kind"] == "graph-break" and not (str((root / d["path"]).resolve()) == prog
                                                          and d.get("gb_code") == BACKWARD))
                     for d in diags)
    causes = []  # [gb_code, "tp"|"fp"|"fn", where]
    matched = set()
    for d in diags:
        if d["kind"] != "graph-break":
            continue
        path = str((root / d["path"]).resolve())
        hits = [k for k in obs.sites if k[0] == path and d["line"] <= k[1] <= d["end_line"]]
        matched.update(hits)
        where = f"{site_relative(path) if path != prog else program.name}:{d['line']}"
        causes.append([d.get("gb_code") or "-", "tp" if hits else "fp", where, d["code"]])
    for k in sorted(set(obs.sites) - matched):
        where = f"{site_relative(k[0]) if k[0] != prog else program.name}:{k[1]}"
        causes.append([obs.sites[k]["gb_code"] or "-", "fn", where, None])
    frames = []
    for r in cmp.rows:
        if r["what"] == "frame" and r.get("miss"):
            w = r["where"]
            path, _, line = w.rpartition(":")
            frames.append(["fp" if r["predicted"] else "fn", f"{site_relative(path) if path != prog else program.name}:{line}",
                           r["function"], r["predicted"] or r["observed"]])
    return {"counts": cmp.counts, "observed_breaks": obs_break, "predicted_breaks": pred_break,
            "causes": causes, "frames": frames}


def registry_types(python: str) -> dict:
    """GB code -> gb_type from torch's graph_break_registry.json (read, torch not imported)."""
    code = ("import importlib.util, os; "
            "print(os.path.join(os.path.dirname(importlib.util.find_spec('torch').origin), "
            "'_dynamo', 'graph_break_registry.json'))")
    try:
        path = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60).stdout.strip()
        data = json.loads(Path(path).read_text())
        return {k: v[0]["Gb_type"] for k, v in data.items() if v}
    except (OSError, subprocess.SubprocessError, ValueError, KeyError, IndexError, TypeError):
        return {}


def gb_types(stores: dict, python: str | None = None) -> dict:
    """GB code -> Dynamo's gb_type text, from the labels and torch's registry."""
    out = registry_types(python) if python else {}
    for store in stores.values():
        for entry in store.data["programs"].values():
            for g in (entry.get("label") or {}).get("graph_breaks", ()):
                if g.get("gb_code") and g.get("gb_type"):
                    out.setdefault(g["gb_code"], g["gb_type"])
    return out


def score_all(stores: dict, python: str, work: Path, report_path: Path, versions: dict,
              lint_jobs: int = 1, lint_timeout: float = 300, sites: list[str] | None = None,
              quiet: bool = False, lock: Path = LOCK, linter_src: Path = REPO,
              only: set[str] | None = None) -> dict:
    """Score every labelled program (`only`: those of these models) and write the report."""
    sites = sites or site_dirs(python)
    if not sites:
        raise SystemExit(f"cannot ask {python} for its site-packages folders")
    linter = Linter(python, work, lint_timeout, lock, linter_src)
    jobs = []
    failed = defaultdict(Counter)
    for lib, store in stores.items():
        for pid, entry in sorted(store.data["programs"].items()):
            if only is not None and entry["model"] not in only:
                continue
            model = store.model(entry["model"]) or {}
            if "label" not in entry or "params" not in model:
                failed[(lib, entry["mode"])]["oracle failed: " + entry.get("failed", "?")[:80]] += 1
                continue
            lab = entry["label"]
            if not lab["exit_ok"] and not any("hard_error" in g["outcomes"] for g in lab["graph_breaks"]):
                reason = (lab.get("errors") or ["program failed under torch.compile"])[0]
                failed[(lib, entry["mode"])]["compiled run failed: " + reason[:120]] += 1
                continue
            jobs.append((lib, pid, entry, model["params"]))
    results = []
    lock = threading.Lock()

    def one(job):
        lib, pid, entry, params = job
        path = program_path(work, params, entry["mode"])
        path.parent.mkdir(parents=True, exist_ok=True)
        text = render(params, entry["mode"], versions[lib])
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
        lint = linter.lint(path, text)
        if "error" in lint:
            with lock:
                failed[(lib, entry["mode"])]["linter failed: " + lint["error"].splitlines()[-1][:120]] += 1
            return
        label = expand(entry["label"], sites)
        res = score_program(label, lint["diagnostics"], path)
        res.update(lib=lib, pid=pid, model=entry["model"], mode=entry["mode"], lint_seconds=lint.get("seconds"))
        with lock:
            results.append(res)
            if len(results) % 25 == 0:
                print(f"  scored {len(results)}/{len(jobs)}", file=sys.stderr, flush=True)

    with ThreadPoolExecutor(max(1, lint_jobs)) as pool:
        list(pool.map(one, jobs))
    report = build_report(results, failed, stores, gb_types(stores, python))
    report["linter_fingerprint"] = linter.fingerprint
    report["linter_source"] = str(linter_src)
    report_path.parent.mkdir(parents=True, exist_ok=True)
    report_path.write_text(json.dumps(report, indent=1) + "\n")
    md = render_markdown(report)
    report_path.with_suffix(".md").write_text(md)
    if not quiet:
        print(md)
    return report


def _figures(rs: list[dict]) -> dict:
    c = Counter()
    agree = Counter()
    for r in rs:
        c.update(r["counts"])
        agree[(r["observed_breaks"], r["predicted_breaks"])] += 1
    n = len(rs)
    return {
        "programs": n,
        "observed_breaking": agree[(True, True)] + agree[(True, False)],
        "observed_breaking_pct": round(100 * (agree[(True, True)] + agree[(True, False)]) / n, 1) if n else None,
        "predicted_breaking": agree[(True, True)] + agree[(False, True)],
        "model_agreement": ratio(agree[(True, True)] + agree[(False, False)], n),
        "model_tp": agree[(True, True)], "model_fp": agree[(False, True)], "model_fn": agree[(True, False)],
        "model_tn": agree[(False, False)],
        "site_tp": c["site_tp"], "site_fp": c["site_fp"], "site_fn": c["site_fn"],
        "site_precision": ratio(c["site_tp"], c["site_tp"] + c["site_fp"]),
        "site_recall": ratio(c["site_tp"], c["site_tp"] + c["site_fn"]),
        "frame_tp": c["frame_tp"], "frame_fp": c["frame_fp"], "frame_fn": c["frame_fn"],
        "frame_precision": ratio(c["frame_tp"], c["frame_tp"] + c["frame_fp"]),
        "frame_recall": ratio(c["frame_tp"], c["frame_tp"] + c["frame_fn"]),
        "times_exact": ratio(c["times_exact"], c["site_tp"]),
    }


def build_report(results: list[dict], failed: dict, stores: dict, types: dict) -> dict:
    groups = defaultdict(list)
    for r in results:
        groups[(r["lib"], r["mode"])].append(r)
        groups[("all", r["mode"])].append(r)
        if r["lib"] in ("transformers", "diffusers"):  # what the public torch 2.10 sweep covered
            groups[("transformers+diffusers", r["mode"])].append(r)
        groups[("all", "all")].append(r)
    figures = {f"{lib}/{mode}": _figures(rs) for (lib, mode), rs in sorted(groups.items())}
    causes = defaultdict(Counter)
    sites_missed = defaultdict(lambda: {"programs": [], "gb_code": None})
    sites_over = defaultdict(lambda: {"programs": [], "gbl": None, "gb_code": None})
    for r in results:
        for code, kind, where, gbl in r["causes"]:
            causes[code][kind] += 1
            if kind == "fn":
                s = sites_missed[(where, code)]
                s["programs"].append(r["pid"])
                s["gb_code"] = code
            elif kind == "fp":
                s = sites_over[(where, code)]
                s["programs"].append(r["pid"])
                s["gbl"], s["gb_code"] = gbl, code
    frames = defaultdict(lambda: {"programs": []})
    for r in results:
        for kind, where, fn, outcome in r["frames"]:
            f = frames[(kind, where, fn, outcome)]
            f["programs"].append(r["pid"])
    models = sorted(results, key=lambda r: (-(r["counts"]["site_fn"] + r["counts"]["site_fp"] + r["counts"]["frame_fn"]
                                              + r["counts"]["frame_fp"]), r["pid"]))
    probe_failed = {}
    for lib, store in stores.items():
        reasons = Counter(_reason(m["failed"]) for m in store.data["models"].values() if "failed" in m)
        probe_failed[lib] = {"models_built": sum(1 for m in store.data["models"].values() if "params" in m),
                             "models_failed": sum(reasons.values()), "top_reasons": reasons.most_common(12)}
    return {
        "figures": figures,
        "causes": {code: {"gb_type": types.get(code), **cnt,
                          "recall": ratio(cnt["tp"], cnt["tp"] + cnt["fn"]),
                          "precision": ratio(cnt["tp"], cnt["tp"] + cnt["fp"])}
                   for code, cnt in sorted(causes.items(), key=lambda kv: -(kv[1]["fn"] + kv[1]["fp"]))},
        "sites_missed": [{"where": w, "gb_code": c, "gb_type": types.get(c), "programs": len(v["programs"]),
                          "examples": v["programs"][:5]}
                         for (w, c), v in sorted(sites_missed.items(), key=lambda kv: -len(kv[1]["programs"]))],
        "sites_over_reported": [{"where": w, "gb_code": c, "rule": v["gbl"], "programs": len(v["programs"]),
                                 "examples": v["programs"][:5]}
                                for (w, c), v in sorted(sites_over.items(), key=lambda kv: -len(kv[1]["programs"]))],
        "frames_missed_or_over": [{"kind": k, "where": w, "function": fn, "outcome": o, "programs": len(v["programs"]),
                                   "examples": v["programs"][:5]}
                                  for (k, w, fn, o), v in sorted(frames.items(), key=lambda kv: -len(kv[1]["programs"]))],
        "models_worst_first": [{"program": r["pid"], "lib": r["lib"], **{k: r["counts"][k] for k in
                                ("site_tp", "site_fp", "site_fn", "frame_tp", "frame_fp", "frame_fn")},
                                "observed_breaks": r["observed_breaks"], "predicted_breaks": r["predicted_breaks"]}
                               for r in models],
        "not_scored": {f"{lib}/{mode}": dict(c.most_common()) for (lib, mode), c in sorted(failed.items())},
        "build_failures": probe_failed,
    }


def _reason(text: str) -> str:
    """A failure reason without its numbers, so equal causes group."""
    import re

    text = re.sub(r"\d+", "N", text.split(" at ")[0])
    return text[:110]


def render_markdown(rep: dict) -> str:
    out = ["# gbreak-lint model zoo report", ""]
    out += ["| library/mode | programs | breaking (torch) | predicted | model agree | site P | site R | "
            "frame P | frame R | times exact |", "|---|---|---|---|---|---|---|---|---|---|"]
    for key, f in rep["figures"].items():
        out.append(f"| {key} | {f['programs']} | {f['observed_breaking']} ({f['observed_breaking_pct']}%) | "
                   f"{f['predicted_breaking']} | {f['model_agreement']:.2f} | {f['site_precision']:.2f} | "
                   f"{f['site_recall']:.2f} | {f['frame_precision']:.2f} | {f['frame_recall']:.2f} | "
                   f"{f['times_exact']:.2f} |")
    out += ["", "## Per cause (GB code; site occurrences, one per program)", "",
            "| GB code | gb_type | TP | FN (missed) | FP (over-reported) | recall | precision |", "|---|---|---|---|---|---|---|"]
    for code, c in rep["causes"].items():
        out.append(f"| {code} | {c['gb_type'] or ''} | {c.get('tp', 0)} | {c.get('fn', 0)} | {c.get('fp', 0)} | "
                   f"{c['recall']:.2f} | {c['precision']:.2f} |")
    out += ["", "## Library sites missed most (FN)", "", "| site | GB code | programs | e.g. |", "|---|---|---|---|"]
    for s in rep["sites_missed"][:25]:
        out.append(f"| {s['where']} | {s['gb_code']} {s['gb_type'] or ''} | {s['programs']} | {', '.join(s['examples'][:3])} |")
    out += ["", "## Sites over-reported most (FP)", "", "| site | rule / GB code | programs | e.g. |", "|---|---|---|---|"]
    for s in rep["sites_over_reported"][:25]:
        out.append(f"| {s['where']} | {s['rule']} {s['gb_code']} | {s['programs']} | {', '.join(s['examples'][:3])} |")
    out += ["", "## Frames missed (fn) / over-reported (fp)", "", "| kind | frame | function | outcome | programs |",
            "|---|---|---|---|---|"]
    for f in rep["frames_missed_or_over"][:20]:
        out.append(f"| {f['kind']} | {f['where']} | {f['function']} | {f['outcome']} | {f['programs']} |")
    out += ["", "## Models, worst first", "", "| program | site TP/FP/FN | frame TP/FP/FN | breaks torch / lint |",
            "|---|---|---|---|"]
    for m in rep["models_worst_first"][:40]:
        out.append(f"| {m['program']} ({m['lib']}) | {m['site_tp']}/{m['site_fp']}/{m['site_fn']} | "
                   f"{m['frame_tp']}/{m['frame_fp']}/{m['frame_fn']} | {m['observed_breaks']} / {m['predicted_breaks']} |")
    out += ["", "## Not scored", ""]
    for key, reasons in rep["not_scored"].items():
        for reason, n in list(reasons.items())[:8]:
            out.append(f"- {key}: {n} x {reason}")
    out += ["", "## Models that failed to build or run eagerly", ""]
    for lib, b in rep["build_failures"].items():
        out.append(f"- {lib}: {b['models_built']} built, {b['models_failed']} failed")
        for reason, n in b["top_reasons"][:8]:
            out.append(f"  - {n} x {reason}")
    return "\n".join(out) + "\n"
