"""Labels from real torch: the batch server (fast) or gbreak_lint.oracle.label (one fresh
interpreter per program, the reference), with a cache keyed by the program text."""
from __future__ import annotations

import hashlib
import json
import os
import select
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
SERVER = Path(__file__).resolve().parent / "oracle_server.py"
FRESH_ONLY = ("disallow_in_graph",)  # global registries reset() does not undo: fresh interpreter


class LabelFailed(Exception):
    """The oracle gave no label (timeout, crash): the program is dropped, never scored."""


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def fresh_label(program: Path, timeout: float) -> dict:
    from gbreak_lint.oracle import label

    try:
        result = label(program, program.parent, [None], timeout)
    except (subprocess.TimeoutExpired, RuntimeError) as err:
        raise LabelFailed(f"{type(err).__name__}: {str(err)[:300]}") from err
    result.pop("stdout", None)  # labels keep what Dynamo did (as `oracle --all` writes them)
    return result


class BatchOracle:
    """One long-lived child interpreter labelling programs one after the other."""

    def __init__(self, timeout: float, log: Path | None = None):
        self.timeout, self.log, self.proc = timeout, log, None

    def _start(self) -> None:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
        err = open(self.log, "a") if self.log else subprocess.DEVNULL
        self.proc = subprocess.Popen([sys.executable, str(SERVER)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=err, env=env, text=True, bufsize=1)
        self._read(120)  # the "ready" line: torch imported

    def _read(self, timeout: float) -> dict:
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline() if ready else ""
        if not line:
            self.close()
            raise LabelFailed("batch oracle timed out or died")
        return json.loads(line)

    def label(self, program: Path) -> dict:
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        self.proc.stdin.write(json.dumps({"program": str(program), "root": str(program.parent),
                                         "timeout": self.timeout}) + "\n")
        self.proc.stdin.flush()
        answer = self._read(self.timeout + 30)
        if "error" in answer:
            raise LabelFailed(answer["error"])
        return answer

    def close(self) -> None:
        if self.proc is not None:
            self.proc.kill()  # our own child, by its handle
            self.proc.wait()
            self.proc = None


class Labeler:
    """Chooses batch or fresh per program and caches labels by program text."""

    def __init__(self, cache_dir: Path, mode: str, timeout: float, log: Path | None = None):
        self.cache_dir, self.mode, self.timeout = cache_dir, mode, timeout
        self.batch = BatchOracle(timeout, log) if mode == "batch" else None
        cache_dir.mkdir(parents=True, exist_ok=True)

    def label(self, program: Path, text: str, fresh: bool = False) -> dict:
        key = self.cache_dir / f"{text_hash(text)}{'-fresh' if fresh else ''}.json"
        if key.exists():
            return json.loads(key.read_text())
        if fresh or self.batch is None or any(s in text for s in FRESH_ONLY):
            result = fresh_label(program, self.timeout)
        else:
            result = self.batch.label(program)
        key.write_text(json.dumps(result))
        return result

    def close(self) -> None:
        if self.batch is not None:
            self.batch.close()
