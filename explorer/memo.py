"""What is derived from a text once for a whole comparison or evaluation: its sections in a
grammar, its blocks' token counts.

A column's build, its validation's rebuild, and every other column and size of the same
exploration or evaluation read the same documents; what a grammar or a unit derives from
a text depends on the text alone. Within `derived_once` each such thing is derived once
per text and handed to every reader; outside any such block nothing is kept, so a
command that streams an index (`index`, `validate`) holds nothing more.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar, cast

T = TypeVar("T")

# By the text's identity and what was derived: the text (kept beside it, so that its
# identity stays its own) and what was derived from it.
_Derived = dict[tuple[int, Hashable], tuple[str, object]]
_DERIVED: ContextVar[_Derived | None] = ContextVar("derived from texts", default=None)


@contextmanager
def derived_once() -> Iterator[None]:
    """Within this block (in this thread or task), `once` derives each thing from a text
    object once. A block within another shares the outer one's. What was derived is
    dropped when the outermost block ends: until then it holds, for each text read in
    it, its sections (about 1.5 times the text, in the markdown grammar) and its blocks'
    counts."""
    if _DERIVED.get() is not None:
        yield
        return
    token = _DERIVED.set({})
    try:
        yield
    finally:
        _DERIVED.reset(token)


def once(text: str, what: Hashable, derive: Callable[[], T]) -> T:
    """`derive()`, which derives `what` from `text` (and nothing else), taken once per
    text object within `derived_once`; called each time outside. What it returns is
    shared by every caller: it must not be changed."""
    derived = _DERIVED.get()
    if derived is None:
        return derive()
    key = (id(text), what)
    kept = derived.get(key)
    if kept is not None and kept[0] is text:
        return cast(T, kept[1])
    value = derive()
    derived[key] = (text, value)
    return value


def forget() -> None:
    """In a child forked inside a block that outlives it (a library call's serving
    child): drop what the parent had derived, which the child never reads."""
    _DERIVED.set(None)
