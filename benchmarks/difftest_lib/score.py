"""One program's label vs the linter, through gbreak_lint.verify (the scorer accuracy.py
uses), plus what verify does not count: GB code mismatches and compile errors (label sites
with outcome "hard_error" vs `compile-error` diagnostics)."""
from __future__ import annotations

from pathlib import Path

from gbreak_lint.verify import CONFIG, compare, observed

EXTRA = ("ce_tp", "ce_fp", "ce_fn", "frame_outcome_mismatch")


def score_program(label: dict, diags: list[dict], root: Path) -> dict:
    """{"counts", "misses": [[kind, detail...]], "signatures", "positive"} for one program."""
    obs = observed(label, root)
    cmp = compare(obs, diags, root)
    counts = dict(cmp.counts, **dict.fromkeys(EXTRA, 0))
    counts.pop("frame_outcome_exact")  # reported here as frame_outcome_mismatch
    misses = [_row_miss(r) for r in cmp.rows if r.get("miss")]
    misses += _gb_code_misses(obs, diags, root)
    misses += _frame_outcome_misses(cmp.rows, counts)
    misses += _compile_error_misses(label, diags, counts)
    misses = [m for m in misses if m]
    return {"counts": counts, "misses": sorted(misses), "positive": bool(obs.sites or obs.frames)}


PRIORITY = ("site_fn", "site_fp", "frame_fn", "frame_fp", "frame_outcome", "gb_code", "times_over",
            "times_under", "compile_error_fn", "compile_error_fp")


def primary(misses: list[list]) -> tuple:
    """The disagreement a program is filed (and shrunk) under: break sites and frames first;
    compile-error and times misses mostly follow from one of those."""
    return signature(min(misses, key=lambda m: (PRIORITY.index(m[0]), [str(x) for x in m])))


def signature(miss: list) -> tuple:
    """What a shrunk program must keep: the kind of miss and its codes, not its line."""
    return tuple(m for m in miss if not str(m).startswith("@"))


def _row_miss(row: dict) -> list:
    where = "@" + row["where"]
    if row["miss"].startswith("OUTCOME"):
        return []  # filed by _frame_outcome_misses, which counts it too
    if row["what"] == "frame":
        kind = "frame_fp" if row["predicted"] else "frame_fn"
        return [kind, row["predicted"] or row["observed"], row["function"], where]
    if row["what"] == "error":
        return []  # filed by _compile_error_misses, which counts it too
    if row["miss"].startswith("FP site"):
        return ["site_fp", row["code"], where]
    if row["miss"].startswith("FN site"):
        return ["site_fn", row["observed"], where]
    direction = "over" if row["predicted_times"] > row["observed_times"] else "under"
    return ["times_" + direction, row["code"], where, f"@{row['predicted_times']}vs{row['observed_times']}"]


def _gb_code_misses(obs, diags: list[dict], root: Path) -> list:
    out = []
    for d in diags:
        if d["kind"] != "graph-break":
            continue
        path = str((root / d["path"]).resolve())
        seen = set()
        for key in obs.sites:
            if key[0] == path and d["line"] <= key[1] <= d["end_line"]:
                seen |= {obs.sites[key]["gb_code"]} | set(obs.site_codes.get(key, {}))
        if seen and d["gb_code"] not in seen:
            out.append(["gb_code", d["code"], d["gb_code"] or "-", "/".join(sorted(str(s) for s in seen)),
                        f"@{d['path']}:{d['line']}"])
    return out


def _frame_outcome_misses(rows: list[dict], counts: dict) -> list:
    out = []
    for r in rows:
        if r["what"] == "frame" and r["predicted"] and r["observed"] and r["predicted"] != r["observed"]:
            counts["frame_outcome_mismatch"] += 1
            out.append(["frame_outcome", r["predicted"], r["observed"], r["function"], "@" + r["where"]])
    return out


def hard_error_sites(label: dict) -> set:
    cfg = label["configs"][CONFIG]
    return {(g["file"], g["line"], g["gb_code"]) for g in cfg["graph_breaks"] if "hard_error" in g["outcomes"]}


def _compile_error_misses(label: dict, diags: list[dict], counts: dict) -> list:
    errors = [d for d in diags if d["kind"] == "compile-error"]
    found, out = set(), []
    for f, line, gb in sorted(hard_error_sites(label)):
        hit = [d for d in errors if d["path"] == f and d["line"] <= line <= d["end_line"]]
        found |= {id(d) for d in hit}
        counts["ce_tp" if hit else "ce_fn"] += 1
        if not hit:
            out.append(["compile_error_fn", gb, f"@{f}:{line}"])
    for d in errors:
        if id(d) not in found:
            counts["ce_fp"] += 1
            out.append(["compile_error_fp", d["code"], f"@{d['path']}:{d['line']}"])
    return out


def usable(label: dict) -> str | None:
    """Why a label cannot be scored (the program failed under torch), or None."""
    cfg = label["configs"][CONFIG]
    if cfg["exit_ok"] or hard_error_sites(label):
        return None
    return "program_failed"
