"""Worker failures never hang a scan: each becomes a retry or a per-item error."""
import os
import sys
import time

import pytest

from gbreak_lint.workers import robust_map


def _square(x):
    return x * x


def _dies_on_three(x):
    if x == 3:
        os._exit(9)  # a crash in native code looks like this to the parent
    return x * x


def _raises_in_worker(x):
    if x == 2 and os.getpid() != PARENT:
        raise ValueError("only in a worker")
    return x * x


class _Deep:
    def __init__(self, depth):
        self.child = _Deep(depth - 1) if depth else None


def _deep_result(x):
    # deeper than the pickler can go: sending it back fails in the worker, not here
    if x == 1:
        node = None
        for _ in range(200_000):
            holder = _Deep(0)
            holder.child = node
            node = holder
        return ("deep", x) if os.getpid() == PARENT else node
    return x


def _stalls(x):
    if x == 1 and os.getpid() != PARENT:
        time.sleep(60)
    return x


def _always_fails(x):
    raise RuntimeError("broken")


PARENT = os.getpid()


def run(fn, items, **kw):
    return list(robust_map(fn, items, 2, 1, None, lambda item, reason: ("failed", item, reason), **kw))


def test_plain_map_in_order():
    assert run(_square, list(range(10))) == [x * x for x in range(10)]


def test_dead_worker_costs_only_its_item():
    out = run(_dies_on_three, list(range(6)))
    assert out[:3] == [0, 1, 4] and out[4:] == [16, 25]
    assert out[3][0] == "failed" and "died" in out[3][2]


def test_exception_in_worker_is_retried_in_process():
    assert run(_raises_in_worker, [1, 2, 3]) == [1, 4, 9]


def test_result_too_deep_to_send_back_is_computed_in_process():
    old = sys.getrecursionlimit()
    assert run(_deep_result, [0, 1, 2]) == [0, ("deep", 1), 2]
    assert sys.getrecursionlimit() == old


def test_stuck_worker_is_killed_within_the_limit(monkeypatch):
    monkeypatch.setenv("GBREAK_LINT_WORKER_TIMEOUT", "2")
    start = time.monotonic()
    out = run(_stalls, [0, 1, 2])
    assert time.monotonic() - start < 30
    assert out[0] == 0 and out[2] == 2 and out[1][0] == "failed" and "did not finish" in out[1][2]


def test_item_failing_everywhere_is_reported():
    out = run(_always_fails, [1, 2])
    assert all(o[0] == "failed" and "broken" in o[2] for o in out)


@pytest.mark.parametrize("jobs", [1])
def test_single_job_still_works(jobs):
    assert list(robust_map(_square, [1, 2], jobs, 1, None, lambda i, r: None)) == [1, 4]


def _pid(x):
    return x, os.getpid()


def test_fresh_pool_every_round_keeps_order_and_results():
    """`pool_chunks`: workers are replaced between rounds (their grown memory is freed), and
    the results are those of one pool, in order; a failure inside a later round still costs
    only its item."""
    out = list(robust_map(_pid, list(range(8)), 2, 1, None, lambda i, r: None, pool_chunks=2))
    assert [x for x, _ in out] == list(range(8))
    rounds = [{pid for _, pid in out[i:i + 2]} for i in range(0, 8, 2)]
    assert all(not (a & b) for a, b in zip(rounds, rounds[1:]))  # no worker outlives its round
    assert PARENT not in {pid for _, pid in out}
    failing = list(robust_map(_dies_on_three, list(range(6)), 2, 1, None,
                              lambda item, reason: ("failed", item), pool_chunks=2))
    assert failing[:3] == [0, 1, 4] and failing[3] == ("failed", 3) and failing[4:] == [16, 25]
