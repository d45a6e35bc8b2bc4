"""Numbered pieces of work done in this process or spread over forked processes, their
results taken in order (`index --workers N`, `validate --workers N`).

A `Spread` runs `work(0)`, `work(1)`, … `work(count - 1)` and yields the results in
that order. `IN_TURN` does it here. `Spread(n)` forks n children that start with all
this process holds (the documents, the loaded tokenizer): child w does items w, w + n,
w + 2n… and sends each result back through a pipe as it is done, while this process
takes them in order. A child holds at most one result that this process has not taken
(its pipe blocks it), so memory stays bounded whatever the count; one that has sent a
refusal stops.
"""

from __future__ import annotations

import gc
import os
import pickle
import signal
from collections.abc import Callable, Generator
from contextlib import suppress
from dataclasses import dataclass
from typing import Any, BinaryIO, TypeVar, cast

from .errors import ErrorCode, ExplorerError

T = TypeVar("T")

# A call's outcome as a child sends it, in plain values (an exception's own pickling may
# not round-trip): ("value", value, ""), ("refused", code, detail) or ("failed", None,
# description) for anything else raised.
Outcome = tuple[str, object, str]
_LENGTH = 8  # the bytes before each pickled outcome: its length


class Failed(Exception):
    """The call raised something other than an `ExplorerError`: its type and message."""


def outcome(function: Callable[..., object], *args: Any) -> Outcome:
    """`function(*args)` as plain values, whatever it raises (even RecursionError)."""
    try:
        return ("value", function(*args), "")
    except ExplorerError as error:
        return ("refused", error.code.value, error.detail)
    except BaseException as error:
        return ("failed", None, describe_failure(error))


def unpacked(answer: Outcome) -> object:
    """The value of an outcome, or what it raised: the `ExplorerError` as it was, or
    `Failed`."""
    kind, value, detail = answer
    if kind == "refused":
        raise ExplorerError(ErrorCode(str(value)), detail)
    if kind == "failed":
        raise Failed(detail)
    return value


def describe_failure(error: BaseException) -> str:
    """`Type: first line of the message`, shortened: one line, whatever was raised."""
    message = str(error).strip().splitlines()
    first = message[0] if message else ""
    kind = type(error)
    name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
    text = f"{name}: {first}" if first else name
    return text if len(text) <= 200 else text[:199] + "…"


@dataclass(frozen=True)
class Spread:
    """Runs `work` on each of `count` items and yields the results in order, in this
    process (`workers` 1) or in that many forked children; closing the generator stops
    the work and its processes."""

    workers: int = 1

    def __call__(self, work: Callable[[int], T], count: int) -> Generator[T, None, None]:
        if self.workers <= 1 or count <= 1:
            return _here(work, count)
        return _in_children(work, count, min(self.workers, count))


IN_TURN = Spread(1)


def cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _here(work: Callable[[int], T], count: int) -> Generator[T, None, None]:
    for item in range(count):
        yield work(item)


def _in_children(work: Callable[[int], T], count: int, workers: int) -> Generator[T, None, None]:
    children: list[tuple[int, BinaryIO]] = []
    try:
        for first in range(workers):
            ours, theirs = os.pipe()
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child (its results are what tests check)
                os.close(ours)
                _serve(work, range(first, count, workers), theirs)
            os.close(theirs)
            children.append((pid, os.fdopen(ours, "rb")))
        for item in range(count):
            pid, stream = children[item % workers]
            yield cast(T, unpacked(_receive(stream, pid)))
    finally:
        for pid, stream in children:
            stream.close()
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            with suppress(ChildProcessError):  # reaped already when it was lost
                os.waitpid(pid, 0)


def _serve(work: Callable[[int], object], items: range, fd: int) -> None:  # pragma: no cover
    """The child: each of its items done and sent, then gone (never back to the caller's
    code). It keeps no descriptor but the standard three and its pipe, so it dies of a
    closed pipe when the parent dies, and holds open no pipe of the parent's."""
    code = 0
    try:
        keep_only(fd)
        # What the parent built is read, never freed, here: out of the collector's sight,
        # it is neither walked again nor copied page by page.
        gc.freeze()
        with os.fdopen(fd, "wb") as pipe:
            for item in items:
                answer = outcome(work, item)
                data = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
                pipe.write(len(data).to_bytes(_LENGTH, "little"))
                pipe.write(data)
                pipe.flush()
                if answer[0] != "value":
                    break
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def _receive(stream: BinaryIO, pid: int) -> Outcome:
    head = stream.read(_LENGTH)
    length = int.from_bytes(head, "little") if len(head) == _LENGTH else 0
    data = stream.read(length) if length else b""
    if not length or len(data) != length:
        _, status = os.waitpid(pid, 0)
        ended = (
            f"killed by signal {os.WTERMSIG(status)}"
            if os.WIFSIGNALED(status)
            else f"exit code {os.waitstatus_to_exitcode(status)}"
        )
        raise ExplorerError(
            ErrorCode.WORKER_LOST,
            f"a worker process ended before sending its result ({ended}); "
            "--workers 1 does the work in this process",
        )
    answer: Outcome = pickle.loads(data)
    return answer


def keep_only(fd: int) -> None:  # pragma: no cover - in a child
    """In a forked child: every descriptor closed but the standard three and `fd`. A pipe
    the parent holds (to a browser's driver, to a reader of its output) must close when
    the parent closes it, not when a child of it ends."""
    os.closerange(3, fd)
    try:
        most = max(os.sysconf("SC_OPEN_MAX"), 1024)
    except (OSError, ValueError):
        most = 65_536
    os.closerange(fd + 1, most)
