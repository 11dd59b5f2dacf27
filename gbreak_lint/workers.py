"""`fn` over items in forked worker processes, in order, never hanging on a worker's failure.

A worker can fail three ways, and none may stop the scan or make it wait forever:
- `fn` raises, or its result cannot be sent back (a deep result overflows the pickler's
  recursion): the item is run again in this process, where nothing is pickled;
- the worker dies (a crash in native code, the OOM killer): every item it had not finished is
  run again, one forked process per item, so a crash costs only its own item;
- a worker stops answering: after `stall_seconds` without any result the pool is killed and
  its unfinished items are treated as above, with the same limit per item.
An item that fails again becomes `on_failure(item, reason)`: a per-file error in the report.

A worker's memory grows as it works: every inherited page it touches (a reference count is a
write) becomes its own copy, and its caches fill. With `pool_chunks` a fresh pool is forked
after that many chunks, so the growth is bounded by what one round does, not by the repository.
"""
from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Callable, Iterator

DEFAULT_STALL_SECONDS = 900.0  # no result for this long: the worker is stuck


def stall_seconds() -> float:
    try:
        return float(os.environ.get("GBREAK_LINT_WORKER_TIMEOUT", DEFAULT_STALL_SECONDS))
    except ValueError:
        return DEFAULT_STALL_SECONDS


class _Failed:
    """What a worker sends back for an item whose `fn` raised (the item is retried here)."""

    def __init__(self, reason: str):
        self.reason = reason


def _run_chunk(fn: Callable, items: list) -> list:
    out = []
    for item in items:
        try:
            out.append(fn(item))
        except Exception as err:  # noqa: BLE001 - retried in the parent, which reports it
            out.append(_Failed(f"{type(err).__name__}: {err}"[:300]))
    return out


def robust_map(fn: Callable, items: list, jobs: int, chunk: int, initializer: Callable | None,
               on_failure: Callable[[object, str], object], pool_chunks: int | None = None) -> Iterator:
    """`fn(item)` for each item, in order, using `jobs` forked workers (a fresh pool of them
    every `pool_chunks` chunks of `chunk` items, if given)."""
    chunks = [items[i:i + chunk] for i in range(0, len(items), chunk)]
    while chunks:
        batch = chunks[:pool_chunks] if pool_chunks else chunks
        failed_at = yield from _pool_run(fn, batch, jobs, initializer, on_failure)
        if failed_at is None:
            chunks = chunks[len(batch):]
            continue
        # The pool broke or stalled: the chunk being waited for runs item by item in processes
        # of their own; the chunks after it get a fresh pool (each break isolates one chunk,
        # so this ends).
        yield from (_isolated(fn, item, initializer, on_failure) for item in chunks[failed_at])
        chunks = chunks[failed_at + 1:]


def _pool_run(fn, chunks: list[list], jobs: int, initializer, on_failure):
    """Yields results in order; returns None when done, or the index of the chunk whose
    results could not be had (the pool is then gone)."""
    pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"), initializer=initializer)
    futures = [pool.submit(_run_chunk, fn, c) for c in chunks]
    try:
        for position, future in enumerate(futures):
            results = _result(future, futures[position:], len(chunks[position]))
            if results is None:
                return position
            for item, result in zip(chunks[position], results):
                yield _retry_here(fn, item, on_failure) if isinstance(result, _Failed) else result
        return None
    finally:
        _kill(pool)


def _result(future, pending: list, size: int) -> list | None:
    """The chunk's results; None when the pool broke or stalled before giving them."""
    limit = stall_seconds()
    while not future.done():
        done, _ = wait(pending, timeout=limit, return_when=FIRST_COMPLETED)
        if not done:
            return None  # nothing finished for `limit` seconds: stuck
        pending = [f for f in pending if not f.done()]
    try:
        return future.result()
    except BrokenProcessPool:
        return None
    except Exception:  # noqa: BLE001 - the results could not be sent back (pickling): rerun here
        return [_Failed("result could not be sent back from the worker")] * size


def _kill(pool: ProcessPoolExecutor) -> None:
    for process in list((pool._processes or {}).values()):
        if process.is_alive():
            process.kill()
    pool.shutdown(wait=False, cancel_futures=True)


def _retry_here(fn: Callable, item, on_failure: Callable):
    try:
        return fn(item)
    except RecursionError:
        return on_failure(item, "too deeply nested to analyse")
    except Exception as err:  # noqa: BLE001
        if os.environ.get("GBREAK_LINT_DEBUG"):
            raise
        return on_failure(item, f"internal error: {type(err).__name__}: {err}"[:300])


def _isolated(fn: Callable, item, initializer: Callable | None, on_failure: Callable):
    """`fn(item)` in a process of its own, so a crash or a hang costs only this item."""
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(1, mp_context=context, initializer=initializer) as pool:
        future = pool.submit(_run_chunk, fn, [item])
        done, _ = wait([future], timeout=stall_seconds())
        if not done:
            _kill(pool)
            return on_failure(item, f"analysis did not finish within {stall_seconds():.0f} s; skipped")
        try:
            (result,) = future.result()
        except BrokenProcessPool:
            return on_failure(item, "the worker process analysing it died (crash or out of memory)")
        except Exception:  # noqa: BLE001 - only the sending back failed: run it here
            return _retry_here(fn, item, on_failure)
    return _retry_here(fn, item, on_failure) if isinstance(result, _Failed) else result

