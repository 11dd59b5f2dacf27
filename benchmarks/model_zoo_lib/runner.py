"""Labelling: probe each model once, write its programs, label them with the oracle under the
zoo interpreter. Resumable (a program already in the store for the same parameters is not
run again; a model whose probe failed is not probed again unless --retry-failed), parallel
(--jobs servers), polite (nice 19, one thread per server, waits while the benchmark lock
file exists before each probe and each program)."""
from __future__ import annotations

import json
import os
import queue
import select
import subprocess
import threading
import time
from pathlib import Path

from model_zoo_lib.render import MODES, file_name, params_hash, program_id, render
from model_zoo_lib.store import Store, compact

BENCH = Path(__file__).resolve().parent.parent
REPO = BENCH.parent
SERVER = Path(__file__).resolve().parent / "server.py"
LOCK = Path("/tmp/gbreak-bench.lock")


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def wait_for_lock(lock: Path = LOCK, poll: float = 5.0) -> None:
    """The lead's benchmarks hold this file while they measure: run nothing meanwhile."""
    announced = False
    while lock.exists():
        if not announced:
            log(f"{lock} exists: waiting")
            announced = True
        time.sleep(poll)


class ServerFailed(Exception):
    pass


class ZooServer:
    """One fork server under the zoo interpreter (nice 19, 1 thread)."""

    def __init__(self, python: str, log_path: Path | None = None):
        self.python, self.log_path, self.proc = python, log_path, None

    def start(self) -> None:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), str(BENCH)]), OMP_NUM_THREADS="1",
                   MKL_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false", HF_HUB_OFFLINE="1",
                   TRANSFORMERS_OFFLINE="1", TRANSFORMERS_VERBOSITY="error", DIFFUSERS_VERBOSITY="error",
                   TORCHINDUCTOR_COMPILE_THREADS="1", PYTHONWARNINGS="ignore")
        err = open(self.log_path, "a") if self.log_path else subprocess.DEVNULL
        self.proc = subprocess.Popen(["nice", "-n", "19", self.python, str(SERVER)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=err, env=env, text=True, bufsize=1)
        self.ready = self._read(300)

    def _read(self, timeout: float) -> dict:
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline() if ready else ""
        if not line:
            self.close()
            raise ServerFailed("zoo server timed out or died")
        return json.loads(line)

    def ask(self, req: dict, timeout: float) -> dict:
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        self.proc.stdin.write(json.dumps(dict(req, timeout=timeout)) + "\n")
        self.proc.stdin.flush()
        return self._read(timeout + 60)

    def close(self) -> None:
        if self.proc is not None:
            self.proc.kill()  # our own child, by its handle
            self.proc.wait()
            self.proc = None


def program_path(work: Path, params: dict, mode: str) -> Path:
    name = file_name(params, mode)
    return work / "programs" / params["lib"] / name[:-3] / name


def write_program(work: Path, params: dict, mode: str, version: str) -> Path:
    path = program_path(work, params, mode)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = render(params, mode, version)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
    return path


def select_timm(cands: list[dict], store: Store) -> list[list[dict]]:
    """timm: per model module, groups of candidates; the spares stand in for failures."""
    groups: dict = {}
    for c in cands:
        groups.setdefault(c["module"], []).append(c)
    return list(groups.values())


class Labeller:
    def __init__(self, python: str, work: Path, stores: dict, versions: dict, jobs: int = 1,
                 timeout: float = 300, probe_timeout: float = 180, retry_failed: bool = False,
                 lock: Path = LOCK, server_factory=None):
        self.server_factory = server_factory or (lambda i: ZooServer(python, work / f"server-{i}.log"))
        self.python, self.work, self.stores, self.versions = python, work, stores, versions
        self.jobs, self.timeout, self.probe_timeout = max(1, jobs), timeout, probe_timeout
        self.retry_failed, self.lock = retry_failed, lock
        self.stats = {"probed": 0, "probe_failed": 0, "labelled": 0, "label_failed": 0, "skipped": 0}
        self._stats_lock = threading.Lock()

    def count(self, key: str) -> None:
        with self._stats_lock:
            self.stats[key] += 1

    def candidates(self, server: ZooServer, lib: str) -> list[dict]:
        answer = server.ask({"op": "candidates", "lib": lib}, 300)
        if "error" in answer:
            raise SystemExit(f"cannot enumerate {lib} models: {answer['error']}\n{answer.get('trace', '')}")
        return answer["candidates"]

    def run(self, libs: list[str], limit: int | None, only: set | None, modes=MODES) -> dict:
        self.work.mkdir(parents=True, exist_ok=True)
        wait_for_lock(self.lock)
        servers = [self.server_factory(i) for i in range(self.jobs)]
        tasks: queue.Queue = queue.Queue()
        per_lib = []
        try:
            for lib in libs:
                cands = self.candidates(servers[0], lib)
                if only:
                    cands = [c for c in cands if c["name"] in only]
                groups = select_timm(cands, self.stores[lib]) if lib == "timm" else [[c] for c in cands]
                if limit is not None:
                    groups = groups[:limit]
                log(f"{lib}: {len(groups)} model groups to cover")
                per_lib.append(groups)
            for i in range(max((len(g) for g in per_lib), default=0)):  # round robin over libraries
                for groups in per_lib:
                    if i < len(groups):
                        tasks.put(groups[i])
            threads = [threading.Thread(target=self._worker, args=(s, tasks, modes), daemon=True) for s in servers]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        finally:
            for s in servers:
                s.close()
        return self.stats

    def _worker(self, server: ZooServer, tasks: queue.Queue, modes) -> None:
        while True:
            try:
                group = tasks.get_nowait()
            except queue.Empty:
                return
            want = max(1, sum(1 for c in group if not c.get("spare")))
            done = 0
            for cand in group:  # spares come last: reached only when an earlier one fails
                if done >= want:
                    break
                try:
                    if self._model(server, cand, modes):
                        done += 1
                except ServerFailed as err:
                    log(f"{cand['name']}: {err}; restarting the server")
                    server.close()

    def _model(self, server: ZooServer, cand: dict, modes) -> bool:
        lib, name = cand["lib"], cand["name"]
        store = self.stores[lib]
        entry = store.model(name)
        if entry is None or ("failed" in entry and self.retry_failed):
            wait_for_lock(self.lock)
            t0 = time.time()
            answer = server.ask({"op": "probe", "candidate": cand}, self.probe_timeout)
            if "params" in answer:
                entry = {"params": answer["params"]}
                self.count("probed")
            else:
                entry = {"failed": answer.get("error", "?"), "errors": answer.get("errors", [])[:3]}
                self.count("probe_failed")
            store.set_model(name, entry)
            log(f"{lib} {name}: probe {'ok' if 'params' in entry else 'FAILED: ' + entry['failed'][:160]}"
                f" ({time.time() - t0:.1f} s)")
        if "params" not in entry:
            return False
        params = entry["params"]
        h = params_hash(params)
        for mode in modes:
            pid = program_id(params, mode)
            if store.labelled(pid, h):
                self.count("skipped")
                continue
            wait_for_lock(self.lock)
            path = write_program(self.work, params, mode, self.versions[lib])
            t0 = time.time()
            answer = server.ask({"op": "label", "program": str(path), "root": str(path.parent)}, self.timeout)
            record = {"model": name, "mode": mode, "params_hash": h, "seconds": round(time.time() - t0, 1)}
            if "configs" in answer:
                record["label"] = compact(answer)
                self.count("labelled")
                store.set_program(pid, record, answer.get("torch"), answer.get("python"))
                lab = record["label"]
                log(f"{lib} {pid}: {len(lab['graph_breaks'])} program + {len(lab['installed_breaks'])} library "
                    f"break sites, {len(lab['skipped_frames'])} skipped frames, exit_ok={lab['exit_ok']} "
                    f"({record['seconds']} s)")
            else:
                record["failed"] = answer.get("error", "?")[:300]
                self.count("label_failed")
                store.set_program(pid, record)
                log(f"{lib} {pid}: oracle FAILED: {record['failed'][:160]}")
        return True
