"""Strict JSON in, stable JSON out: duplicate keys, NaN and non-UTF-8 are refused."""

from __future__ import annotations

import json
import math
import re
from typing import Any

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


def parse_json(data: bytes, code: ErrorCode, what: str) -> Any:
    """Decode strict UTF-8 and parse exactly one JSON value, or refuse with `code`."""
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


def dump_json(value: Any) -> str:
    """Readable, deterministic output for files and downloads (non-ASCII kept as is)."""
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"
