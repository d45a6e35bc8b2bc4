"""Numbered pieces of work done in this process or spread over forked processes, their
results taken in order (`index --workers N`, `validate --workers N`).

A `Spread` runs `work(0)`, `work(1)`, … `work(count - 1)` and yields the results in
that order. `IN_TURN` does it here. `Spread(n)` forks n children that start with all
this process holds (the documents, the loaded tokenizer); each takes the next item
number from a shared pipe when it is free, does it and sends the result back through a
pipe of its own, while this process yields the results in order. Items are handed out
only a few per child past the one awaited, so the results held stay bounded whatever
the count; a child that has sent a refusal stops.
"""

from __future__ import annotations

import gc
import os
import pickle
import selectors
import signal
from collections.abc import Callable, Generator, Iterable
from contextlib import suppress
from dataclasses import dataclass
from functools import cache
from typing import Any, TypeVar, cast

from .errors import ErrorCode, ExplorerError

T = TypeVar("T")

# A call's outcome as a child sends it, in plain values (an exception's own pickling may
# not round-trip): ("value", value, ""), ("refused", code, detail), ("raised", error,
# description) for one of Python's own exceptions when asked for (`outcome`), or
# ("failed", None, description) for anything else raised.
Outcome = tuple[str, object, str]
_LENGTH = 8  # the bytes before each pickled frame: its length
_ITEM = 4  # the bytes of an item's number, as the children take them
_AHEAD = 4  # items handed out per child past the one awaited
_PR_SET_PDEATHSIG = 1  # <sys/prctl.h>


class Failed(Exception):
    """The call raised something other than an `ExplorerError`: its type and message."""


def outcome(function: Callable[..., object], *args: Any, builtin: bool = False) -> Outcome:
    """`function(*args)` as plain values, whatever it raises (even RecursionError); with
    `builtin`, one of Python's own exceptions (a `ValueError`…) is kept as it was, so
    that the caller handles it as if the call had been its own."""
    try:
        return ("value", function(*args), "")
    except ExplorerError as error:
        return ("refused", error.code.value, error.detail)
    except BaseException as error:
        own = builtin and type(error).__module__ == "builtins"
        if own and all(isinstance(arg, str | int | bytes) for arg in error.args):
            return ("raised", error, describe_failure(error))
        return ("failed", None, describe_failure(error))


def unpacked(answer: Outcome) -> object:
    """The value of an outcome, or what it raised: the `ExplorerError` as it was, one of
    Python's own exceptions as it was, or `Failed`."""
    kind, value, detail = answer
    if kind == "refused":
        raise ExplorerError(ErrorCode(str(value)), detail)
    if kind == "raised" and isinstance(value, BaseException):
        raise value
    if kind in ("failed", "raised"):
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
        results = _in_children(work, count, min(self.workers, count))
        next(results)  # the children forked and at work now, not at the first result
        return results


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
    """The children take item numbers from one pipe as each is free (a large document
    holds up one child, not every child's share), and send `(item, outcome)` frames on
    a pipe of their own; this process hands out at most `_AHEAD` times `workers` items
    past the one it waits for, so it never holds more results than that."""
    children: dict[int, int] = {}  # each child's result pipe: its pid
    stopped: set[int] = set()  # the pipes of children that sent a refusal and stopped
    results: dict[int, Outcome] = {}
    handed = 0
    tasks_in, tasks_out = os.pipe()

    def hand(upto: int) -> None:
        """Item numbers into the pipe up to `upto`; the pipe closed once all are in, or
        once no child is left to read it (what they sent is read all the same)."""
        nonlocal handed, tasks_out
        if tasks_out < 0:
            return
        try:
            while handed < min(count, upto):
                os.write(tasks_out, handed.to_bytes(_ITEM, "little"))
                handed += 1
        except BrokenPipeError:
            handed = count  # no child reads: nothing more can be handed out
        if handed == count:
            os.close(tasks_out)  # each child ends at its next read
            tasks_out = -1

    try:
        _fork(work, workers, tasks_in, children)
        os.close(tasks_in)
        tasks_in = -1
        hand(_AHEAD * workers)
        yield cast(T, None)  # at work (`Spread.__call__` takes this before any result)
        with selectors.DefaultSelector() as ready:
            for fd in children:
                ready.register(fd, selectors.EVENT_READ)
            for item in range(count):
                hand(item + _AHEAD * workers)
                while item not in results:
                    for key, _ in ready.select():
                        fd = int(key.fd)
                        frame = _frame(fd)
                        if frame is None:
                            # Ended: after its refusal, or when no item was left to take;
                            # any other way, with an item taken and never sent.
                            ready.unregister(fd)
                            if fd not in stopped and tasks_out >= 0:
                                raise _lost([children[fd]])
                            if not ready.get_map():  # every child ended, the item unsent
                                raise _lost(children.values())
                            continue
                        number, answer = frame
                        results[number] = answer
                        if answer[0] != "value":
                            stopped.add(fd)
                yield cast(T, unpacked(results.pop(item)))
    finally:
        for fd in (tasks_in, tasks_out):
            if fd >= 0:
                os.close(fd)
        for fd, pid in children.items():
            os.close(fd)
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            with suppress(ChildProcessError):  # reaped already when it was lost
                os.waitpid(pid, 0)


# What a child does not take from the command's terminal or from a `kill`: the command
# takes it and ends its children (and they end with it: `end_with`).
_HELD = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT}


def _fork(
    work: Callable[[int], object], workers: int, tasks: int, children: dict[int, int]
) -> None:
    """`workers` children serving `work`, each with its result pipe in `children`; the
    signals above held while they fork, so that none runs this process's handlers."""
    parent = parent_of_children()
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
    try:
        for _ in range(workers):
            ours, theirs = os.pipe()
            try:
                pid = os.fork()
            except OSError as error:  # no more processes or memory: EAGAIN, ENOMEM
                os.close(ours)
                os.close(theirs)
                raise ExplorerError(
                    ErrorCode.WORKER_LOST,
                    f"a worker process could not start ({error.strerror or error}); "
                    "--workers 1 does the work in this process",
                ) from None
            if pid == 0:  # pragma: no cover - the child (tests check its results)
                _serve(work, tasks, theirs, parent)
            os.close(theirs)
            children[ours] = pid
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _serve(
    work: Callable[[int], object], tasks: int, fd: int, parent: int
) -> None:  # pragma: no cover
    """The child: item after item taken from `tasks`, done and sent on `fd`, until the
    pipe of items closes; then gone (never back to the caller's code). It keeps no
    descriptor but the standard three and these two, so it dies of a closed pipe when
    the parent dies, and holds open no pipe of the parent's."""
    code = 1
    try:
        end_with(parent)
        keep_only(tasks, fd)
        # What the parent built is read, never freed, here: out of the collector's sight,
        # it is neither walked again nor copied page by page.
        gc.freeze()
        with os.fdopen(fd, "wb") as pipe:
            # Each number is written whole and read whole (a pipe's reads and writes of
            # fewer than PIPE_BUF bytes are atomic), so no two children take one item.
            while len(taken := os.read(tasks, _ITEM)) == _ITEM:
                item = int.from_bytes(taken, "little")
                answer = outcome(work, item, builtin=True)
                data = pickle.dumps((item, answer), protocol=pickle.HIGHEST_PROTOCOL)
                pipe.write(len(data).to_bytes(_LENGTH, "little"))
                pipe.write(data)
                pipe.flush()
                if answer[0] != "value":
                    break
        code = 0
    finally:
        os._exit(code)


def parent_of_children() -> int:
    """This process's id, for `end_with` in the children it forks next; the C library's
    `prctl` is found now, once, not in each child."""
    _prctl()
    return os.getpid()


def end_with(parent: int) -> None:  # pragma: no cover - in a child
    """Linux's PR_SET_PDEATHSIG: the kernel kills this child when the command dies, by
    SIGKILL or SIGTERM too, whose ends run none of its cleanup; a child whose command
    (`parent`, from `parent_of_children` before the fork) died before this took hold
    ends now. The signal comes when the thread that forked the child ends, so fork
    from a thread that lasts as long as the process."""
    prctl = _prctl()
    if prctl is not None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)


@cache
def _prctl() -> Callable[[int, int], int] | None:
    """The C library's `prctl`, where there is one (Linux)."""
    import ctypes

    try:
        function: Callable[[int, int], int] = ctypes.CDLL(None, use_errno=True).prctl
    except (AttributeError, OSError):
        return None
    return function


def _frame(fd: int) -> tuple[int, Outcome] | None:
    """The next `(item, outcome)` a child sent, or None if its pipe closed first."""
    head = _exactly(fd, _LENGTH)
    data = None if head is None else _exactly(fd, int.from_bytes(head, "little"))
    if data is None:
        return None
    frame: tuple[int, Outcome] = pickle.loads(data)
    return frame


def _exactly(fd: int, size: int) -> bytearray | None:
    """`size` bytes read from `fd` (None if it ends before)."""
    buffer = bytearray(size)
    view = memoryview(buffer)
    got = 0
    while got < size:
        read = os.readv(fd, [view[got:]])
        if not read:
            return None
        got += read
    return buffer


def _lost(ended: Iterable[int]) -> ExplorerError:
    """`worker_lost`, saying how the children `ended` did (each has closed its pipe, so
    waiting for it is brief): the first that did not end well."""
    how = "exit code 0"
    for pid in ended:
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            how = f"killed by signal {os.WTERMSIG(status)}"
        elif os.waitstatus_to_exitcode(status):
            how = f"exit code {os.waitstatus_to_exitcode(status)}"
        else:
            continue
        break
    return ExplorerError(
        ErrorCode.WORKER_LOST,
        f"a worker process ended before sending its result ({how}); "
        "--workers 1 does the work in this process",
    )


def keep_only(*kept: int) -> None:  # pragma: no cover - in a child
    """In a forked child: every descriptor closed but the standard three and `kept`. A
    pipe the parent holds (to a browser's driver, to a reader of its output) must close
    when the parent closes it, not when a child of it ends."""
    try:
        most = max(os.sysconf("SC_OPEN_MAX"), 1024)
    except (OSError, ValueError):
        most = 65_536
    low = 3
    for fd in sorted(kept):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, most)
