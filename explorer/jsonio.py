"""Strict JSON in, stable JSON out: duplicate keys, NaN and non-UTF-8 are refused."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any, NamedTuple

from .errors import ErrorCode, ExplorerError


class _Refused(ValueError):
    pass


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)  # in C; only a repeated key makes it shorter
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Refused(f"duplicate key {key!r}")
            seen.add(key)
    return result


def _no_constants(name: str) -> Any:
    raise _Refused(f"{name} is not JSON")


# No value of ours needs more; Python's int() refuses beyond 4,300 digits with a bare
# ValueError, and a float of thousands of digits is only ever a rounding of one.
MAX_NUMBER_CHARACTERS = 100


def _bounded_number(text: str) -> None:
    if len(text) > MAX_NUMBER_CHARACTERS:
        raise _Refused(
            f"a number of {len(text):,} characters is longer than the "
            f"{MAX_NUMBER_CHARACTERS} allowed"
        )


def _int(text: str) -> int:
    _bounded_number(text)
    return int(text)


def _float(text: str) -> float:
    _bounded_number(text)
    value = float(text)
    if math.isinf(value):
        raise _Refused(f"the number {text} is too large for a float")
    return value


# A lone surrogate can only arrive as a \uD800-\uDFFF escape; look for one only then.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _has_lone_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return _SURROGATE.search(value) is not None
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(item) for item in value)
    return False


class Counts(NamedTuple):
    """How much a JSON text holds, counted without parsing it: its keys and values, the
    items of its top-level list or object, and the items of the lists and objects in
    that (for a file that is an object of lists: the lists' items)."""

    values: int
    items: int
    inner: int


if TYPE_CHECKING:
    from numpy.typing import NDArray

_BLOCK = 1 << 20


@cache
def _byte_tables() -> tuple[NDArray[Any], NDArray[Any]]:
    """By byte: its step in depth (`[{` +1, `]}` -1), and whether counting looks at it."""
    import numpy as np  # only for a file large enough to be counted

    step = np.zeros(256, np.int8)
    step[list(b"[{")] = 1
    step[list(b"]}")] = -1
    marked = np.zeros(256, bool)
    marked[list(b'",:[]{}')] = True
    return step, marked


def count_json(data: bytes) -> Counts:
    """`Counts` of a JSON text in a few passes of C (numpy) over its bytes, at most a
    block of 1 MiB at a time: what decides, before anything is parsed, whether a file
    is within its limits. Exact for valid JSON; any other is refused by the parser."""
    import numpy as np

    steps, marked = _byte_tables()
    # Escaped backslashes, then escaped quotes, out: each quote left opens or closes a string.
    codes = np.frombuffer(data.replace(b"\\\\", b"").replace(b'\\"', b""), np.uint8)
    depth = quotes = 0
    values, items, inner = 1, 0, 0
    for begin in range(0, len(codes), _BLOCK):
        part = codes[begin : begin + _BLOCK]
        marks = part[marked[part]]
        if not len(marks):
            continue
        quote = marks == ord('"')
        seen = np.cumsum(quote, dtype=np.int32)
        seen += quotes
        quotes = int(seen[-1]) & 1
        marks = marks[((seen & 1) == 0) & ~quote]  # outside strings
        step = steps[marks]
        level = np.cumsum(step, dtype=np.int32)
        level += depth
        if len(level):
            depth = int(level[-1])
        comma, colon, opening = marks == ord(","), marks == ord(":"), step == 1
        values += int(np.count_nonzero(comma) + np.count_nonzero(colon) + np.count_nonzero(opening))
        first, second = level == 1, level == 2
        items += int(np.count_nonzero(comma & first) + np.count_nonzero(opening & first))
        inner += int(np.count_nonzero(comma & second) + np.count_nonzero(opening & second))
    return Counts(values, items, inner)


# Keys and values a file may hold for each item its limit allows (a LlamaIndex node with
# its metadata and relationships has about 55; a chunk of an index about 30).
VALUES_PER_ITEM = 64


def require_counts(
    data: bytes,
    code: ErrorCode,
    what: str,
    most: int,
    too_many: Callable[[], ExplorerError],
    inner: bool = False,
    lines: int | None = None,
) -> None:
    """Refuse a JSON text holding more than `most` items (`too_many()`): those of its
    top-level value (JSON Lines: its `lines`), and, if `inner`, those of the lists in
    it; or more than `VALUES_PER_ITEM` keys and values for each. Counted before it is
    parsed, so parsing holds at most a small multiple of what the limit admits."""
    values = most * VALUES_PER_ITEM
    if lines is not None and lines > most:
        raise too_many()
    bound = sum(map(data.count, (b",", b":", b"[", b"{"))) + 1  # counts inside strings too
    if bound + (lines or 0) <= most:
        return
    counts = count_json(data)
    if lines is None and (counts.items > most or (inner and counts.inner > most)):
        raise too_many()
    if counts.values + (lines or 0) > values:
        raise ExplorerError(
            code,
            f"the {what} holds more than {values:,} JSON values, {VALUES_PER_ITEM} for each "
            f"of the {most:,} items it may have",
        )


def parse_json(data: bytes, code: ErrorCode, what: str) -> Any:
    """Decode strict UTF-8 and parse exactly one JSON value, or refuse with `code`.
    Callers bound what it may hold first (`require_counts`)."""
    if not data or data.isspace():  # `strip` would copy the whole file
        raise ExplorerError(code, f"the {what} is empty, not JSON")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ExplorerError(code, f"the {what} is not UTF-8 (byte {error.start})") from None
    try:
        value = json.loads(
            text,
            object_pairs_hook=_no_duplicate_keys,
            parse_constant=_no_constants,
            parse_int=_int,
            parse_float=_float,
        )
        if _SURROGATE_ESCAPE.search(text) and _has_lone_surrogate(value):
            raise _Refused("a string holds a lone surrogate (\\ud800-\\udfff), not Unicode text")
    except _Refused as error:
        raise ExplorerError(code, f"the {what} is not strict JSON: {error}") from None
    except json.JSONDecodeError as error:
        reason = "content after the JSON value" if error.msg == "Extra data" else error.msg
        raise ExplorerError(
            code, f"the {what} is not JSON: {reason} at line {error.lineno} column {error.colno}"
        ) from None
    except RecursionError:
        raise ExplorerError(code, f"the {what} is nested too deeply") from None
    return value


def json_or_text(raw: str) -> Any:
    """A parameter as a person writes it (`--param KEY=VALUE`, a link's `NAME.KEY=VALUE`,
    the app's parameters box): its JSON value, or else the text itself, also where it is
    nested deeper than Python parses (a `RecursionError`, not a `ValueError`)."""
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return raw


def dump_json(value: Any) -> str:
    """Readable, deterministic output for files and downloads (non-ASCII kept as is)."""
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"
