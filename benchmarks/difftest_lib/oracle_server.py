"""Batch oracle, child side: a fork server that imports torch once and labels each program
in a forked child.

Run as a script by labeler.BatchOracle.  Reads one JSON request per line on stdin
({"program", "root", "nested"}), answers one label per line in the format of
gbreak_lint.oracle.label (without "stdout") on the file descriptor that was stdout; the
programs' own output goes to /dev/null.  Why fork: running programs one after the other in
one interpreter, even with torch._dynamo.reset() between them, changed labels (a later
program's `<dictcomp>` frame was no longer reported skipped); a child forked from a server
that has only imported torch and warmed Dynamo up on a throw-away function starts every
program from the same state.  Each child replays oracle.run_child
(tests/test_difftest.py checks the labels equal the per-process oracle's).
"""
from __future__ import annotations

import json
import os
import select
import signal
import sys
from pathlib import Path



class Switch:
    """Stands in for the Recorder in the hooks installed once; forwards to the current one."""
    current = None

    def on_graph_break(self, *args):
        if self.current is not None:
            self.current.on_graph_break(*args)

    def on_frame(self, *args):
        if self.current is not None:
            self.current.on_frame(*args)

    def on_assert_frame(self, *args):
        if self.current is not None:
            self.current.on_assert_frame(*args)


def run_program(oracle, torch, switch, program: Path, root: Path, nested) -> dict:
    """oracle.run_child, minus the interpreter start-up; returns the raw observations."""
    rec = oracle.Recorder(root)
    switch.current = rec
    os.chdir(program.parent)
    try:
        return oracle.observe(rec, program, nested, [])
    finally:
        switch.current = None
        sys.path.remove(str(program.parent))


def label_one(oracle, torch, switch, req: dict) -> dict:
    program, root = Path(req["program"]), Path(req["root"])
    raw = run_program(oracle, torch, switch, program, root, req.get("nested"))
    name = f"nested_graph_breaks={'True' if req.get('nested') == 'on' else 'False'}"
    return {"case": program.relative_to(root).as_posix(), "oracle": "gbreak-lint",
            "python": ".".join(map(str, sys.version_info[:3])), "torch": raw["torch"],
            "configs": {name: oracle.summarize(raw, root)}}


def warm_up(torch) -> None:
    """First compilations import and initialise lazily (~2 s); do it once, before forking."""
    def f(x):
        x = x + 1
        torch._dynamo.graph_break()
        return x * 2
    torch.compile(f, backend="eager")(torch.ones(2))
    torch._dynamo.reset()


def in_child(oracle, torch, switch, req: dict, out_fd: int) -> None:
    try:
        answer = label_one(oracle, torch, switch, req)
    except BaseException as err:  # noqa: BLE001 - reported to the parent, which drops the program
        answer = {"error": f"{type(err).__name__}: {err}"}
    with os.fdopen(out_fd, "w") as out:
        out.write(json.dumps(answer))
    os._exit(0)  # no atexit handlers, no flushing of the server's buffers


def fork_label(oracle, torch, switch, req: dict, timeout: float) -> str:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        in_child(oracle, torch, switch, req, w)
    os.close(w)
    data = collect_child(r, pid, timeout)
    return data if data else json.dumps({"error": "oracle child timed out or died"})


def collect_child(r: int, pid: int, timeout: float) -> str:
    """What a forked child writes to its pipe `r` until it closes it; killed (and "" so far
    or nothing) when it stays silent for `timeout` seconds."""
    chunks = []
    with os.fdopen(r, "rb") as pipe:
        while select.select([pipe], [], [], timeout)[0]:
            chunk = pipe.read1(1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
        else:
            os.kill(pid, signal.SIGKILL)  # our own forked child
    os.waitpid(pid, 0)
    return b"".join(chunks).decode()


def serve() -> None:
    proto = os.fdopen(os.dup(1), "w")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # print() in programs (and C-level output) must not reach the protocol
    import torch
    from gbreak_lint import oracle

    warm_up(torch)
    switch = Switch()
    oracle.install_hooks(switch)
    proto.write(json.dumps({"ready": True}) + "\n")
    proto.flush()
    for line in sys.stdin:
        req = json.loads(line)
        proto.write(fork_label(oracle, torch, switch, req, float(req.get("timeout", 60))) + "\n")
        proto.flush()


if __name__ == "__main__":
    serve()
