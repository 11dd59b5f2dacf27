"""Writing files safely: old or new content on disk, never a partial file."""
from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


class NotReadable(OSError):
    """Not a regular file of an acceptable size."""


def read_regular(path: Path, limit: int) -> bytes:
    """The bytes of a regular file of at most `limit` bytes; OSError (NotReadable) otherwise.
    Opened without following a final symlink and without blocking, so a FIFO, device or link
    planted under an expected name can neither hang the reader nor feed it another file."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotReadable("not a regular file")
        if info.st_size > limit:
            raise NotReadable(f"file too large to analyse ({info.st_size} bytes)")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(limit + 1)
        if len(data) > limit:
            raise NotReadable(f"file too large to analyse (over {limit} bytes)")
        return data
    finally:
        os.close(fd)


def read_regular_file(path: Path, limit: int) -> bytes | None:
    """`read_regular`, or None when it fails (callers that only need the bytes)."""
    try:
        return read_regular(path, limit)
    except OSError:
        return None


def atomic_write(path: Path, data: bytes) -> None:
    """Write a sibling temp file (fsynced), keep an existing file's permissions, then rename."""
    path = path.resolve()
    mode = path.stat().st_mode if path.exists() else None
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".gbreak-tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
