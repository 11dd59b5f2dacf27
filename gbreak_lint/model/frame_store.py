"""Frames built by earlier Dynamo tasks of this process, for later tasks to reuse.

Each task models its entries in a fresh `ModelEnv`, and on a large library most of what a
task builds another task built already (a model's output class, the mask helpers, the output
capturing decorators: about half of all frame builds on transformers). A frame's events are a
function of its key, the task's config flags and default dtype, and of what the build saw of
the task: the frames it asked for (`touched`, which a fresh build would make visible in the
same order) and whether frames it only peeked at were built already (`observed`). A stored
frame is reused only when replaying those in the current task gives the same answers, so a
task's result never depends on which tasks ran before it in the process.

A build that met a frame still being built (recursion: that call is not modelled) depends on
the task's call stack and is never stored. Nothing here holds a syntax tree: trees belong to
the task that parsed them (`parse.TREES`).
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from .types import FrameInfo, FrameKey

DEFAULT_LIMIT = 6_000  # frames kept per process (a few kB each; the most reused fit); least recently used go first


@dataclass(frozen=True)
class StoredFrame:
    info: FrameInfo
    touched: tuple[FrameKey, ...]  # env.frame() calls made while building it, in order
    observed: tuple[tuple[int, FrameKey, bool], ...]  # (touched so far, peeked key, was built)
    expressions: frozenset[FrameKey]  # comprehension / lambda frames it registered (and built)
    synthetic: tuple[FrameInfo, ...]  # frames it made up (a hook-calling `_call_impl`)
    reads: frozenset[str]  # modules the build read (an incremental run's dependencies)


@dataclass
class Build:
    """What one frame build saw, collected while it runs."""

    touched: list[FrameKey] = field(default_factory=list)
    observed: list[tuple[int, FrameKey, bool]] = field(default_factory=list)
    expressions: list[FrameKey] = field(default_factory=list)
    synthetic: list[FrameInfo] = field(default_factory=list)
    tainted: bool = False  # met a frame under construction: the result is this task's alone

    def stored(self, info: FrameInfo, reads: frozenset[str]) -> StoredFrame:
        return StoredFrame(info, tuple(self.touched), tuple(self.observed), frozenset(self.expressions),
                           tuple(self.synthetic), reads)


class FrameStore:
    """Least-recently-used frames of this process, per (flags, default dtype) of the task."""

    def __init__(self, limit: int = DEFAULT_LIMIT):
        self.limit = limit
        self._frames: OrderedDict[tuple, StoredFrame] = OrderedDict()

    def get(self, key: tuple) -> StoredFrame | None:
        stored = self._frames.get(key)
        if stored is not None:
            self._frames.move_to_end(key)
        return stored

    def __contains__(self, key: tuple) -> bool:
        return key in self._frames

    def put(self, key: tuple, stored: StoredFrame) -> None:
        if self.limit <= 0:
            return
        self._frames[key] = stored
        self._frames.move_to_end(key)
        while len(self._frames) > self.limit:
            self._frames.popitem(last=False)
