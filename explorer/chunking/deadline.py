"""A call that a deadline can stop (docs/contract.md §5c): it runs in a child process,
which is killed when the time is up.

A thread cannot be stopped from outside, and a regular expression that backtracks holds
the GIL in C, where no signal handler runs either: only a process can be ended at any
moment. The child is forked once, so it starts with everything the parent has imported
and loaded, and then serves call after call through a pipe (a fork costs ~30 ms here,
more than a library takes on most documents); one killed at its deadline is replaced
at the next call.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any, TypeVar, cast

from ..errors import ErrorCode, ExplorerError

T = TypeVar("T")
# A call's outcome, as plain values (an exception's own pickling may not round-trip):
# ("value", value, ""), ("refused", code, detail) or ("failed", None, description).
Outcome = tuple[str, object, str]


class Failed(Exception):
    """The call raised something other than an `ExplorerError`: its type and message."""


def _outcome(function: Callable[..., object], args: tuple[Any, ...]) -> Outcome:
    try:
        return ("value", function(*args), "")
    except ExplorerError as error:
        return ("refused", error.code.value, error.detail)
    except BaseException as error:  # whatever a library raises, even RecursionError
        return ("failed", None, describe_failure(error))


def _serve(connection: Connection) -> None:
    """The child: answer each call it is sent until the parent closes the pipe. It keeps
    no other descriptor the parent had open beyond the standard three: a pipe the parent
    holds (to a browser's driver, to a reader of its output) must close when the parent
    closes it, not when this child ends."""
    keep = connection.fileno()
    os.closerange(3, keep)
    os.closerange(keep + 1, _most_descriptors())
    while True:
        try:
            function, args = connection.recv()
        except EOFError:
            return
        connection.send(_outcome(function, args))


def _most_descriptors() -> int:
    try:
        return max(os.sysconf("SC_OPEN_MAX"), 1024)
    except (OSError, ValueError):
        return 65_536


class _Child:
    """The serving child of this process (a forked process makes its own)."""

    def __init__(self) -> None:
        context = multiprocessing.get_context("fork")
        self.connection, theirs = context.Pipe()
        self.process: BaseProcess = context.Process(target=_serve, args=(theirs,), daemon=True)
        self.process.start()
        theirs.close()
        self.parent = os.getpid()

    def end(self) -> None:
        self.connection.close()
        if self.process.is_alive():
            self.process.kill()
        self.process.join()


_child: _Child | None = None


def _serving() -> _Child:
    global _child
    if _child is None or _child.parent != os.getpid() or not _child.process.is_alive():
        _child = _Child()
    return _child


def call_within(
    seconds: float,
    timed_out: Callable[[], ExplorerError],
    function: Callable[..., T],
    *args: Any,
) -> T:
    """`function(*args)` in the serving child, its value sent back; past `seconds` the
    child is killed and `timed_out()` raised. The function and its arguments travel by
    pickle. An `ExplorerError` in the child is raised here as it was; anything else it
    raised is `Failed`, and so is a child that dies without answering (out of memory)."""
    global _child
    child = _serving()
    outcome: Outcome | None = None
    try:
        child.connection.send((function, args))
        answered = child.connection.poll(seconds)
        if answered:
            outcome = child.connection.recv()
    except (EOFError, BrokenPipeError):
        answered = True  # it died: below
    if outcome is None:
        child.end()
        _child = None
        if not answered:
            raise timed_out()
        raise Failed(f"its process ended without an answer (exit code {child.process.exitcode})")
    kind, value, detail = outcome
    if kind == "refused":
        raise ExplorerError(ErrorCode(str(value)), detail)
    if kind == "failed":
        raise Failed(detail)
    return cast(T, value)


def describe_failure(error: BaseException) -> str:
    """`Type: first line of the message`, shortened: one line, whatever was raised."""
    message = str(error).strip().splitlines()
    first = message[0] if message else ""
    kind = type(error)
    name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
    text = f"{name}: {first}" if first else name
    return text if len(text) <= 200 else text[:199] + "…"


__all__ = ["Failed", "call_within", "describe_failure"]
