"""Print the knowledge file's `number_parameters` entry for the ops named on the command line.

Maintainer tool (imports torch; the linter never does). It reads the ATen schemas of the
installed torch: a parameter takes a Python number when no overload of the op takes a tensor at
that position (or under that keyword) and some overload takes an int, a float, a Scalar or a
size there. Dynamo cannot pass a fake tensor's value to such a parameter: a tensor there breaks
the graph ("Data dependent operator", GB0033). Measure every op you add (see the knowledge
file) before trusting the schema: Dynamo special-cases some (torch.full's fill value, F.pad).

    python tools/number_parameters.py zeros view narrow ...
"""
from __future__ import annotations

import re
import sys
from collections import defaultdict

NUMBER = re.compile(r"(Sym)?[Ii]nt\??|float\??|Scalar\??")
SIZE = re.compile(r"(Sym)?[Ii]nt\[\d*\]\??|float\[\]\??")


def _kind(declared: str) -> str:
    if "Tensor" in declared:
        return "tensor"
    if SIZE.fullmatch(declared):
        return "size"
    if NUMBER.fullmatch(declared):
        return "number"
    return "other"


def _parameters(schema: str) -> list[tuple[str, str, bool]]:
    """(name, declared type, keyword-only) of `aten::op.overload(Type name=default, *, ...) -> ...`."""
    inner = schema[schema.index("(") + 1: schema.rindex(") ->")]
    params, depth, start = [], 0, 0
    for i, ch in enumerate(inner + ","):
        depth += ch in "([" and 1 or ch in ")]" and -1 or 0
        if ch == "," and depth == 0:
            params.append(inner[start:i].strip())
            start = i + 1
    out, kw_only = [], False
    for p in params:
        if p == "*":
            kw_only = True
            continue
        declared, name = p.split("=")[0].rsplit(" ", 1)
        out.append((name, re.sub(r"\(\w!?\)", "", declared), kw_only))
    return out


def _mark(kinds: set[str]) -> str:
    if "tensor" in kinds:
        return ""
    return "*" if "size" in kinds else "#" if "number" in kinds else ""


def signature(schemas: list[str]) -> dict[str, list[str]]:
    positions: dict[int, set[str]] = defaultdict(set)
    names: dict[int, str] = {}
    keywords: dict[str, set[str]] = defaultdict(set)
    for schema in schemas:
        if not re.search(r"-> \(?Tensor", schema):
            continue  # TorchScript's scalar overloads (aten::add.int -> int) are not the tensor op
        params = _parameters(schema)
        for i, (name, declared, _) in enumerate(p for p in params if not p[2]):
            positions[i].add(_kind(declared))
            if _kind(declared) in ("number", "size") or i not in names:
                names[i] = name
        for name, declared, _ in params:
            keywords[name].add(_kind(declared))
    return {"positional": [names[i] + _mark(positions[i]) for i in sorted(positions)],
            "keywords": [name + _mark(kinds) for name, kinds in keywords.items() if _mark(kinds)]}


def main(ops: list[str]) -> None:
    import torch  # noqa: PLC0415  (a maintainer tool: the linter itself never imports torch)

    by_op: dict[str, list[str]] = defaultdict(list)
    for s in torch._C._jit_get_all_schemas():
        text = str(s)
        if not s.name.startswith("aten::") or s.overload_name.endswith("out") or "Dimname" in text:
            continue
        by_op[s.name[len("aten::"):]].append(text)
    for op in ops:
        if op not in by_op:
            print(f"  # {op}: no ATen schema")
            continue
        sig = signature(by_op[op])
        print(f"  {op}: {{positional: [{', '.join(sig['positional'])}], keywords: [{', '.join(sig['keywords'])}]}}")


if __name__ == "__main__":
    main(sys.argv[1:])
