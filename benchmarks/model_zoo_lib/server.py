"""The zoo's fork server: run by the zoo environment's python (torch 2.13 + the libraries).

Like benchmarks/difftest_lib/oracle_server.py (whose Switch and warm-up it reuses): torch and
the three libraries are imported once, Dynamo is warmed up, the oracle's hooks are installed,
then every request runs in a fresh fork, so each program starts from the same state.
Requests (one JSON per line on stdin, one answer per line on the original stdout):
  {"op": "candidates", "lib": L}         -> {"candidates": [...]}
  {"op": "probe", "candidate": C}        -> {"params": ...} | {"error": ...}
  {"op": "label", "program": P, "root": R, "timeout": T}
                                         -> the oracle's label (gbreak_lint.oracle.label format,
                                            config nested_graph_breaks=False) plus "errors": the
                                            exceptions that left the program, with their text
"""
from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path


def _fork(fn, timeout: float) -> str:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            answer = fn()
        except BaseException as err:  # noqa: BLE001 - reported to the parent
            answer = {"error": f"{type(err).__name__}: {err}"[:500],
                      "trace": traceback.format_exc()[-1500:]}
        with os.fdopen(w, "w") as out:
            out.write(json.dumps(answer))
        os._exit(0)
    os.close(w)
    from difftest_lib.oracle_server import collect_child

    data = collect_child(r, pid, timeout)
    return data if data else json.dumps({"error": f"timed out after {timeout:.0f} s or died"})


def label_child(oracle, switch, req: dict) -> dict:
    program, root = Path(req["program"]), Path(req["root"])
    rec = oracle.Recorder(root)
    messages = []
    original = rec.on_uncaught

    def on_uncaught(exc):
        messages.append(f"{type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}")
        original(exc)

    rec.on_uncaught = on_uncaught
    switch.current = rec
    os.chdir(program.parent)
    raw = oracle.observe(rec, program, None, [])
    return {"case": program.relative_to(root).as_posix(), "oracle": "gbreak-lint",
            "python": ".".join(map(str, sys.version_info[:3])), "torch": raw["torch"],
            "configs": {"nested_graph_breaks=False": oracle.summarize(raw, root)},
            "errors": messages}


def serve() -> None:
    proto = os.fdopen(os.dup(1), "w")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # the programs' print() must not reach the protocol
    import torch

    torch.set_num_threads(1)
    from difftest_lib.oracle_server import Switch, warm_up
    from gbreak_lint import oracle
    from model_zoo_lib import probe

    for lib in ("transformers", "timm", "diffusers"):
        try:
            __import__(lib)
        except Exception as err:  # noqa: BLE001 - reported per request
            print(f"zoo server: cannot import {lib}: {err}", file=sys.stderr)
    import transformers.models.auto.modeling_auto  # noqa: F401 - the mappings, once

    warm_up(torch)
    switch = Switch()
    oracle.install_hooks(switch)
    proto.write(json.dumps({"ready": True, "torch": torch.__version__}) + "\n")
    proto.flush()
    for line in sys.stdin:
        req = json.loads(line)
        timeout = float(req.get("timeout", 300))
        if req["op"] == "candidates":
            answer = _fork(lambda req=req: {"candidates": probe.candidates(req["lib"])}, timeout)
        elif req["op"] == "probe":
            answer = _fork(lambda req=req: probe.probe(req["candidate"]), timeout)
        elif req["op"] == "label":
            answer = _fork(lambda req=req: label_child(oracle, switch, req), timeout)
        else:
            answer = json.dumps({"error": f"unknown op {req['op']!r}"})
        proto.write(answer + "\n")
        proto.flush()


if __name__ == "__main__":
    serve()
