"""A call that a deadline can stop (docs/contract.md §5c): it runs in a child process,
which is killed when the time is up.

A thread cannot be stopped from outside, and a regular expression that backtracks holds
the GIL in C, where no signal handler runs either: only a process can be ended at any
moment. The child is forked once, so it starts with everything the parent has imported
and loaded, and then serves call after call through a pipe (a fork costs ~30 ms here,
more than a library takes on most documents); one killed at its deadline is replaced
at the next call. It dies with this process, however that ends (`end_with`: even
SIGKILL, which runs no cleanup), so a call never outlives the command that made it.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any, TypeVar, cast

from ..errors import ExplorerError
from ..memo import forget
from ..workers import (
    Failed,
    Outcome,
    describe_failure,
    end_with,
    keep_only,
    outcome,
    parent_of_children,
    unpacked,
)

T = TypeVar("T")


def _serve(connection: Connection, parent: int) -> None:
    """The child: answer each call it is sent until the parent closes the pipe. It dies
    with the parent, and keeps no other descriptor the parent had open beyond the
    standard three: a pipe the parent holds (to a browser's driver, to a reader of its
    output) must close when the parent closes it, not when this child ends."""
    end_with(parent)
    keep_only(connection.fileno())
    forget()  # what the parent derived in a block it forked this child in
    while True:
        try:
            function, args = connection.recv()
        except EOFError:
            return
        connection.send(outcome(function, *args))


class _Child:
    """The serving child of this process (a forked process makes its own)."""

    def __init__(self) -> None:
        context = multiprocessing.get_context("fork")
        self.connection, theirs = context.Pipe()
        self.parent = parent_of_children()
        self.process: BaseProcess = context.Process(
            target=_serve, args=(theirs, self.parent), daemon=True
        )
        self.process.start()
        theirs.close()

    def end(self) -> None:
        self.connection.close()
        if self.process.is_alive():
            self.process.kill()
        self.process.join()


_child: _Child | None = None
# One call at a time: the app's sessions are threads of one process, and two calls on one
# pipe would each read whichever answer came first (another session's chunks).
_calling = threading.Lock()


def _serving() -> _Child:
    global _child
    if _child is None or _child.parent != os.getpid() or not _child.process.is_alive():
        _child = _forked()
    return _child


def _forked() -> _Child:
    """A new child, forked by a thread that lasts as long as this process: the kernel
    signals a child when the thread that forked it ends, and the app's script threads
    end after each run."""
    if threading.current_thread() is threading.main_thread():
        return _Child()
    return _forker(os.getpid()).submit(_Child).result()


@cache
def _forker(pid: int) -> ThreadPoolExecutor:
    """The thread that forks serving children in process `pid` (a forked process has
    none of its parent's threads: it makes its own)."""
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="serving-child-forker")


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
    with _calling:
        child = _serving()
        answer: Outcome | None = None
        try:
            child.connection.send((function, args))
            answered = child.connection.poll(seconds)
            if answered:
                answer = child.connection.recv()
        except (EOFError, BrokenPipeError):
            answered = True  # it died: below
        if answer is None:
            child.end()
            _child = None
            if not answered:
                raise timed_out()
            raise Failed(
                f"its process ended without an answer (exit code {child.process.exitcode})"
            )
    return cast(T, unpacked(answer))


__all__ = ["Failed", "call_within", "describe_failure"]
