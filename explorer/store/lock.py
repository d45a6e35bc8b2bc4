"""One ingest at a time per index: an OS lock on a file beside it (`index.db.lock`).

The kernel releases the lock when its process ends, killed or not, so a crash never
leaves the index locked. A second run waits, bounded, and says that it waits.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import ErrorCode, ExplorerError, io_error

RUN_WAIT_SECONDS = 120.0
_POLL_SECONDS = 0.05


def lock_path(db: Path) -> Path:
    return db.with_name(db.name + ".lock")


@contextmanager
def run_lock(db: Path, wait_seconds: float, on_wait: Callable[[str], object]) -> Iterator[None]:
    """Hold the index's run lock; wait at most `wait_seconds` for another run to end."""
    path = lock_path(db)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as error:
        raise io_error("open the lock file", path, error) from None
    try:
        deadline = time.monotonic() + wait_seconds
        waiting = False
        while not _try_lock(fd):
            if time.monotonic() >= deadline:
                raise ExplorerError(
                    ErrorCode.STORE_BUSY,
                    f"another ingest into {str(db)!r} did not end within {wait_seconds:g} s; "
                    "try again later",
                )
            if not waiting:
                on_wait(
                    f"waiting for another ingest into {str(db)!r} to end "
                    f"(at most {wait_seconds:g} s)"
                )
                waiting = True
            time.sleep(_POLL_SECONDS)
        yield
    finally:
        os.close(fd)  # releases the lock


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def run_in_progress(db: Path) -> bool:
    """Whether some process holds the run lock right now (without creating the file)."""
    try:
        fd = os.open(lock_path(db), os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        return not _try_lock(fd)
    finally:
        os.close(fd)
