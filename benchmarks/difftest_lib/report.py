"""Aggregate per-program scores by construct, cause and context; report.json and a table."""
from __future__ import annotations

from collections import Counter

from gbreak_lint.verify import Comparison, ratio

from .score import EXTRA


def group_keys(meta: dict) -> dict[str, list[str]]:
    """The report groups a program belongs to (a construct once, however often it is nested)."""
    ctx = meta["context"]
    return {
        "constructs": sorted({c["construct"] for c in meta["constructs"]}),
        "causes": [meta["cause"]],
        "contexts": [f"entry:{ctx['entry']}", f"wrapper:{ctx['wrapper']}",
                     f"nested:{'on' if ctx['nested_graph_breaks'] else 'off'}", f"placement:{ctx['placement']}"],
    }


def figures(counts: Counter, programs: int, positives: int) -> dict:
    f = Comparison(counts=dict(counts)).figures()
    tp = counts["site_tp"] + counts["frame_tp"] + counts["ce_tp"]
    wrong = sum(counts[k] for k in ("site_fp", "site_fn", "frame_fp", "frame_fn", "ce_fp", "ce_fn"))
    return {"programs": programs, "positives": positives, "negatives": programs - positives,
            "site_p": f["site_precision"], "site_r": f["site_recall"],
            "frame_p": f["frame_precision"], "frame_r": f["frame_recall"],
            "times_exact": f["times_traced_exact"], "gb_exact": f["gb_code_exact"],
            "compile_error_r": ratio(counts["ce_tp"], counts["ce_tp"] + counts["ce_fn"]),
            "compile_error_p": ratio(counts["ce_tp"], counts["ce_tp"] + counts["ce_fp"]),
            "f1": ratio(2 * tp, 2 * tp + wrong), "disagreeing": counts["_disagreeing"],
            "counts": {k: v for k, v in sorted(counts.items()) if not k.startswith("_")}}


def aggregate(results: list[dict]) -> dict:
    """results: [{"meta", "score"}] of scored programs -> the report's group sections."""
    groups: dict[str, dict[str, list]] = {"constructs": {}, "causes": {}, "contexts": {}}
    for r in results:
        for section, keys in group_keys(r["meta"]).items():
            for key in keys:
                groups[section].setdefault(key, []).append(r["score"])
    out = {section: {k: _figures_of(v) for k, v in sorted(g.items())} for section, g in groups.items()}
    out["overall"] = _figures_of([r["score"] for r in results])
    return out


def _figures_of(scores: list[dict]) -> dict:
    total: Counter = Counter(dict.fromkeys(list(Comparison().counts) + list(EXTRA), 0))
    for s in scores:
        total.update(s["counts"])
        total["_disagreeing"] += bool(s["misses"])
    return figures(total, len(scores), sum(s["positive"] for s in scores))


def table(report: dict, section: str) -> str:
    rows = sorted(report[section].items(), key=lambda kv: (kv[1]["f1"], kv[0]))
    head = (f"{section[:-1]:<34} {'progs':>5} {'pos':>4} {'neg':>4} {'dis':>4} {'F1':>5} {'siteP':>5} {'siteR':>5} "
            f"{'frmP':>5} {'frmR':>5} {'times':>5} {'gb':>5} {'ceR':>5}")
    lines = [head, "-" * len(head)]
    for name, f in rows + [("OVERALL", report["overall"])]:
        lines.append(f"{name:<34} {f['programs']:>5} {f['positives']:>4} {f['negatives']:>4} {f['disagreeing']:>4} "
                     f"{f['f1']:>5.2f} {f['site_p']:>5.2f} {f['site_r']:>5.2f} {f['frame_p']:>5.2f} "
                     f"{f['frame_r']:>5.2f} {f['times_exact']:>5.2f} {f['gb_exact']:>5.2f} {f['compile_error_r']:>5.2f}")
    return "\n".join(lines)
